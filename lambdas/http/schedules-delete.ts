/** DELETE /api/v1/schedules/{id}/ (issue 26): 204; its jobs stay. 404 when absent or another account's. */
import { deleteSchedule } from '../core/schedules.ts';
import { apiHandler, noContent, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('DELETE', '/api/v1/schedules/{id}/'), async (event, { svc, account }) => {
  await deleteSchedule(svc, account.id, uuidParam(event, 'Schedule'));
  return noContent();
});
