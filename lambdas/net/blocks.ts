/**
 * Bot-protection pages told from the pages they stand in for (docs/crawler.md, "Blocks"): the one table of
 * fingerprints ({@link BLOCK_FINGERPRINTS}) every reader of a page consults, the crawler on both engines, the
 * generator and the page tools. A fingerprint is a status, headers and markers in the body of what Cloudflare,
 * Akamai, PerimeterX/HUMAN, DataDome, Imperva, AWS WAF, reCAPTCHA and hCaptcha serve instead of a page: a challenge
 * (a script or a check the client must pass), a captcha wall, or an access-denied page.
 *
 * Markers are script names, element ids, variables and titles those services write, not words a page may use:
 * an article about captchas or Cloudflare, a contact form with a reCAPTCHA widget, a site behind Cloudflare's CDN
 * (its `server: cloudflare` and bot-detection script on every page) are ordinary pages. Most fingerprints need an
 * error status (403, 429, 503, …); the few that do not name something only an interstitial carries.
 *
 * Bounded: only the first {@link BLOCK_SCAN_BYTES} characters of a body are read, and markers are plain substrings (no
 * regular expression). The body is lower-cased once, and only for an answer whose status and headers already fit a
 * fingerprint with `body` markers; an ordinary 200 page is read as it is (`bodyExact`), never copied.
 */

/** The services told apart. */
export type BlockService = 'Cloudflare' | 'Akamai' | 'PerimeterX (HUMAN)' | 'DataDome' | 'Imperva (Incapsula)' | 'AWS WAF' | 'reCAPTCHA' | 'hCaptcha';

/** What the page asks of the client: pass a challenge, solve a captcha, or nothing (access is denied). */
export type BlockKind = 'challenge' | 'captcha' | 'block';

/** One fingerprint: every condition it names must hold. */
export interface BlockFingerprint {
  service: BlockService;
  kind: BlockKind;
  /** The answer's status is one of these; any status when absent. */
  status?: readonly number[];
  /** Each header (lower-case name) contains the lower-case text ('' for: is present). */
  headers?: ReadonlyArray<readonly [string, string]>;
  /** At least one header of these (name, lower-case text) holds. */
  anyHeader?: ReadonlyArray<readonly [string, string]>;
  /** At least one of these lower-case strings is in the body's first {@link BLOCK_SCAN_BYTES} characters (read lower-cased). */
  body?: readonly string[];
  /**
   * At least one of these strings is in the body's first {@link BLOCK_SCAN_BYTES} characters, as written (script
   * variables, which are case-sensitive). Read without lower-casing the body: a fingerprint of any status (every
   * ordinary 200 page is tested against it) must not copy each page (docs/crawler.md, "Blocks").
   */
  bodyExact?: readonly string[];
  /** The body is at most this many characters (interstitials are small; a page that only quotes a marker is not). */
  maxBodyChars?: number;
}

/** Characters of a body read for markers. */
export const BLOCK_SCAN_BYTES = 64 * 1024;

const ERROR = [401, 403, 405, 406, 429, 503] as const;

/**
 * The fingerprints, first match wins. Sources: each service's documented headers (`cf-mitigated`, `x-datadome`,
 * `x-amzn-waf-action`, `x-iinfo`) and the markers of the pages they serve (titles, challenge scripts and their hosts).
 */
export const BLOCK_FINGERPRINTS: readonly BlockFingerprint[] = [
  // Cloudflare: `cf-mitigated: challenge` is set on every challenge answer; the page is "Just a moment..." with
  // window._cf_chl_opt and the challenge platform's script.
  { service: 'Cloudflare', kind: 'challenge', headers: [['cf-mitigated', 'challenge']] },
  { service: 'Cloudflare', kind: 'challenge', bodyExact: ['_cf_chl_opt'] },
  { service: 'Cloudflare', kind: 'challenge', status: ERROR, anyHeader: [['server', 'cloudflare'], ['cf-ray', '']], body: ['<title>just a moment...</title>', 'cdn-cgi/challenge-platform/h/', 'challenge-error-text', 'cf-browser-verification'] },
  // Cloudflare's block page ("Sorry, you have been blocked", error 1020 "Access denied").
  { service: 'Cloudflare', kind: 'block', status: [403, 429], anyHeader: [['server', 'cloudflare'], ['cf-ray', '']], body: ['cf-error-details', 'attention required! | cloudflare', 'sorry, you have been blocked', 'error code: 1020'] },
  // Akamai Bot Manager's challenge, then Akamai's "Access Denied … Reference #18.…" page.
  { service: 'Akamai', kind: 'challenge', status: [403, 428, 429], body: ['/_sec/cp_challenge/', 'sec-if-cpt-container', 'ak-challenge'] },
  { service: 'Akamai', kind: 'block', status: [403], anyHeader: [['server', 'akamaighost'], ['server', 'akamai']], body: ['access denied', 'errors.edgesuite.net'] },
  { service: 'Akamai', kind: 'block', status: [403], body: ['errors.edgesuite.net'] },
  // PerimeterX (HUMAN): the "Press & Hold" captcha of its block page.
  { service: 'PerimeterX (HUMAN)', kind: 'captcha', status: [403, 429], body: ['px-captcha', '_pxcaptcha', 'captcha.px-cdn.net', 'captcha.px-cloud.net', 'window._pxappid'] },
  // DataDome: its captcha page from captcha-delivery.com, and its header on protected answers.
  { service: 'DataDome', kind: 'captcha', status: ERROR, body: ['captcha-delivery.com', 'datadome captcha'] },
  { service: 'DataDome', kind: 'block', status: ERROR, anyHeader: [['x-datadome', ''], ['x-dd-b', ''], ['server', 'datadome']] },
  // Imperva (Incapsula): its incident page, or the resource iframe of its challenge (served with a 200 too).
  { service: 'Imperva (Incapsula)', kind: 'block', body: ['request unsuccessful. incapsula incident id'], maxBodyChars: 20_000 },
  { service: 'Imperva (Incapsula)', kind: 'challenge', body: ['/_incapsula_resource?'], maxBodyChars: 20_000 },
  { service: 'Imperva (Incapsula)', kind: 'block', status: ERROR, anyHeader: [['x-iinfo', ''], ['x-cdn', 'incapsula'], ['x-cdn', 'imperva']] },
  // AWS WAF: its challenge and captcha actions (202 and 405, `x-amzn-waf-action`), and CloudFront's block page.
  { service: 'AWS WAF', kind: 'challenge', headers: [['x-amzn-waf-action', 'challenge']] },
  { service: 'AWS WAF', kind: 'captcha', headers: [['x-amzn-waf-action', 'captcha']] },
  { service: 'AWS WAF', kind: 'challenge', status: [202, 403, 405, 429], body: ['awswafintegration', 'awswafcookiedomainlist', '.token.awswaf.com', '.captcha.awswaf.com'] },
  { service: 'AWS WAF', kind: 'block', status: [403], body: ['generated by cloudfront (cloudfront)'] },
  // A captcha wall instead of the page: an error status and the widget's script.
  { service: 'reCAPTCHA', kind: 'captcha', status: [403, 429, 503], body: ['google.com/recaptcha/', 'recaptcha/api.js', 'g-recaptcha', 'our systems have detected unusual traffic'] },
  { service: 'hCaptcha', kind: 'captcha', status: [403, 429, 503], body: ['hcaptcha.com/1/api.js', 'js.hcaptcha.com', 'class="h-captcha"'] },
];

