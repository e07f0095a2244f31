/**
 * The fields of a record list (docs/generate.md, "Fields"): the columns the items share, found by aligning
 * their text holders, links and images by their path from the item (as DEPTA aligns data items of similar
 * records, simplified to paths), each recognised as a title, link, image, price, date, rating or text, named
 * after the prompt's words where one fits and descriptively otherwise.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { isTag, isText, type AnyNode, type Element } from 'domhandler';
import type { FieldSpec } from '../engine/config.ts';
import { compileSiblingsSelector } from '../engine/field-selector.ts';
import { stableClasses, visibleText } from './analyze.ts';
import { ELEMENT_MARK, hasDigits, isAvailabilityText, pluralName, PRICE_TRANSFORM, selectorWords, singularName, uniqueName } from './naming.ts';
import type { AskedField, FieldKind } from './prompt.ts';

/** A column the items share. */
export interface Column {
  /** Selector inside the item (CSS), e.g. `h3 a`, `p.price_color`. */
  selector: string;
  /** What the column holds. */
  kind: FieldKind;
  /** The field that reads it (name set by {@link nameColumns}). */
  spec: FieldSpec;
  /** Share of the items that have it (0-1). */
  presence: number;
  /** Values of the first items, as extracted. */
  samples: string[];
  /** Document order inside the item (for the field order). */
  order: number;
  /** Name suggested by the page (a class like `price_color`, `author`), when there is one. */
  hint: string | null;
  /** The label the page shows with the value ("Author:", "Tags:"), as a field name, when there is one. */
  label: string | null;
  /** Matches of the selector per item, on average (tags: several). */
  perItem: number;
  /** A list of like elements in varying numbers per record (tag links): the field takes every match. */
  list?: boolean;
  /** A link column's link texts, of the first items ("See more like this", the title): which link a `link` is. */
  texts?: string[];
  /** Share of distinct values among the records that have the column (0-1; a title's are nearly all distinct). */
  distinct?: number;
}

/** Inline formatting tags: their text belongs to the element around them. */
const INLINE = new Set(['b', 'i', 'em', 'strong', 'u', 's', 'small', 'sup', 'sub', 'font', 'mark', 'abbr', 'bdi', 'bdo', 'wbr', 'br', 'tt', 'big', 'del', 'ins']);
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'button', 'select', 'option', 'input', 'textarea', 'iframe', 'form']);

/** Words in class names that say what a column is. */
const HINT_WORDS: Array<[RegExp, string, FieldKind]> = [
  [/title|headline|heading|name|subject/, 'title', 'title'],
  [/price|cost|amount|salary/, 'price', 'price'],
  [/rating|stars?|score|grade/, 'rating', 'rating'],
  [/date|time|posted|published|ago/, 'date', 'date'],
  [/author|contributor|byline|(^|[\s_-])by([\s_-]|$)|user(name)?|seller|company|brand|source|publisher|artist|channel|owner|poster|employer/, 'author', 'author'],
  [/desc|summary|snippet|excerpt|abstract|teaser|blurb|body|content|text|lead|dek|caption/, 'description', 'description'],
  [/categor|genre|section|breadcrumb|department|kicker/, 'category', 'category'],
  [/tags?\b|keywords?|topics?/, 'tags', 'tags'],
  [/location|address|city|place|region|country/, 'location', 'location'],
  // Whole words: "preview" is no view count, "p-review" no review count.
  [/count|(^|[\s_-])(views?|votes?|points?|likes?|comments?|reviews?|downloads?|stock|qty|quantity)([\s_-]|$)/, 'count', 'number'],
  [/url|link|href/, 'url', 'url'],
  [/image|img|thumb|photo|picture|cover|logo|avatar/, 'image', 'image'],
];

/**
 * Words for who offers or made a record's item, in a class, itemprop or URL path (`card-shop-name`, `/artist/…`): the
 * column is an author-kind field named by the word itself (issue 36: a shop's name is `shop`).
 */
const OWNER_WORDS: Record<string, string> = {
  shop: 'shop', shops: 'shop', store: 'store', stores: 'store', seller: 'seller', sellers: 'seller', vendor: 'vendor', merchant: 'merchant',
  brand: 'brand', brands: 'brand', artist: 'artist', artists: 'artist', channel: 'channel', channels: 'channel', company: 'company',
  companies: 'company', publisher: 'publisher', employer: 'employer', uploader: 'uploader', author: 'author', authors: 'author',
  user: 'user', users: 'user', profile: 'user', people: 'user', member: 'user', members: 'user',
  supplier: 'supplier', suppliers: 'supplier', manufacturer: 'manufacturer', provider: 'provider', maker: 'maker', distributor: 'distributor',
  contributor: 'author', contributors: 'author', instructor: 'instructor', organizer: 'organizer', host: 'host',
};

/** URL path words that name a person or seller's page (`/artist/…`, `/user/…`, `/seller/…`, `/channel/…`). */
const PATH_OWNERS = new Set(['artist', 'artists', 'author', 'authors', 'user', 'users', 'seller', 'sellers', 'channel', 'channels', 'profile', 'people', 'member', 'members']);

/** The owner word a set of names holds as a whole token (`card-shop-name`, `shopName`), or null. */
function ownerWordIn(names: string): string | null {
  for (const t of names.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z]+/)) {
    const w = OWNER_WORDS[t] ?? OWNER_WORDS[t.replace(/name$/, '')];
    // Not `user` alone: `user-content`, `userContent` hold anything.
    if (w && w !== 'user') return w;
  }
  return null;
}

/** A name ending in a company's legal form. */
const COMPANY_RE = /^[^\n]{2,80}\b(?:co\.?,?\s*ltd|ltd|llc|l\.l\.c|inc|corp(?:oration)?|gmbh|ag|s\.a|s\.r\.l|pty|plc|limited|company|b\.v|oy|ab)\.?\s*\)?$/i;

/** A value that starts as a byline does ("by Alex Walker", "By Reuters - February 9th 2017"). */
const BY_START = /^\s*by\s/i;

/** Text before a value that says who: "by Jane", "Sold by Acme", "Posted by …". */
const BY_BEFORE = /(?:^|[\s(|·•,])(sold by|posted by|written by|uploaded by|shared by|published by|offered by|by|seller:?|shop:?|store:?)\s*$/i;

const PRICE_RE = /(?:[$£€¥₹₺₩₽]|\b(?:usd|eur|gbp|cad|aud|inr|jpy|chf|us\s?\$|cdn\$|rs\.?))\s?\d[\d.,\s]*|\d[\d.,]*\s?(?:[$£€¥₹₺₩₽]|\b(?:usd|eur|gbp|kr|zł))/i;
/** A month's name or abbreviation, as a regex source (not `mar` of "market"). */
const MONTH = '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?';
/**
 * A date as listings write one: numeric (`12/05/2019`, `2019-05-12`), with a month's name (`May 12, 2019`,
 * `12 May 2019`, `May 2019`, `May 12`, `12 May`), relative (`3 days ago`, `5h ago`, `an hour ago`, `yesterday`).
 */
const DATE_RE = new RegExp(`\\b(?:\\d{1,2}[/.-]\\d{1,2}[/.-]\\d{2,4}|\\d{4}[-/.]\\d{1,2}[-/.]\\d{1,2}`
  + `|${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}|\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH},?\\s+\\d{4}|${MONTH},?\\s+\\d{4}`
  + `|${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?(?![\\d:])|\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH}(?![a-z])`
  + `|\\d+\\s*(?:s|m|h|d|w|mo|y|secs?|seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?|years?|yrs?)\\s+ago`
  + `|(?:an?|one)\\s+(?:second|minute|hour|day|week|month|year)\\s+ago|just now|yesterday|today)\\b`, 'i');
/** A count of something a record gathers, written with its noun: "(5 reviews)", "No reviews", "1.2k views", "12 comments". */
const COUNT_OF_RE = /^\s*\(?\s*(?:\d[\d.,]*\s*[km]?|no)\s+(?:reviews?|ratings?|votes?|views?|comments?|plays?|answers?|replies|reply|likes?|downloads?|followers?|bids?|watching|watchers?|sold|transactions?|orders?|sales|purchases?|students|enrolled|employees)\s*\)?\s*(?:\([^)]{0,30}\))?\s*$/i;
/** A web address or site path written as text, as search results show one under the title (with a size after it, "- 97k"). */
const URL_TEXT_RE = /^\s*(?:(?:https?:\/\/|www\.)\S+|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\/\S*|(?:\/[\w.%~-]+){2,}\/?)(?:\s+-\s+\d+k)?\s*$/i;
const RATING_RE = /\b\d(?:\.\d)?\s*(?:\/\s*5|out of 5|stars?)\b/i;
const NUMBER_RE = /^[\s(]*[-+]?\d[\d.,]*\s*[kmb]?\+?\s*(?:[a-z%]+\s*){0,2}\)?$/i;

