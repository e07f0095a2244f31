/**
 * POST /api/v1/schedules/ (issue 26, docs/monitoring.md): runs a saved config on a 5-field cron rule in a time zone;
 * 201 with the schedule. 403 `plan_required` without server execution or when it would fire more often than the
 * plan allows; 404 for another account's config.
 */
import { createSchedule, scheduleView, type NewSchedule } from '../core/schedules.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<NewSchedule>(route('POST', '/api/v1/schedules/'), async (_event, { svc, account, body }) =>
  json(201, scheduleView(svc, await createSchedule(svc, account, body))));
