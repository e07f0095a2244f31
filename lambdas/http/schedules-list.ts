/** GET /api/v1/schedules/ (issue 26, docs/monitoring.md): `{schedules: [...]}`, newest first, each with its next run. */
import { scheduleView } from '../core/schedules.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/schedules/'), async (_event, { svc, account }) =>
  json(200, { schedules: (await svc.store.listSchedules(account.id)).map((s) => scheduleView(svc, s)) }));
