/**
 * How a listing goes on and branches (docs/generate.md, "Pagination, categories, detail pages"): the next
 * page control (`rel=next`, "Next", "›", `?page=2`, `/page/2/`), a load-more button, the category links of
 * a page, and the fields of an item's own page that the prompt asks for.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { isTag, type Element } from 'domhandler';
import type { FieldSpec } from '../engine/config.ts';
import { absoluteUrl, documentBase } from '../engine/extract.ts';
import { sameSite } from '../engine/page-facts.ts';
import { looksGenerated, stableClasses, visibleText } from './analyze.ts';
import type { AskedField } from './prompt.ts';

/** A way to the next listing page. */
export type Pager =
  | { type: 'click'; selector: string; how: string }
  | { type: 'url'; urlPattern: string; how: string };

const NEXT_TEXT = /^\s*(next|next page|next »|next ›|next >|older|older posts|more results|›|»|>|→|>>|siguiente|suivant|weiter|nächste|próxima|avanti)\s*[›»>→]?\s*$/i;
const MORE_TEXT = /^\s*(load|show|view|see)\s+(more|all)\b|^\s*more\s*$/i;

function cssIdent(s: string): string {
  return s.replace(/([^\w-])/g, '\\$1');
}

function uniqueSelector($: CheerioAPI, el: Element, tries: string[]): string | null {
  for (const sel of tries) {
    try {
      const m = $(sel);
      if (m.length >= 1 && m[0] === el) return sel;
    } catch {
      // an invalid attempt: try the next
    }
  }
  return null;
}

/** Selector attempts for a pagination control, stable ones first. */
function controlSelectors(el: Element): string[] {
  const tag = el.name;
  const tries: string[] = [];
  if (el.attribs.rel && /\bnext\b/i.test(el.attribs.rel)) tries.push(`${tag}[rel="next"]`, `[rel="next"]`);
  const label = el.attribs['aria-label'];
  if (label && /next/i.test(label)) tries.push(`${tag}[aria-label="${label.replace(/"/g, '\\"')}"]`);
  for (const c of stableClasses(el)) tries.push(`${tag}.${cssIdent(c)}`);
  const parent = el.parent && isTag(el.parent) ? el.parent : null;
  if (parent) {
    for (const c of stableClasses(parent)) tries.push(`${parent.name}.${cssIdent(c)} > ${tag}`, `${parent.name}.${cssIdent(c)} ${tag}`);
    if (parent.attribs.id && !looksGenerated(parent.attribs.id)) tries.push(`#${cssIdent(parent.attribs.id)} > ${tag}`);
  }
  if (el.attribs.id && !looksGenerated(el.attribs.id)) tries.push(`#${cssIdent(el.attribs.id)}`);
  if (el.attribs.title && /next/i.test(el.attribs.title)) tries.push(`${tag}[title="${el.attribs.title.replace(/"/g, '\\"')}"]`);
  return tries;
}

/**
 * Finds the control to the next listing page.
 * @param pageUrl the page's URL after redirects.
 * @returns a `click` pager (a link is followed as a URL by either engine; a button is clicked by a browser),
 *   a `url` pager when the page's own URL carries the page number, or null.
 */
