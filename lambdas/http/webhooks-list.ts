/** GET /api/v1/webhooks/ (issue 26, docs/monitoring.md): `{webhooks: [...]}`, newest first, without secrets. */
import { webhookView } from '../core/webhooks.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/webhooks/'), async (_event, { svc, account }) =>
  json(200, { webhooks: (await svc.store.listWebhooks(account.id)).map(webhookView) }));
