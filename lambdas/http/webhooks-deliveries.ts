/** GET /api/v1/webhooks/{id}/deliveries/ (issue 26): its delivery attempts, newest first (`?limit=`, 50, at most 100); 404 for another account's. */
import { CodedError } from '../errors.ts';
import { getWebhook, webhookDeliveryView } from '../core/webhooks.ts';
import { apiHandler, json, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/webhooks/{id}/deliveries/'), async (event, { svc, account }) => {
  const id = uuidParam(event, 'Webhook');
  const raw = event.queryStringParameters?.limit;
  const limit = raw === undefined ? 50 : Number(raw);
  if (!/^\d+$/.test(raw ?? '50') || limit < 1 || limit > 100) throw new CodedError('invalid_request', `limit must be an integer from 1 to 100; got "${String(raw).slice(0, 20)}"`, [{ path: 'limit', message: 'out of range' }]);
  await getWebhook(svc, account.id, id);
  return json(200, { deliveries: (await svc.store.listWebhookDeliveries(account.id, id, limit)).map(webhookDeliveryView) });
});