/** Most fields a config gets when every column is kept. */
const MAX_FIELDS = 25;

/** A text holder, link or image found in one item, with its path from the item. */
interface Occurrence {
  key: string;
  steps: string[];
  el: Element;
  what: 'text' | 'link' | 'image';
  order: number;
  /** Elements of the item on this path (several: a list of one kind, `li > div.kv` lines). */
  count: number;
}

/**
 * How plain siblings of one tag are told apart in a family (the same parent path and tag, over all records):
 * - `start`: by place from the first (`td:nth-of-type(2)`), when every record has as many (a table's cells);
 * - `end`: by place from the last (`h3:last-of-type`), when records have one or two (an optional first one: a
 *   subtitle `<h3>` before the authors' `<h3>` in some records only);
 * - `list`: not at all, when records have varying numbers, three or more in some (tag links): one column, every
 *   match.
 */
type Placement = 'start' | 'end' | 'list';
/** Family key -> how its siblings are placed (see {@link Placement}). */
type PlacementPlan = Map<string, Placement>;

/** An element's tag and first stable class, escaped for a selector. */
function simpleStep(el: Element): string {
  const cls = stableClasses(el)[0];
  return cls ? `${el.name}.${cls.replace(/([^\w-])/g, '\\$1')}` : el.name;
}

/** The family of plain siblings an element belongs to: its record element's place, its parent's path, its tag. */
function familyOf(el: Element, item: Element, member: number): string {
  const path: string[] = [];
  for (let n = el.parent; n && n !== item && isTag(n as AnyNode); n = n.parent) path.unshift(simpleStep(n as Element));
  return `${member}|${path.join('>')}|${el.name}`;
}

/** Plain (classless) element siblings of an element's tag, itself included, in order. */
function plainSiblings(el: Element): Element[] {
  const parent = el.parent;
  if (!parent || !isTag(parent as AnyNode)) return [el];
  return (parent as Element).children.filter((c): c is Element => isTag(c) && c.name === el.name && !stableClasses(c).length);
}

/** Decides the placement of each family of plain siblings from the records (see {@link Placement}). */
function planPlacements(records: Element[][]): PlacementPlan {
  const counts = new Map<string, Map<Element[], number>>();
  for (const r of records) {
    r.forEach((member, j) => {
      const stack: Element[] = [member];
      while (stack.length) {
        const el = stack.pop()!;
        const groups = new Map<string, number>();
        for (const c of el.children) {
          if (!isTag(c) || SKIP.has(c.name)) continue;
          stack.push(c);
          if (!stableClasses(c).length) groups.set(c.name, (groups.get(c.name) ?? 0) + 1);
        }
        for (const [tag, k] of groups) {
          const key = `${j}|${familyPath(el, member)}|${tag}`;
          const per = counts.get(key) ?? counts.set(key, new Map()).get(key)!;
          per.set(r, Math.max(per.get(r) ?? 0, k));
        }
      }
    });
  }
  const plan: PlacementPlan = new Map();
  for (const [key, per] of counts) {
    const values = [...per.values()];
    const max = Math.max(...values);
    if (max < 2) continue;
    const tag = key.slice(key.lastIndexOf('|') + 1);
    if (Math.min(...values) === max || /^(td|th|tr|dt|dd)$/.test(tag)) plan.set(key, 'start');
    else plan.set(key, max <= 2 ? 'end' : 'list');
  }
  return plan;
}

/** The path of an element from its record element, by tags and first classes (no places). */
function familyPath(el: Element, member: Element): string {
  const path: string[] = [];
  for (let n: Element | null = el; n && n !== member; n = n.parent && isTag(n.parent) ? n.parent as Element : null) path.unshift(simpleStep(n));
  return path.join('>');
}

/**
 * One step of a column's path: the tag with its first stable class; plain siblings of one tag are placed as
 * their family's plan says (`td:nth-of-type(2)`, `h3:last-of-type`, or not at all for a list), so that the
 * columns stay apart and line up from record to record.
 */
function step(el: Element, plan: PlacementPlan, item: Element, member: number): string {
  const cls = stableClasses(el)[0];
  let base = simpleStep(el);
  const parent = el.parent;
  if (!parent || !isTag(parent as AnyNode)) return base;
  // A few siblings of one tag and first class told apart by another class (`card-meta-row-item card-title`,
  // `… card-price`, `… card-shop-name`) are columns, not a list: that class joins the step.
  if (cls) {
    const like = (parent as Element).children.filter((c): c is Element => isTag(c) && c.name === el.name && stableClasses(c)[0] === cls);
    if (like.length > 1 && like.length <= 4) {
      const sets = like.map((c) => stableClasses(c).slice(1).sort().join(' '));
      if (new Set(sets).size === like.length) {
        const others = new Set(like.filter((c) => c !== el).flatMap((c) => stableClasses(c)));
        const own = stableClasses(el).slice(1).find((c) => !others.has(c));
        if (own) base += `.${own.replace(/([^\w-])/g, '\\$1')}`;
      }
    }
    // Table cells are places whatever their class (`td.rmain` four times is four columns).
    if (el.name !== 'td' && el.name !== 'th') return base;
    const cells = (parent as Element).children.filter((c): c is Element => isTag(c) && c.name === el.name);
    return cells.length > 1 ? `${base}:nth-of-type(${cells.indexOf(el) + 1})` : base;
  }
  const placement = plan.get(familyOf(el, item, member)) ?? 'start';
  if (placement === 'list') return base;
  const ofType = (parent as Element).children.filter((c): c is Element => isTag(c) && c.name === el.name);
  if (placement === 'end') {
    const fromEnd = ofType.length - ofType.indexOf(el);
    return fromEnd === 1 ? `${base}:last-of-type` : `${base}:nth-last-of-type(${fromEnd})`;
  }
  // Also told apart from siblings of its tag that have a class (`<span class="label">Author:</span> <span>Jane</span>`).
  if (ofType.length < 2) return base;
  return `${base}:nth-of-type(${ofType.indexOf(el) + 1})`;
}

/**
 * The element a text node belongs to: its nearest ancestor that is not plain inline formatting. An inline
 * element with a class or an itemprop (`<small class="author">`) names its text and holds it itself.
 */
function holderOf(node: AnyNode, item: Element): Element | null {
  let p = node.parent as Element | null;
  // An inline element right inside the record holds its text itself: above it is the whole record.
  while (p && p !== item && p.parent !== item && isTag(p) && INLINE.has(p.name) && !stableClasses(p).length && !p.attribs.itemprop) p = p.parent as Element | null;
  return p && isTag(p) ? p : null;
}

