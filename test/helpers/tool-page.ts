/** Builds the {@link ToolPage} a page tool reads from HTML in a test (a fixture page, a corpus file, an inline page). */
import type { ToolPage } from '../../lambdas/tools/page.ts';

/** A 200 `text/html` page at `url` with `html` as its body; `extra` overrides any field. */
export function toolPage(html: string, url = 'https://example.com/', extra: Partial<ToolPage> = {}): ToolPage {
  return {
    requestedUrl: url,
    url,
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    setCookies: [],
    contentType: 'text/html',
    html,
    redirectChain: [url],
    ...extra,
  };
}
