/**
 * What a prompt in plain language asks for (docs/generate.md, "Reading the prompt"): the fields it names
 * ("book titles, prices and ratings" gives title, price, rating), whether it wants every page, every
 * category, and what lies on each item's own page. English only; words it does not know become field
 * names of their own ("titles and ISBNs" gives title, isbn).
 */

/** What kind of value a field holds, as the page analysis can recognise it. */
export type FieldKind = 'title' | 'url' | 'image' | 'price' | 'rating' | 'date' | 'author' | 'description' | 'category' | 'tags' | 'location' | 'number' | 'text';

/** A field the prompt names. */
export interface AskedField {
  /** The row key: singular, lower case, `_` between words (`release_date`). */
  name: string;
  /** The kind it maps to, when the word is one the analysis knows (`titles` → title, `cost` → price). */
  kind: FieldKind;
  /** The words as the prompt wrote them (to find labels on a detail page: "UPC", "release date"). */
  words: string;
}

/** What {@link readPrompt} found. */
export interface PromptIntent {
  fields: AskedField[];
  /**
   * Whether every column of the records is wanted, the named fields first: the prompt names no field ("all the
   * results"), or asks for more than it names ("the title and details", "everything", "all the information").
   */
  everyColumn: boolean;
  /** "every page", "all pages", "each page": follow the pagination. */
  allPages: boolean;
  /** "every category", "all categories", "each tag": crawl the categories. */
  allCategories: boolean;
  /** "from each book's page", "on the detail page", "product page": some fields live on the items' own pages. */
  detailPage: boolean;
  /** The noun the items are (the first noun: "books", "quotes", "jobs"), singular, when there is one. */
  itemNoun: string | null;
}

/** Words that map to a kind of field. */
const KIND_WORDS: Record<string, FieldKind> = {
  title: 'title', name: 'title', headline: 'title', heading: 'title', label: 'title', subject: 'title',
  url: 'url', link: 'url', href: 'url', address_url: 'url', permalink: 'url',
  image: 'image', picture: 'image', photo: 'image', thumbnail: 'image', img: 'image', cover: 'image', logo: 'image', icon: 'image',
  price: 'price', cost: 'price', amount: 'price', fee: 'price', salary: 'price', pay: 'price',
  rating: 'rating', star: 'rating', score: 'rating', stars: 'rating', grade: 'rating',
  date: 'date', time: 'date', published: 'date', posted: 'date', day: 'date', year: 'date', release_date: 'date', published_date: 'date',
  postage: 'price', shipping: 'price', delivery: 'price', shipping_cost: 'price', delivery_cost: 'price',
  supplier: 'author', manufacturer: 'author', provider: 'author', maker: 'author', distributor: 'author', instructor: 'author', teacher: 'author', tutor: 'author', speaker: 'author', host: 'author', organizer: 'author', organiser: 'author', author: 'author', writer: 'author', byline: 'author', creator: 'author', artist: 'author', seller: 'author', shop: 'author', store: 'author', vendor: 'author', merchant: 'author', retailer: 'author', channel: 'author', uploader: 'author', poster: 'author', user: 'author', username: 'author', owner: 'author', company: 'author', employer: 'author', brand: 'author', publisher: 'author', source: 'author',
  description: 'description', summary: 'description', snippet: 'description', text: 'description', body: 'description', content: 'description', excerpt: 'description', abstract: 'description', quote: 'description', review: 'description', comment: 'description', blurb: 'description',
  category: 'category', genre: 'category', section: 'category', type: 'category', department: 'category',
  tag: 'tags', tags: 'tags', keyword: 'tags', topic: 'tags', label_tag: 'tags',
  location: 'location', address: 'location', city: 'location', place: 'location', country: 'location', region: 'location',
  count: 'number', number: 'number', views: 'number', view: 'number', vote: 'number', point: 'number', like: 'number', download: 'number', quantity: 'number', stock: 'number', availability: 'text', size: 'text',
};

/**
 * Plurals that after singular field words are counts, named as written: "its title, rating and reviews" asks for the
 * number of reviews (`reviews`), not their texts; "views", "comments", "plays", "answers". In a list of plurals
 * ("titles, prices and reviews") they keep their kind.
 */
const COUNT_PLURALS = new Set(['reviews', 'views', 'comments', 'votes', 'points', 'likes', 'plays', 'downloads', 'answers', 'replies', 'followers', 'subscribers', 'shares', 'watchers', 'bids', 'installs', 'transactions', 'orders', 'purchases', 'students', 'enrollments', 'employees', 'favorites', 'favourites', 'upvotes', 'retweets', 'listens', 'reads']);

