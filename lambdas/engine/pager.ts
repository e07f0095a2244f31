/**
 * What a page's pagination control is (docs/spec.md, pagination `click`): absent, disabled, a link to the next page,
 * or a control only a browser can follow. Read from the page's HTML, the same way for the crawler over either
 * loader and for `engine: auto` (choose.ts).
 */
import type { CheerioAPI } from 'cheerio/slim';
import { absoluteUrl } from './extract.ts';

/** The pagination control of a page. */
export type PagerControl =
  | { kind: 'none' }
  | { kind: 'disabled' }
  | { kind: 'link'; url: string }
  /** Present and usable but not a link (a button, `href="#"`, `javascript:`): a browser clicks it. */
  | { kind: 'control'; tag: string };

/**
 * Reads the first element matching `selector`.
 * Pagers often mark the item around the link (Bootstrap 3: `<li class="next disabled"><a href="#">`), so a
 * disabled ancestor (`[disabled]`, `.disabled`, `[aria-disabled="true"]`) makes the control disabled too.
 * @param base the document base for a relative `href`.
 */
export function pagerControl($: CheerioAPI, selector: string, base: string): PagerControl {
  const control = $(selector).first();
  if (!control.length) return { kind: 'none' };
  if (control.closest('[disabled], .disabled, [aria-disabled="true"]').length) return { kind: 'disabled' };
  const href = control.attr('href') ?? control.find('a[href]').first().attr('href') ?? control.closest('a[href]').attr('href');
  if (href !== undefined && !/^\s*(#|javascript:)/i.test(href)) {
    const url = absoluteUrl(href, base);
    if (url && /^https?:/i.test(url)) return { kind: 'link', url };
  }
  return { kind: 'control', tag: (control.get(0) as { tagName?: string } | undefined)?.tagName ?? 'element' };
}
