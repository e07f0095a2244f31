/** POST /api/v1/tools/seo-analyzer/ (SPEC.md area B; docs/tools.md "seo-analyzer"): the page's SEO report, score and Lighthouse audits. */
import { runPageTool } from '../core/tools.ts';
import { analyzeSeo } from '../tools/seo.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<{ url: string }>(route('POST', '/api/v1/tools/seo-analyzer/'), async (_event, { svc, account, body }) =>
  json(200, await runPageTool(svc, account, 'seo-analyzer', body.url, (page, fetch) => analyzeSeo(page, fetch))));