/** Words that never name a field. */
const STOP = new Set(`a an the and or of to from for in on at by with without into onto per via as is are be been this that these those
their its his her my our your all every each any some many much more most first last next previous other another same such
page pages site website web list listing listings result results item items entry entries everything thing things one ones
get give scrape extract collect grab fetch find take show want need would like please me us i we you it them also including include
plus well just only both either along together here there where which what who whom whose how when why via about over under
out up down off then than very so too can could should will shall may might must do does did done make makes made use using used
including etc e.g i.e ie eg new old top main whole full entire available current latest recent listed shown displayed found
extract scrape data information info details keep clicking click load loading loaded scroll scrolling appear appears
shown show feed table tab until while whole search searches query queries hit hits record records row rows`.split(/\s+/));

/**
 * Words that ask for every value of a record besides the fields named: "the title and details", "everything",
 * "all the information", "all fields", "the rest". ("detail page" / "details page" is a page, not this.)
 */
const EVERY_COLUMN = /\b(details?(?!\s+pages?)|everything|anything else|whatever|all (?:of )?(?:the |its |their )?(?:info(?:rmation)?|data|fields|columns|attributes|values|properties|metadata)|(?:other|more|extra|additional) (?:info(?:rmation)?|data|fields|columns|attributes|values)|the rest|full (?:record|info(?:rmation)?|entry|listing|result)s?|complete (?:record|info(?:rmation)?|entry|listing|result)s?)\b/;

/** Plural to singular, for the words field names are made of. */
function singular(word: string): string {
  const w = word.toLowerCase();
  if (/^(news|series|species|status|address|business|class|glass|process|access|campus|bus|gas|analysis|basis|thesis|canvas|ios|windows|mathematics|physics|economics|sales|stats|jeans|shoes|pants|glasses|clothes|goods|details|specs|lyrics)$/.test(w)) {
    return { details: 'detail', specs: 'spec', lyrics: 'lyrics', shoes: 'shoe', jeans: 'jeans', goods: 'good', sales: 'sale' }[w] ?? w;
  }
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (/(ches|shes|sses|xes|zes)$/.test(w)) return w.slice(0, -2);
  if (w.endsWith('ves') && w.length > 4) return `${w.slice(0, -3)}f`;
  if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is') && w.length > 3) return w.slice(0, -1);
  return w;
}

/** `release date` → `release_date`; characters a row key should not hold go. */
function keyOf(words: string): string {
  return words.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40) || 'field';
}

/**
 * Reads a prompt.
 *
 * **Example usage:**
 * ```ts
 * readPrompt('book titles, prices and ratings from every page');
 * // { fields: [title, price, rating], everyColumn: false, allPages: true, allCategories: false, detailPage: false, itemNoun: 'book' }
 * readPrompt('the title and details of every search result');
 * // { fields: [title], everyColumn: true, allPages: false, …, itemNoun: null }
 * ```
 */
