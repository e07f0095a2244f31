/** POST /api/v1/run/ (docs/spec.md): starts a run job from a saved config or inline YAML; 202 with the pending job. */
import { jobCreatedView } from '../core/jobs.ts';
import { startRun, type RunRequest } from '../core/run-jobs.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<RunRequest>(route('POST', '/api/v1/run/'), async (_event, { svc, account, body }) => json(202, jobCreatedView(await startRun(svc, account, body))));
