/** PUT /api/v1/schedules/{id}/ (issue 26): changes cron, timezone or enabled (enabling a paused schedule resumes it); 200 with the schedule. */
import { scheduleView, updateSchedule, type ScheduleChange } from '../core/schedules.ts';
import { apiHandler, json, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<ScheduleChange>(route('PUT', '/api/v1/schedules/{id}/'), async (event, { svc, account, body }) =>
  json(200, scheduleView(svc, await updateSchedule(svc, account, uuidParam(event, 'Schedule'), body))));
