/**
 * The generator's page analysis (lambdas/generator/analyze.ts, docs/generate.md "The generator without an LLM") on
 * small inline pages, one rule each: search results beat the navigation menu beside them; empty ad slots
 * of the records' own class neither count nor get matched by the selector; a "related" rail of the same
 * cards is a list of its own; a list split in two sibling lists of one kind is one list; a responsive
 * page's copies of records for other screen widths are left out with `:not(.hide-xl *)`; products laid out
 * in the cells of a table are the records, not the table's rows; items of a hidden dialog lose to the
 * visible results; `<article>` posts whose classes say "header" and that carry many links are still the
 * records. Each page is built so that the rule, not the page's proportions, decides: with the rule turned
 * off (in a copy of analyze.ts), the test fails. A candidate's count is of the items it keeps.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { analyzePage, type PageAnalysis, type RecordCandidate } from '../../lambdas/generator/analyze.ts';

const URL_ = 'https://shop.example/search?q=lamp';

/** A whole page: a header with a logo and a search form, the content, a footer with a few links. */
function page(title: string, content: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/static/site.css"><script>window.dataLayer = [];</script></head>
<body>
<header class="site-header">
  <a class="logo" href="/"><img src="/static/logo.png" alt="Example"></a>
  <form action="/search" method="get"><input name="q" value="lamp"><button type="submit">Search</button></form>
</header>
${content}
<footer class="site-footer">
  <p>© 2026 Example Ltd. Prices include VAT. Delivery times are estimates.</p>
  <a href="/about">About us</a> <a href="/privacy">Privacy</a> <a href="/terms">Terms of use</a>
</footer>
</body>
</html>`;
}

const WORDS = ['amber', 'brass', 'cedar', 'dune', 'ember', 'fjord', 'granite', 'harbor', 'indigo', 'juniper', 'kestrel', 'linen', 'maple', 'nectar', 'opal', 'pewter', 'quartz', 'russet', 'saffron', 'tundra', 'umber', 'velvet', 'willow', 'yarrow', 'zephyr'];

/** A few distinct words for item `i` (each item says something else). */
function words(i: number, n: number, salt = 0): string {
  return Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 3 + salt) % WORDS.length]).join(' ');
}

function name(i: number, salt = 0): string {
  const w = words(i, 3, salt);
  return `${w[0]!.toUpperCase()}${w.slice(1)} lamp no. ${i + 1}`;
}

function price(i: number): string {
  return `$${(19 + i * 7.5).toFixed(2)}`;
}

/** The top candidates, for assertion messages. */
function top(a: PageAnalysis, n = 4): string {
  return a.candidates.slice(0, n).map((c) => `${c.selector} ×${c.count} (score ${c.score.toFixed(3)}, exact ${c.exact})`).join('; ');
}

/** Asserts the best candidate: its selector, count, and that the selector matches exactly its items. */
function assertBest(a: PageAnalysis, selector: string | RegExp, count: number): RecordCandidate {
  const best = a.candidates[0];
  assert.ok(best, 'no candidate at all');
  if (typeof selector === 'string') assert.equal(best.selector, selector, top(a));
  else assert.match(best.selector, selector, top(a));
  assert.equal(best.count, count, `count of the best candidate; ${top(a)}`);
  assert.equal(best.items.length, count, `items of the best candidate; ${top(a)}`);
  assert.equal(best.exact, true, top(a));
  const matched = a.$(best.selector).toArray();
  assert.equal(matched.length, count, `${best.selector} matches ${matched.length} element(s) on the page`);
  assert.ok(matched.every((el, i) => el === best.items[i]), `${best.selector} matches exactly the items, in order`);
  return best;
}

describe('analyzePage: finding the records', () => {
  it('search results beat the navigation menu beside them', () => {
    // A shop's menu: 8 entries, each a link with its drop-down of sub-categories (as much text as the results).
    const sections: Array<[string, string[]]> = [
      ['Lamps', ['Desk lamps', 'Floor lamps', 'Table lamps', 'Wall lights', 'Pendants', 'Bulbs']],
      ['Chairs', ['Armchairs', 'Dining chairs', 'Office chairs', 'Stools', 'Benches', 'Recliners']],
      ['Tables', ['Coffee tables', 'Side tables', 'Desks', 'Dining tables', 'Consoles', 'Trestles']],
      ['Storage', ['Bookcases', 'Sideboards', 'Wardrobes', 'Shelving', 'Baskets', 'Boxes']],
      ['Textiles', ['Rugs', 'Curtains', 'Cushions', 'Throws', 'Bedding', 'Towels']],
      ['Outdoor', ['Garden chairs', 'Parasols', 'Planters', 'Lanterns', 'Hammocks', 'Grills']],
      ['Decor', ['Mirrors', 'Vases', 'Frames', 'Candles', 'Clocks', 'Posters']],
      ['Sale', ['Last chance', 'Under $50', 'Clearance', 'Bundles', 'Outlet', 'Gift cards']],
    ];
    const slug = (t: string) => t.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const nav = sections.map(([top, subs]) => `
      <li class="nav-item"><a href="/c/${slug(top)}">${top}</a>
        <ul class="dropdown">${subs.map((s) => `<li><a href="/c/${slug(top)}/${slug(s)}">${s}</a></li>`).join('')}</ul>
      </li>`).join('');
    const results = Array.from({ length: 6 }, (_, i) => `
      <div class="result">
        <h3><a href="/item/${i + 1}">${name(i)}</a></h3>
        <cite>/item/${i + 1}</cite>
        <p class="snippet">${words(i, 4)}, linen shade, ${40 + i} cm.</p>
      </div>`).join('\n');
    const a = analyzePage(page('lamp - Search', `
      <nav class="main-nav"><ul class="nav-list">${nav}</ul></nav>
      <div id="search"><p class="stats">About 1,240 results</p>${results}</div>`), URL_);
    const best = assertBest(a, 'div.result', 6);
    assert.match(best.sample, /^Amber .* lamp no\. 1/);
    const menu = a.candidates.find((c) => c.items[0]?.attribs.class === 'nav-item');
    assert.ok(!menu || menu.score < best.score / 2, `the menu scores far below: ${top(a, 8)}`);
  });

  it('empty ad slots of the same class neither count nor are matched by the selector', () => {
    const items: string[] = [];
    for (let i = 0, k = 0; i < 11; i++) {
      if (i === 2 || i === 5 || i === 8) {
        items.push('<li class="item"><div class="ad"></div></li>');
        continue;
      }
      items.push(`
        <li class="item">
          <a class="thumb" href="/p/${k + 1}"><img src="/img/${k + 1}.jpg" alt=""></a>
          <h3><a href="/p/${k + 1}">${name(k)}</a></h3>
          <span class="price">${price(k)}</span>
          <p class="desc">${words(k, 5)}, brass base, ${k + 2} settings.</p>
        </li>`);
      k++;
    }
    const a = analyzePage(page('Lamps', `<main><h1>Lamps</h1><ul class="results">${items.join('\n')}</ul></main>`), URL_);
    const best = assertBest(a, /^li\.item/, 8);
    assert.ok(best.items.every((it) => a.$(it).find('h3').length === 1), 'every item is a product');
    assert.equal(a.$(best.selector).filter((_, el) => a.$(el).find('div.ad').length > 0).length, 0, 'no ad slot matched');
  });

  it('a related rail of the same cards is a list of its own: the 10 results, not 14 cards', () => {
    const card = (i: number, salt: number) => `
      <div class="card">
        <a href="/hotel/${salt}-${i}"><img src="/img/h${salt}-${i}.jpg" alt=""></a>
        <h2><a href="/hotel/${salt}-${i}">Hotel ${name(i, salt)}</a></h2>
        <span class="rating">${(7 + (i % 3) * 0.6).toFixed(1)} Very good</span>
        <p class="desc">${words(i, 6, salt)}, ${i + 1} km from the centre, breakfast included.</p>
        <span class="price">${price(i + salt)} a night</span>
      </div>`;
    const main = Array.from({ length: 10 }, (_, i) => card(i, 0)).join('\n');
    const rail = Array.from({ length: 4 }, (_, i) => card(i, 11)).join('\n');
    const a = analyzePage(page('Hotels in Lisbon', `
      <div class="layout">
        <main id="results"><h1>Hotels in Lisbon</h1>${main}</main>
        <div class="related-rail"><h2>People also looked at</h2>${rail}</div>
      </div>`), URL_);
    const best = assertBest(a, '#results > div.card', 10);
    assert.ok(best.items.every((it) => it.parent && (it.parent as { attribs?: Record<string, string> }).attribs?.id === 'results'));
  });

  it('a list split in two sibling lists of one kind and class is one list of 16', () => {
    // The first row: headlines only; the rest with a summary and a byline. Alone, the 12 fuller ones score best.
    const headline = (i: number) => `<h3><a href="/story/${i + 1}">${name(i).replace(/ lamp no\. \d+/, '')} ${['rises', 'falls', 'returns', 'wins'][i % 4]} in ${2020 + (i % 6)}</a></h3>`;
    const time = (i: number) => `<time datetime="2026-03-${String(i + 1).padStart(2, '0')}">March ${i + 1}</time>`;
    const short = (i: number) => `<li class="teaser">${headline(i)}${time(i)}</li>`;
    const full = (i: number) => `
      <li class="teaser">
        ${headline(i)}
        <p>${words(i, 7)} and what it means for the city.</p>
        <span class="byline">By ${words(i, 2, 8)}</span>
        ${time(i)}
      </li>`;
    const a = analyzePage(page('Latest stories', `
      <main><h1>Latest</h1>
        <ol class="teasers">${Array.from({ length: 4 }, (_, i) => short(i)).join('\n')}</ol>
        <div class="ad-slot"><p>Advertisement</p></div>
        <ol class="teasers">${Array.from({ length: 12 }, (_, i) => full(i + 4)).join('\n')}</ol>
      </main>`), URL_);
    const best = assertBest(a, 'li.teaser', 16);
    assert.match(best.sample, /^Amber .* rises in 2020/);
  });

  /** 12 listing cards in a grid, and a promoted row as a desktop shows it (4 cards) and as narrower screens do (3 of them). */
  function responsivePage(): PageAnalysis {
    const card = (i: number) => `
      <div class="listing-card">
        <a class="listing-link" href="/listing/${i + 1}"><img src="/img/l${i + 1}.jpg" alt=""></a>
        <h3 class="title">${name(i)} with ${words(i, 2, 9)} shade</h3>
        <span class="shop">${words(i, 1, 4)} studio</span>
        <span class="price">${price(i)}</span>
      </div>`;
    const promotedXl = Array.from({ length: 4 }, (_, i) => card(100 + i)).join('\n');
    const promotedNarrow = Array.from({ length: 3 }, (_, i) => card(100 + i)).join('\n');
    const grid = Array.from({ length: 12 }, (_, i) => card(i)).join('\n');
    return analyzePage(page('Handmade lamps', `
      <main class="search-listings">
        <p class="label">Ads by sellers</p>
        <div class="hide-xs hide-sm hide-md hide-lg prolist-row">${promotedXl}</div>
        <div class="hide-xl prolist-row">${promotedNarrow}</div>
        <div class="grid">${grid}</div>
      </main>`), URL_);
  }

  it("a responsive page's copies of records for other widths are left out: 16 cards, :not(.hide-xl *)", () => {
    const a = responsivePage();
    const best = a.candidates[0]!;
    assert.match(best.selector, /^div\.listing-card.*:not\(\.hide-xl \*\)$/, top(a));
    assert.equal(best.exact, true, top(a));
    const matched = a.$(best.selector).toArray();
    assert.equal(matched.length, 16, `${best.selector} matches the 12 cards and the 4 a desktop shows`);
    assert.ok(matched.every((el, i) => el === best.items[i]), 'the selector matches exactly the items, in order');
    assert.equal(a.$(best.selector).filter((_, el) => a.$(el).closest('.hide-xl').length > 0).length, 0, 'no copy for narrow screens');
    assert.equal(a.$(best.selector).filter((_, el) => a.$(el).closest('.hide-lg').length > 0).length, 4, 'the row a desktop shows');
  });

  // The count is of the items kept, not of the scored group with the copies for narrow screens (19 here): the
  // notes and the agent's candidate list say it.
  it("a responsive page's candidate counts the items it keeps (16, not 19)", () => {
    const a = responsivePage();
    assert.equal(a.candidates[0]!.count, a.candidates[0]!.items.length, top(a));
    assert.equal(a.candidates[0]!.count, 16, top(a));
  });

  it('products in the cells of a table laid out as a grid are the records, not its rows', () => {
    const product = (i: number) => `<td><div class="productContainer">
        <a class="productName" href="/product/${i + 1}">${name(i)}</a>
        <span class="productPrice">${price(i)}</span>
        <a href="/product/${i + 1}"><img src="/img/p${i + 1}.jpg" alt=""></a>
        <span class="brand">${words(i, 1, 2)} &amp; co</span>
        <span class="stock">${i % 3 ? 'In stock' : 'Ships in 3 days'}</span>
        <span class="sku">SKU ${4000 + i * 13}</span>
      </div></td>`;
    const spacer = '<tr class="spacer"><td></td><td></td><td></td><td></td></tr>';
    const rows = Array.from({ length: 3 }, (_, r) => `<tr>${Array.from({ length: 4 }, (_, c) => product(r * 4 + c)).join('')}</tr>`);
    const a = analyzePage(page('All products', `
      <div id="content"><h1>All products</h1>
        <table id="products" width="100%" cellpadding="0"><tbody>${rows.join(spacer)}${spacer}</tbody></table>
      </div>`), URL_);
    assertBest(a, 'div.productContainer', 12);
  });

  it('items of a hidden dialog lose to the visible results', () => {
    const pick = (i: number) => `
      <a class="pick" href="/pick/${i + 1}">
        <img src="/img/pick${i + 1}.jpg" alt="">
        <span class="pick-name">${name(i, 13)}</span>
        <span class="pick-note">${words(i, 4, 6)}, staff favourite</span>
        <span class="pick-price">${price(i + 3)}</span>
      </a>`;
    const result = (i: number) => `
      <div class="result">
        <a href="/p/${i + 1}"><img src="/img/r${i + 1}.jpg" alt=""></a>
        <h2><a href="/p/${i + 1}">${name(i)}</a></h2>
        <p class="desc">${words(i, 5)}, ${i + 2} brightness settings.</p>
        <span class="price">${price(i)}</span>
      </div>`;
    const a = analyzePage(page('Lamps', `
      <div class="modal hide" id="picks" role="dialog"><div class="modal-body"><h2>Our picks</h2>${Array.from({ length: 10 }, (_, i) => pick(i)).join('\n')}</div></div>
      <main><h1>Lamps</h1><div class="results">${Array.from({ length: 8 }, (_, i) => result(i)).join('\n')}</div></main>`), URL_);
    assertBest(a, 'div.result', 8);
    const picks = a.candidates.find((c) => c.items[0]?.attribs.class === 'pick');
    assert.ok(picks, `the picks are a candidate: ${top(a, 8)}`);
  });

  it('<article> posts whose classes say "header" and that carry many links are still the records', () => {
    const post = (i: number) => `
      <article class="post reblog_header" data-id="${i + 1}">
        <div class="post-info">
          <a class="avatar" href="/blog/${WORDS[i]}"><img src="/img/a${i}.png" alt=""></a>
          <a class="blog-name" href="/blog/${WORDS[i]}">${WORDS[i]}-daily</a>
          <a class="reblog-from" href="/blog/${WORDS[(i + 3) % WORDS.length]}">${WORDS[(i + 3) % WORDS.length]}-archive</a>
          <a class="follow" href="/follow/${WORDS[i]}">Follow</a>
        </div>
        <div class="post-body">
          <p><a href="/post/${i + 1}">${name(i)}</a> found at the <a href="/tagged/market">flea market</a>, ${words(i, 4)}.</p>
          <p>${words(i, 6, 2)}; more in <a href="/post/${i + 100}">the last post</a>.</p>
        </div>
        <div class="post-tags">${Array.from({ length: 5 }, (_, k) => `<a class="tag" href="/tagged/${WORDS[(i + k * 2) % WORDS.length]}">#${WORDS[(i + k * 2) % WORDS.length]}</a>`).join(' ')}</div>
        <div class="post-footer"><a class="notes" href="/post/${i + 1}#notes">${12 + i * 5} notes</a> <a class="share" href="/share/${i + 1}">Share</a> <a class="reply" href="/reply/${i + 1}">Reply</a></div>
      </article>`;
    const a = analyzePage(page('Dashboard', `<main><div class="posts">${Array.from({ length: 6 }, (_, i) => post(i)).join('\n')}</div></main>`), URL_);
    const best = assertBest(a, /^article\.post/, 6);
    assert.ok(best.features.linksPerItem! > 6 && best.features.linkShare! > 0.5, `many links, mostly link text: ${JSON.stringify(best.features)}`);
    assert.equal(best.features.chrome, 0);
  });
});

/**
 * Which list is the results (issue 23): lists in page chrome (`<aside>`, `<nav>`, `<footer>`) and in furniture
 * beside the results (a carousel of recommendations) lose to the results even when they are longer; records spread
 * over sibling elements (a table's quote row and tags row, `dt`/`dd`, a heading and its paragraph) are one
 * candidate with `span` 1 whose selector matches exactly each record's first element; items without a class get
 * an attribute or a structural selector that matches exactly them. Two first showed defects (an aside beside
 * <main> holding most of the text, a header and a pager row around class-less rows); they are fixed.
 */
describe('analyzePage: choosing the results among other lists (issue 23)', () => {
  /** A search result: a linked title, a snippet, a price. */
  const result = (i: number) => `
      <div class="result">
        <h3><a href="/item/${i + 1}">${name(i)}</a></h3>
        <p class="snippet">${words(i, 4)}, linen shade, ${40 + i} cm.</p>
        <span class="price">${price(i)}</span>
      </div>`;
  /** `n` guides, each one long link: a list longer than the results, with more text. */
  const guides = (n: number) => Array.from({ length: n }, (_, i) => `
        <li><a href="/guide/${i + 1}">${cap(words(i, 3, 5))} guide: how to choose a lamp for a ${words(i, 2, 11)} room and keep it for years</a></li>`).join('');
  const cap = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}`;
  /** Share of the page's text inside the first element matching `selector`. */
  const share = (a: PageAnalysis, selector: string) => a.$(selector).first().text().replace(/\s/g, '').length / a.textLength;

  for (const landmark of ['aside', 'nav', 'footer']) {
    it(`results in <main> beat a longer list of long links inside <${landmark}> that holds most of the page's text`, () => {
      const a = analyzePage(page('lamp - Search', `
      <div class="layout">
        <main><h1>Results for lamp</h1>${Array.from({ length: 6 }, (_, i) => result(i)).join('')}</main>
        <${landmark}><h2>Buying guides</h2><ul>${guides(16)}</ul></${landmark}>
      </div>`), URL_);
      assert.ok(share(a, `div.layout > ${landmark}`) > 0.6, `the ${landmark} holds most of the text (${share(a, `div.layout > ${landmark}`).toFixed(2)})`);
      assertBest(a, 'div.result', 6);
      const links = a.candidates.find((c) => c.count === 16);
      assert.ok(links, `the guides are a candidate: ${top(a)}`);
      assert.ok(links.score < a.candidates[0]!.score / 2, top(a));
    });
  }

  it('results in <main> beat a longer list of long links in an <aside> beside it that holds 85% of the page\'s text', () => {
    // The aside lies beside <main>, it does not wrap the page: its share of the text does not make it the content.
    const a = analyzePage(page('lamp - Search', `
      <div class="layout">
        <main><h1>Results for lamp</h1>${Array.from({ length: 6 }, (_, i) => result(i)).join('')}</main>
        <aside><h2>Buying guides</h2><ul>${guides(30)}</ul></aside>
      </div>`), URL_);
    assert.ok(share(a, 'div.layout > aside') > 0.8, `the aside holds ${share(a, 'div.layout > aside').toFixed(2)} of the text`);
    assertBest(a, 'div.result', 6);
  });

  it('results beat a carousel of recommended products with more items', () => {
    const product = (i: number) => `
          <div class="product-card">
            <a href="/p/${i + 1}"><img src="/img/rec${i + 1}.jpg" alt=""></a>
            <a class="name" href="/p/${i + 1}">${name(i, 17)}</a>
            <span class="price">${price(i + 5)}</span>
          </div>`;
    const a = analyzePage(page('Lamps', `
      <main><h1>Lamps</h1>
        <div class="results">${Array.from({ length: 6 }, (_, i) => result(i)).join('')}</div>
        <div class="recommendations"><h2>Recommended for you</h2>
          <div class="carousel">${Array.from({ length: 14 }, (_, i) => product(i)).join('')}</div>
        </div>
      </main>`), URL_);
    assertBest(a, 'div.result', 6);
    assert.ok(a.candidates.some((c) => c.count === 14 && c.items[0]!.attribs.class === 'product-card'), `the carousel is a candidate: ${top(a)}`);
  });
});

