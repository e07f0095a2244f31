/**
 * POST /api/v1/tools/seo-analyzer/ (docs/spec.md, "Tool endpoints"; docs/tools.md "seo-analyzer"): the page's SEO report, score and
 * Lighthouse audits. The page and its robots.txt are fetched and read in a tool worker (core/tool-thread.ts).
 */
import { runPageTool, toolWork } from '../core/tools.ts';
import { analyzeSeo } from '../tools/seo/index.ts';
import { apiHandler, jsonText } from './middleware.ts';
import { route } from '../routes.ts';

const work = toolWork('seo-analyzer', import.meta.url, async ({ page, fetch }) => analyzeSeo(await page(), fetch));

export const handler = apiHandler<{ url: string }>(route('POST', '/api/v1/tools/seo-analyzer/'), async (_event, { svc, account, body }) =>
  jsonText(200, await runPageTool(svc, account, work, body.url, {})));