/** Text holders, links and images of one item, in document order, each with its path. */
function occurrences(item: Element, plan: PlacementPlan = new Map(), member = 0): Occurrence[] {
  const out: Occurrence[] = [];
  const seen = new Map<string, { occ: Occurrence; els: Set<Element> }>();
  let order = 0;
  const pathOf = (el: Element): string[] => {
    const steps: string[] = [];
    for (let n: Element | null = el; n && n !== item; n = n.parent && isTag(n.parent) ? n.parent : null) steps.unshift(step(n, plan, item, member));
    return steps;
  };
  const add = (el: Element, what: Occurrence['what']) => {
    const steps = el === item ? [] : pathOf(el);
    const key = `${what}:${steps.join('>')}`;
    const known = seen.get(key);
    if (known) {
      if (!known.els.has(el)) { known.els.add(el); known.occ.count++; }
      return;
    }
    const occ: Occurrence = { key, steps, el, what, order: order++, count: 1 };
    seen.set(key, { occ, els: new Set([el]) });
    out.push(occ);
  };
  const walk = (node: AnyNode) => {
    if (isText(node)) {
      if (node.data.trim()) {
        const h = holderOf(node, item);
        if (h) add(h, 'text');
      }
      return;
    }
    if (!isTag(node) || SKIP.has(node.name)) return;
    if (node !== item && isSplitAmount(node)) { add(node, 'text'); return; }
    if (node.name === 'a' && node.attribs.href && !/^\s*(#|javascript:)/i.test(node.attribs.href)) add(node, 'link');
    if (node.name === 'img' && (node.attribs.src || node.attribs['data-src'])) add(node, 'image');
    for (const c of node.children) walk(c);
  };
  walk(item);
  return out;
}

/** A whole amount of money, nothing else: `CA$13.46`, `$ 19.99`, `19,99 €`, `£1,299`. */
const AMOUNT_RE = /^\s*(?:(?:[$£€¥₹₺₩₽]|[a-z]{0,3}\$|\b(?:usd|eur|gbp|cad|aud|inr|jpy|chf)\b)\s?\d[\d.,\s]*|\d[\d.,\s]*\s?(?:[$£€¥₹₺₩₽]|\b(?:usd|eur|gbp|kr|zł)\b))\s*$/i;

/**
 * An amount of money written in pieces of inline elements: `<span class="currency-symbol">CA$</span><span
 * class="currency">8.07</span>`, `<span>$</span>19<sup>99</sup>`. Its text holds one amount and no piece alone
 * does, so the element holds the whole price as one value (issue 36, the Etsy page).
 */
function isSplitAmount(el: Element): boolean {
  if (INLINE.has(el.name) && !stableClasses(el).length) return false;
  const parts = el.children.filter((c) => isTag(c) || (isText(c) && c.data.trim()));
  if (parts.length < 2 || parts.length > 5) return false;
  if (!parts.every((c) => isText(c) || (isTag(c) && (c.name === 'span' || INLINE.has(c.name)) && isLeafText(c)))) return false;
  const whole = visibleText(el);
  if (whole.length > 24 || !AMOUNT_RE.test(whole)) return false;
  return !parts.some((c) => AMOUNT_RE.test(isText(c) ? c.data : visibleText(c)));
}

/** Kind of a column from its values (and the element), before any name. */
function kindOf(values: string[], what: Occurrence['what'], el: Element, hint: FieldKind | null): FieldKind {
  if (what === 'link') return 'url';
  if (what === 'image') return 'image';
  const filled = values.filter(Boolean);
  const share = (re: RegExp) => filled.filter((v) => re.test(v)).length / Math.max(1, filled.length);
  // "(5 reviews)", "No reviews", "1,204 ratings": how many, not the rating (a `reviewsRating` class says rating).
  if (filled.length && share(COUNT_OF_RE) >= 0.6) return 'number';
  if (hint === 'rating' || (filled.length && share(RATING_RE) >= 0.6)) return 'rating';
  if (filled.length && share(PRICE_RE) >= 0.6 && filled.every((v) => v.length < 40)) return 'price';
  if (hint === 'date' || (filled.length && share(DATE_RE) >= 0.6 && filled.every((v) => v.length < 60))) return 'date';
  // An address written out ("www.mayo.edu/research/…", "https://… - 97k"): a URL as text, never a description.
  if (filled.length && share(URL_TEXT_RE) >= 0.6) return 'url';
  if (/^h[1-6]$/.test(el.name)) return 'title';
  // A text is never a URL or an image, whatever its class says (`a.result-link` holds a title); a count needs digits
  // (`p.instock` holding "In stock" is text).
  if (hint === 'number' && !hasDigits(filled)) return 'text';
  if (hint && hint !== 'url' && hint !== 'image') return hint;
  if (filled.length && filled.every((v) => NUMBER_RE.test(v))) return 'number';
  return 'text';
}

/** The name and kind a label's words suggest ("Posted on" -> date), or null. */
function hintOfWords(words: string): { name: string; kind: FieldKind } | null {
  const owner = ownerWordIn(words);
  if (owner) return { name: owner, kind: 'author' };
  const w = words.toLowerCase();
  for (const [re, name, kind] of HINT_WORDS) if (re.test(w)) return { name, kind };
  return null;
}

function hintOf(el: Element): { name: string; kind: FieldKind } | null {
  const names = [...stableClasses(el), el.attribs.itemprop ?? '', el.attribs['data-testid'] ?? '', el.attribs.id && !/\d/.test(el.attribs.id) ? el.attribs.id : ''].join(' ').toLowerCase();
  if (!names.trim()) return null;
  const owner = ownerWordIn(names);
  if (owner) return { name: owner, kind: 'author' };
  for (const [re, name, kind] of HINT_WORDS) if (re.test(names)) return { name, kind };
  return null;
}

/** The link an element is or sits in, inside the item (the `a` of `a > span`, the `a` itself). */
function linkOf(el: Element, item: Element): Element | null {
  for (let n: Element | null = el; n && n !== item.parent; n = n.parent && isTag(n.parent) ? n.parent : null) {
    if (n.name === 'a' && n.attribs.href) return n;
    if (n === item) break;
  }
  return null;
}

/**
 * What the values of a column say about who they name, where the page's classes do not: the links' paths
 * (`/artist/75334-Red-Krayola`: artist, `/shop/Acme`: shop, `/user/…`: user) on most of the present elements, or
 * the text just before the value ("by Jane", "Sold by Acme": author, seller). Null when neither says.
 */
function ownerHintOf(present: Element[], item: (el: Element) => Element): { name: string; kind: FieldKind } | null {
  if (present.length < 2) return null;
  const tally = new Map<string, number>();
  for (const el of present) {
    const a = linkOf(el, item(el));
    let path = '';
    try { path = a ? new URL(a.attribs.href!, 'http://x/').pathname.toLowerCase() : ''; } catch { /* not a URL */ }
    const seg = /^\/(?:[a-z]{2}(?:-[a-z]{2})?\/)?([a-z]+)\/[^/]/.exec(path)?.[1];
    // Not shop, store, brand or company: many sites put their products under /shop/ or /store/.
    const word = seg && PATH_OWNERS.has(seg) ? OWNER_WORDS[seg] : undefined;
    if (word) tally.set(word, (tally.get(word) ?? 0) + 1);
    else {
      const before = textBefore(a ?? el, item(el));
      const by = BY_BEFORE.exec(before)?.[1]?.toLowerCase().replace(/:$/, '');
      if (by) {
        const name = by === 'sold by' || by === 'offered by' || by === 'seller' ? 'seller' : by === 'shop' || by === 'store' ? by : by === 'uploaded by' ? 'uploader' : by === 'published by' ? 'publisher' : 'author';
        tally.set(name, (tally.get(name) ?? 0) + 1);
      }
    }
  }
  const best = [...tally].sort((x, y) => y[1] - x[1])[0];
  if (best && best[1] >= present.length * 0.6) return { name: best[0], kind: 'author' };
  // A company's name by its legal form ("Shenzhen ZDCARD Tech Co., Ltd.", "Acme Inc.", "Müller GmbH").
  const companies = present.filter((el) => COMPANY_RE.test(visibleText(el))).length;
  return companies >= present.length * 0.6 ? { name: 'company', kind: 'author' } : null;
}

/** The text just before an element inside the item: its preceding siblings' text, else its parent's (40 chars at most). */
function textBefore(el: Element, item: Element): string {
  for (let n: Element | null = el; n && n !== item; n = n.parent && isTag(n.parent) ? n.parent : null) {
    let s = '';
    for (let p = n.prev; p && s.length < 40; p = p.prev) s = (isText(p) ? p.data : isTag(p) && INLINE.has(p.name) || (isTag(p) && p.name === 'span') ? visibleText(p) : '\u0000') + s;
    const tail = s.slice(s.lastIndexOf('\u0000') + 1).replace(/\s+/g, ' ');
    if (tail.trim()) return tail.trimEnd();
    if (s.includes('\u0000')) return '';
  }
  return '';
}

/**
 * The hint a table's header gives a cell's column (`<th>Author</th>` over the cell): its words through the
 * same name list as classes; a header of other words names the column itself (`<th>ISBN</th>` gives `isbn`).
 */
function headerHintOf(el: Element, item: Element): { name: string; kind: FieldKind | null } | null {
  if (item.name !== 'tr') return null;
  let cell: Element | null = el;
  while (cell && cell.parent !== item) cell = cell.parent && isTag(cell.parent) ? cell.parent : null;
  if (!cell || (cell.name !== 'td' && cell.name !== 'th')) return null;
  const index = item.children.filter(isTag).indexOf(cell);
  // The header row: the table's first row made of <th> cells (in <thead> or not).
  let table: AnyNode | null = item.parent;
  while (table && !(isTag(table) && table.name === 'table')) table = table.parent;
  if (!table) return null;
  const rows: Element[] = [];
  const collect = (n: Element) => { for (const c of n.children) if (isTag(c)) { if (c.name === 'tr') rows.push(c); else if (['thead', 'tbody', 'tfoot'].includes(c.name)) collect(c); } };
  collect(table as Element);
  const header = rows.find((r) => r.children.some((c) => isTag(c) && c.name === 'th'));
  const th = header?.children.filter(isTag)[index];
  const text = th ? visibleText(th).trim().toLowerCase() : '';
  if (!text || text.length > 40) return null;
  for (const [re, name, kind] of HINT_WORDS) if (re.test(text)) return { name, kind };
  const name = text.replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
  return name ? { name, kind: null } : null;
}

/**
 * Where the records' values are: each record's elements, its container match first. A record is one element, or
 * (records spread over siblings: a table row and the row after it, `dt`/`dd` pairs) the container match and the
 * element siblings after it that belong to it (`extract.following_siblings` in the config).
 */
export interface RecordLayout {
  /** One list per record: the container match, then the siblings that belong to it (if any). */
  members: Element[][];
  /** The container selector: field selectors of records of more than one element start from it. */
  container: string;
}

/** The layout of a candidate's records for {@link findColumns}: undefined for records of one element each. */
export function recordLayout(c: { members: Element[][]; span: number; selector: string }): RecordLayout | undefined {
  return c.span > 0 ? { members: c.members, container: c.selector } : undefined;
}

/**
 * The elements of a record that match a selector, in document order, as the engine finds a field's elements
 * (lambdas/engine/field-selector.ts): inside the element of a one-element record; in a record spread over siblings,
 * the record's elements themselves and their descendants.
 * @throws Error for a selector that does not parse
 */
function findIn($: CheerioAPI, members: Element[], selector: string): Element[] {
  if (members.length === 1) return $(members[0]!).find(selector).toArray() as Element[];
  return compileSiblingsSelector(selector).all($, members);
}

/**
 * The selector of a record's `j`th element, to start a field selector from: the container for the first; for a
 * later one the container and the siblings up to it (`tr.result + tr`), checked on every record, else the
 * container and any later sibling of its tag (`dt ~ dd`).
 */
function memberPrefix($: CheerioAPI, layout: RecordLayout, j: number): string {
  if (j === 0) return layout.container;
  const model = layout.members.find((m) => m.length > j);
  if (!model) return layout.container;
  const chain: string[] = [];
  for (let n: Element | null = model[0]!; n && n !== model[j]; ) {
    n = nextElement(n);
    if (n) chain.push(simpleStep(n));
  }
  const exact = [layout.container, ...chain].join(' + ');
  const fits = (sel: string) => layout.members.filter((m) => m.length > j).every((m) => { try { return findIn($, m, sel)[0] === m[j]; } catch { return false; } });
  if (fits(exact)) return exact;
  return `${layout.container} ~ ${simpleStep(model[j]!)}`;
}

function nextElement(el: Element): Element | null {
  for (let n = el.next; n; n = n.next) if (isTag(n)) return n as Element;
  return null;
}

/**
 * The shortest selector that finds this column's element first in most records: a suffix of its path from the
 * record's element (`h3 a`, `p.price_color`), after the member's prefix in records of several elements.
 */
function columnSelector($: CheerioAPI, records: Element[][], steps: string[], prefix: string, elements: Map<Element[], Element>): string | null {
  const candidates: string[] = [];
  for (let k = 1; k <= steps.length; k++) candidates.push(steps.slice(steps.length - k).join(' '));
  if (prefix) {
    for (let i = 0; i < candidates.length; i++) candidates[i] = `${prefix} ${candidates[i]}`;
    if (!steps.length) candidates.push(prefix);
  }
  let best: { sel: string; share: number } | null = null;
  for (const sel of candidates) {
    let hits = 0;
    let tried = 0;
    for (const r of records) {
      const want = elements.get(r);
      if (!want) continue;
      tried++;
      try {
        if (findIn($, r, sel)[0] === want) hits++;
      } catch {
        break;
      }
    }
    const share = tried ? hits / tried : 0;
    if (share >= 0.9) return sel;
    if (!best || share > best.share) best = { sel, share };
  }
  // No selector finds the column's own element in most records: it would read another column's values.
  return best && best.share >= 0.6 ? best.sel : null;
}

/** A column before it is kept, renamed or split: its occurrences, one per record at most. */
interface Aligned {
  key: string;
  member: number;
  steps: string[];
  what: Occurrence['what'];
  /** Record -> the element holding the column's value in it. */
  byRecord: Map<Element[], Element>;
  first: Element;
  order: number;
  /** A list of like elements (several per record): the field takes them all. */
  list?: boolean;
  /** Record -> how many elements it has on this path (several: a list of one kind). */
  counts: Map<Element[], number>;
}

/** Words a label may be: short, no digits; "Tags:", "Author:", "Posted by". */
const LABEL_TEXT = /^[^\d:]{1,30}:?$/;
/** Link texts that lead to the record's own page and say nothing of it. */
const READ_MORE = /^(read|see|view|show|learn) more\b|^more\b|^continue reading\b|^(view )?details$/i;
/** A label at the start of a value ("Author: Jane", "Price: $5"). */
const PREFIX_LABEL = /^\s*([^\d:\s][^\d:]{2,24}?)\s*:\s+\S/;
/** A label inside a value, after something else ("“…” Author: Albert Einstein"). */
const INNER_LABEL = /\S\s+([A-Z][A-Za-z]{1,20}(?: [A-Za-z]{1,20})?):\s+\S/;

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** A label's words as a field name: `Release date:` -> `release_date`. */
const labelName = (label: string): string => label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40);

/**
 * The columns the records share, in record order, aligned as DEPTA aligns the data items of similar records
 * (simplified to the path of each text holder, link and image from its record element):
 * - a column present in two records or more (and in a tenth of them) is kept; a value missing from a record is null
 *   there;
 * - text that is the same in every record ("Tags:", "Read more") is not a column; where it labels the next column,
 *   it names it ("Tags:" and the tag links give `tags`);
 * - a label at the start of every value ("Author: Jane") names the column and is cut off (a `regex:` transform); a
 *   label in the middle of every value ("“…” Author: Albert Einstein") splits it into two columns;
 * - two columns with the same values are one.
 * @param items the record elements (sampled: the first 40 are read).
 * @param layout records spread over siblings (their elements and the container selector); absent: each item is
 *   one element.
 * @returns columns, each with a field spec named after its label, hint or kind (rename with {@link nameColumns}).
 */
export function findColumns($: CheerioAPI, items: Element[], baseUrl: string, layout?: RecordLayout): Column[] {
  const records: Element[][] = (layout ? layout.members : items.map((it) => [it])).slice(0, 40);
  const spread = records.some((r) => r.length > 1);
  const plan = planPlacements(records);
  const byKey = new Map<string, Aligned>();
  const sequences: string[][] = [];
  for (const r of records) {
    const seq: string[] = [];
    let offset = 0;
    r.forEach((member, j) => {
      const occ = occurrences(member, plan, j);
      for (const o of occ) {
        const key = spread ? `m${j}|${o.key}` : o.key;
        let g = byKey.get(key);
        if (!g) { g = { key, member: j, steps: o.steps, what: o.what, byRecord: new Map(), counts: new Map(), first: o.el, order: offset + o.order }; byKey.set(key, g); }
        if (!g.byRecord.has(r)) { g.byRecord.set(r, o.el); g.counts.set(r, o.count); seq.push(key); }
      }
      offset += occ.length + 1000;
    });
    sequences.push(seq);
  }
  const n = records.length;
  const min = Math.min(n, Math.max(2, Math.ceil(n * 0.1)));
  const prefixes = new Map<number, string>();
  const prefixOf = (j: number): string => {
    if (!spread || !layout) return '';
    if (!prefixes.has(j)) prefixes.set(j, memberPrefix($, layout, j));
    return prefixes.get(j)!;
  };

  // Texts the same in every record that are no data: labels ("Tags:", a `dt`), which name the column after them,
  // and "Read more" links. Other constant texts are values that happen to be alike on this page ("Textbook").
  const labels = new Map<string, string>();
  const constant = new Set<string>();
  for (const g of byKey.values()) {
    if (g.what !== 'text' || g.byRecord.size < Math.max(2, min) || n < 3) continue;
    // A holder's own text (without its child elements' values: "Tags:" before the tag links) is what labels.
    const own = [...g.byRecord.values()].map(ownText);
    const whole = own.every((t, i) => t === visibleText([...g.byRecord.values()][i]!));
    if (new Set(own.map((t) => t.toLowerCase())).size !== 1) continue;
    const text = own[0]!;
    const isLabel = LABEL_TEXT.test(text) && (/:$/.test(text) || (whole && ['dt', 'th', 'label'].includes(g.first.name)));
    if (whole && READ_MORE.test(text)) constant.add(g.key);
    if (!isLabel) continue;
    constant.add(g.key);
    // The column that follows it in most records.
    const next = new Map<string, number>();
    for (const seq of sequences) {
      const i = seq.indexOf(g.key);
      // The next value: a text rather than the link around it ("Tags:" names the tags' texts, not their URLs).
      const window = i >= 0 ? seq.slice(i + 1, i + 4).filter((k) => !/(^|\|)image:/.test(k)) : [];
      const after = window.find((k) => /(^|\|)text:/.test(k)) ?? window[0];
      if (after) next.set(after, (next.get(after) ?? 0) + 1);
    }
    const best = [...next].sort((a, b) => b[1] - a[1])[0];
    if (best && best[1] >= g.byRecord.size * 0.6) {
      const name = labelName(text);
      if (name && !labels.has(best[0])) labels.set(best[0], name);
    }
  }

  const columns: Column[] = [];
  for (const g of byKey.values()) {
    if (g.byRecord.size < min || constant.has(g.key)) continue;
    const first = g.first;
    const present = [...g.byRecord.values()];
    const selector = g.steps.length || spread ? columnSelector($, records, g.steps, prefixOf(g.member), g.byRecord) : '';
    if (selector === null) continue;
    const label = labels.get(g.key) ?? null;
    const labelHint = label ? hintOfWords(label) : null;
    const items = new Map([...g.byRecord].map(([r, e]) => [e, r[g.member]!] as const));
    const itemOf = (el: Element): Element => items.get(el) ?? first;
    let hint = labelHint ?? hintOf(first) ?? headerHintOf(first, [...g.byRecord.keys()][0]![g.member]!) ?? ownerHintOf(present.slice(0, 20), itemOf);
    let values: string[];
    let spec: FieldSpec;
    let texts: string[] | undefined;
    const sel = selector ? { selector } : {};
    if (g.what === 'link') {
      values = present.slice(0, 5).map((el) => { try { return new URL(el.attribs.href!, baseUrl).href; } catch { return el.attribs.href!; } });
      spec = { name: 'url', ...sel, type: 'link' } as FieldSpec;
      texts = present.slice(0, 8).map((el) => visibleText(el) || el.attribs.title || el.attribs['aria-label'] || '');
    } else if (g.what === 'image') {
      values = present.slice(0, 5).map((el) => el.attribs.src ?? el.attribs['data-src'] ?? '');
      spec = { name: 'image', ...sel, type: 'image_url' } as FieldSpec;
    } else {
      values = present.map((el) => visibleText(el));
      spec = { name: 'text', ...sel, type: 'text', transform: ['trim_whitespace'] } as FieldSpec;
      // A link text cut short ("A Light in the ...") whose title attribute holds it whole.
      const titles = present.slice(0, 8).map((el) => el.attribs.title ?? '');
      if (first.name === 'a' && values.slice(0, 8).some((v) => /(\.\.\.|…)$/.test(v)) && titles.every((t, i) => t.length >= values[i]!.replace(/(\.\.\.|…)$/, '').trim().length)) {
        values = titles;
        spec = { name: 'text', ...sel, type: 'attribute', attribute: 'title' } as FieldSpec;
      }
    }
    // "In stock", "Sold out": availability, not a count (see ./naming.ts).
    if (g.what === 'text' && (!hint || hint.kind === 'number' || hint.kind === 'text') && isAvailabilityText(values)) hint = { name: 'availability', kind: 'text' };
    const perItem = selector ? records.slice(0, 10).reduce((k, r) => { try { return k + findIn($, r, selector).length; } catch { return k; } }, 0) / Math.min(10, records.length) : 1;
    // Elements of one path several to a record (`li > div.kv` lines, `a.tag` links) are a list, when the field's
    // selector finds no more than them.
    const repeated = [...g.counts.values()].filter((k) => k > 1).length;
    const list = !!g.list || (g.what !== 'image' && !!selector && repeated >= Math.max(1, g.byRecord.size * 0.3)
      && records.slice(0, 10).every((r) => { try { return findIn($, r, selector).length <= (g.counts.get(r) ?? 0); } catch { return false; } }));
    const distinct = values.length ? new Set(values.map((v) => v.toLowerCase())).size / values.length : 1;
    const base: Omit<Column, 'kind'> = { selector, spec, presence: g.byRecord.size / n, samples: values.slice(0, 8), order: g.order, hint: hint?.name ?? null, label, perItem, list, distinct, ...(texts ? { texts } : {}) };
    if (spec.type === 'text' && present.every(isLeafText)) {
      const split = splitLabels(base, values);
      if (split) {
        for (const c of split) columns.push({ ...c, kind: kindOf(c.samples, 'text', first, c.label ? hintOfWords(c.label)?.kind ?? null : hint?.kind ?? null) });
        continue;
      }
    }
    const kind = kindOf(values, g.what, first, hint?.kind ?? null);
    // Stars drawn by class (`<p class="star-rating Three">`): the class carries the rating.
    if (g.what === 'text' && kind === 'rating' && !values.some((v) => /\d/.test(v))) continue;
    columns.push({ ...base, kind });
  }
  if (!spread) columns.push(...ratingByClass(items.slice(0, 40)));
  columns.sort((a, b) => a.order - b.order);
  return dropRedundant(columns);
}

/**
 * An element's own text: its text nodes and those of plain inline formatting inside it (not of links, blocks or
 * formatting with a class, which hold values of their own), whitespace folded.
 */
function ownText(el: Element): string {
  let s = '';
  const walk = (n: AnyNode) => {
    if (isText(n)) s += n.data;
    else if (isTag(n) && INLINE.has(n.name) && !stableClasses(n).length && !n.attribs.itemprop) for (const c of n.children) walk(c);
    else if (isTag(n) && /^(br|p|div|li)$/.test(n.name)) s += ' ';
  };
  for (const c of el.children) walk(c);
  return s.replace(/\s+/g, ' ').trim();
}

/** Whether an element holds one run of text: nothing inside it but text and inline formatting (no link, no block). */
function isLeafText(el: Element): boolean {
  return el.children.every((c) => !isTag(c) || (INLINE.has(c.name) && isLeafText(c)));
}

/**
 * A text column whose values carry a label: at their start in nearly every record ("Author: Jane Doe" becomes
 * `author` = "Jane Doe"), or after a first part ("“…” Author: Albert Einstein" becomes the text before and
 * `author`); null when the values carry none.
 */
function splitLabels(c: Omit<Column, 'kind'>, values: string[]): Array<Omit<Column, 'kind'>> | null {
  const filled = values.filter((v) => v.trim());
  if (filled.length < 2) return null;
  const most = (re: RegExp): string | null => {
    const counts = new Map<string, number>();
    for (const v of filled) {
      const m = re.exec(v);
      if (m) counts.set(m[1]!.trim(), (counts.get(m[1]!.trim()) ?? 0) + 1);
    }
    const best = [...counts].sort((a, b) => b[1] - a[1])[0];
    return best && best[1] >= filled.length * 0.8 ? best[0] : null;
  };
  const transformOf = (c2: Omit<Column, 'kind'>) => (c2.spec as { transform?: string[] }).transform ?? [];
  const prefix = most(PREFIX_LABEL);
  if (prefix) {
    const name = labelName(prefix);
    if (!name) return null;
    const cut = `regex:^\\s*${escapeRegex(prefix)}\\s*:\\s*([\\s\\S]*)$`;
    const re = new RegExp(`^\\s*${escapeRegex(prefix)}\\s*:\\s*`);
    return [{ ...c, label: name, spec: { ...c.spec, transform: [cut, ...transformOf(c)] } as FieldSpec, samples: c.samples.map((v) => v.replace(re, '')) }];
  }
  const inner = most(INNER_LABEL);
  if (inner) {
    const name = labelName(inner);
    if (!name) return null;
    const at = new RegExp(`\\s*${escapeRegex(inner)}:\\s*`);
    const before: Omit<Column, 'kind'> = {
      ...c, spec: { ...c.spec, transform: [`regex:^([\\s\\S]*?)\\s*${escapeRegex(inner)}:`, ...transformOf(c)] } as FieldSpec,
      samples: c.samples.map((v) => v.split(at)[0] ?? ''),
    };
    const after: Omit<Column, 'kind'> = {
      ...c, label: name, order: c.order + 0.5, spec: { ...c.spec, transform: [`regex:${escapeRegex(inner)}:\\s*([\\s\\S]*)$`, ...transformOf(c)] } as FieldSpec,
      samples: c.samples.map((v) => v.split(at)[1] ?? ''),
    };
    return [before, after];
  }
  return null;
}

/** Class tokens that say "rating", and the ones that give its value (`Three`, `4`, `4-5`). */
const RATING_WORD = /^(star-?rating|rating|stars?)$/i;
const RATING_VALUE = /^(?:[a-z-]*[-_])?(one|two|three|four|five|[1-5](?:[-_.]5)?)$/i;

/**
 * The rating a class attribute draws: a token naming a rating (`star-rating`, `rating`) followed, among the next
 * 4 tokens, by a value (`Three`, `4`, `stars-4-5` read as `4-5`); `[rating token, value]` or null. Linear in the
 * attribute (at most 200 tokens are read).
 */
function ratingClass(cls: string): [string, string] | null {
  const tokens = cls.split(/\s+/, 200).filter(Boolean);
  for (let i = 0; i < tokens.length; i++) {
    if (!RATING_WORD.test(tokens[i]!)) continue;
    for (let j = i + 1; j < Math.min(tokens.length, i + 5); j++) {
      const v = RATING_VALUE.exec(tokens[j]!);
      if (v) return [tokens[i]!, v[1]!];
    }
  }
  return null;
}

/** A rating drawn with a class (`star-rating Three`, `rating-4`): an attribute field with the class. */
function ratingByClass(items: Element[]): Column[] {
  for (const it of items.slice(0, 3)) {
    const stack: Element[] = [it];
    while (stack.length) {
      const el = stack.pop()!;
      const cls = el.attribs.class ?? '';
      // Token by token (a regex with a lazy run between two words is quadratic on a long class attribute).
      const m = ratingClass(cls);
      if (m) {
        const token = m[0];
        const selector = `${el.name}.${token.replace(/([^\w-])/g, '\\$1')}`;
        const has = (x: Element): boolean => {
          const todo: Element[] = [x];
          while (todo.length) {
            const n = todo.pop()!;
            if ((n.attribs.class ?? '').split(/\s+/).includes(token)) return true;
            for (const c of n.children) if (isTag(c)) todo.push(c);
          }
          return false;
        };
        const present = items.filter(has).length;
        return [{
          selector, kind: 'rating', presence: present / items.length, samples: [cls], order: 1e6, hint: 'rating', label: null, perItem: 1,
          spec: { name: 'rating', selector, type: 'attribute', attribute: 'class', transform: [`replace:${token}:`, 'trim_whitespace'] } as FieldSpec,
        }];
      }
      for (const c of el.children) if (isTag(c)) stack.push(c);
    }
  }
  return [];
}

/**
 * Drops columns that repeat another: the same field twice, a text column with the same values as an earlier one (a
 * paragraph and the link that is all its text), separators ("|", "by").
 */
function dropRedundant(columns: Column[]): Column[] {
  const out: Column[] = [];
  const seen = new Set<string>();
  const texts = new Set<string>();
  for (const c of columns) {
    const key = `${c.spec.type}|${c.selector}|${JSON.stringify((c.spec as { transform?: string[] }).transform ?? [])}`;
    if (seen.has(key)) continue;
    if (c.spec.type === 'text' && c.samples.every((v) => v.replace(/[\s|·•:,–—-]/g, '').length <= 2)) continue;
    if (c.spec.type === 'text' || c.spec.type === 'attribute') {
      const values = c.samples.join('\u0000').toLowerCase();
      if (texts.has(values)) continue;
      texts.add(values);
    }
    seen.add(key);
    out.push(c);
  }
  return out;
}

/**
 * Where a column fits an asked field: 0 (not at all) to about 4 (the same kind and a matching name). A field
 * of no known kind ("UPC", "ISBN") fits only a column whose class or label names it.
 */
function fitOf(c: Column, f: AskedField): number {
  const words = f.words.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 1 && !['the', 'its', 'their', 'each', 'and'].includes(w));
  // The page's names for the column, as words: its label, hint and the classes in its selector (`p.price_color`:
  // price, color; `authorName`: author, name).
  const tokens = new Set(`${c.label ?? ''} ${c.hint ?? ''} ${c.selector.replace(/\[[^\]]*\]/g, ' ')}`.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean));
  const stem = (w: string) => w.replace(/(es|s)$/, '');
  const named = words.some((w) => [...tokens].some((t) => t === w || stem(t) === stem(w) || (w.length >= 4 && t.startsWith(stem(w)))));
  const labelled = words.some((w) => c.samples.some((v) => new RegExp(`^\\s*${w.replace(/s$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}s?\\b`, 'i').test(v)));
  // The word in most values ("+ £35.27 postage" for postage, "Free shipping" for shipping).
  const filled = c.samples.filter(Boolean);
  const mentioned = c.spec.type !== 'link' && c.spec.type !== 'image_url' && filled.length > 0 && words.some((w) => w.length >= 4 && filled.filter((v) => new RegExp(`\\b${escapeRegex(w.replace(/s$/, ''))}s?\\b`, 'i').test(v)).length >= filled.length * 0.6);
  // A word of no known kind ("UPC", "ISBN") names a text the page names so; never a link or an image.
  const shaped = VALUE_SHAPES[f.name]?.test.bind(VALUE_SHAPES[f.name]);
  const looksSo = !!shaped && filled.length > 0 && filled.filter((v) => shaped(v)).length >= filled.length * 0.6;
  if (f.kind === 'text') return c.spec.type === 'link' || c.spec.type === 'image_url' ? 0 : named ? 2.5 : labelled || mentioned || looksSo ? 2 : 0;
  // A link's address or an image's is only ever the link or image asked for (a section's text, not its href).
  if ((c.spec.type === 'link' && f.kind !== 'url') || (c.spec.type === 'image_url' && f.kind !== 'image')) return 0;
  let s = 0;
  if (c.kind === f.kind) s += 2;
  else if (f.kind === 'title' && c.kind === 'text') s += 0.5;
  else if (f.kind === 'description' && c.kind === 'text') s += 1;
  // A category repeats from record to record ("in Esports", "Esports", "Announcements"): a short text of few values.
  else if (f.kind === 'category' && c.kind === 'text' && (c.distinct ?? 1) < 0.6 && avgLength(c) < 40 && c.samples.length >= 3) s += 1.2;
  if (named || mentioned) s += 1.5;
  // "(16 ratings)" is how many rated, not the rating; "4.1", "7.2 Good" (a small decimal) is a rating asked for.
  const counts = filled.filter((v) => COUNT_OF_RE.test(v)).length >= Math.max(1, filled.length * 0.6);
  if (counts && f.kind !== 'number') s -= 2;
  if (f.kind === 'rating' && c.kind === 'number' && !counts && filled.length && filled.every((v) => /^\s*\d{1,2}(?:[.,]\d{1,2})?\s*(?:\/\s*(?:5|10|100))?\s*$/.test(v) && parseFloat(v) <= 10)) s += 1.5;
  // "byline" asks for the whole line ("By Reuters - February 9th 2017"), not only the name in it.
  const bylines = filled.filter((v) => /^\s*(?:[a-z]+ ){0,2}by\s/i.test(v)).length >= Math.max(1, filled.length * 0.6);
  if (f.name === 'byline' && bylines) s += 2.5;
  // A whole byline ("by Rich McCormick Feb 2, 2017 …") holds more than the author: a column of the name alone wins.
  else if (f.kind === 'author' && c.samples.filter((v) => BY_START.test(v) && v.length > 30).length >= c.samples.length * 0.6) s -= 0.75;
  // The same few values in most records ("Article" on each) are no title, description or author of each.
  if (['title', 'description', 'author', 'url'].includes(f.kind) && (c.distinct ?? 1) < 0.3 && c.samples.length >= 3) s *= 0.5;
  // A price that is postage or shipping ("+ £35.27 postage") is not the price asked for by "price" or "cost".
  if (f.kind === 'price' && !mentioned && filled.filter((v) => EXTRA_CHARGE.test(v)).length >= filled.length * 0.6) s -= 1.5;
  return s;
}

