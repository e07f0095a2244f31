/** POST /api/v1/tools/content-extractor/ (SPEC.md area B; docs/tools.md "content-extractor"): the article's text, HTML and metadata. */
import { runPageTool } from '../core/tools.ts';
import { extractContent } from '../tools/content.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<{ url: string }>(route('POST', '/api/v1/tools/content-extractor/'), async (_event, { svc, account, body }) =>
  json(200, await runPageTool(svc, account, 'content-extractor', body.url, (page) => extractContent(page))));
