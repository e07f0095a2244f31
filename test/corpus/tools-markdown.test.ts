/**
 * The content extractor's Markdown (lambdas/tools/markdown.ts, issue 27) on the corpus's 130 Readability article
 * pages: each page's extracted article HTML is converted, and the Markdown is held against that HTML's own structure:
 * every heading is a `#` heading, every list item a list line, every table row a `|` row, every link with text a
 * Markdown link to the same absolute URL; and nothing of the page's scripts and styles appears. The converter's rules
 * on small fragments: test/unit/tools-markdown.test.ts.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as cheerio from 'cheerio';
import { extractContent } from '../../lambdas/tools/content.ts';
import { htmlToMarkdown } from '../../lambdas/tools/markdown.ts';
import { corpusDir } from '../fixtures/corpus.ts';
import { toolPage } from '../helpers/tool-page.ts';

const CORPUS_URL = 'http://fakehost/test/page.html';

interface Converted {
  name: string;
  source: string;
  html: string;
  markdown: string;
}

/** Lines of Markdown outside fenced code blocks, without their blockquote markers, spaces folded (no-break ones too). */
function proseLines(md: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const raw of md.split('\n')) {
    const line = raw.replace(/^(\s*>)+ ?/, '');
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) out.push(line.replace(/[ \t\u00a0]+/g, ' '));
  }
  return out;
}

/** A table Markdown can hold: no merged cells, and no block (paragraph, list, table, heading) in a cell. */
function simpleTable($: cheerio.CheerioAPI, table: cheerio.Cheerio<any>): boolean {
  return !table.find('[colspan], [rowspan]').filter((_, el) => Number($(el).attr('colspan') ?? 1) > 1 || Number($(el).attr('rowspan') ?? 1) > 1).length
    && !table.find('td, th').find('p, div, ul, ol, table, h1, h2, h3, h4, h5, h6, pre, blockquote, br').length;
}

describe('Markdown of extracted articles (130 Readability test pages)', () => {
  const pages: Converted[] = [];

  before(() => {
    const root = join(corpusDir(), 'articles', 'readability');
    for (const name of readdirSync(root).sort()) {
      const dir = join(root, name);
      if (!existsSync(join(dir, 'source.html'))) continue;
      const source = readFileSync(join(dir, 'source.html'), 'utf8');
      const report = extractContent(toolPage(source, CORPUS_URL));
      pages.push({ name, source, html: report.html, markdown: htmlToMarkdown(report.html) });
    }
  });

  it('converts all 130 pages; every page with text has Markdown', () => {
    assert.equal(pages.length, 130);
    for (const p of pages) if (cheerio.load(p.html).root().text().trim()) assert.ok(p.markdown.length > 0, p.name);
  });

  it('headings: each heading of the article with text is an ATX heading of its level', () => {
    let headings = 0;
    for (const p of pages) {
      const $ = cheerio.load(p.html);
      const lines = new Set(proseLines(p.markdown).map((l) => l.trim()));
      $('h1, h2, h3, h4, h5, h6').each((_, el) => {
        // A heading inside a table cell or a list item stays inline there.
        if ($(el).parents('td, th, li, blockquote').length) return;
        const text = $(el).text().replace(/\s+/g, ' ').trim();
        if (!text) return;
        headings++;
        const level = Number(el.tagName.slice(1));
        // Links' destinations and Markdown's marks out: a heading's text is what is left.
        const plain = (x: string) => x.replace(/\]\((?:[^()]|\([^)]*\))*\)/g, ']').replace(/[\\*_`[\]]/g, '').replace(/\s+/g, ' ');
        const found = [...lines].some((l) => l.startsWith(`${'#'.repeat(level)} `) && plain(l.replace(/^#+\s*/, '')).includes(plain(text).slice(0, 20)));
        assert.ok(found, `${p.name}: <${el.tagName}> "${text.slice(0, 60)}" is no level-${level} heading`);
      });
    }
    assert.ok(headings > 200, `${headings} headings checked`);
  });

  it('lists: a list line for each list item (nested lists included); at most a tenth of a page\'s items, and 2% of all, lost (an item made of a figure)', () => {
    let items = 0;
    let lines = 0;
    for (const p of pages) {
      const $ = cheerio.load(p.html);
      // Items inside tables stay in their cell; empty items give no line.
      const want = $('li').filter((_, el) => !$(el).parents('table').length && $(el).text().trim().length > 0).length;
      const got = proseLines(p.markdown).filter((l) => /^\s*(?:[-*+]|\d+\.) +\S/.test(l)).length;
      items += want;
      lines += Math.min(got, want);
      assert.ok(got >= want * 0.9, `${p.name}: ${got} list lines for ${want} list items`);
    }
    assert.ok(items > 500, `${items} list items checked`);
    assert.ok(lines >= items * 0.98, `${lines} list lines for ${items} list items`);
  });

  it('tables: each row of a table Markdown can hold (no merged cells, no blocks in cells) is a `|` row', () => {
    let rows = 0;
    for (const p of pages) {
      const $ = cheerio.load(p.html);
      let want = 0;
      $('table').each((_, t) => {
        const table = $(t);
        if (table.find('table').length || !simpleTable($, table)) return;
        want += table.find('tr').filter((_, el) => $(el).children('td, th').length > 0).length;
      });
      if (!want) continue;
      const got = proseLines(p.markdown).filter((l) => /^\s*\|.*\|\s*$/.test(l) && !/^\s*\|(\s*:?-+:?\s*\|)+\s*$/.test(l)).length;
      rows += want;
      assert.ok(got >= want, `${p.name}: ${got} Markdown rows for ${want} table rows`);
    }
    assert.ok(rows > 10, `${rows} table rows checked`);
  });

  it('links: each link with text is a Markdown link to its absolute URL', () => {
    let links = 0;
    for (const p of pages) {
      const $ = cheerio.load(p.html);
      $('a[href]').each((_, el) => {
        const href = $(el).attr('href')!;
        if (!/^https?:\/\//.test(href) || !$(el).text().trim()) return;
        links++;
        // CommonMark: a destination may escape its parentheses with backslashes.
        // A table Markdown cannot hold (merged cells) stays HTML inside the Markdown, links included.
        const md = p.markdown.replace(/\\([()])/g, '$1');
        assert.ok(md.includes(`](${href.replace(/ /g, '%20')}`) || md.includes(`](${href}`) || md.includes(`(<${href}>`) || md.includes(`href="${href.replace(/&/g, '&amp;')}"`), `${p.name}: the link to ${href} is lost`);
      });
    }
    assert.ok(links > 1000, `${links} links checked`);
  });

  it('nothing of the page\'s scripts or styles appears in the Markdown', () => {
    let checked = 0;
    for (const p of pages) {
      const $ = cheerio.load(p.source);
      $('script, style').each((_, el) => {
        const code = $(el).text().replace(/\s+/g, ' ').trim();
        // A distinctive run of the code (30 characters with an operator or a brace), looked for in the Markdown.
        const m = /[^\s].{28}[{};=(][^\n]?/.exec(code);
        if (!m) return;
        checked++;
        assert.ok(!p.markdown.replace(/\s+/g, ' ').includes(m[0]), `${p.name}: script or style text "${m[0]}" in the Markdown`);
      });
    }
    assert.ok(checked > 300, `${checked} scripts and styles checked`);
  });
});
