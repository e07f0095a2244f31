/**
 * Markdown of a page that is not an article (issue 40, item 10): the content extractor with `format: markdown` and
 * MCP's `scrape_page` (Markdown by default) on the fixture site's quotes listing keep each repeated record whole:
 * every quote of the page with its author (read as a byline before, and dropped) and its tags.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

/** The Markdown's paragraphs, each on one line, spaces folded. */
function paragraphs(md: string): string[] {
  return md.split(/\n\s*\n/).map((p) => p.replace(/\s+/g, ' ').trim()).filter(Boolean);
}

/** Asserts every quote of the first listing page is in the Markdown, its author right after its text, its tags after it. */
function assertEveryQuoteWithItsAuthor(md: string): void {
  const quotes = allQuotes().slice(0, 10);
  const paras = paragraphs(md);
  for (const q of quotes) {
    const i = paras.findIndex((p) => p.includes(q.text));
    assert.ok(i >= 0, `the quote "${q.text.slice(0, 40)}…" is in the Markdown`);
    assert.ok(paras[i]!.includes(`${q.text} by ${q.author}`), `its author: ${paras[i]!.slice(0, 300)}`);
    const rest = paras.slice(i, i + 4).join(' ');
    for (const tag of q.tags) assert.ok(rest.includes(`[${tag}](`), `its tag ${tag}: ${rest.slice(0, 400)}`);
  }
}

describe('Markdown of a listing keeps its records whole (fixture quotes)', () => {
  let site: FixtureSite;
  let svc: TestService;
  let key: string;

  before(async () => {
    site = await startFixtureSite();
    svc = await startService();
    key = (await createAccount(svc.dataDir, { plan: 'pro' })).api_key;
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('content-extractor with format markdown: every quote with its author and tags', async () => {
    const r = await client(svc.url, key).post('/api/v1/tools/content-extractor/', { url: `${site.url}/quotes/`, format: 'markdown' });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.readerable, false, 'a listing, not an article');
    assertEveryQuoteWithItsAuthor(r.body.markdown);
    // The text keeps the authors too.
    for (const q of allQuotes().slice(0, 10)) assert.ok(r.body.text.includes(q.author), q.author);
  });

  it('MCP scrape_page (Markdown by default): every quote with its author and tags', async () => {
    const mcp = new Client({ name: 'markdown-listing-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', svc.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    try {
      const result = await mcp.callTool({ name: 'scrape_page', arguments: { url: `${site.url}/quotes/` } }) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result.content).slice(0, 300));
      const page = result.structuredContent as { format: string; content: string };
      assert.equal(page.format, 'markdown');
      assertEveryQuoteWithItsAuthor(page.content);
    } finally {
      await mcp.close();
    }
  });
});
