/**
 * lambdas/engine/html/parse.ts: parseHtml() builds the tree a browser builds, and its fast path never
 * returns a tree that differs from parse5's (the reference: parse5 8.1.1 with parse5-htmlparser2-tree-adapter,
 * scripting enabled). The html5lib tree-construction tests are in test/corpus/html5lib-tree-construction.test.ts.
 * - differential: every kind of page of the fixture site, compared node by node with parse5 (every HTML page of the
 *   corpus: test/corpus/html-parse.test.ts);
 * - targeted cases: what a browser does with the markup errors pages are full of, asserted with selectors
 *   (expected structures written from the WHATWG parsing rules, not read from the code), each also compared
 *   with parse5;
 * - character references: every legacy named reference and numeric references across the ranges the spec
 *   treats apart, in text, attributes and titles;
 * - random tag soup from a seeded generator (test/fixtures/html/tag-soup.ts): wherever the fast path
 *   answers, its tree is parse5's;
 * - the htmlparser2 version check: the fast path runs only on the htmlparser2 versions it was verified on.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { load, type CheerioAPI } from 'cheerio/slim';
import type { Comment, Document, Element } from 'domhandler';
import { parse } from 'parse5';
import { adapter } from 'parse5-htmlparser2-tree-adapter';
import {
  checkFastPath,
  HTMLPARSER2_VERIFIED_RANGE,
  HTMLPARSER2_VERSION,
  lastBailReason,
  MAX_DEPTH,
  MAX_FORMATTING_ELEMENTS,
  MAX_NODES,
  MAX_OPEN_ELEMENTS,
  MAX_TEXT_CHARS,
  parseHtml,
  parseHtmlFast,
  parseHtmlWithParse5,
  parseTruncation,
  versionInRange,
} from '../../lambdas/engine/html/parse.ts';
import { treeDifference } from '../../lambdas/engine/html/compare.ts';
import { loadHtml } from '../../lambdas/engine/extract.ts';
import { characterSoup, prng, tagSoup } from '../fixtures/html/tag-soup.ts';
import { bookDetails, bookshopPage } from '../fixtures/site/books.ts';
import { fixturePage } from '../fixtures/site/server.ts';

const SVG = 'http://www.w3.org/2000/svg';
const XLINK = 'http://www.w3.org/1999/xlink';

/** The fast path's tree for `html` (which must answer), checked equal to parse5's. */
function fastTree(html: string): Document {
  const doc = parseHtmlFast(html);
  assert.ok(doc, `the fast path gave up on ${JSON.stringify(html.slice(0, 80))}: ${lastBailReason()}`);
  assert.equal(treeDifference(doc, parseHtmlWithParse5(html)), null);
  return doc;
}

/** parseHtml()'s tree (fast path or fallback) as cheerio sees it, checked equal to parse5's. */
function browser$(html: string): CheerioAPI {
  const doc = parseHtml(html);
  assert.equal(treeDifference(doc, parseHtmlWithParse5(html)), null);
  return load(doc);
}

