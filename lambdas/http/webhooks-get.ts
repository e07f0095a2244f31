/** GET /api/v1/webhooks/{id}/ (issue 26): one webhook without its secret; 404 when absent or another account's. */
import { getWebhook, webhookView } from '../core/webhooks.ts';
import { apiHandler, json, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/webhooks/{id}/'), async (event, { svc, account }) =>
  json(200, webhookView(await getWebhook(svc, account.id, uuidParam(event, 'Webhook')))));
