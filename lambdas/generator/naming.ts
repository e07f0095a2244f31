/**
 * Field names and value types of the generators without an LLM: the one naming and typing path that the heuristic
 * generator (./heuristic.ts, `POST /api/v1/generate/`) and the extension's "suggest" (./suggest.ts) both take through
 * `nameColumns` (./fields.ts). The rules (docs/generate.md, "How fields are named and typed"):
 * - a field that takes every match (`multiple: true`) has a plural name (`tags`, `authors`, `images`, `tag_urls`);
 * - names are unique within a config and never numbered (`url_2`): a second link is named by what it is (the text it
 *   holds, its class, the element it sits in: `title_url`, `tag_urls`, `heading_url`), a second text by its class or
 *   element (`quote_text`), else by its place (`second_url`);
 * - a price is a number ({@link PRICE_TRANSFORM}), whether the prompt asked for it or not;
 * - a count needs digits: "In stock", "Sold out" are `availability` text ({@link isAvailabilityText}).
 * Pure functions over strings; imports nothing.
 */

/** The transforms of a price field: its first number ("£51.20" gives 51.2, "CAD$1,138.95 (P)" 1138.95). */
export const PRICE_TRANSFORM: readonly string[] = ['extract_number'];

/** Availability wording of shops ("In stock", "Out of stock", "Available", "Sold out", "Pre-order"). */
const AVAILABILITY_RE = /\b(?:in\s+stock|out\s+of\s+stock|(?:un)?available|availability|sold\s+out|pre-?order|back-?order(?:ed)?|discontinued|coming\s+soon|limited\s+stock|low\s+stock)\b/i;

/**
 * Whether the values of a column read as availability text rather than a count: most say "in stock", "sold out"
 * and the like, and fewer than half hold a digit ("12 in stock" is a count).
 * @param values the column's sampled values (empty ones ignored).
 */
export function isAvailabilityText(values: readonly string[]): boolean {
  const filled = values.filter((v) => v.trim());
  if (!filled.length) return false;
  const worded = filled.filter((v) => AVAILABILITY_RE.test(v)).length;
  const digits = filled.filter((v) => /\d/.test(v)).length;
  return worded / filled.length >= 0.6 && digits / filled.length < 0.5;
}

/** Whether any of the values holds a digit (a count or a number needs one). */
export function hasDigits(values: readonly string[]): boolean {
  return values.some((v) => /\d/.test(v));
}

/** Words whose plural is not the word plus "s". */
const IRREGULAR: Record<string, string> = { person: 'people', child: 'children', man: 'men', woman: 'women', index: 'indexes', info: 'info', data: 'data', news: 'news', media: 'media', availability: 'availability' };

/**
 * The plural of a field name, on its last word (`tag` → `tags`, `tag_url` → `tag_urls`, `category` →
 * `categories`, `address` → `addresses`); a name already plural (`tags`, `details`) stays.
 */
export function pluralName(name: string): string {
  const m = /^(.*?)([a-z]+)$/i.exec(name);
  if (!m) return name;
  const [, head, word] = m as unknown as [string, string, string];
  const lower = word.toLowerCase();
  if (IRREGULAR[lower]) return head + IRREGULAR[lower];
  if (Object.values(IRREGULAR).includes(lower)) return name;
  // A participle or adjective is no noun to count: `published`, `featured` stay.
  if (/[a-z]{3}ed$/.test(lower)) return name;
  if (/(?:ss|us|is)$/.test(lower)) return `${name}es`;
  if (/s$/.test(lower)) return name;
  if (/[^aeiou]y$/.test(lower)) return `${head}${word.slice(0, -1)}ies`;
  if (/(?:x|z|ch|sh)$/.test(lower)) return `${name}es`;
  return `${name}s`;
}

