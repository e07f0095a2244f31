/**
 * POST /api/v1/tools/broken-link-checker/ (docs/spec.md, "Tool endpoints"; docs/tools.md "broken-link-checker"): every link and
 * resource of the page checked (HEAD, then GET), with redirects, time-outs and failures; `depth` follows same-site
 * pages, `max_links` caps the links checked. The pages are fetched and read in a tool worker (core/tool-thread.ts).
 */
import { runPageTool, timeLeftMs, toolWork } from '../core/tools.ts';
import { checkLinks, LINK_CHECK_DEFAULTS } from '../tools/links.ts';
import { apiHandler, jsonText } from './middleware.ts';
import { route } from '../routes.ts';

interface LinksBody { url: string; depth?: number; max_links?: number }

const work = toolWork<LinksBody>('broken-link-checker', import.meta.url, async ({ page, guard, call }, b) => checkLinks(await page(), {
  guard, depth: b.depth ?? 0, maxLinks: b.max_links ?? LINK_CHECK_DEFAULTS.maxLinks, signal: call.signal,
  deadlineMs: Math.min(LINK_CHECK_DEFAULTS.maxDeadlineMs, timeLeftMs(call)),
}));

export const handler = apiHandler<LinksBody>(route('POST', '/api/v1/tools/broken-link-checker/'), async (_event, { svc, account, body }) =>
  jsonText(200, await runPageTool(svc, account, work, body.url, body)));
