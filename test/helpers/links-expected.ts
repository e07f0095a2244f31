/**
 * The links a page holds, counted independently of lambdas/tools/links-extract.ts for the broken-link checker's tests
 * (test/unit/tools-links.test.ts, test/corpus/tools-links.test.ts): cheerio (parse5) selectors over the documented
 * table of link attributes (docs/tools.md, "broken-link-checker"), WHATWG URL resolution, fragments dropped.
 */
import { load } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';

/** The absolute URLs (without fragments) of the links of `html` read at `pageUrl`, once each. */
export function cheerioLinks(html: string, pageUrl: string): Set<string> {
  const $ = load(html);
  const base = new URL($('base[href]').first().attr('href') ?? pageUrl, pageUrl);
  const raw: string[] = [];
  const table: Array<[string, string]> = [
    ['a', 'href'], ['area', 'href'], ['link', 'href'], ['iframe', 'src'], ['iframe', 'longdesc'], ['frame', 'src'], ['frame', 'longdesc'],
    ['img', 'src'], ['source', 'src'], ['script', 'src'], ['embed', 'src'], ['embed', 'pluginspage'], ['audio', 'src'], ['video', 'src'],
    ['video', 'poster'], ['track', 'src'], ['input', 'src'], ['object', 'data'], ['body', 'background'], ['html', 'manifest'],
    ['command', 'icon'], ['blockquote', 'cite'], ['q', 'cite'], ['del', 'cite'], ['ins', 'cite'],
  ];
  const readElement = (node: AnyNode) => {
    if (!('attribs' in node)) return; // tags, scripts and styles alike
    const el = node as Element;
    for (const [tag, attr] of table) {
      if (el.name !== tag) continue;
      const v = el.attribs[attr];
      if (v === undefined || !v.trim()) continue;
      if (tag === 'link' && /^(\s*(dns-prefetch|preconnect)\s*)+$/i.test(el.attribs.rel ?? '')) continue;
      raw.push(v);
    }
    if ((el.name === 'img' || el.name === 'source') && el.attribs.srcset) {
      for (const c of el.attribs.srcset.split(',')) if (c.trim()) raw.push(c.trim().split(/\s+/)[0]!);
    }
    if (el.name === 'meta' && /refresh/i.test(el.attribs['http-equiv'] ?? '')) raw.push(/url\s*=\s*['"]?([^'"]+)/i.exec(el.attribs.content ?? '')?.[1] ?? '');
    else if (el.name === 'meta' && /^\s*https?:\/\//i.test(el.attribs.content ?? '')) raw.push(el.attribs.content!);
  };
  // cheerio parses as a browser running scripts does: <noscript> holds text, whose markup is read on its own.
  const visit = (doc: ReturnType<typeof load>) => doc('*').each((_, el) => {
    readElement(el);
    if ('name' in el && el.name === 'noscript') visit(load(doc(el).text()));
  });
  visit($);
  const expected = new Set(raw.filter(Boolean).map((r) => { try { const u = new URL(r, base); u.hash = ''; return u.href; } catch { return r.trim(); } }));
  return expected;
}
