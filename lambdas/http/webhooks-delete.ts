/** DELETE /api/v1/webhooks/{id}/ (issue 26): 204 with its delivery attempts; messages still queued for it are dropped. */
import { CodedError } from '../errors.ts';
import { apiHandler, noContent, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('DELETE', '/api/v1/webhooks/{id}/'), async (event, { svc, account }) => {
  const id = uuidParam(event, 'Webhook');
  if (!(await svc.store.deleteWebhook(account.id, id))) throw new CodedError('not_found', `Webhook ${id} not found`);
  return noContent();
});