export function findPager($: CheerioAPI, pageUrl: string): Pager | null {
  const base = documentBase($, pageUrl);
  // 1. A link marked as the next page.
  const relNext = $('a[rel~="next"], link[rel~="next"]').toArray().filter(isTag) as Element[];
  const anchors = $('a[href], button, [role="button"], input[type="button"], input[type="submit"]').toArray().filter(isTag) as Element[];
  const candidates: Element[] = [
    ...relNext.filter((e) => e.name === 'a'),
    ...anchors.filter((e) => NEXT_TEXT.test(visibleText(e)) || /\bnext\b/i.test(`${e.attribs['aria-label'] ?? ''} ${e.attribs.title ?? ''}`) || stableClasses(e).some((c) => /^(next|next-page|pagination-next|nextpage|pager-next)$/i.test(c))),
  ];
  for (const el of candidates) {
    const href = el.attribs.href;
    if (href && !/^\s*(#|javascript:)/i.test(href) && !absoluteUrl(href, base)) continue;
    const sel = uniqueSelector($, el, controlSelectors(el));
    if (sel) return { type: 'click', selector: sel, how: `the next-page control "${visibleText(el).slice(0, 20) || el.attribs['aria-label'] || 'next'}" (${sel})` };
  }
  // 2. A `<link rel=next>` in the head: its URL pattern.
  const link = relNext.find((e) => e.name === 'link');
  const next = link ? absoluteUrl(link.attribs.href, base) : null;
  if (next) {
    const pattern = urlPattern(pageUrl, next);
    if (pattern) return { type: 'url', urlPattern: pattern, how: `the head's rel=next link (${next})` };
    return { type: 'click', selector: 'link[rel="next"]', how: `the head's rel=next link (${next})` };
  }
  // 3. Links to page 2 by number.
  const two = anchors.find((e) => e.name === 'a' && /^\s*2\s*$/.test(visibleText(e)));
  const url2 = two ? absoluteUrl(two.attribs.href, base) : null;
  if (url2) {
    const pattern = urlPattern(pageUrl, url2);
    if (pattern) return { type: 'url', urlPattern: pattern, how: `the numbered page links (${url2})` };
  }
  return null;
}

/**
 * A url_pattern from a page URL and its next page's URL: the number that differs becomes `{page}`
 * (`?page=2`, `/page/2/`, `-2.html`).
 */
function urlPattern(pageUrl: string, nextUrl: string): string | null {
  let a: URL;
  let b: URL;
  try {
    a = new URL(pageUrl);
    b = new URL(nextUrl);
  } catch {
    return null;
  }
  if (a.origin !== b.origin) return null;
  for (const [k, v] of b.searchParams) {
    if (/^\d+$/.test(v) && v === '2' && a.searchParams.get(k) !== '2') {
      const u = new URL(b.href);
      u.searchParams.set(k, '__PAGE__');
      return u.href.replace('__PAGE__', '{page}');
    }
  }
  const m = /^(.*[/_-](?:page[/_-]?)?)2((?:[/._-][^/]*)?\/?)$/i.exec(b.pathname);
  if (m && !a.pathname.includes(`${m[1]}2`)) return `${b.origin}${m[1]}{page}${m[2]}${b.search}`;
  return null;
}

/** A button or link that loads more items into the same page (a browser clicks it). */
export function findLoadMore($: CheerioAPI): { selector: string; how: string } | null {
  const els = $('button, a, [role="button"], input[type="button"]').toArray().filter(isTag) as Element[];
  for (const el of els) {
    const text = visibleText(el) || el.attribs.value || '';
    if (!MORE_TEXT.test(text)) continue;
    const href = el.attribs.href;
    if (el.name === 'a' && href && !/^\s*(#|javascript:)/i.test(href)) continue;
    const tries = [...stableClasses(el).map((c) => `${el.name}.${cssIdent(c)}`)];
    if (el.attribs.id && !looksGenerated(el.attribs.id)) tries.unshift(`#${cssIdent(el.attribs.id)}`);
    const sel = uniqueSelector($, el, tries);
    if (sel) return { selector: sel, how: `the "${text.trim().slice(0, 30)}" control (${sel})` };
  }
  return null;
}

/** Category links of a page: a list of at least 3 links that share a path prefix with the page. */
export function findCategories($: CheerioAPI, pageUrl: string, itemSelector: string): { container: string; how: string; count: number } | null {
  const base = documentBase($, pageUrl);
  const page = new URL(pageUrl);
  const items = new Set($(itemSelector).toArray());
  let best: { container: string; count: number; how: string } | null = null;
  for (const list of $('ul, ol, nav, div, section, aside').toArray().filter(isTag) as Element[]) {
    // The list's links: its children, or one level in (`<li><a>`, `<span class="tag-item"><a>`).
    const links = $(list).children('a[href]').toArray().concat($(list).children().children('a[href]').toArray()).filter(isTag) as Element[];
    if (links.length < 3 || links.length > 200) continue;
    if ([...items].some((it) => $(it).find(list).length || it === list)) continue;
    const urls = links.map((a) => absoluteUrl(a.attribs.href, base)).filter((u): u is string => !!u).map((u) => new URL(u));
    const onSite = urls.filter((u) => sameSite(u, page));
    if (onSite.length < 3) continue;
    // Category links share a path prefix and differ after it (/catalogue/category/books/travel_2/…, /tag/love/).
    const prefix = commonPrefix(onSite.map((u) => u.pathname));
    if (prefix.split('/').filter(Boolean).length === 0) continue;
    const texts = links.map((a) => visibleText(a)).filter((t) => t.length >= 2 && t.length <= 40);
    if (texts.length < links.length * 0.8) continue;
    const anchor = list.attribs.id && !looksGenerated(list.attribs.id) ? `#${cssIdent(list.attribs.id)}` : stableClasses(list).length ? `${list.name}.${stableClasses(list).slice(0, 2).map(cssIdent).join('.')}` : null;
    if (!anchor) continue;
    try {
      if ($(anchor).length !== 1) continue;
    } catch {
      continue;
    }
    if (!best || links.length > best.count) best = { container: anchor, count: links.length, how: `${links.length} category links under ${prefix} (${anchor})` };
  }
  return best;
}

function commonPrefix(paths: string[]): string {
  if (!paths.length) return '';
  let p = paths[0]!;
  for (const x of paths.slice(1)) {
    let i = 0;
    while (i < p.length && i < x.length && p[i] === x[i]) i++;
    p = p.slice(0, i);
  }
  return p.slice(0, p.lastIndexOf('/') + 1);
}

/**
 * Fields of a detail page for the asked fields the listing lacks: a label cell or term that names the field
 * (`<th>UPC</th><td>…</td>`, `<dt>`/`<dd>`), else an element whose id or class names it (and its next sibling
 * when that element is only a heading, `#product_description + p`), else an itemprop.
 * @returns the detail fields found, and the asked fields still missing.
 */
export function findDetailFields($: CheerioAPI, asked: AskedField[]): { fields: FieldSpec[]; missing: AskedField[] } {
  const fields: FieldSpec[] = [];
  const missing: AskedField[] = [];
  for (const f of asked) {
    const words = f.words.toLowerCase().replace(/\b(the|a|an|its|their|each|book|product|item)\b/g, ' ').replace(/\s+/g, ' ').trim();
    const spec = byLabel($, words, f.name) ?? byName($, words.replace(/\s+/g, '_'), f.name) ?? byName($, f.name, f.name) ?? byItemprop($, f.name);
    if (spec) fields.push(spec);
    else missing.push(f);
  }
  return { fields, missing };
}

function byLabel($: CheerioAPI, words: string, name: string): FieldSpec | null {
  const re = new RegExp(`^\\s*${words.split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+')}s?\\s*:?\\s*$`, 'i');
  for (const label of $('th, dt, td, label, strong, b, span').toArray().filter(isTag) as Element[]) {
    if (!re.test(visibleText(label))) continue;
    const labelText = visibleText(label).replace(/"/g, '\\"');
    if (label.name === 'th' || label.name === 'td') {
      const row = label.parent && isTag(label.parent) && label.parent.name === 'tr' ? label.parent : null;
      if (!row) continue;
      return { name, selector: `tr:has(> ${label.name}:contains("${labelText}")) > td${label.name === 'td' ? ':last-child' : ''}`, type: 'text', transform: ['trim_whitespace'] } as FieldSpec;
    }
    if (label.name === 'dt') return { name, selector: `dt:contains("${labelText}") + dd`, type: 'text', transform: ['trim_whitespace'] } as FieldSpec;
    return { name, selector: `${label.name}:contains("${labelText}")`, type: 'text', transform: [`replace:${visibleText(label).replace(/:/g, '\\:')}:`, 'trim_whitespace'] } as FieldSpec;
  }
  return null;
}

function byName($: CheerioAPI, key: string, name: string): FieldSpec | null {
  if (!/^[a-z0-9_-]{2,}$/i.test(key)) return null;
  for (const sel of [`#${key}`, `.${key}`, `[id*="${key}"]`, `[class*="${key}"]`]) {
    let el: Element | undefined;
    try {
      el = $(sel).toArray().find((e) => isTag(e)) as Element | undefined;
    } catch {
      continue;
    }
    if (!el) continue;
    const text = visibleText(el);
    const next = el.next && isTag(el.next) ? el.next : null;
    // A heading that only names the section ("Product Description"): the content follows it.
    if (text.length < 40 && next && visibleText(next).length > text.length) {
      return { name, selector: `${sel} + ${next.name}`, type: 'text', transform: ['trim_whitespace'] } as FieldSpec;
    }
    if (text) return { name, selector: sel, type: 'text', transform: ['trim_whitespace'] } as FieldSpec;
  }
  return null;
}

function byItemprop($: CheerioAPI, name: string): FieldSpec | null {
  const el = $(`[itemprop="${name}"]`).first();
  if (!el.length) return null;
  const content = el.attr('content');
  return content !== undefined
    ? { name, selector: `[itemprop="${name}"]`, type: 'attribute', attribute: 'content' } as FieldSpec
    : { name, selector: `[itemprop="${name}"]`, type: 'text', transform: ['trim_whitespace'] } as FieldSpec;
}

/**
 * The URL of the listing's next page, for the generator to read as another page of the template
 * (./template.ts): a next-page link's href, or the url pattern with page 2. Null when the pager is a button (a
 * browser would have to click it), leaves the site, or points back at the page itself.
 * @param pageUrl the page's URL after redirects.
 */
export function nextPageUrl($: CheerioAPI, pageUrl: string): string | null {
  const pager = findPager($, pageUrl);
  if (!pager) return null;
  let next: string | null = null;
  if (pager.type === 'url') {
    next = pager.urlPattern.replace('{page}', '2');
  } else {
    let el: Element | undefined;
    try {
      el = $(pager.selector).toArray().find((e): e is Element => isTag(e) && (e.name === 'a' || e.name === 'link'));
    } catch {
      el = undefined;
    }
    const href = el?.attribs.href;
    next = href ? absoluteUrl(href, documentBase($, pageUrl)) : null;
  }
  if (!next || !/^https?:/i.test(next)) return null;
  const strip = (u: string) => u.replace(/#.*$/, '');
  if (strip(next) === strip(pageUrl) || !sameSite(next, pageUrl)) return null;
  return next;
}
