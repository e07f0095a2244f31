/**
 * Template versus data (docs/generate.md, "Other pages of the template"): pages made from one template share
 * their furniture (navigation, teaser lists, "trending", a sponsored slot) and differ in their records. Given a
 * candidate record block of one page and the other pages of its template (the next listing page, the user's
 * `example_urls`), this tells how the block behaves there: the records' selector matches again with other
 * texts; furniture matches again with the same texts; a block found on no other page is likely one page's
 * accident.
 *
 * This is the template-detection idea of RoadRunner and of boilerplate removal across pages of a site (Bar-Yossef
 * and Rajagopalan, "Template detection via data mining", WWW 2002), reduced to what a ranking needs.
 */
import type { CheerioAPI } from 'cheerio/slim';
import type { Element } from 'domhandler';
import { visibleText } from './analyze.ts';

/** Items of a block compared at most, per page (bounds the work on a hostile page). */
const MAX_ITEMS = 200;
/** Characters of an item's text compared (its start says which record it is). */
const TEXT_CHARS = 200;
/** Share of a block's item texts seen again on other pages from which it is furniture, not records. */
const FURNITURE_SHARE = 0.5;
/**
 * Score factors (docs/generate.md, "Other pages of the template"). Search pages of one site often show the same records
 * for other queries (9gag, Zomato in the development pages): then nothing on the pages changes but noise, and the
 * evidence may only decide close calls ({@link MILD_FURNITURE_FACTOR}). Where another block does change from page to
 * page (it holds other items there), the blocks that stay the same are furniture beside that data
 * ({@link FURNITURE_FACTOR}). Chosen on the development side of bench/generate-split.json with
 * `npm run bench -- generate --examples` (bench/README.md).
 */
const FURNITURE_FACTOR = 0.05;
const MILD_FURNITURE_FACTOR = 0.5;
const ABSENT_FACTOR = 0.8;
/** Share of item texts seen again at most for a block to be "changing": data that differs between the pages. */
const CHANGING_SHARE = 0.2;

/** How a candidate block behaves on the other pages of its template. */
export interface TemplateEvidence {
  /** Other pages compared. */
  pages: number;
  /** Other pages where the block's selector matches at least two elements. */
  pagesMatched: number;
  /**
   * Share (0-1) of the block's item texts found again among the selector's matches on the other pages: near 0 for
   * records (each page has its own), near 1 for furniture. 0 when no other page matched.
   */
  sharedShare: number;
}

/** The text an item is compared by: its visible text, lowercased, spaces collapsed, the first {@link TEXT_CHARS}. */
function itemKey(el: Element): string {
  return visibleText(el).toLowerCase().slice(0, TEXT_CHARS);
}

/**
 * How a candidate block of one page behaves on other pages of the same template.
 * @param candidate the block: its selector (CSS, as the config would write it) and its items on the first page.
 * @param others the other pages, parsed. A selector that does not parse there counts as not matching.
 * @returns the evidence; `pages` 0 when there are no other pages (then {@link templateFactor} is 1).
 */
export function templateEvidence(candidate: { selector: string; items: Element[] }, others: CheerioAPI[]): TemplateEvidence {
  const mine = candidate.items.slice(0, MAX_ITEMS).map(itemKey).filter((t) => t.length > 0);
  const seen = new Set<string>();
  let pagesMatched = 0;
  for (const $ of others) {
    let matches: Element[];
    try {
      matches = $(candidate.selector).toArray().slice(0, MAX_ITEMS) as Element[];
    } catch {
      continue;
    }
    if (matches.length < 2) continue;
    pagesMatched += 1;
    for (const el of matches) seen.add(itemKey(el));
  }
  const shared = mine.length ? mine.filter((t) => seen.has(t)).length / mine.length : 0;
  return { pages: others.length, pagesMatched, sharedShare: pagesMatched ? shared : 0 };
}

/** Whether the evidence says the block is template furniture: most of its items are on the other pages too. */
export function isFurniture(e: TemplateEvidence): boolean {
  return e.pagesMatched > 0 && e.sharedShare >= FURNITURE_SHARE;
}

/**
 * A factor for a candidate's score from its template evidence: 1 with no other pages or when the block holds other
 * records on them; {@link ABSENT_FACTOR} (0.8) when its selector matches on none of them (one page's accident, or
 * records the other pages lack); for furniture {@link FURNITURE_FACTOR} (0.05) when `dataChanges`, else
 * {@link MILD_FURNITURE_FACTOR} (0.5).
 * @param dataChanges whether some other block of the page changes between the pages ({@link isChanging}).
 */
export function templateFactor(e: TemplateEvidence, dataChanges = true): number {
  if (!e.pages) return 1;
  if (isFurniture(e)) return dataChanges ? FURNITURE_FACTOR : MILD_FURNITURE_FACTOR;
  if (!e.pagesMatched) return ABSENT_FACTOR;
  return 1;
}

/** Whether a block of at least three items holds other items on the other pages: data that changes with the page. */
export function isChanging(e: TemplateEvidence, count: number): boolean {
  return count >= 3 && e.pagesMatched > 0 && e.sharedShare <= CHANGING_SHARE;
}

/**
 * Whether another page only repeats the first one: every block found on it holds the same items (a "page 2" that
 * shows page 1 again, a search that ignores its query). Such a page says nothing of records versus furniture.
 * @param candidates the first page's candidate blocks (the ones ranked).
 */
export function repeatsThePage(candidates: readonly { selector: string; items: Element[] }[], other: CheerioAPI): boolean {
  const matched = candidates.map((c) => templateEvidence(c, [other])).filter((e) => e.pagesMatched > 0);
  return matched.length > 0 && matched.every(isFurniture);
}