/** A length of time as listings write one: `2:20`, `1:02:33`, `1.5 hours`, `12h`, `6h 30m`, `45 min`. */
const DURATION_RE = /(?:^|[^\d:])\d{1,2}:\d{2}(?::\d{2})?(?![\d:])|\b\d+(?:[.,]\d+)?\s*(?:h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?)\b/i;

/** Field names of no kind whose values have a shape of their own (issue 36: matched by what the value is). */
const VALUE_SHAPES: Record<string, RegExp> = { duration: DURATION_RE, length: DURATION_RE, runtime: DURATION_RE, running_time: DURATION_RE };

/** Words that make an amount a charge beside the price. */
const EXTRA_CHARGE = /\b(postage|shipping|delivery|p&p|handling)\b/i;

/** Link texts that are not the record's own link: "See more like this", "Read more", "Similar items". */
const OTHER_LINK = /^(?:(?:see|view|show|shop|find)\s+(?:more|all|similar)|more like this|similar|compare|watch|save|add to|sponsored|ad)\b|\blike this$/i;

/**
 * How well a link column is the record's own link (the `link` or `url` asked for, issue 36): +2 when its texts are the
 * title's (the record's main heading link), -2 when they are "See more like this" and the like or empty.
 */
function ownLinkFit(c: Column, title: Column | null): number {
  const texts = (c.texts ?? []).map((t) => t.trim());
  if (!texts.length) return 0;
  if (title && c.selector === title.selector) return 2;
  const norm = (t: string) => t.toLowerCase().replace(/\s+/g, ' ').trim();
  const titles = new Set((title?.samples ?? []).map(norm));
  if (titles.size && texts.filter((t) => titles.has(norm(t))).length >= texts.length * 0.6) return 2;
  if (texts.filter((t) => !t || OTHER_LINK.test(t)).length >= texts.length * 0.6) return -2;
  return 0;
}

