/**
 * The content extractor (lambdas/tools/content.ts): the fixture's news article (test/fixtures/site/article.ts), then
 * its rules one by one on inline pages. The extractor on the 130 Mozilla Readability test pages of the corpus, against
 * Readability's own output: test/corpus/tools-content.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { contentReportSchema, countWords, extractContent, normaliseTime, readingTimeMinutes, WORDS_PER_MINUTE, type ContentReport } from '../../lambdas/tools/content.ts';
import { tokenF1, tokenize } from '../../lambdas/tools/content-score.ts';
import { toolPage } from '../helpers/tool-page.ts';
import { ARTICLE, articleHtml, articleText } from '../fixtures/site/article.ts';
import { bookshopPage } from '../fixtures/site/books.ts';

const validate = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true }).compile(contentReportSchema);

function assertValid(report: ContentReport, label: string): void {
  assert.ok(validate(report), `${label}: ${JSON.stringify(validate.errors)}`);
}

describe('extractContent on the fixture article', () => {
  const url = 'http://news.example/article/';
  const r = extractContent(toolPage(articleHtml(), url));

  it('its metadata: title, byline, site name, language, excerpt, published time, readerable', () => {
    assertValid(r, 'article');
    assert.deepEqual(
      [r.title, r.byline, r.site_name, r.lang, r.excerpt, r.published_time, r.readerable],
      [ARTICLE.title, ARTICLE.byline, ARTICLE.siteName, ARTICLE.lang, ARTICLE.excerpt, ARTICLE.publishedTime, true],
    );
  });

  it('its text: every paragraph, list item and table cell (token F1 above 0.95), none of the menu, share bar, newsletter box, related links or footer', () => {
    const f1 = tokenF1(r.text, articleText()).f1;
    assert.ok(f1 > 0.95, `token F1 ${f1}`);
    for (const p of ARTICLE.paragraphs) assert.ok(r.text.includes(p), p.slice(0, 40));
    for (const item of ARTICLE.listItems) assert.ok(r.text.includes(item), item);
    assert.doesNotMatch(r.text, /Copy link|Sign up|Get the Courier|Readers remember|Privacy|What's on/);
    assert.equal(r.word_count, countWords(r.text, r.lang));
    assert.equal(r.reading_time_minutes, readingTimeMinutes(r.word_count));
  });

  it('its two figures, absolute', () => {
    assert.deepEqual(r.images, [
      { src: 'http://news.example/media/quay-street-barrier.jpg', alt: 'Volunteers raising the barrier panels on Quay Street' },
      { src: 'http://news.example/media/tannery-pumps.jpg', alt: 'The pumps at the old tannery' },
    ]);
  });
});

describe('extractContent on inline pages', () => {
  const para = (i: number) => `<p>Paragraph ${i} of the story tells, in plain words and at some length, what happened on the day the river rose, and why the town was ready for it this time.</p>`;
  const article = (body: string, head = '<title>River story – The Town Paper</title>') =>
    `<!DOCTYPE html><html lang="en"><head>${head}</head><body><nav><a href="/">Home</a> <a href="/news">News</a></nav><article>${body}</article><footer>© The Town Paper</footer></body></html>`;

  it('a listing page (the fixture books page) is not readerable and still gives a valid report', () => {
    const r = extractContent(toolPage(bookshopPage('/books/')!, 'https://books.example/index.html'));
    assertValid(r, 'listing');
    assert.equal(r.readerable, false);
    assert.ok(r.text.length > 0);
    assert.equal(r.word_count, countWords(r.text, r.lang));
    for (const img of r.images) assert.ok(img.src.startsWith('https://books.example/media/'), img.src);
  });

  it('empty HTML gives an empty, valid report', () => {
    for (const html of ['', '   ', '<html></html>', '<html><head><title></title></head><body></body></html>']) {
      const r = extractContent(toolPage(html));
      assertValid(r, JSON.stringify(html));
      assert.equal(r.text, '');
      assert.equal(r.html, '');
      assert.equal(r.word_count, 0);
      assert.equal(r.reading_time_minutes, 0);
      assert.equal(r.readerable, false);
      assert.deepEqual(r.images, []);
    }
  });

  it('non-HTML: JSON and images give an empty report, text/plain its text', () => {
    const json = extractContent(toolPage('{"title":"not a page","body":"<p>hi</p>"}', 'https://example.com/a.json', { contentType: 'application/json' }));
    assertValid(json, 'json');
    assert.equal(json.text, '');
    assert.equal(json.title, null);
    const png = extractContent(toolPage('\u0089PNG\r\n\u001a\n\u0000\u0000\u0000\rIHDR', 'https://example.com/a.png', { contentType: 'image/png' }));
    assertValid(png, 'png');
    assert.equal(png.text, '');
    const plain = extractContent(toolPage('First line of the note.\r\n\r\n\r\nSecond <b>paragraph</b> here.', 'https://example.com/a.txt', { contentType: 'text/plain' }));
    assertValid(plain, 'text');
    assert.equal(plain.text, 'First line of the note.\n\nSecond <b>paragraph</b> here.');
    assert.equal(plain.html, '<pre>First line of the note.\n\nSecond &lt;b&gt;paragraph&lt;/b&gt; here.</pre>');
    // First, line, of, the, note, Second, b, paragraph, b, here (the text is not HTML: `b` is a word).
    assert.equal(plain.word_count, 10);
    assert.equal(plain.readerable, false);
  });

  it('a fragment without <html> or <body>, and broken markup, still give their text', () => {
    const frag = extractContent(toolPage(Array.from({ length: 6 }, (_, i) => para(i)).join(''), 'https://example.com/', { contentType: '' }));
    assert.match(frag.text, /^Paragraph 0 of the story/);
    const broken = extractContent(toolPage(`<html><head><title>Broken</title><body><div><p>${'Unclosed paragraph with words, '.repeat(30)}<div><span>inner<p>second ${'more words, '.repeat(40)}</div></div></div></section>`));
    assertValid(broken, 'broken');
    assert.match(broken.text, /Unclosed paragraph with words/);
    assert.match(broken.text, /second more words/);
  });

  it('relative image URLs are made absolute against the final URL and <base href>', () => {
    const body = `${para(1)}<img src="photo.jpg" alt=" The  river "><img src="/top.png"><img src="//cdn.example.org/c.webp"><img data-src="lazy.jpg" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><img src="photo.jpg">${para(2)}${para(3)}${para(4)}`;
    const r = extractContent(toolPage(article(body), 'https://example.com/2024/river', { requestedUrl: 'http://example.com/r', redirectChain: ['http://example.com/r', 'https://example.com/2024/river'] }));
    assert.deepEqual(r.images.map((i) => i.src), ['https://example.com/2024/photo.jpg', 'https://example.com/top.png', 'https://cdn.example.org/c.webp', 'https://example.com/2024/lazy.jpg']);
    assert.equal(r.images[0]!.alt, 'The river');
    assert.match(r.html, /src="https:\/\/example\.com\/2024\/photo\.jpg"/);
    const based = extractContent(toolPage(article(body, '<title>x</title><base href="https://static.example.net/media/">'), 'https://example.com/2024/river'));
    assert.equal(based.images[0]!.src, 'https://static.example.net/media/photo.jpg');
    const relBase = extractContent(toolPage(article(body, '<title>x</title><base href="/assets/">'), 'https://example.com/2024/river'));
    assert.equal(relBase.images[1]!.src, 'https://example.com/top.png');
    assert.equal(relBase.images[0]!.src, 'https://example.com/assets/photo.jpg');
  });

  it('reading time: 238 words a minute, rounded to the nearest minute, at least 1 for any words', () => {
    assert.equal(WORDS_PER_MINUTE, 238);
    assert.equal(readingTimeMinutes(0), 0);
    assert.equal(readingTimeMinutes(1), 1);
    assert.equal(readingTimeMinutes(238), 1);
    assert.equal(readingTimeMinutes(356), 1);
    assert.equal(readingTimeMinutes(357), 2);
    assert.equal(readingTimeMinutes(2380), 10);
    // 20 paragraphs of 31 words, the title's heading aside: 620 words, 2.6 minutes.
    const r = extractContent(toolPage(article(Array.from({ length: 20 }, (_, i) => para(i)).join(''))));
    assert.equal(tokenize(para(0).replace(/<[^>]+>/g, '')).length, 31);
    assert.equal(r.word_count, 620);
    assert.equal(r.reading_time_minutes, 3);
  });

  it('counts words of scripts without spaces by dictionary (Japanese), not one a sentence', () => {
    assert.equal(countWords('The river rose, again.'), 4);
    assert.ok(countWords('今日は川の水が増えました', 'ja') >= 4);
  });

  it('metadata: JSON-LD headline, author and datePublished; the title without its site part', () => {
    const ld = JSON.stringify({ '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'River story', author: [{ '@type': 'Person', name: 'Ann Lee' }, { '@type': 'Person', name: 'Bo Chen' }], datePublished: '2024-03-05T10:00:00+01:00', publisher: { '@type': 'Organization', name: 'The Town Paper' } });
    const r = extractContent(toolPage(article(Array.from({ length: 8 }, (_, i) => para(i)).join(''), `<title>River story – The Town Paper</title><script type="application/ld+json">${ld}</script>`)));
    assert.equal(r.title, 'River story');
    assert.equal(r.byline, 'Ann Lee, Bo Chen');
    assert.equal(r.published_time, '2024-03-05T10:00:00+01:00');
    assert.equal(r.site_name, 'The Town Paper');
    assert.equal(r.lang, 'en');
    assert.equal(r.readerable, true);
    assert.match(r.excerpt ?? '', /^Paragraph 0 of the story/);
  });

  it('metadata: <time datetime> and article:published_time; dates read as ISO 8601', () => {
    const withTime = extractContent(toolPage(article(`<p class="meta">Published <time datetime="2023-11-02">2 November 2023</time></p>${Array.from({ length: 8 }, (_, i) => para(i)).join('')}`, '<title>A long enough headline for the page</title>')));
    assert.equal(withTime.published_time, '2023-11-02');
    const withMeta = extractContent(toolPage(article(Array.from({ length: 8 }, (_, i) => para(i)).join(''), '<title>t</title><meta property="article:published_time" content="Tue, 05 Mar 2019 10:00:00 GMT">')));
    assert.equal(withMeta.published_time, '2019-03-05T10:00:00.000Z');
    assert.equal(normaliseTime('March 5, 2019'), '2019-03-05T00:00:00.000Z');
    assert.equal(normaliseTime('2019-03-05 10:00'), '2019-03-05T10:00');
    assert.equal(normaliseTime('yesterday'), 'yesterday');
    assert.equal(normaliseTime('1551780000'), '1551780000');
  });

  it('lang falls back to the Content-Language header', () => {
    const html = `<html><head><title>t</title></head><body><article>${Array.from({ length: 6 }, (_, i) => para(i)).join('')}</article></body></html>`;
    assert.equal(extractContent(toolPage(html, 'https://example.com/', { headers: { 'content-language': 'de-DE, en' } })).lang, 'de-DE');
    assert.equal(extractContent(toolPage(html)).lang, null);
  });

  it('removes share bars and newsletter boxes Readability keeps, never a large block', () => {
    const paras = Array.from({ length: 10 }, (_, i) => para(i)).join('');
    const share = '<div class="share-bar"><a href="https://twitter.com/x">Tweet this</a> <a href="https://facebook.com/x">Post on Facebook</a></div>';
    const news = '<div class="c-newsletter"><p>Sign up for our daily newsletter and get the news first.</p></div>';
    const r = extractContent(toolPage(article(`${share}${paras}${news}`)));
    assert.doesNotMatch(r.text, /Tweet this|Facebook|daily newsletter/);
    assert.match(r.text, /Paragraph 9 of the story/);
    // A "related" block holding most of the text is the article, whatever its class says.
    const big = extractContent(toolPage(article(`<div class="related-story">${paras}</div>`)));
    assert.match(big.text, /Paragraph 0 of the story[\s\S]*Paragraph 9 of the story/);
    // A heading is never removed for its name; an id of many words (an anchor made of a heading's text) is no name.
    const heading = extractContent(toolPage(article(`${paras}<h3 class="subscription">Subscription prices</h3><div id="Share_price_history_of_the_firm"><p>The share price doubled in ten years.</p></div>${paras}`)));
    assert.match(heading.text, /Subscription prices\n\nThe share price doubled in ten years\./);
  });

  it('keeps the described picture a share overlay wraps, not the overlay', () => {
    const paras = Array.from({ length: 10 }, (_, i) => para(i)).join('');
    const overlay = '<div class="mbArticleSharePic"><div class="mbArticleShareBtn"><span>Share on Weibo</span></div><img alt="The river at its highest, seen from the bridge" src="/img/river.jpg"></div>';
    const r = extractContent(toolPage(article(`${overlay}${paras}`), 'https://example.com/news/river'));
    assert.doesNotMatch(r.text, /Share on Weibo/);
    assert.deepEqual(r.images, [{ src: 'https://example.com/img/river.jpg', alt: 'The river at its highest, seen from the bridge' }]);
    assert.doesNotMatch(r.html, /data-sai|class="mb/);
  });

  it('narrows a result that took the whole page to the declared article body', () => {
    const menu = Array.from({ length: 40 }, (_, i) => `<li><a href="/c/${i}">Category number ${i} of the shop</a></li>`).join('');
    const step = (i: number) => `<li>Step ${i}: mix the flour, the water and the salt, then knead the dough for ten minutes.</li>`;
    const html = `<html><head><title>Bread</title></head><body><header><ul>${menu}</ul></header><div itemprop="articleBody"><h1>Bread</h1><ul>${Array.from({ length: 12 }, (_, i) => step(i)).join('')}</ul></div><footer><ul>${menu}</ul></footer></body></html>`;
    const r = extractContent(toolPage(html));
    assert.match(r.text, /Step 0: mix the flour[\s\S]*Step 11/);
    assert.doesNotMatch(r.text, /Category number/);
  });

  // Issue 27: the text people label as the article's body (the article-extraction-benchmark's labels, trafilatura's rules).
  const paras10 = Array.from({ length: 10 }, (_, i) => para(i)).join('');

  it('removes bylines, dates, post meta, tag lists, comments and screen-reader text named so, and <nav> and <header> inside the article', () => {
    const body =
      '<header><h1>River story</h1><p class="dek">Why the town was ready this time, in one line</p></header>' +
      '<div class="c-byline">By Ann Lee, river reporter</div><p class="post-date">March 5, 2024 10:00</p>' +
      `${paras10.slice(0, paras10.length / 2)}<nav><a href="/prev">Previous story</a> <a href="/next">Next story</a></nav>${paras10.slice(paras10.length / 2)}` +
      '<p class="entry-meta">Filed under: Rivers, Towns</p><ul class="tags"><li>floods</li><li>weather</li></ul>' +
      '<span class="screen-reader-text">Opens in a new window</span><div id="comments"><p>Great story, thanks!</p></div>';
    const r = extractContent(toolPage(article(body)));
    assert.match(r.text, /^Paragraph 0 of the story[\s\S]*Paragraph 9 of the story/);
    assert.doesNotMatch(r.text, /River story|Why the town|Ann Lee|March 5|Previous story|Filed under|floods|new window|Great story/);
  });

  it('a block named as boilerplate inside a wrapper whose name misleads is removed on its own (blocks nest)', () => {
    // The whole article sits in a class naming related content: too big to remove; the share bar inside still goes.
    const r = extractContent(toolPage(article(`<div class="entry related-content">${paras10}<p class="sharing-note">Share this story with your friends and family today.</p></div>`)));
    assert.match(r.text, /Paragraph 0 of the story[\s\S]*Paragraph 9 of the story/);
    assert.doesNotMatch(r.text, /Share this story/);
  });

  it('a word after "no" names nothing (no-caption), and MathJax containers are never a menu', () => {
    const item = '<div class="item no_caption"><h2>The mother of the diver described the rescue at length</h2><p>Her account, given to reporters on the bank of the river the day after, ran to many careful sentences and long quotes.</p></div>';
    const r = extractContent(toolPage(article(`${paras10}${item}`)));
    assert.match(r.text, /The mother of the diver described the rescue/);
    const math = extractContent(toolPage(article(`${paras10}<p>The rate is <span class="MathJax CtxtMenu_Attached_0">x squared plus one</span> over the year.</p>`)));
    assert.match(math.text, /x squared plus one/);
  });

  it('leaves image captions and credits out of the text and keeps them in the HTML beside the image', () => {
    const figure = '<figure><img src="/img/river.jpg" alt="The river at its highest"><figcaption>The river at its highest, seen from the old bridge. Photo: Bo Chen</figcaption></figure>';
    const credit = '<p class="image-credit">Getty Images</p>';
    const r = extractContent(toolPage(article(`${para(0)}${figure}${credit}${paras10}`), 'https://example.com/news/river'));
    assert.doesNotMatch(r.text, /seen from the old bridge|Getty Images/);
    assert.match(r.html, /<figcaption>The river at its highest, seen from the old bridge/);
    assert.deepEqual(r.images.map((i) => i.src), ['https://example.com/img/river.jpg']);
    assert.equal(r.word_count, countWords(r.text, r.lang));
  });

  it('removes links to elsewhere: lists of headlines, runs of link paragraphs with their label, "Related: …"; keeps a lone link paragraph and a cited address', () => {
    const more = '<h4>More:</h4><ul><li><h4><a href="/a">China completes landing test for its first Mars mission</a></h4></li><li><h4><a href="/b">The new space race, explained in ten charts</a></h4></li></ul>';
    const dontMiss = '<p><strong>DON\'T MISS</strong></p><p><a href="/c">Town council votes on the new flood wall [VIDEO]</a></p><p><a href="/d">Rain to return at the weekend, forecasters say [INSIGHT]</a></p>';
    const related = '<p>Related: <a href="/e">How the river was tamed a century ago by the engineers of the town</a></p>';
    const lone = '<p><a href="/results">Click for the full results of the river race</a></p>';
    const cited = '<p>Source: <a href="https://archive.example.org/1890/flood">https://archive.example.org/1890/flood</a></p>';
    const inProse = '<p>The council\'s <a href="report.html">report on the flood</a> was published on Monday, with the mayor\'s long answer to it.</p>';
    const r = extractContent(toolPage(article(`${para(0)}${more}${para(1)}${dontMiss}${para(2)}${related}${para(3)}${lone}${para(4)}${cited}${inProse}${para(5)}${para(6)}${paras10}`), 'https://example.com/news/river'));
    assert.doesNotMatch(r.text, /More:|Mars mission|space race|DON'T MISS|flood wall|Rain to return|Related:|tamed a century/);
    assert.match(r.text, /Click for the full results/);
    assert.match(r.text, /Source: https:\/\/archive\.example\.org\/1890\/flood/);
    assert.match(r.text, /report on the flood was published on Monday/);
    assert.match(r.html, /href="https:\/\/example\.com\/news\/report\.html"/);
    assert.match(r.text, /Paragraph 0 of the story[\s\S]*Paragraph 6 of the story/);
  });

  it('removes a block that repeats the headline (3 words or more), not a heading of the body that shares a word', () => {
    const head = '<title>Town keeps dry as river rises – The Town Paper</title>';
    const gallery = '<div class="overlay"><div>Town keeps dry as river rises</div></div>';
    const r = extractContent(toolPage(article(`${gallery}${para(0)}${para(1)}<h2>River rises again downstream</h2>${paras10}`, head)));
    assert.doesNotMatch(r.text, /Town keeps dry/);
    assert.match(r.text, /River rises again downstream\n\nParagraph 0/);
  });

  it("removes a line holding the page's own address (print header, citation), not a line citing another page", () => {
    const url = 'https://example.com/news/article/River-rises-123.php';
    const printHeader = `<div><img src="/logo.png" alt=""><span>${url}</span></div>`;
    const citation = `<p><strong>Citation</strong>: River rises (2019, November 18) retrieved 20 November 2019 from ${url}</p>`;
    const other = '<p>The full report is at https://example.org/reports/river-2019.pdf for anyone who asks.</p>';
    const r = extractContent(toolPage(article(`${printHeader}${paras10}${other}${citation}`), url));
    assert.doesNotMatch(r.text, /River-rises-123|Citation|retrieved 20 November/);
    assert.match(r.text, /example\.org\/reports\/river-2019\.pdf/);
    assert.match(r.text, /Paragraph 0 of the story[\s\S]*Paragraph 9 of the story/);
    // The canonical address counts as the page's own.
    const canonical = extractContent(toolPage(article(`${paras10}<p>https://www.example.com/story/river/</p>`, '<title>t</title><link rel="canonical" href="https://example.com/story/river">'), 'https://example.com/amp/123'));
    assert.doesNotMatch(canonical.text, /story\/river/);
  });

  it('removes lines that are interface labels (Caption, Close, Read More, Breaking News), not the same words inside a sentence', () => {
    const gallery = '<div class="captionlink"><p>Caption</p><p>Close</p></div>';
    const bar = '<div><span>Breaking News</span></div>';
    const prose = '<p>The mayor said she would <span>read more</span> of the report before she would close the bridge.</p>';
    const r = extractContent(toolPage(article(`${bar}${para(0)}${gallery}${paras10}<p><a href="#more">Read More</a></p>${prose}`)));
    assert.doesNotMatch(r.text, /^Caption$|^Close$|Breaking News|^Read More$/m);
    assert.match(r.text, /would read more of the report before she would close the bridge/);
  });

  it('a short story loses its boilerplate up to half of its text, never more', () => {
    // Two paragraphs and a print header writing out the page's own address: the line is over 15% of the text.
    const url = 'https://example.com/news/article/Cat-found-in-New-Mexico-after-going-missing-in-14848175.php';
    const short = extractContent(toolPage(article(`<div><img src="/logo.png" alt=""><span>${url}</span></div>${para(0)}${para(1)}`), url));
    assert.doesNotMatch(short.text, /14848175/);
    assert.match(short.text, /^Paragraph 0 of the story[\s\S]*Paragraph 1 of the story/);
    // A share bar of a third of a short story goes; a "related" wrapper of most of the text is the story and stays.
    const bar = `<div class="share-tools"><p>${'Share this story with your friends on every network you use, today and every day. '.repeat(2)}</p></div>`;
    const shared = extractContent(toolPage(article(`${para(0)}${bar}${para(1)}`)));
    assert.doesNotMatch(shared.text, /Share this story/);
    assert.match(shared.text, /Paragraph 0 of the story[\s\S]*Paragraph 1 of the story/);
    const wrapped = extractContent(toolPage(article(`<div class="related-story">${para(0)}${para(1)}${para(2)}</div>${para(3)}`)));
    assert.match(wrapped.text, /Paragraph 0 of the story[\s\S]*Paragraph 3 of the story/);
  });

  it('a named block keeps its name when Readability rewrites its <div> (loose text), and its HTML has no trace of that', () => {
    // Readability puts a <div>'s loose text into a new <p> in the <div>'s place: the caption and the cookie bar (an
    // id of four words) must still be known as such.
    const hero = '<div class="hero"><img src="/img/galaxy.png" alt="A galaxy cluster"><div class="caption-text">The centres of massive galaxy clusters are super hot.</div><div class="credit">(Image: © TNG Collaboration)</div></div>';
    const cookies = '<div id="cookie-law-info-bar">This website uses cookies to improve your experience. <a href="/privacy">Read More</a></div>';
    const r = extractContent(toolPage(article(`${hero}${paras10}${cookies}`), 'https://example.com/news/galaxies'));
    assert.doesNotMatch(r.text, /super hot|TNG Collaboration|uses cookies/);
    assert.match(r.text, /^Paragraph 0 of the story[\s\S]*Paragraph 9 of the story[^\n]*$/);
    assert.match(r.html, /The centres of massive galaxy clusters are super hot/);
    assert.doesNotMatch(r.html, /data-sai/);
    // A five-word id is still an anchor made of a heading's text, not a name; so is any id inside a heading.
    const anchor = extractContent(toolPage(article(`${paras10}<div id="share-price-of-the-firm">The share price doubled in ten years, the annual report says.</div>`)));
    assert.match(anchor.text, /The share price doubled in ten years/);
    const headed = extractContent(toolPage(article(`${paras10}<h2><span class="mw-headline" id="Social_media_and_advertising">Social media and advertising</span></h2>${para(10)}`)));
    assert.match(headed.text, /\n\nSocial media and advertising\n\nParagraph 10 of the story/);
  });

  it("removes the labels over an ad's slot (Advert, Sponsored, Story continues below), not the words in a sentence", () => {
    const slot = (label: string) => `<div class="x9f"><center><span style="font-size:0.7em">${label}</span><br></center></div>`;
    const prose = '<p>The council voted to advert to the old plan; the story continues below the fold of the minutes, it said.</p>';
    const r = extractContent(toolPage(article(`${para(0)}${slot('Advert')}${para(1)}${slot('Sponsored')}${paras10}${slot('Story continues below')}${prose}`)));
    assert.doesNotMatch(r.text, /^(?:Advert|Sponsored|Story continues below)$/m);
    assert.match(r.text, /voted to advert to the old plan; the story continues below the fold/);
  });

  it('removes date lines (a year and a clock time in a short line), not dates in sentences, tables or code', () => {
    const dated = '<p>November 19, 2019 | 4:20am |</p><div>sexta-feira, 22 de outubro de 2010 às 20:13</div>';
    const sentence = '<p>At 4:20 on November 19, 2019 the water reached the top of the old flood wall.</p>';
    const code = '<pre><code><span>2020-08-01 18:00:00+00 │ 200 │ 4084</span></code></pre>';
    const table = '<table><tr><td>2019-11-19 04:20</td><td>1.2 m</td></tr></table>';
    const inline = '<p>Updated <span>19/11/2019 04:20</span> after the river crested at the bridge and the mayor spoke.</p>';
    const r = extractContent(toolPage(article(`${dated}${paras10}${sentence}${code}${table}${inline}`)));
    assert.doesNotMatch(r.text, /4:20am|sexta-feira/);
    assert.match(r.text, /At 4:20 on November 19, 2019 the water/);
    assert.match(r.text, /2020-08-01 18:00:00\+00/);
    assert.match(r.text, /2019-11-19 04:20/);
    assert.match(r.text, /Updated 19\/11\/2019 04:20 after the river/);
  });

  it('keeps a paywalled teaser rather than the menus and headline lists around it', () => {
    const teaser = '<p>Gaming used to be so simple. We bought a game, sat down in front of a console, played to the end, then did it again. All...</p>';
    const menu = Array.from({ length: 12 }, (_, i) => `<li><a href="/section/${i}">Section number ${i}</a></li>`).join('');
    const popular = Array.from({ length: 8 }, (_, i) => `<li><h4><a href="/story/${i}">Most popular story number ${i} of the day, with a long headline</a></h4></li>`).join('');
    const html = `<html><head><title>Gaming</title></head><body><article><div class="wrap"><ul>${menu}</ul><div class="snippet">${teaser}<div class="login">To Read the Full Story <a href="/subscribe">Subscribe</a> <a href="/login">Sign In</a></div></div><div class="lists"><h2>Most Read</h2><ul>${popular}</ul></div></div></article></body></html>`;
    const r = extractContent(toolPage(html));
    assert.match(r.text, /^Gaming used to be so simple/);
    assert.doesNotMatch(r.text, /Most popular story|Section number/);
  });

  it('a huge page (3.7 MB, 30,000 paragraphs) is read in a few seconds', () => {
    const html = `<html><head><title>Big page of many paragraphs</title></head><body><article>${Array.from({ length: 30_000 }, (_, i) => para(i)).join('')}</article></body></html>`;
    const t = performance.now();
    const r = extractContent(toolPage(html));
    const ms = performance.now() - t;
    assertValid(r, 'huge');
    assert.ok(r.word_count > 500_000, `${r.word_count}`);
    assert.ok(ms < 20_000, `${ms.toFixed(0)} ms`);
  });
});
