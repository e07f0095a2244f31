/**
 * POST /api/v1/tools/content-extractor/ (docs/spec.md, "Tool endpoints"; docs/tools.md "content-extractor"): the article's text, HTML
 * and metadata; with `format: "markdown"` also its Markdown (issue 27). The page is fetched and read in a tool worker
 * (core/tool-thread.ts), not on the thread that answers.
 */
import { runPageTool, toolWork } from '../core/tools.ts';
import { extractContent } from '../tools/content.ts';
import { htmlToMarkdown } from '../tools/markdown.ts';
import { apiHandler, jsonText } from './middleware.ts';
import { route } from '../routes.ts';

interface ContentBody { url: string; format?: 'text' | 'markdown' }

const work = toolWork<ContentBody>('content-extractor', import.meta.url, async ({ page }, b) => {
  const report = extractContent(await page());
  return b.format === 'markdown' ? { ...report, markdown: htmlToMarkdown(report.html) } : report;
});

export const handler = apiHandler<ContentBody>(route('POST', '/api/v1/tools/content-extractor/'), async (_event, { svc, account, body }) =>
  jsonText(200, await runPageTool(svc, account, work, body.url, { url: body.url, ...(body.format ? { format: body.format } : {}) })));
