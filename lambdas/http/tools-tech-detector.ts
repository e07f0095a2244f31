/**
 * POST /api/v1/tools/tech-detector/ (docs/spec.md, "Tool endpoints"; docs/tools.md "tech-detector"): the technologies a page
 * shows; with `render: true` the page is loaded in the browser and its JavaScript globals count too. The page is
 * read in a tool worker (core/tool-thread.ts): fetched there, or, rendered, handed over by this thread.
 */
import { loadRenderedToolPage, runPageTool, toolWork } from '../core/tools.ts';
import { detectTechnologies, jsGlobalPaths } from '../tools/tech/index.ts';
import { workerBrowser } from '../workers/worker-browser.ts';
import { apiHandler, jsonText } from './middleware.ts';
import { route } from '../routes.ts';

interface TechBody { url: string; render?: boolean }

const work = toolWork('tech-detector', import.meta.url, async ({ page }) => detectTechnologies(await page()));

export const handler = apiHandler<TechBody>(route('POST', '/api/v1/tools/tech-detector/'), async (_event, { svc, account, body }) =>
  jsonText(200, await runPageTool(svc, account, work, body.url, {}, body.render
    ? { page: (call) => loadRenderedToolPage(svc, call, () => workerBrowser(svc), { set: 'tech-detector', paths: jsGlobalPaths }) }
    : {})));
