/** POST /api/v1/tools/seo-analyzer/ (SPEC.md area B; docs/tools.md "seo-analyzer"): the page's SEO report, score and Lighthouse audits. */
import { runPageTool, toolRequestSchema } from '../core/tools.ts';
import { analyzeSeo } from '../tools/seo.ts';
import { apiHandler, json } from './middleware.ts';

export const handler = apiHandler<{ url: string }>({ body: toolRequestSchema() }, async (_event, { svc, account, body }) =>
  json(200, await runPageTool(svc, account, 'seo-analyzer', body.url, (page, fetch) => analyzeSeo(page, fetch))));