export function readPrompt(prompt: string): PromptIntent {
  const text = prompt.toLowerCase().replace(/[’']s\b/g, '').replace(/[“”"]/g, ' ');
  const pageBound = /\b(this|first|the first|one|single) page\b|\bon the page\b/.test(text);
  const allPages = /\b(every|each|all|next|following|subsequent|multiple|the other)\s+(of the\s+)?pages?\b|\ball (of )?the pages\b|\bpaginat|\bload(ing)? more\b|\bshow more\b|\bscroll|\binfinite\b|\bthe whole (list|catalog(ue)?|site|feed)\b|\ball of them\b/.test(text)
    || (!pageBound && /^\s*(all|every)\b/.test(text));
  const allCategories = /\b(every|each|all)\b(\s+(of|the|top|[a-z]+))?(\s+(of|the|top|\d+|ten|five|twenty|[a-z]+)){0,3}\s+(categor(y|ies)|tags?|sections?|genres?|departments?|collections?)\b/.test(text);
  const detailPage = /\b(detail|details|product|item|its own|their own|each [a-z]+|[a-z]+ own)\s+pages?\b|\bfrom (its|their|each)\b.*\bpages?\b|\bdetail pages?\b|\bon (its|their) page\b|\bfollow(ing)? (the|each) link/.test(text);

  // Phrases split at commas, "and", "or", "with", "plus", "including"; each loses what follows a preposition
  // ("prices of the books on this page" is "prices"; "books" is the items, kept as the item noun).
  let itemNoun: string | null = null;
  const ofWhat = /\b(?:of|from)\s+(?:the|all the|all|each|every)\s+([a-z]+?)s?\b(?!\s+page)/.exec(text);
  if (ofWhat && !STOP.has(ofWhat[1]!) && !STOP.has(`${ofWhat[1]}s`) && !['ten', 'tag', 'category'].includes(ofWhat[1]!)) itemNoun = singular(ofWhat[1]!);
  // "the top stories: headline, link, points": what comes before a colon says what the items are.
  const colon = text.indexOf(':');
  let asked = text;
  if (colon > 0 && colon < text.length - 1) {
    const head = text.slice(0, colon).split(/[^a-z]+/).filter((w) => w && !STOP.has(w));
    if (head.length) itemNoun ??= singular(head[head.length - 1]!);
    asked = text.slice(colon + 1);
  }
  const phrases = asked
    .split(/,|;|:|\band\b|\bor\b|\bwith\b|\bplus\b|\bincluding\b|\bas well as\b|\balong with\b|\+|&|\//)
    .map((p) => (/\b(?:number|count|total|amount)\s+of\b/.test(p) ? p : p.replace(/\b(from|on|in|of|for|at|across|until|while|that|which|as)\b.*$/, ' ')));
  const fields: AskedField[] = [];
  const seen = new Set<string>();
  for (const phrase of phrases) {
    // "each search result", "every product", "all the listings": the items themselves, not a field (unless the
    // phrase names a kind of field: "all prices").
    const quantified = /\b(?:each|every|all)\b/.test(phrase);
    const plain = phrase.split(/[^a-z0-9]+/).filter((w) => w && !STOP.has(w) && !/^\d+$/.test(w));
    if (quantified && !/\b(?:number|count|total|amount)\s+of\b/.test(phrase) && !plain.some((w) => KIND_WORDS[singular(w)] || KIND_WORDS[w])) {
      if (plain.length) itemNoun ??= singular(plain[plain.length - 1]!);
      continue;
    }
    // "number of comments", "count of reviews": a number named after what it counts.
    const counted = /\b(?:number|count|total|amount)\s+of\s+([a-z]+)/.exec(phrase);
    if (counted) {
      const name = keyOf(counted[1]!);
      if (!seen.has(name)) { seen.add(name); fields.push({ name, kind: 'number', words: phrase.trim().replace(/\s+/g, ' ') }); }
      continue;
    }
    const words = phrase.split(/[^a-z0-9]+/).filter((w) => w && !STOP.has(w) && !/^\d+$/.test(w));
    if (!words.length) continue;
    // "book titles": the last word names the field, the ones before say whose ("book") and become the item noun.
    const rawLast = words[words.length - 1]!;
    // "reviews", "views" among other fields: a count (see COUNT_PLURALS).
    // Not in a list of plurals ("titles, prices and reviews" may want each review): after singular words only.
    const afterSingulars = fields.length > 0 && fields.some((f) => !/s$/.test(f.words));
    // "its rating and ratings": the second is how many.
    const pluralOfAsked = /s$/.test(rawLast) && seen.has(keyOf(singular(rawLast))) && !seen.has(keyOf(rawLast));
    if ((COUNT_PLURALS.has(rawLast) && (afterSingulars || words.length > 1)) || pluralOfAsked) {
      const name = keyOf(rawLast);
      if (!seen.has(name)) { seen.add(name); fields.push({ name, kind: 'number', words: phrase.trim().replace(/\s+/g, ' ') }); }
      continue;
    }
    const last = singular(rawLast);
    const before = words.slice(0, -1).map(singular);
    if (!itemNoun && before.length && !KIND_WORDS[before[0]!]) itemNoun = before[0]!;
    const two = before.length ? `${before[before.length - 1]}_${last}` : null;
    let kind: FieldKind | undefined = two ? KIND_WORDS[two] : undefined;
    let name = kind && two ? two : last;
    // "shop name", "seller name", "company name": the shop, seller, company (issue 36: `shop`, not `name`).
    const owner = before[before.length - 1];
    if (!kind && last === 'name' && owner && owner !== itemNoun && KIND_WORDS[owner] === 'author') { kind = 'author'; name = owner; }
    kind ??= KIND_WORDS[last];
    if (!kind) {
      // A noun the analysis does not know: its own field ("isbn", "upc", "release date").
      if (!itemNoun && fields.length === 0 && words.length === 1 && phrases.length > 1 && /s$/.test(words[0]!)) {
        // "quotes, authors and tags": the first plain plural is the items themselves, kept as their text.
        itemNoun = last;
      }
      kind = 'text';
      name = before.length && before.length <= 2 && !(itemNoun && before[0] === itemNoun) ? keyOf([...before.filter((w) => w !== itemNoun), last].join(' ')) : last;
    }
    name = keyOf(name);
    if (seen.has(name)) continue;
    seen.add(name);
    fields.push({ name, kind, words: phrase.trim().replace(/\s+/g, ' ') });
  }
  // "Extract all products": one plain noun is what the items are, not a field.
  if (fields.length === 1 && fields[0]!.kind === 'text' && !fields[0]!.name.includes('_') && /s\b/.test(fields[0]!.words)) {
    itemNoun ??= fields[0]!.name;
    fields.length = 0;
  }
  const everyColumn = fields.length === 0 || EVERY_COLUMN.test(text);
  return { fields, everyColumn, allPages, allCategories, detailPage, itemNoun };
}