/**
 * Chooses and names the fields of a config from the columns: the prompt's fields, each on the column that
 * fits it best (a title prefers the first link's text or a heading, a description the longest text); with
 * `everyColumn` (the prompt names nothing, or asks for "details", "everything"), every other column too, with a
 * descriptive name (title, url, image, price, …).
 * @param o.everyColumn keep every column, the asked ones first (default: when nothing is asked)
 * @returns the chosen fields (asked ones first, then the rest, each in the record's order), and the asked
 *   fields no column fits (candidates for a detail page).
 */
export function nameColumns(columns: Column[], asked: AskedField[], o: { everyColumn?: boolean } = {}): { fields: FieldSpec[]; missing: AskedField[] } {
  const everyColumn = o.everyColumn ?? asked.length === 0;
  const used = new Set<Column>();
  const named = new Map<Column, string>();
  const missing: AskedField[] = [];
  const titleColumn = pickTitle(columns);
  for (const f of asked) {
    let best: Column | null = null;
    let bestFit = 0;
    for (const c of columns) {
      if (used.has(c) && !(f.kind === 'url' && c.spec.type === 'link')) continue;
      let s = fitOf(c, f);
      if (f.kind === 'title' && c === titleColumn) s += 2.5;
      if (f.kind === 'url' && c.spec.type === 'link') s += ownLinkFit(c, titleColumn);
      if (f.kind === 'description' && c.kind === 'text') s += Math.min(1, avgLength(c) / 100);
      // Tags are a list, and their words rather than their links.
      if (f.kind === 'tags' && (c.perItem >= 1.5 || c.list)) s += c.spec.type === 'link' ? 1 : 1.5;
      s *= 0.5 + 0.5 * c.presence;
      if (s > bestFit) { best = c; bestFit = s; }
    }
    if (best && bestFit >= 1) {
      used.add(best);
      named.set(best, f.name);
    } else {
      missing.push(f);
    }
  }
  // The asked fields first, in the record's order (as the page shows them) …
  const chosen = columns.filter((c) => named.has(c)).sort((a, b) => a.order - b.order);
  if (everyColumn) {
    // … then every other column in item order (IDS-like: what a person sees in each record), the title first-named.
    const rest = columns.filter((c) => !named.has(c)).slice(0, MAX_FIELDS);
    chosen.push(...rest.sort((a, b) => a.order - b.order));
  }
  const names = new Set<string>(chosen.filter((c) => named.has(c)).map((c) => named.get(c)!));
  const titleTaken = asked.some((f) => f.name === 'title');
  // Several like elements per record (tags, authors): all of them. A selector that merely matches more than the
  // column's element (`a` for the title link before other links) reads the first.
  const isMultiple = (c: Column) => !!c.list || (c.perItem >= 1.5 && c.spec.type === 'text' && (c.kind === 'tags' || asked.some((f) => f.name === named.get(c) && f.kind === 'tags')));
  // Names (docs/generate.md, "How fields are named and typed"; the rules are in ./naming.ts): texts first, then
  // links and images, which may be named after the text of the same element (`h3 a`: `title`, `title_url`).
  const given = new Map<Column, string>();
  const pass = (c: Column) => {
    let name = named.get(c);
    if (name === undefined) {
      const base = c === titleColumn && !titleTaken && titleLike(c) ? 'title' : defaultName(c);
      name = uniqueName(nameCandidates(c, base, given), names);
    }
    if (isMultiple(c) && pluralName(name) !== name) {
      const plural = pluralName(name);
      if (!names.has(plural)) { names.delete(name); names.add(plural); name = plural; }
    }
    given.set(c, name);
  };
  for (const c of chosen) if (c.spec.type !== 'link' && c.spec.type !== 'image_url') pass(c);
  for (const c of chosen) if (c.spec.type === 'link' || c.spec.type === 'image_url') pass(c);
  const fields: FieldSpec[] = [];
  for (const c of chosen) {
    const name = given.get(c)!;
    const list = isMultiple(c) ? { multiple: true } : {};
    // A price is a number, asked for or not: generate and Suggest type it alike. With every column kept, its text
    // as shown ("CAD$138.95 (P)": the currency, a qualifier) is kept too, as `price_text`.
    if (c.kind === 'price' && c.spec.type === 'text') {
      fields.push({ ...c.spec, name, transform: [...PRICE_TRANSFORM], ...list } as FieldSpec);
      if (everyColumn) fields.push({ ...c.spec, name: uniqueName([`${name}_text`, `${name}_as_shown`], names), ...list } as FieldSpec);
      continue;
    }
    fields.push({ ...c.spec, name, ...list } as FieldSpec);
  }
  return { fields, missing };
}