describe('treeDifference (the comparison every test below relies on)', () => {
  const base = parseHtmlWithParse5('<!DOCTYPE html><p class="a" id="b">x<svg><path d="1"/></svg><!--c-->');
  const changed = (html: string) => treeDifference(base, parseHtmlWithParse5(html));

  it('finds no difference between two parses of the same input', () => {
    assert.equal(changed('<!DOCTYPE html><p class="a" id="b">x<svg><path d="1"/></svg><!--c-->'), null);
  });

  it('names the first differing path for text, attribute values and order, names, comments, the doctype and the mode', () => {
    assert.match(changed('<!DOCTYPE html><p class="a" id="b">y<svg><path d="1"/></svg><!--c-->')!, /<p>\[0\] > #text .*: data "x" vs "y"/);
    assert.match(changed('<!DOCTYPE html><p id="b" class="a">x<svg><path d="1"/></svg><!--c-->')!, /<p>\[0\]: attributes/);
    assert.match(changed('<!DOCTYPE html><p class="a" id="c">x<svg><path d="1"/></svg><!--c-->')!, /attributes/);
    assert.match(changed('<!DOCTYPE html><p class="a" id="b">x<svg><line d="1"/></svg><!--c-->')!, /name path vs line/);
    assert.match(changed('<!DOCTYPE html><p class="a" id="b">x<svg><path d="1"/></svg><!--d-->')!, /#comment/);
    assert.match(changed('<!DOCTYPE html><p class="a" id="b">x<svg><path d="1"/></svg>')!, /3 vs 2 children/);
    assert.match(changed('<p class="a" id="b">x<svg><path d="1"/></svg><!--c-->')!, /document mode no-quirks vs quirks/);
  });

  it('tells namespaces apart', () => {
    const doc = parseHtmlWithParse5('<svg><a></a></svg>');
    const copy = parseHtmlWithParse5('<svg><a></a></svg>');
    assert.equal(load(doc)('a').get(0)!.namespace, SVG);
    load(copy)('a').get(0)!.namespace = 'http://www.w3.org/1999/xhtml';
    assert.match(treeDifference(doc, copy)!, /<svg>\[0\] > <a>\[0\]: namespace/);
  });
});

/** One page of each kind the fixture site serves. */
const FIXTURE_PAGES = ['/books/', '/books/catalogue/page-3.html', `/books/catalogue/${bookDetails()[7]!.slug}/index.html`, '/books/catalogue/category/books/travel_3/index.html',
  '/quotes/', '/quotes/tag/love/page/2/', '/quotes/author/Siobhan-OConnell/', '/tableful/', '/quotes-table/', '/js/quotes/', '/article/', '/base-href/'];

describe('the fixture site: parseHtml() builds the tree parse5 builds, for every kind of page', () => {
  it('the fast path answers for the books, quotes, tableful, author and article pages, with parse5\'s tree', () => {
    for (const path of FIXTURE_PAGES) {
      const html = fixturePage(path);
      const doc = parseHtmlFast(html);
      assert.ok(doc, `${path}: the fast path gave up: ${lastBailReason()}`);
      assert.equal(treeDifference(doc, parseHtmlWithParse5(html)), null, path);
    }
  });
});

describe('targeted cases: the tree a browser builds', () => {
  const book = bookshopPage('/books/catalogue/a-lantern-for-the-lighthouse-keeper_20/index.html')!;

  it('a table without <tbody> in its source gets one: `table > tbody > tr` finds the rows (a book\'s detail page)', () => {
    const rowsInSource = book.slice(book.indexOf('<table'), book.indexOf('</table>')).match(/<tr>/g)!.length;
    assert.equal(rowsInSource, 7);
    assert.ok(!/<tbody/i.test(book));
    fastTree(book);
    const $ = loadHtml(book);
    assert.equal($('table > tbody > tr').length, rowsInSource);
    assert.equal($('table > tr').length, 0);
    assert.equal($('table > tbody > tr:first-child td').text(), '6a31a6d75bb4e6de');
  });

  it('`<h3>…</h2>` ends the heading: the content after it is not inside the h3', () => {
    const html = '<div class="author-details"><h3 class="author-title">Albert Einstein\n</h2><p><strong>Born:</strong> March 14, 1879</p></div>';
    const $ = browser$(html);
    assert.equal($('h3').text(), 'Albert Einstein\n');
    assert.equal($('h3 p').length, 0);
    assert.equal($('div.author-details > p').length, 1);
    fastTree(html);
  });

  it('a block start tag closes an open <p>: `<p><div>` makes them siblings', () => {
    const $ = browser$('<p>a<div>b</div>');
    assert.equal($('p div').length, 0);
    assert.equal($('body > div').text(), 'b');
    assert.equal($('p').text(), 'a');
  });

  it('`</p>` with no open p inserts an empty p', () => {
    const $ = browser$('<div>x</p>y</div>');
    assert.equal($('div > p').length, 1);
    assert.equal($('div > p').text(), '');
    assert.equal($('div').text(), 'xy');
  });

  it('unclosed li, dd/dt, td, tr and option end at their next sibling', () => {
    const $ = browser$(
      '<ul><li>a<li>b</ul><dl><dt>t<dd>d<dt>u</dl><table><tr><td>1<td>2<tr><td>3</table><select><option>x<option>y</select>',
    );
    assert.deepEqual($('ul > li').map((_, e) => $(e).text()).get(), ['a', 'b']);
    assert.deepEqual($('dl > *').map((_, e) => `${(e as Element).name}:${$(e).text()}`).get(), ['dt:t', 'dd:d', 'dt:u']);
    assert.deepEqual($('table > tbody > tr').map((_, e) => $(e).children('td').length).get(), [2, 1]);
    assert.deepEqual($('select > option').map((_, e) => $(e).text()).get(), ['x', 'y']);
  });

  it('`<li><div><li>`: the second li closes the first (div does not stop the search)', () => {
    const $ = browser$('<ul><li><div>a<li>b</ul>');
    assert.equal($('ul > li').length, 2);
    assert.equal($('li li').length, 0);
    assert.equal($('ul > li').last().text(), 'b');
  });

  it('a stray `</span>` inside a div is ignored (a special element is in the way)', () => {
    const $ = browser$('<span><div>a</span>b</div>c</span>');
    assert.equal($('div').text(), 'ab');
    assert.equal($('span > div').length, 1);
  });

  it('formatting elements: well nested as written; misnested per the adoption agency algorithm', () => {
    let $ = browser$('<p><b>bold <i>both</i></b> plain</p>');
    assert.equal($('p > b > i').text(), 'both');
    // `<b><i></b></i>`: </b> closes both, the i is reopened for the text after it.
    $ = browser$('<p><b>1<i>2</b>3</i>4</p>');
    assert.equal($('p > b > i').text(), '2');
    assert.equal($('p > i').text(), '3');
    assert.equal($('p').text(), '1234');
    // `<b><p>x</b>y`: the b is split around the paragraph's content.
    $ = browser$('<b>1<p>2</b>3</p>');
    assert.equal($('body > b').text(), '1');
    assert.equal($('p > b').text(), '2');
    assert.equal($('p').text(), '23');
    // A new <a> closes the open one.
    $ = browser$('<a href=1>x<a href=2>y</a>');
    assert.equal($('a a').length, 0);
    assert.deepEqual($('a').map((_, e) => $(e).text()).get(), ['x', 'y']);
  });

  it('svg icons: SVG namespace, camelCase names and attributes, self-closing tags, xlink attributes', () => {
    const html = '<button><svg viewbox="0 0 24 24" class=icon><lineargradient id="g"/><path d="M0 0"/><use xlink:href="#i"/></svg>Save</button>';
    const doc = fastTree(html);
    const $ = load(doc);
    const svg = $('svg').get(0)!;
    assert.equal(svg.namespace, SVG);
    assert.equal(svg.attribs.viewBox, '0 0 24 24');
    assert.deepEqual($('svg').children().map((_, e) => (e as Element).name).get(), ['linearGradient', 'path', 'use']);
    const use = $('svg').children().get(2)!;
    assert.equal(use.attribs.href, '#i');
    assert.equal(use['x-attribsNamespace']!.href, XLINK);
    assert.equal(use['x-attribsPrefix']!.href, 'xlink');
    assert.equal($('button').text(), 'Save');
  });

  it('noscript content is text (scripting on, as in a browser), in head and in body', () => {
    const html = '<head><noscript><link rel=stylesheet href=x></noscript></head><body><noscript><img src="pixel.gif"></noscript><p>after</p>';
    const $ = load(fastTree(html));
    assert.equal($('img').length, 0);
    assert.equal($('head > noscript').text(), '<link rel=stylesheet href=x>');
    assert.equal($('body > noscript').text(), '<img src="pixel.gif">');
    assert.equal($('body > p').text(), 'after');
  });

  it('script, style, title, textarea and iframe content is not markup; script escapes are honoured', () => {
    const html =
      '<title>a &amp; <b>b</b></title><style>p > a { }</style><script>if (a<b && c) x("</div>")</script>' +
      '<script><!-- document.write("<script>x</script>") --></script><textarea><p>t</textarea><iframe><p>i</iframe><p>end';
    const $ = browser$(html);
    assert.equal($('title').text(), 'a & <b>b</b>');
    assert.equal($('style').text(), 'p > a { }');
    assert.equal($('script').first().text(), 'if (a<b && c) x("</div>")');
    assert.equal($('script').last().text(), '<!-- document.write("<script>x</script>") -->');
    assert.equal($('textarea').text(), '<p>t');
    assert.equal($('iframe').text(), '<p>i');
    assert.equal($('body > p').text(), 'end');
    assert.equal($('b').length, 0);
  });

  it('comments before <html> and after </html> belong to the document; content after </body> goes into the body', () => {
    const doc = fastTree('<!-- first --><!DOCTYPE html><!-- second --><html><body><p>x</p></body></html><!-- last -->\n<p>late</p>');
    assert.deepEqual(
      doc.children.map((n) => n.type),
      ['comment', 'directive', 'comment', 'tag', 'comment'],
    );
    const $ = load(doc);
    assert.deepEqual($('body > p').map((_, e) => $(e).text()).get(), ['x', 'late']);
  });

  it('html, head and body are implied; head content and body content land where they belong', () => {
    const doc = fastTree('<title>T</title><meta charset=utf-8>Hello');
    const $ = load(doc);
    assert.equal($('html > head > title').text(), 'T');
    assert.equal($('html > head > meta').length, 1);
    assert.equal($('html > body').text(), 'Hello');
    assert.equal(doc['x-mode'], 'quirks'); // no doctype
  });

  it('the newline right after <pre>, <listing> and <textarea> is dropped, not the next one', () => {
    const $ = load(fastTree('<pre>\n\nx</pre><listing>\ny</listing><textarea>\nz</textarea><pre>a\nb</pre>'));
    assert.equal($('pre').first().text(), '\nx');
    assert.equal($('listing').text(), 'y');
    assert.equal($('textarea').text(), 'z');
    assert.equal($('pre').last().text(), 'a\nb');
  });

  it('character references: legacy names without `;` in text, not in attributes before `=` or an alphanumeric; C1 numbers mapped', () => {
    const $ = load(fastTree('<p>&copy 2024 &notit; &amp=1 &#150; &#x80; &#0; &#x110000;</p><a href="?a=1&copy=2&amp;b=&notin;">x</a><b title="&copy2">y</b>'));
    assert.equal($('p').text(), '© 2024 ¬it; &=1 – € \ufffd \ufffd');
    assert.equal($('a').attr('href'), '?a=1&copy=2&b=∉');
    assert.equal($('b').attr('title'), '&copy2');
  });

  it('CR LF and lone CR become LF in text, attributes and comments; &#13; stays a CR', () => {
    const doc = fastTree('<p title="a\r\nb">x\r\ny\rz&#13;</p><!--c\r\nd-->');
    const $ = load(doc);
    assert.equal($('p').text(), 'x\ny\nz\r');
    assert.equal($('p').attr('title'), 'a\nb');
    const comment = ($('body').get(0)!.children.at(-1) as Comment).data;
    assert.equal(comment, 'c\nd');
  });

  it('duplicate attributes: the first wins; names are lower-cased in ASCII only', () => {
    const $ = load(fastTree('<div ID=a id=b DATA-İ=c>x</div>'));
    const div = $('div').get(0)!;
    assert.deepEqual(Object.keys(div.attribs), ['id', 'data-İ']);
    assert.equal(div.attribs.id, 'a');
  });

  it('attribute maps inherit nothing, as parse5\'s: `constructor`, `toString` and `__proto__` are attributes like any', () => {
    const html = '<p __proto__=a constructor=b>x</p><i>y</i>';
    const el = load(fastTree(html))('p').get(0)!;
    const ref = load(parseHtmlWithParse5(html))('p').get(0)!;
    for (const e of [el, ref]) {
      assert.deepEqual(Object.keys(e.attribs), ['__proto__', 'constructor']);
      assert.equal(e.attribs.__proto__, 'a');
      assert.equal(e.attribs.constructor, 'b');
      assert.ok(!('toString' in e.attribs) && !('hasOwnProperty' in e.attribs));
      assert.ok(!('toString' in e['x-attribsNamespace']!) && !('toString' in e['x-attribsPrefix']!));
    }
    assert.equal(load(fastTree(html))('[constructor=b]').length, 1);
    assert.equal(load(fastTree(html))('i[constructor]').length, 0);
  });

  it('a form inside a form is dropped; `<input type=hidden>` may sit in a table', () => {
    const $ = browser$('<form id=a><form id=b><input></form><table><input type=hidden name=h><tr><td>c</table>');
    assert.equal($('form').length, 1);
    assert.equal($('table > input[type=hidden]').length, 1);
  });

  it('in quirks mode a table does not close an open p; with a doctype it does', () => {
    assert.equal(browser$('<p><table><tr><td>x</table>').root().find('p > table').length, 1);
    assert.equal(browser$('<!DOCTYPE html><p><table><tr><td>x</table>').root().find('p > table').length, 0);
  });

  it('the cases the fast path leaves to parse5 still give the tree parse5 builds: foster parenting, templates, framesets, reconstruction', () => {
    for (const html of [
      '<table>text<tr><td>x</table>',
      '<table><div>d</div><tr><td>x</table>',
      '<template><p>t</p></template>',
      '<frameset><frame></frameset>',
      '<p><b>1<i>2</p>3',
      '<b>1<div>2</b>3</div>',
      '<p>\u0000</p>',
      '<plaintext><p>',
    ]) {
      assert.equal(parseHtmlFast(html), null, html);
      assert.equal(treeDifference(parseHtml(html), parseHtmlWithParse5(html)), null, html);
    }
  });
});

describe('character references, every way the tokenizer reads them', () => {
  // The names the spec allows without a `;` (decoded in text even then), and some that share their prefixes
  // or that entities 7 (htmlparser2's decoder) reads wrongly without their `;`.
  const LEGACY =
    'AElig AMP Aacute Acirc Agrave Aring Atilde Auml COPY Ccedil ETH Eacute Ecirc Egrave Euml GT Iacute Icirc Igrave ' +
    'Iuml LT Ntilde Oacute Ocirc Ograve Oslash Otilde Ouml QUOT REG THORN Uacute Ucirc Ugrave Uuml Yacute aacute acirc ' +
    'acute aelig agrave amp aring atilde auml brvbar ccedil cedil cent copy curren deg divide eacute ecirc egrave eth ' +
    'euml frac12 frac14 frac34 gt iacute icirc iexcl igrave iquest iuml laquo lt macr micro middot nbsp not ntilde ' +
    'oacute ocirc ograve ordf ordm oslash otilde ouml para plusmn pound quot raquo reg sect shy sup1 sup2 sup3 szlig ' +
    'thorn times uacute ucirc ugrave uml uuml yacute yen yuml';
  const OTHERS =
    'notin notinva notni nbump NotEqualTilde acE bne nvlt CounterClockwiseContourIntegral Afr fjlig ThinSpace eta icy ' +
    'Gcedil Gdot Hstrok backepsilon bepsi ocy copysr ltri';
  const names = `${LEGACY} ${OTHERS}`.split(' ');

  /** Compares wherever the fast path answers; returns how many of the documents it answered for. */
  function check(docs: string[]): number {
    let answered = 0;
    for (const html of docs) {
      const fast = parseHtmlFast(html);
      assert.equal(treeDifference(parseHtml(html), parseHtmlWithParse5(html)), null, html);
      if (!fast) continue;
      answered++;
      assert.equal(treeDifference(fast, parseHtmlWithParse5(html)), null, html);
    }
    return answered;
  }

  it(`${names.length} named references, with and without ';', before '=', a letter, a digit, a quote, a space or the end`, (t) => {
    const docs: string[] = [];
    for (const name of names) {
      for (const after of [';', '', '=', 'x', '1', ' ', '"', "'", '>', ';x']) {
        const ref = `&${name}${after}`;
        docs.push(`<p>${ref}</p><a title="${ref}" b='${ref}' data-u=${ref}>t</a><title>${ref}</title>`);
      }
      docs.push(`<p>&${name}`, `<a title="&${name}`, `<title>&${name}`);
    }
    const answered = check(docs);
    t.diagnostic(`fast path answered for ${answered} of ${docs.length}`);
    assert.ok(answered > 0.9 * docs.length);
  });

  it('the input ending inside a reference or after `</` and whitespace', () => {
    // entities 7 reads `&eta<A` on to the end and emits it all as text; `</ x` is a comment for the spec.
    assert.equal(browser$('<p>&eta<A').root().find('p').text(), '&eta');
    assert.equal(treeDifference(parseHtml('x</\ta'), parseHtmlWithParse5('x</\ta')), null);
    assert.equal(load(parseHtml('x</\ta'))('body').contents().last().get(0)!.type, 'comment');
  });

  it('the references entities 7 gets wrong are read as the spec reads them', () => {
    const $ = browser$('<p>&eta= &icy> &notin &not</p><a title="&notin" b="&Gcedil" c="&copysr" d="&not;in">x</a><i>after</i>');
    assert.equal($('p').text(), '&eta= &icy> ¬in ¬');
    assert.deepEqual({ ...$('a').get(0)!.attribs }, { title: '&notin', b: '&Gcedil', c: '&copysr', d: '¬in' });
    assert.equal($('i').text(), 'after');
  });

  it('numeric references across the ranges the spec treats apart (C0, C1, surrogates, noncharacters, beyond U+10FFFF)', () => {
    const codes = [
      ...Array.from({ length: 0x110 }, (_, i) => i),
      0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xfdd0, 0xfffe, 0xffff, 0x1f600, 0x10fffe, 0x10ffff, 0x110000, 0xffffffff,
    ];
    for (const cp of codes) {
      for (const ref of [`&#${cp}`, `&#x${cp.toString(16)}`, `&#X${cp.toString(16).toUpperCase()}`]) {
        for (const after of [';', '', 'z']) fastTree(`<p>${ref}${after}</p><a title="${ref}${after}">t</a><title>${ref}${after}</title>`);
      }
    }
  });
});

describe('a hex character reference with 254 or more leading zeros (parse5 7.3.0 threw `RangeError: Invalid code point NaN`)', () => {
  const zeros = [253, 254, 255, 1000, 100_000];

  it('the fast path reads it as its code point, U+0041 for `&#x0…041;`, in text and attributes, as parse5 8 does', () => {
    for (const n of zeros) {
      const hex = `&#x${'0'.repeat(n)}41;`;
      const dec = `&#${'0'.repeat(n)}65;`;
      const $ = load(fastTree(`<p>${hex}${dec}</p><a title="${hex}" b=${dec}>t</a>`));
      assert.equal($('p').text(), 'AA', `${n} zeros`);
      assert.equal($('a').attr('title'), 'A', `${n} zeros`);
      assert.equal($('a').attr('b'), 'A', `${n} zeros`);
    }
  });

  it('the parse5 fallback (a template sends the document there) gives the same tree, never throws', () => {
    for (const n of zeros) {
      const html = `<template></template>&#x${'0'.repeat(n)}41;`;
      assert.equal(parseHtmlFast(html), null);
      assert.match(lastBailReason(), /template/);
      const doc = parseHtml(html);
      assert.equal(load(doc)('body').text(), 'A', `${n} zeros`);
      assert.equal(load(doc)('head > template').length, 1);
      assert.equal(treeDifference(doc, parseHtmlWithParse5(html)), null);
      assert.equal(treeDifference(doc, parse(html, { treeAdapter: adapter, scriptingEnabled: true }) as Document), null);
      assert.equal(parseTruncation(doc), null);
    }
  });
});

describe('what parse5 8 changed from 7.3.0 where the fast path answers (ported, and compared with parse5 8)', () => {
  it('`&#13;` is a whitespace character token: ignored before <html>, kept as whitespace in a table', () => {
    // parse5 7.3.0 made it a character token: a text node "\r" before the <p>, and text foster-parented out of the table.
    let $ = load(fastTree('&#13;<p>x'));
    assert.equal($('body').contents().length, 1);
    assert.equal($('body > p').text(), 'x');
    $ = load(fastTree('<!DOCTYPE html><p>a&#13;b</p><table>&#13;<tr><td>c</table>'));
    assert.equal($('p').text(), 'a\rb');
    assert.equal($('body').children().length, 2);
    assert.equal($('table').contents().first().text(), '\r');
    assert.equal($('table > tbody > tr > td').text(), 'c');
  });

  it('the adoption agency pops a current formatting element that Noah\'s Ark took off the list (its step 2)', () => {
    // The fourth <b> alike drops the first from the list; </p> closes the three others. parse5 7.3.0 found the
    // newest <b> entry (closed already), dropped it and left the first <b> open, so the comment went into it.
    const $ = load(fastTree('<b><p><b><b><b></p></b><!--c-->'));
    assert.equal($('b').length, 4);
    const comment = $('body').contents().last().get(0)!;
    assert.equal(comment.type, 'comment');
    assert.equal($('body > b').length, 1);
  });
});

describe('htmlparser2 internals: the fast path runs only on the htmlparser2 versions it was verified on', () => {
  it(`the installed htmlparser2 (${HTMLPARSER2_VERSION}) is in ${HTMLPARSER2_VERIFIED_RANGE}, and the fast path is on`, () => {
    assert.ok(versionInRange(HTMLPARSER2_VERSION, HTMLPARSER2_VERIFIED_RANGE));
    assert.equal(checkFastPath(), true);
    assert.ok(parseHtmlFast('<p>x</p>'));
  });

  it('versionInRange: every comparator must hold; pre-releases satisfy no range; a bad comparator throws', () => {
    const range = '>=10.1.0 <10.2.0';
    for (const v of ['10.1.0', '10.1.1', '10.1.99']) assert.equal(versionInRange(v, range), true, v);
    for (const v of ['10.0.9', '10.2.0', '11.0.0', '12.0.0', '9.9.9', '10.1.1-beta.0', '10.1', 'x']) assert.equal(versionInRange(v, range), false, v);
    assert.equal(versionInRange('10.1.0', '10.1.0'), true);
    assert.equal(versionInRange('10.1.0', '=10.1.1'), false);
    assert.equal(versionInRange('10.1.0', '>10.1.0'), false);
    assert.equal(versionInRange('10.1.0', '<=10.1.0'), true);
    assert.throws(() => versionInRange('10.1.0', '~10.1.0'), /bad comparator/);
  });

  it('outside the range every document goes to parse5, with the reason, and parseHtml() still gives parse5\'s tree', () => {
    const html = '<!DOCTYPE html><p>x<table><tr><td>1</table><svg><path d=1></svg>';
    try {
      for (const version of ['11.0.0', '10.2.0', '10.0.0']) {
        assert.equal(checkFastPath(version), false, version);
        assert.equal(parseHtmlFast(html), null);
        assert.equal(lastBailReason(), `fast path disabled: htmlparser2 ${version} is outside ${HTMLPARSER2_VERIFIED_RANGE}, the versions it was verified on`);
        assert.equal(treeDifference(parseHtml(html), parseHtmlWithParse5(html)), null);
      }
    } finally {
      checkFastPath();
    }
    assert.ok(parseHtmlFast(html));
  });
});

describe('random tag soup (seeded): wherever the fast path answers, its tree is the one parse5 builds', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`seed ${seed}: 1,500 documents`, (t) => {
      const rand = prng(seed * 7919);
      let fast = 0;
      for (let i = 0; i < 1500; i++) {
        const html = tagSoup(rand);
        const doc = parseHtmlFast(html);
        if (!doc) continue;
        fast++;
        const d = treeDifference(doc, parseHtmlWithParse5(html));
        assert.equal(d, null, `document ${i} of seed ${seed}: ${JSON.stringify(html)}\n${d}`);
      }
      t.diagnostic(`fast path answered for ${fast} of 1500`);
      // The generator aims at both sides of the subset; a fast path that always gave up would prove nothing.
      assert.ok(fast > 500, `fast path answered for only ${fast} of 1500`);
    });
  }
});

