/** POST /api/v1/run/ (SPEC.md): starts a run job from a saved config or inline YAML; 202 with the pending job. */
import { jobCreatedView } from '../core/jobs.ts';
import { startRun, type RunRequest } from '../core/run-jobs.ts';
import { apiHandler, json } from './middleware.ts';

export const handler = apiHandler<RunRequest>({
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      config_id: { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' },
      yaml_content: { type: 'string', minLength: 1 },
    },
  },
}, async (_event, { svc, account, body }) => json(202, jobCreatedView(await startRun(svc, account, body))));