describe('analyzePage: records spread over sibling elements, items without a class (issue 23)', () => {
  /** Asserts the best candidate is made of records of the first element and the one after it. */
  function assertPairs(a: PageAnalysis, count: number, firstTag: string, secondTag: string): RecordCandidate {
    const best = a.candidates[0]!;
    assert.equal(best.span, 1, top(a));
    assertBest(a, best.selector, count);
    assert.equal(best.members.length, count);
    for (const [i, m] of best.members.entries()) {
      assert.equal(m.length, 2, `record ${i} is two elements`);
      assert.equal(m[0], best.items[i]);
      assert.equal(m[0]!.name, firstTag);
      assert.equal(m[1]!.name, secondTag);
      assert.equal(a.$(m[0]!).nextAll().first()[0], m[1], `record ${i}: the element right after the first`);
    }
    return best;
  }

  it('a table of class-less rows, a quote row (tr[style]) then a row of tag links, between a header row and a pager row: span 1, the quote rows', () => {
    const rows = Array.from({ length: 8 }, (_, i) => `
      <tr style="border-bottom: 0px; "><td style="padding-top: 2em;">“${cap(words(i, 5))} is all we ever asked for.” Author: ${cap(words(i, 2, 13))}</td></tr>
      <tr><td style="padding-bottom: 2em;">Tags: ${Array.from({ length: 1 + (i % 4) }, (_, k) => `<a href="/tag/${WORDS[(i + k * 5) % WORDS.length]}/">${WORDS[(i + k * 5) % WORDS.length]}</a>`).join('\n')}</td></tr>`).join('');
    const a = analyzePage(page('Quotes', `
      <table>
        <tr><td></td><td rowspan="5"><h3>Top ten tags</h3>${WORDS.slice(0, 10).map((t, k) => `<a href="/tag/${t}/">${t}</a> (${20 - k}) <br>`).join('\n')}</td></tr>
        ${rows}
        <tr><td><a href="/page/2/">Next <span aria-hidden="true">→</span></a></td></tr>
      </table>`), URL_);
    const best = assertPairs(a, 8, 'tr', 'tr');
    assert.match(best.selector, /^tr\[style/, 'an attribute the quote rows have and the others lack');
    assert.ok(best.items.every((tr) => tr.attribs.style === 'border-bottom: 0px; '));
    const all = a.$('table tr').toArray();
    const inRecords = new Set(best.members.flat());
    assert.ok(!inRecords.has(all[0]!), 'the header row is in no record');
    assert.ok(!inRecords.has(all[all.length - 1]!), 'the pager row is in no record');
    assert.match(best.sample, /^“\S.* Author: .* Tags: /);
  });

  function cap(s: string): string {
    return `${s[0]!.toUpperCase()}${s.slice(1)}`;
  }

  it('a glossary of dt/dd pairs: span 1, the dt elements', () => {
    const a = analyzePage(page('Glossary', `
      <main><h1>Lighting glossary</h1>
        <dl>${Array.from({ length: 9 }, (_, i) => `
          <dt>${cap(words(i, 2, 3))}</dt>
          <dd>A ${words(i, 3)} tone of light, between ${words(i, 2, 7)} and ${words(i, 1, 11)}, first named in ${1900 + i * 7}.</dd>`).join('')}
        </dl>
      </main>`), URL_);
    const best = assertPairs(a, 9, 'dt', 'dd');
    assert.match(best.sample, /^\S+ \S+ A .* first named in 1900\.$/);
  });

  it('questions as h3 headings each followed by its answer paragraph: span 1, the headings', () => {
    const a = analyzePage(page('FAQ', `
      <main><section class="faq"><h2>Questions about lamps</h2>${Array.from({ length: 7 }, (_, i) => `
        <h3>Can I order a ${words(i, 2)} shade?</h3>
        <p>Yes: ${words(i, 2)} shades ship in ${i + 2} days from our ${words(i, 1, 6)} workshop, wrapped in ${words(i, 1, 9)} paper.</p>`).join('')}
      </section></main>`), URL_);
    const best = assertPairs(a, 7, 'h3', 'p');
    assert.ok(best.items.every((h) => a.$(h).text().startsWith('Can I order')));
  });

  it('rows without a class in a data table beside layout tables: an attribute selector (tr[valign]) that matches exactly them', () => {
    const a = analyzePage(page('Price list', `
      <table width="100%"><tr><td><a href="/">Home</a></td><td><a href="/new">New</a></td><td><a href="/faq">FAQ</a></td></tr></table>
      <table cellpadding="4">
        <thead><tr><th>Item</th><th>Price</th><th>Notes</th></tr></thead>
        <tbody>${Array.from({ length: 8 }, (_, i) => `
          <tr valign="top"><td><a href="/p/${i + 1}">${name(i)}</a></td><td>${price(i)}</td><td>${words(i, 3, 4)} shade, ${30 + i} cm</td></tr>`).join('')}
        </tbody>
      </table>
      <table><tr><td>Terms</td></tr><tr><td>Privacy</td></tr><tr><td>Cookies</td></tr></table>`), URL_);
    const best = assertBest(a, /^(.* > )?tr\[valign/, 8);
    assert.ok(best.items.every((tr) => tr.attribs.valign === 'top' && !tr.attribs.class));
  });

  it('list items without a class among other class-less lists: a structural selector that matches exactly them', () => {
    const a = analyzePage(page('Lamps', `
      <ul><li><a href="/">Home</a></li><li><a href="/about">About</a></li><li><a href="/contact">Contact</a></li></ul>
      <div><h2>Lamps</h2>
        <ul>${Array.from({ length: 8 }, (_, i) => `
          <li><a href="/p/${i + 1}">${name(i)}</a> <span>${price(i)}</span> <p>${words(i, 3, 4)} shade, ${30 + i} cm</p></li>`).join('')}
        </ul>
      </div>
      <ul><li>Terms</li><li>Privacy</li><li>Cookies</li></ul>`), URL_);
    const best = assertBest(a, /(^|[ >])li$/, 8);
    assert.doesNotMatch(best.selector, /[.#[]/, 'no class, id or attribute to anchor on: a path');
    assert.match(best.sample, /^Amber .* lamp no\. 1/);
  });

  it('a header row of <th> cells and a pager row around class-less table rows are no records', () => {
    const a = analyzePage(page('Price list', `
      <table cellpadding="4">
        <tr><th>Item</th><th>Price</th><th>Notes</th></tr>${Array.from({ length: 8 }, (_, i) => `
        <tr valign="top"><td><a href="/p/${i + 1}">${name(i)}</a></td><td>${price(i)}</td><td>${words(i, 3, 4)} shade, ${30 + i} cm</td></tr>`).join('')}
        <tr><td colspan="3"><a href="?page=2">Next page</a></td></tr>
      </table>`), URL_);
    const best = assertBest(a, /tr/, 8);
    assert.ok(best.items.every((tr) => tr.attribs.valign === 'top'), `the 8 product rows only: ${best.sample}`);
  });
});
