/**
 * POST /api/v1/webhooks/ (issue 26, docs/monitoring.md): `{url, events}`; 201 with the webhook and its signing secret
 * (`whsec_…`, shown only here). 400 `target_forbidden` for a URL to a private, loopback or metadata address.
 */
import { createWebhook, webhookView, type NewWebhook } from '../core/webhooks.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<NewWebhook>(route('POST', '/api/v1/webhooks/'), async (_event, { svc, account, body }) => {
  const { webhook, secret } = await createWebhook(svc, account.id, body);
  return json(201, { ...webhookView(webhook), secret });
});
