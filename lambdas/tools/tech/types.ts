/**
 * The tech detector's report (docs/tools.md "tech-detector"): the response body of POST /api/v1/tools/tech-detector/.
 * Its JSON Schema is schema.ts's; detect.ts fills it.
 */

/** One technology found on the page. */
export interface DetectedTechnology {
  /** The technology's name as the fingerprints spell it (`WordPress`, `Nginx`, `jQuery`). */
  name: string;
  /** Its version when a pattern gave one (`5.2.4`), else null. */
  version: string | null;
  /** Its category names from categories.json (`CMS`, `Blogs`), in the fingerprint's order. */
  categories: string[];
  /** How sure the detection is, 0-100: the confidences of its matching patterns summed and capped at 100. */
  confidence: number;
  /** The technology's web site, from the fingerprint; null when it names none. */
  website: string | null;
}

/** The tech detector's result: the tool's response body. */
export interface TechReport {
  /** The page analysed (its final URL after redirects). */
  url: string;
  /** Whether the page was rendered in a browser, so JavaScript globals (`js` fingerprints) were tested too. */
  rendered: boolean;
  /**
   * True when the time budget ({@link LIMITS}.budgetMs) ran out before every pattern was tested: pathological
   * pages only; what was found is still reported.
   */
  partial: boolean;
  /**
   * The technologies found, most telling categories first (category priority 1, such as CMS, before 9, such as
   * widgets), then by confidence (highest first), then by name.
   */
  technologies: DetectedTechnology[];
}
