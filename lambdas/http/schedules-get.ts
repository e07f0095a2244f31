/** GET /api/v1/schedules/{id}/ (issue 26): one schedule with its next run and the jobs it started; 404 when absent or another account's. */
import { getSchedule, scheduleView } from '../core/schedules.ts';
import { apiHandler, json, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/schedules/{id}/'), async (event, { svc, account }) =>
  json(200, scheduleView(svc, await getSchedule(svc, account.id, uuidParam(event, 'Schedule')))));
