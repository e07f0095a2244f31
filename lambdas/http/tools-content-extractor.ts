/**
 * POST /api/v1/tools/content-extractor/ (SPEC.md area B; docs/tools.md "content-extractor"): the article's text, HTML
 * and metadata. The page is fetched and read in a tool worker (core/tool-thread.ts), not on the thread that answers.
 */
import { runPageTool, toolWork } from '../core/tools.ts';
import { extractContent } from '../tools/content.ts';
import { apiHandler, jsonText } from './middleware.ts';
import { route } from '../routes.ts';

const work = toolWork('content-extractor', import.meta.url, async ({ page }) => extractContent(await page()));

export const handler = apiHandler<{ url: string }>(route('POST', '/api/v1/tools/content-extractor/'), async (_event, { svc, account, body }) =>
  jsonText(200, await runPageTool(svc, account, work, body.url, {})));
