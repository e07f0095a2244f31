/** DELETE /api/v1/configs/{id}/: 204; 404 when absent or another account's. Jobs that ran it keep their YAML. */
import { deleteConfig } from '../core/configs.ts';
import { apiHandler, noContent, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('DELETE', '/api/v1/configs/{id}/'), async (event, { svc, account }) => {
  await deleteConfig(svc, account.id, uuidParam(event, 'Config'));
  return noContent();
});