describe('random character soup (seeded): the tokenizer corners, where htmlparser2 and the spec part ways', () => {
  for (const seed of [11, 12]) {
    it(`seed ${seed}: 4,000 strings of the tokenizer's alphabet`, (t) => {
      const rand = prng(seed);
      let fast = 0;
      for (let i = 0; i < 4000; i++) {
        const html = characterSoup(rand);
        const doc = parseHtmlFast(html);
        if (!doc) continue;
        fast++;
        const d = treeDifference(doc, parseHtmlWithParse5(html));
        assert.equal(d, null, `string ${i} of seed ${seed}: ${JSON.stringify(html)}\n${d}`);
      }
      t.diagnostic(`fast path answered for ${fast} of 4000`);
      assert.ok(fast > 3000, `fast path answered for only ${fast} of 4000`);
    });
  }
});


describe('bounds (engine/html/limits.ts): what a hostile page can make the parser build', () => {
  /** parse5 itself, without the bounds: the reference below them. */
  const plainParse5 = (html: string): Document => parse(html, { treeAdapter: adapter, scriptingEnabled: true }) as Document;
  const ids = (html: string, n: number) => Array.from({ length: n }, (_, i) => `<div id=d${i}>`).join('');

  it('below the bounds the bounded parse5 is parse5: the fixture site\'s pages and 3,000 documents of tag soup (every corpus page: test/corpus/html-parse.test.ts)', () => {
    for (const file of FIXTURE_PAGES) {
      const html = fixturePage(file);
      const bounded = parseHtmlWithParse5(html);
      assert.equal(parseTruncation(bounded), null, file);
      const d = treeDifference(bounded, plainParse5(html));
      assert.equal(d, null, `${file}: ${d}`);
    }
    const rand = prng(24);
    for (let i = 0; i < 3000; i++) {
      const html = tagSoup(rand);
      const d = treeDifference(parseHtmlWithParse5(html), plainParse5(html));
      assert.equal(d, null, `document ${i}: ${JSON.stringify(html)}\n${d}`);
    }
  });

  it(`past ${MAX_DEPTH} open elements an element goes to its intended parent's parent (Chromium's kMaximumHTMLParserDOMTreeDepth)`, () => {
    // Chromium's own test (fast/parser/nested-elements-depth): with <html> and <body> open, the div that would be
    // the 511th inside <body> and every one after it are children of the 510th.
    const html = `<!DOCTYPE html><body>${ids('', 600)}deep<!--c--><p>x`;
    assert.equal(parseHtmlFast(html), null);
    assert.match(lastBailReason(), new RegExp(`more than ${MAX_DEPTH} open elements`));
    const $ = load(parseHtml(html));
    const parentOf = (id: string) => $(`#${id}`).parent().attr('id') ?? $(`#${id}`).parent().prop('tagName');
    assert.equal(parentOf('d0'), 'BODY');
    assert.equal(parentOf('d509'), 'd508');
    assert.equal(parentOf('d510'), 'd509');
    assert.equal(parentOf('d511'), 'd509');
    assert.equal(parentOf('d599'), 'd509');
    assert.equal($('#d509').children().length, 90 + 1); // d510…d599 and the <p>
    // Text goes into the current node (Chromium moves elements and comments, not text); comments move as elements do.
    assert.equal($('#d599').text(), 'deep');
    assert.equal($('#d509').contents().filter((_, n) => n.type === 'comment').length, 1);
    assert.equal($('#d509 > p').text(), 'x');
    // Every element is at most MAX_DEPTH + 1 deep (html is 1).
    assert.equal(Math.max(...$('*').map((_, e) => $(e).parents().length + 1).get()), MAX_DEPTH + 1);
  });

  it('100,000 nested divs then as many end tags: what follows is in <body> again, as in a browser', () => {
    const doc = parseHtml(`<!DOCTYPE html><body>${'<div>'.repeat(100_000)}x${'</div>'.repeat(100_000)}<p id=after>after</p>`);
    const $ = load(doc);
    assert.equal($('#after').parent().prop('tagName'), 'BODY');
    assert.equal(parseTruncation(doc), null);
  });

  it(`the stack holds at most ${MAX_OPEN_ELEMENTS} open elements; the oldest above ${MAX_DEPTH} leave it, not the tree`, () => {
    // 2,000 open spans, then their end tags: the spans past the window are closed already; what follows goes where
    // the end tags leave the stack, and no span is lost from the tree.
    const doc = parseHtml(`<!DOCTYPE html><body>${'<span>'.repeat(2000)}x${'</span>'.repeat(2000)}<i id=after></i>`);
    const $ = load(doc);
    assert.equal($('span').length, 2000);
    assert.equal($('#after').parent().prop('tagName'), 'BODY');
  });

  it(`at most ${MAX_FORMATTING_ELEMENTS} active formatting elements after a marker: the oldest is not reopened`, () => {
    const html = `<!DOCTYPE html><body><div>${Array.from({ length: 70 }, (_, i) => `<b class=c${i}>`).join('')}</div><span id=s>x`;
    assert.equal(parseHtmlFast(html), null);
    /** The classes of the <b>s the parser reopened around the text after the div. */
    const reopened = (doc: Document) => {
      const $ = load(doc);
      return $('#s').parents('b').map((_, e) => $(e).attr('class')).get().reverse();
    };
    const plain = reopened(plainParse5(html));
    const bounded = reopened(parseHtml(html));
    assert.equal(plain.length, 70);
    assert.deepEqual(bounded, plain.slice(70 - MAX_FORMATTING_ELEMENTS));
  });

  it(`a document is cut at ${MAX_NODES} nodes and ${MAX_TEXT_CHARS} characters of text, and says so`, () => {
    const many = parseHtml(`<!DOCTYPE html><body>${'<p>a'.repeat(300_000)}`);
    assert.equal(parseTruncation(many), 'nodes');
    let nodes = 0;
    const stack: Array<{ children?: unknown[] }> = [many as { children: unknown[] }];
    while (stack.length) {
      const n = stack.pop()!;
      nodes++;
      for (const c of (n.children ?? []) as Array<{ children?: unknown[] }>) stack.push(c);
    }
    assert.equal(nodes, MAX_NODES + 2); // the document and its doctype are not counted
    assert.equal(parseTruncation(parseHtml('<p>short')), null);
  });

  it('duplicate attributes among 5,000: the first wins, in constant time per attribute, on both paths', () => {
    const attrs = Array.from({ length: 5000 }, (_, i) => `a${i % 4000}="${i}"`).join(' ');
    const html = `<div ${attrs}>x</div>`;
    const doc = fastTree(html);
    const div = load(doc)('div').get(0)!;
    assert.equal(Object.keys(div.attribs).length, 4000);
    assert.equal(div.attribs.a10, '10');
    assert.equal(treeDifference(parseHtmlWithParse5(`${html}\0`), plainParse5(`${html}\0`)), null);
  });
});
