/**
 * Technology detection (docs/spec.md, "Tool endpoints", `POST /api/v1/tools/tech-detector/`): which CMS, frameworks, libraries,
 * servers, CDNs, analytics and other technologies a page shows, from Wappalyzer-format fingerprints
 * (../fingerprints.ts; format in enthec/webappanalyzer's README, "Specification").
 *
 * The steps, as Wappalyzer's core (`wappalyzer.js`: analyze, resolve) and its browser drivers do them:
 * 1. Read the page once: response headers, cookies (from `Set-Cookie`), `<meta name|property>`, external
 *    script URLs, inline script text, inline `<style>` text, the body's text, the HTML, the URL, and the DOM
 *    (for `dom` selectors); each capped (see {@link LIMITS}).
 * 2. Test every fingerprint pattern on its input: each match is one detection with the pattern's confidence
 *    (`\;confidence:N`, 100 by default) and a version from its `\;version:` template (`\1`, `\1?a:b`).
 *    JavaScript globals (`js`) are tested only on a rendered page, on `page.rendered.globals`.
 * 3. Resolve: sum each technology's confidences (capped at 100), keep its longest version (at most 15
 *    characters, not a timestamp), drop what a detected technology `excludes`, then add what detected ones
 *    `imply` (confidence: the lower of the implier's and the implication's own; version: the implication's).
 * 4. Technologies that `requires` another technology (or `requiresCategory` a category) are tested only after
 *    the first pass found it, then everything is resolved again (Wappalyzer's drivers re-run the analysis for
 *    `Wappalyzer.requires` and `Wappalyzer.categoryRequires` the same way).
 *
 * Regular expressions follow Wappalyzer: case-insensitive (`i`), with unbounded `+` and `*` rewritten as
 * `{1,250}` and `{0,250}` (Wappalyzer's "optimise quantifiers for long strings", done here with a tokenizer so
 * escapes and character classes stay intact). Each pattern is compiled once, on first use, and cached.
 *
 * The parts, each in its module of this folder: the report's types (types.ts) and schema (schema.ts), the caps
 * (limits.ts), patterns (patterns.ts, literal-scanner.ts), the compiled fingerprints (fingerprint-index.ts),
 * step 1 (page-inputs.ts), step 2 (analyze.ts, with detection.ts and the `dom` rules in dom.ts), step 3
 * (resolve.ts); this module runs them.
 */
import type { ToolPage } from '../page.ts';
import { analyze } from './analyze.ts';
import { budget } from './detection.ts';
import { fingerprints, type Tech } from './fingerprint-index.ts';
import { LIMITS } from './limits.ts';
import { readPage } from './page-inputs.ts';
import { resolve } from './resolve.ts';
import type { TechReport } from './types.ts';

/**
 * Detects the technologies of `page` (steps in the module comment). Synchronous: everything it reads is in the
 * page (and `page.rendered.globals` when rendered). Never throws on bad input: an empty, binary or non-HTML page
 * gives what its headers, cookies and URL show (often nothing).
 */
export function detectTechnologies(page: ToolPage): TechReport {
  const { techs, main, conditional } = fingerprints();
  budget.deadline = performance.now() + LIMITS.budgetMs;
  budget.exhausted = false;
  const inputs = readPage(page);
  const first = analyze(main, inputs, () => true);
  const found = resolve(first, techs);

  const names = new Set(found.keys());
  const categories = new Set([...found.values()].flatMap((r) => r.tech.categoryIds));
  const gate = (t: Tech): boolean => t.requires.some((n) => names.has(n)) || t.requiresCategory.some((c) => categories.has(c));
  const second = names.size ? analyze(conditional, inputs, gate) : [];
  const all = second.length ? resolve([...first, ...second], techs) : found;

  const technologies = [...all.values()]
    .map((r) => ({ r, out: {
      name: r.tech.name,
      version: r.version || null,
      categories: [...r.tech.categories],
      confidence: r.confidence,
      website: r.tech.website,
    } }))
    .sort((a, b) => a.r.tech.priority - b.r.tech.priority || b.r.confidence - a.r.confidence || a.r.tech.name.localeCompare(b.r.tech.name))
    .map(({ out }) => out);
  return { url: page.url ?? '', rendered: page.rendered !== undefined, partial: budget.exhausted, technologies };
}