function avgLength(c: Column): number {
  return c.samples.reduce((s, v) => s + v.length, 0) / Math.max(1, c.samples.length);
}

function defaultName(c: Column): string {
  if (c.label && c.spec.type !== 'link' && c.spec.type !== 'image_url') return c.label;
  switch (c.kind) {
    case 'url': return 'url';
    case 'image': return 'image';
    case 'text': return c.hint && c.hint !== 'url' && c.hint !== 'image' ? c.hint : 'text';
    // `a.shop`, `/artist/…`: shop, artist (the owner word the column's class, path or "by" gave).
    case 'author': return c.hint ?? 'author';
    default: return c.hint && c.kind === 'number' ? (c.hint === 'count' ? 'count' : c.hint) : c.kind;
  }
}

/**
 * Names for a column, in order of preference: its plain name, then (when that is taken) what the column is. A link
 * or an image: after the text read from the same element (`h3 a`: `title_url`), its classes or the element it
 * sits in (`a.tag`: `tag_url`; `h3 a`: `heading_url`), then `link`/`picture`. A text: its classes or element
 * joined to the plain name (`span.text`: `text`; `small.byline`: `byline`). {@link uniqueName} falls back to
 * an ordinal (`second_url`).
 */
function nameCandidates(c: Column, base: string, given: Map<Column, string>): string[] {
  const out = [base];
  const words = selectorWords(c.selector).filter((w) => w !== base && singularName(w) !== singularName(base));
  const classWords = words.filter((w) => !w.startsWith(ELEMENT_MARK));
  const elementWords = words.filter((w) => w.startsWith(ELEMENT_MARK)).map((w) => w.slice(ELEMENT_MARK.length));
  if (c.spec.type === 'link' || c.spec.type === 'image_url') {
    const suffix = c.spec.type === 'link' ? 'url' : 'image';
    const texts = [...given].filter(([other]) => other.selector === c.selector && other.spec.type !== 'link' && other.spec.type !== 'image_url').map(([, name]) => singularName(name));
    // The text of the same element names the link (`title_url`), unless it is a mere kind (`text`): then the classes.
    const telling = texts.filter((t) => t !== 'text' && t !== 'description');
    for (const w of [...telling, ...classWords, ...texts, ...elementWords]) out.push(`${singularName(w)}_${suffix}`);
    out.push(c.spec.type === 'link' ? 'link' : 'picture');
  } else {
    for (const w of classWords) out.push(w, `${w}_${base}`);
    for (const w of elementWords) out.push(`${w}_${base}`);
  }
  return out;
}

