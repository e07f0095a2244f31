/**
 * The fingerprints' `dom` rules on the parsed page: a cheap pre-filter on the document index, then css-select's
 * compiled queries in one walk over the elements.
 */
import { compile as compileSelector } from 'css-select';
import type { AnyNode, Element } from 'domhandler';
import { boundedText } from '../page.ts';
import { budget, test, type Detection } from './detection.ts';
import { fingerprints, selectorRequirements, type DomSelector, type Tech } from './fingerprint-index.ts';
import { clip, LIMITS } from './limits.ts';
import { readPage, type DocIndex, type PageInputs } from './page-inputs.ts';

/**
 * Whether a `dom` selector can match at all in the document: some alternative whose rightmost compound's tag is
 * there and whose tested attributes are there with the tested value somewhere among their values. Cheap, and
 * never wrong in the negative: a selector it rejects matches nothing.
 */
function couldMatch(entry: DomSelector, index: DocIndex): boolean {
  return entry.alternatives.some((reqs) =>
    reqs.every((r) => {
      switch (r.kind) {
        case 'tag': return index.tags.has(r.name);
        case 'attr': return index.values.has(r.name);
        case 'class': return index.classes.has(r.name);
        case 'equals': return index.values.get(r.name)!.has(r.value);
        case 'contains': {
          let has = index.contains.get(r.name);
          if (has === undefined) {
            const joined = [...index.values.get(r.name)!].join('\u0000');
            const { domScanner } = fingerprints();
            const scanned = domScanner.scan(joined);
            has = (value) => (domScanner.knows(value) ? scanned(value) : joined.includes(value));
            index.contains.set(r.name, has);
          }
          return has(r.value);
        }
      }
    }),
  );
}

/**
 * The `dom` pre-filter on one page, for tests: whether {@link couldMatch} lets `selector` through on `html`
 * (true for a selector it cannot parse, which css-select then refuses too).
 */
export function domPrefilter(html: string): (selector: string) => boolean {
  const url = 'https://example.com/';
  const inputs = readPage({ requestedUrl: url, url, status: 200, headers: {}, setCookies: [], contentType: 'text/html', html, redirectChain: [url] });
  return (selector) => {
    const alternatives = selectorRequirements(selector);
    if (!alternatives || !inputs.docIndex) return true;
    return couldMatch({ alternatives } as DomSelector, inputs.docIndex);
  };
}

type Query = ReturnType<typeof compileSelector<AnyNode, Element>>;
const selectorCache = new Map<string, Query | null>();

function compiledSelector(selector: string): Query | null {
  let query = selectorCache.get(selector);
  if (query === undefined) {
    try {
      query = compileSelector<AnyNode, Element>(selector, { xmlMode: false });
    } catch {
      query = null;
    }
    selectorCache.set(selector, query);
  }
  return query;
}

/**
 * The `dom` rules: the selectors the pre-filter keeps are tested in one walk over the elements (css-select's
 * compiled queries), each on at most {@link LIMITS.domMatches} elements.
 */
export function matchDom(entries: DomSelector[], inputs: PageInputs, gate: (t: Tech) => boolean, out: Detection[]): void {
  const index = inputs.docIndex;
  if (!index) return;
  const live: Array<{ entry: DomSelector; query: Query; found: number }> = [];
  for (const entry of entries) {
    if (!gate(entry.tech) || !couldMatch(entry, index)) continue;
    const query = compiledSelector(entry.selector);
    if (query) live.push({ entry, query, found: 0 });
  }
  if (!live.length) return;
  // Selectors whose every alternative names its element's tag are tried on elements of those tags only.
  const byTag = new Map<string, typeof live>();
  const anyTag: typeof live = [];
  for (const item of live) {
    const tags = item.entry.alternatives.map((reqs) => reqs.find((r) => r.kind === 'tag')?.name);
    if (tags.some((t) => t === undefined)) {
      anyTag.push(item);
      continue;
    }
    for (const tag of new Set(tags as string[])) {
      const list = byTag.get(tag);
      if (list) list.push(item);
      else byTag.set(tag, [item]);
    }
  }
  for (const [n, node] of index.elements.entries()) {
    if ((n & 1023) === 0 && performance.now() > budget.deadline) {
      budget.exhausted = true;
      return;
    }
    const tagged = byTag.get(node.name.toLowerCase());
    const candidates = tagged ? (anyTag.length ? [...tagged, ...anyTag] : tagged) : anyTag;
    for (const item of candidates) {
      if (item.found >= LIMITS.domMatches) continue;
      let hit: boolean;
      try {
        hit = item.query(node);
      } catch {
        hit = false;
      }
      if (!hit) continue;
      item.found++;
      const { entry } = item;
      for (const pattern of entry.exists) test({ tech: entry.tech, pattern }, '', out);
      if (entry.text.length) {
        // Bounded: the matched element may hold the whole page (domMatches of them per rule).
        const value = clip(boundedText(node, LIMITS.valueChars * 2, LIMITS.valueChars * 8, false).trim(), LIMITS.valueChars);
        if (value) for (const pattern of entry.text) test({ tech: entry.tech, pattern }, value, out);
      }
      for (const { name, pattern } of entry.attributes) {
        const value = node.attribs[name];
        if (value !== undefined) test({ tech: entry.tech, pattern }, clip(value, LIMITS.valueChars), out);
      }
    }
  }
}