/** The singular of a field name's last word (`tags` → `tag`, `categories` → `category`), for compounds. */
export function singularName(name: string): string {
  for (const [one, many] of Object.entries(IRREGULAR)) if (name.endsWith(many) && one !== many) return name.slice(0, -many.length) + one;
  if (/ies$/.test(name)) return `${name.slice(0, -3)}y`;
  if (/(?:sses|xes|ches|shes)$/.test(name)) return name.slice(0, -2);
  if (/[^su]s$/.test(name)) return name.slice(0, -1);
  return name;
}

/** A name made of words: lower case, `_` between words, at most 40 characters (`authorName` → `author_name`). */
export function snakeName(words: string): string {
  return words.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40).replace(/_+$/, '');
}

/** What an element is, as a word for a name (`h3` → heading, `li` → item); null for elements that say nothing. */
const ELEMENT_WORDS: Record<string, string> = {
  h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading', header: 'header', footer: 'footer',
  figure: 'figure', figcaption: 'caption', caption: 'caption', blockquote: 'quote', q: 'quote', cite: 'cite', address: 'address',
  time: 'time', nav: 'nav', aside: 'aside', small: 'small', strong: 'strong', em: 'emphasis', b: 'bold', i: 'italic', li: 'item',
  dt: 'term', dd: 'definition', th: 'header', p: 'paragraph', label: 'label', button: 'button',
};

/** Class names that say nothing of the value (layout and state). */
const NOISE_CLASS = /^(?:col|row|grid|flex|d|m|p|mt|mb|ml|mr|pt|pb|px|py|mx|my|w|h|text|font|clearfix|wrapper|wrap|inner|outer|container|content|item|block|box|active|selected|first|last|odd|even|hidden|visible|js|is|has)(?:[-_].*)?$/i;

/**
 * Words a column's selector gives for a name, most specific first: the classes of its last step (`a.tag` → `tag`,
 * `p.price_color` → `price_color`), then the classes and element words of the steps above it (`div.author-details
 * a` → `author_details`, `h3 a` → `~heading`: element words carry {@link ELEMENT_MARK}). Selector syntax other than tags and classes is ignored.
 * @param selector a field's CSS selector inside the record, e.g. `h3 a`, `span:nth-of-type(2)`.
 */
export function selectorWords(selector: string): string[] {
  const steps = selector.replace(/\[[^\]]*\]|:[a-z-]+(?:\([^)]*\))?/gi, '').split(/\s*[>+~\s]\s*/).filter(Boolean).reverse();
  const out: string[] = [];
  steps.forEach((s, i) => {
    const tag = /^[a-z][a-z0-9]*/i.exec(s)?.[0]?.toLowerCase() ?? '';
    const classes = [...s.matchAll(/\.((?:\\.|[\w-])+)/g)].map((m) => m[1]!.replace(/\\/g, '')).filter((c) => !NOISE_CLASS.test(c) && !/\d{3,}/.test(c));
    for (const c of classes) if (c.length >= 3) out.push(snakeName(c));
    if (i > 0 || tag !== 'a') { const w = ELEMENT_WORDS[tag]; if (w) out.push(`${ELEMENT_MARK}${w}`); }
  });
  return [...new Set(out.filter(Boolean))];
}

/** Marks an element word in {@link selectorWords}' answer (`~heading`): a word of the markup, not of the page's names. */
export const ELEMENT_MARK = '~';

const ORDINALS = ['second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];

/**
 * The first of the candidate names not yet taken, else an ordinal name (`second_url`, `third_url`, then
 * `url_n`th past the tenth), added to `taken`.
 * @param candidates names in order of preference (the first is the plain name, e.g. `url`).
 * @param taken names already given in the config (updated).
 */
export function uniqueName(candidates: readonly string[], taken: Set<string>): string {
  const pick = candidates.find((n) => n && !taken.has(n));
  if (pick) { taken.add(pick); return pick; }
  const base = candidates[0] ?? 'field';
  for (const o of ORDINALS) {
    const n = `${o}_${base}`;
    if (!taken.has(n)) { taken.add(n); return n; }
  }
  let k = ORDINALS.length + 2;
  while (taken.has(`${base}_${k}th`)) k++;
  taken.add(`${base}_${k}th`);
  return `${base}_${k}th`;
}
