/** POST /api/v1/generate/ (SPEC.md): starts a generate job from a URL and a prompt; 202 with the pending job. */
import { jobCreatedView } from '../core/jobs.ts';
import { MAX_PROMPT_CHARS, startGenerate, type GenerateBody } from '../core/generate-jobs.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<GenerateBody>(route('POST', '/api/v1/generate/'), async (_event, { svc, account, body }) => json(202, jobCreatedView(await startGenerate(svc, account, body))));
