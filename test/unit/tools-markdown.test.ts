/**
 * The content extractor's Markdown converter (lambdas/tools/markdown.ts, issue 27): the fixture's news article
 * (test/fixtures/site/article.ts) extracted and converted, held against what the article holds (its subheadings,
 * list, table, quotation and links); and its rules on small fragments (code blocks with their language, images, GFM
 * tables, removed elements). The converter on the 130 Readability article pages of the corpus:
 * test/corpus/tools-markdown.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extractContent } from '../../lambdas/tools/content.ts';
import { htmlToMarkdown } from '../../lambdas/tools/markdown.ts';
import { ARTICLE, articleHtml } from '../fixtures/site/article.ts';
import { toolPage } from '../helpers/tool-page.ts';

describe('Markdown rules', () => {
  it('the fixture article: its subheadings, list, table, quotation, links and images; no menu, share bar or footer', () => {
    const base = 'http://news.example/article/';
    const md = htmlToMarkdown(extractContent(toolPage(articleHtml(), base)).html);
    assert.match(md, /^## Two summers of building$/m);
    assert.match(md, /^## What the engineers want changed$/m);
    ARTICLE.listItems.forEach((item, i) => assert.ok(md.split('\n').some((l) => new RegExp(`^${i + 1}\\.\\s+`).test(l) && l.endsWith(item)), `list item ${i + 1}`));
    for (const row of ARTICLE.table) assert.match(md, new RegExp(`^\\| ${row.map((c) => c.replace(/[.]/g, '\\.')).join(' +\\| ')} +\\|$`, 'm'), row.join(' | '));
    assert.match(md, /^> “We practised this twice a year/m);
    for (const [text, href] of ARTICLE.links) assert.ok(md.includes(`[${text}](${new URL(href, base).href})`), text);
    assert.ok(md.includes('![Volunteers raising the barrier panels on Quay Street](http://news.example/media/quay-street-barrier.jpg)'));
    for (const p of ARTICLE.paragraphs) assert.ok(md.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').includes(p), p.slice(0, 40));
    assert.doesNotMatch(md, /Copy link|Sign up|Readers remember|Privacy|What's on/);
  });

  it('rules on fragments: fenced code with its language, images, GFM tables, removed elements', () => {
    const md = htmlToMarkdown('<h2>Hi</h2><p>a <a href="https://x.example/a">link</a> <img src="https://x.example/i.png" alt="pic"></p>'
      + '<ol><li>one</li><li>two</li></ol><table><thead><tr><th>A</th><th>B</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>'
      + '<h3>Two<br>lines</h3><pre><code class="language-js">let x = 1;</code></pre><script>evil()</script><style>p{color:red}</style><form><input value="x"><button>Go</button></form><del>gone</del>');
    assert.match(md, /^## Hi$/m);
    assert.match(md, /^### Two +lines$/m, 'a line break inside a heading keeps it one heading');
    assert.match(md, /\[link\]\(https:\/\/x\.example\/a\)/);
    assert.match(md, /!\[pic\]\(https:\/\/x\.example\/i\.png\)/);
    assert.match(md, /^1\.\s+one$/m);
    assert.match(md, /^\| A +\| B +\|$/m);
    assert.match(md, /^```js\nlet x = 1;\n```$/m);
    assert.match(md, /~~?gone~~?/);
    assert.doesNotMatch(md, /evil|color:red|Go$/m);
    assert.equal(htmlToMarkdown('   '), '');
  });
});
