/**
 * POST /api/v1/generate/ (docs/spec.md): starts a generate job from a URL and a prompt; 202 with the pending job, and
 * `existing_config` when the account has a config of the same URL and prompt (docs/api.md, "Generate").
 */
import { jobCreatedView } from '../core/jobs.ts';
import { startGenerate, type GenerateBody } from '../core/generate-jobs.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<GenerateBody>(route('POST', '/api/v1/generate/'), async (_event, { svc, account, body }) => {
  const { job, existing } = await startGenerate(svc, account, body);
  return json(202, { ...jobCreatedView(job), ...(existing ? { existing_config: existing } : {}) });
});
