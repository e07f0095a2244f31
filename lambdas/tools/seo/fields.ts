/**
 * The SEO analyzer's social-card fields: Open Graph (ogp.me) and Twitter card properties, from the page's
 * `<meta>` elements.
 */
import type { MetaElement } from './reading.ts';

/** Open Graph keys whose values a page may repeat (og:image, og:video, og:audio and their structured properties). */
function isRepeatableOgKey(key: string): boolean {
  return /^(?:image|video|audio)(?::|$)/.test(key);
}

/**
 * The Open Graph properties (see SeoReport's `open_graph`): keyed without `og:`, other Open Graph
 * namespaces keeping theirs; repeatable keys (image, video, audio) hold every value, the others their first.
 */
export function openGraph(metas: MetaElement[]): Record<string, string | string[]> {
  const og: Record<string, string | string[]> = {};
  for (const meta of metas) {
    // Open Graph is `property=`; `name="og:…"` is a common mistake the consumers (Facebook, LinkedIn) read too.
    const prop = meta.property.includes(':') ? meta.property : meta.name;
    if (!/^[a-z_]+:/.test(prop) || prop.startsWith('twitter:') || meta.content === null) continue;
    if (!isOpenGraphNamespace(prop)) continue;
    const key = prop.startsWith('og:') ? prop.slice(3) : prop;
    if (!key) continue;
    const value = meta.content.trim();
    if (isRepeatableOgKey(key)) {
      const list = (og[key] as string[] | undefined) ?? [];
      list.push(value);
      og[key] = list;
    } else if (!(key in og)) {
      og[key] = value;
    }
  }
  return og;
}

/** The namespaces the Open Graph protocol (ogp.me) defines. */
function isOpenGraphNamespace(prop: string): boolean {
  return /^(?:og|article|book|profile|music|video|product|fb):/.test(prop);
}

/** The Twitter card properties keyed without `twitter:`, from `name=` or `property=`; the first value wins. */
export function twitterCard(metas: MetaElement[]): Record<string, string> {
  const card: Record<string, string> = {};
  for (const meta of metas) {
    const prop = meta.name.startsWith('twitter:') ? meta.name : meta.property.startsWith('twitter:') ? meta.property : '';
    if (!prop || meta.content === null) continue;
    const key = prop.slice('twitter:'.length);
    if (key && !(key in card)) card[key] = meta.content.trim();
  }
  return card;
}
