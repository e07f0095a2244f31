/** GET /api/v1/webhooks/{id}/deliveries/ (issue 26): its delivery attempts, newest first (`?limit=`, 50, at most 100); 404 for another account's. */
import { getWebhook, webhookDeliveryView } from '../core/webhooks.ts';
import { apiHandler, intQueryParam, json, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/webhooks/{id}/deliveries/'), async (event, { svc, account }) => {
  const id = uuidParam(event, 'Webhook');
  const limit = intQueryParam(event, 'limit', 50, 1, 100);
  await getWebhook(svc, account.id, id);
  return json(200, { deliveries: (await svc.store.listWebhookDeliveries(account.id, id, limit)).map(webhookDeliveryView) });
});
