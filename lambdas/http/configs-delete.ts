/**
 * DELETE /api/v1/configs/{id}/: 204; 404 when absent or another account's. Jobs that ran it keep their YAML; its
 * schedules (issue 26) are deleted with it.
 */
import { deleteConfig } from '../core/configs.ts';
import { deleteConfigSchedules } from '../core/schedules.ts';
import { apiHandler, noContent, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('DELETE', '/api/v1/configs/{id}/'), async (event, { svc, account }) => {
  const id = uuidParam(event, 'Config');
  await deleteConfig(svc, account.id, id);
  await deleteConfigSchedules(svc, account.id, id);
  return noContent();
});
