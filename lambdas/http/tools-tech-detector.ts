/**
 * POST /api/v1/tools/tech-detector/ (SPEC.md area B; docs/tools.md "tech-detector"): the technologies a page
 * shows; with `render: true` the page is loaded in the browser and its JavaScript globals count too.
 */
import { loadRenderedToolPage, runPageTool, startToolCall, withRefundOnUnreachable } from '../core/tools.ts';
import { detectTechnologies, jsGlobalPaths } from '../tools/tech.ts';
import { workerBrowser } from '../workers/worker-browser.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

interface TechBody { url: string; render?: boolean }

export const handler = apiHandler<TechBody>(route('POST', '/api/v1/tools/tech-detector/'), async (_event, { svc, account, body }) => {
  if (!body.render) return json(200, await runPageTool(svc, account, 'tech-detector', body.url, (page) => detectTechnologies(page)));
  const call = await startToolCall(svc, account, 'tech-detector', body.url);
  return json(200, await withRefundOnUnreachable(svc, account, call, async () =>
    detectTechnologies(await loadRenderedToolPage(svc, call, workerBrowser(svc), jsGlobalPaths()))));
});