/**
 * The column that names each record: a heading's or the first link's text of some length, else the first
 * text of some length.
 */
/** Whether a column reads as a title: a heading, a link's text, named so by the page, or short. */
function titleLike(c: Column): boolean {
  return c.kind === 'title' || c.hint === 'title' || /\bh[1-6]\b|(^|\s|>)a(\.|$|\s|\[|:)/.test(c.selector) || avgLength(c) <= 100;
}

function pickTitle(columns: Column[]): Column | null {
  const texts = columns.filter((c) => !c.list && (c.spec.type === 'text' || (c.spec.type === 'attribute' && c.spec.attribute === 'title')) && c.presence >= 0.5 && avgLength(c) >= 3);
  const score = (c: Column) => {
    let s = 0;
    if (c.kind === 'title' || c.hint === 'title') s += 3;
    // The page's own word for it (`a.title`, `itemprop="name"`) over a heading that only looks like one.
    if (c.hint === 'title') s += 1;
    if (/\bh[1-6]\b/.test(c.selector)) s += 2;
    if (c.spec.type === 'attribute') s += 1;
    if (/(^|\s|>)a(\.|$|\s)/.test(c.selector.split(' ').pop() ?? '')) s += 1.5;
    if (['price', 'date', 'number', 'rating', 'url'].includes(c.kind)) s -= 3;
    // A heading or link whose ancestors' classes say title (`h3.sch-res-title a`, `div.item-ttl a div`).
    if (c.kind !== 'title' && c.hint !== 'title' && /(^|[\s.>_-])(title|ttl|headline|heading)([\s.>_:-]|$)/i.test(c.selector.replace(/\[[^\]]*\]/g, ''))) s += 2;
    // A byline ("by Alex Walker") or a value most records share ("Article", a collection's name) names no record.
    if (c.samples.filter((v) => BY_START.test(v)).length >= c.samples.length * 0.6) s -= 3;
    if ((c.distinct ?? 1) < 0.5 && c.samples.length >= 3) s -= 2;
    const len = avgLength(c);
    if (len >= 10 && len <= 150) s += 1;
    if (len > 300) s -= 1;
    s -= c.order * 0.02;
    return s;
  };
  return texts.sort((a, b) => score(b) - score(a))[0] ?? null;
}