/** What a page is, as far as blocks go. */
export interface BlockAnswer {
  status: number;
  /** Response headers, lower-case names. */
  headers?: Readonly<Record<string, string>>;
  /** The body (HTML) as served, or the rendered page. */
  body: string;
}

/** A bot-protection page: which service, what it asks, and the answer's status. */
export interface Block {
  service: BlockService;
  kind: BlockKind;
  status: number;
}

const KIND_WORDS: Readonly<Record<BlockKind, string>> = { challenge: 'challenge', captcha: 'captcha', block: 'access-denied page' };

function headerHolds(headers: Readonly<Record<string, string>>, [name, text]: readonly [string, string]): boolean {
  const v = headers[name];
  return v !== undefined && (text === '' || v.toLowerCase().includes(text));
}

/**
 * The bot-protection page an answer is, or null for an ordinary page (of any status).
 *
 * **Example usage:**
 * ```ts
 * detectBlock({ status: 403, headers: { 'cf-mitigated': 'challenge' }, body: html }); // { service: 'Cloudflare', kind: 'challenge', status: 403 }
 * ```
 */
export function detectBlock(a: BlockAnswer): Block | null {
  const headers = a.headers ?? {};
  let lower: string | null = null;
  for (const f of BLOCK_FINGERPRINTS) {
    if (f.status && !f.status.includes(a.status)) continue;
    if (f.maxBodyChars !== undefined && a.body.length > f.maxBodyChars) continue;
    if (f.headers && !f.headers.every((h) => headerHolds(headers, h))) continue;
    if (f.anyHeader && !f.anyHeader.some((h) => headerHolds(headers, h))) continue;
    if (f.bodyExact) {
      const head = a.body.length > BLOCK_SCAN_BYTES ? a.body.slice(0, BLOCK_SCAN_BYTES) : a.body;
      if (!f.bodyExact.some((m) => head.includes(m))) continue;
    }
    if (f.body) {
      lower ??= a.body.slice(0, BLOCK_SCAN_BYTES).toLowerCase();
      const text = lower;
      if (!f.body.some((m) => text.includes(m))) continue;
    }
    return { service: f.service, kind: f.kind, status: a.status };
  }
  return null;
}

/**
 * Whether an answer may be a bot-protection page at all, from its status and headers alone: an error status (or
 * AWS WAF's 202), or a service's own header. A reader that must fetch the body first (a browser's rendered page)
 * asks this before it does; a 2xx page without such headers is then only missed by the Imperva and Cloudflare
 * fingerprints that match a 200's body.
 */
export function mayBeBlock(status: number, headers: Readonly<Record<string, string>>): boolean {
  return status >= 400 || status === 202 || 'cf-mitigated' in headers || 'x-amzn-waf-action' in headers || 'x-iinfo' in headers;
}

/** "a Cloudflare challenge", "an Akamai access-denied page". */
export function describeBlock(b: Pick<Block, 'service' | 'kind'>): string {
  const words = `${b.service} ${KIND_WORDS[b.kind]}`;
  return `${/^[AEIOU]/.test(words) ? 'an' : 'a'} ${words}`;
}

/**
 * The message of a block (the error `blocked`), as every reader says it: "the site answered with a Cloudflare
 * challenge; try the browser engine or a proxy (https://… answered HTTP 403 with that page instead of its own)".
 * @param advice what may get through: 'browser or proxy' (over HTTP), 'proxy' (already in a browser), or none.
 */
export function blockMessage(b: Block, url: string, advice: 'browser or proxy' | 'proxy' | 'none' = 'browser or proxy'): string {
  const tail = advice === 'browser or proxy' ? '; try the browser engine or a proxy' : advice === 'proxy' ? '; try a proxy (target.proxy)' : '';
  return `the site answered with ${describeBlock(b)}${tail} (${url} answered HTTP ${b.status} with that page instead of its own)`;
}
