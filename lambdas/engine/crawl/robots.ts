/**
 * robots.txt for runs and generations (RFC 9309; docs/crawler.md, "robots.txt"): each origin's file is fetched once
 * per run, through the outbound guard (and the run's proxy session), read with robots-parser (3.0.1) for the
 * product token {@link ROBOTS_AGENT}, and kept for the run. A URL it disallows is not loaded; its `Crawl-delay`
 * becomes the host's smallest gap between requests (./pace.ts).
 *
 * What an answer means (RFC 9309 2.3.1): 2xx is the rules; 3xx is followed (the fetcher's redirect cap, every hop
 * through the guard); 4xx means no rules. **Decision:** 5xx, a network failure, a time-out or a file over the cap
 * also mean no rules for the run, with a warning (the RFC would have a crawler treat the whole site as disallowed:
 * for one job that a user started the page's own answer then says more than "robots.txt could not be read").
 *
 * Bounds: the first {@link ROBOTS_LIMITS.maxBytes} bytes (RFC 9309 asks for at least 500 KiB), fetched within
 * {@link ROBOTS_LIMITS.timeoutMs}; at most {@link ROBOTS_LIMITS.maxRules} rules and
 * {@link ROBOTS_LIMITS.maxPatternChars} characters of patterns are read (the rest of a larger file is dropped, with a
 * warning); a URL is matched on its first {@link ROBOTS_LIMITS.maxPathChars} characters of path and query. So
 * robots-parser's matcher, whose work grows with pattern length times path length, stays bounded per URL.
 */
import robotsParserModule from 'robots-parser';

/** The product token robots.txt groups are matched against (`User-agent: scrape-ai`), as in the fetcher's User-Agent. */
export const ROBOTS_AGENT = 'scrape-ai';

/** Bounds of reading a robots.txt (docs/crawler.md, "robots.txt"). */
export const ROBOTS_LIMITS = {
  /** Largest file read, bytes. */
  maxBytes: 512 * 1024,
  /** Time to fetch it, ms. */
  timeoutMs: 8_000,
  /** Allow and Disallow lines read, all groups together. */
  maxRules: 2_000,
  /** Characters of Allow and Disallow patterns read, all groups together. */
  maxPatternChars: 64 * 1024,
  /** Characters of a URL's path and query matched against the rules. */
  maxPathChars: 2_048,
  /** Largest Crawl-delay honoured, ms (a larger one is read as this). */
  maxCrawlDelayMs: 60_000,
} as const;

/** robots-parser's parsed file, as used here. */
interface ParsedRobots {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getMatchingLineNumber(url: string, ua?: string): number;
  getCrawlDelay(ua?: string): number | undefined;
}

/** robots-parser is CommonJS (`module.exports = function robotsParser(url, contents)`); typed here by hand. */
const robotsParser = robotsParserModule as unknown as (url: string, contents: string) => ParsedRobots;

/** What fetching a robots.txt gave: its status and text, or the error that kept it from being fetched. */
export type RobotsAnswer = { status: number; text: string } | { error: unknown };

/** Fetches `url` (an origin's /robots.txt) within the limits; never called twice for one origin in a run. */
export type RobotsFetch = (url: string, limits: { maxBytes: number; timeoutMs: number }, signal?: AbortSignal) => Promise<RobotsAnswer>;

/** A URL the rules disallow: the rule's line as written, its line number and the file's URL. */
export interface RobotsRefusal {
  url: string;
  robotsUrl: string;
  /** The rule's line, as in the file (`Disallow: /private/`). */
  rule: string;
  /** 1-based line number of the rule in the file. */
  line: number;
}

/** One origin's rules: the parsed file and its lines, or null for "no rules". */
interface OriginRules {
  robots: ParsedRobots | null;
  lines: string[];
  robotsUrl: string;
}

/** The text of a robots.txt cut after {@link ROBOTS_LIMITS.maxRules} rules or {@link ROBOTS_LIMITS.maxPatternChars} of patterns; `cut` when it was. */
export function boundRobotsText(text: string): { text: string; cut: boolean } {
  let rules = 0;
  let chars = 0;
  let pos = 0;
  const re = /[^\r\n]*(\r\n|\r|\n|$)/g;
  for (let m = re.exec(text); m && m[0].length; m = re.exec(text)) {
    const line = m[0];
    const rule = /^\s*(allow|disallow)\s*:\s*([^#\s]*)/i.exec(line);
    if (rule) {
      rules++;
      chars += rule[2]!.length;
      if (rules > ROBOTS_LIMITS.maxRules || chars > ROBOTS_LIMITS.maxPatternChars) return { text: text.slice(0, pos), cut: true };
    }
    pos = re.lastIndex;
  }
  return { text, cut: false };
}

/** `p`, or the signal's reason as soon as it aborts (no timer, the listener removed once `p` settles). */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The origin of an http(s) URL, or null. */
function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/** The URL as robots-parser should match it: its path and query cut at {@link ROBOTS_LIMITS.maxPathChars}. */
function matchedUrl(url: string): string {
  const u = new URL(url);
  const pathQuery = `${u.pathname}${u.search}`;
  return pathQuery.length <= ROBOTS_LIMITS.maxPathChars ? url : `${u.origin}${pathQuery.slice(0, ROBOTS_LIMITS.maxPathChars)}`;
}

/**
 * The robots.txt rules of one run, per origin, fetched on first need.
 *
 * **Example usage:**
 * ```ts
 * const robots = new RobotsRules({ fetch, warn: (m) => warnings.add(m) });
 * const refusal = await robots.check('https://shop.example/private/1', signal); // null when allowed
 * robots.crawlDelayMs('https://shop.example'); // the file's Crawl-delay in ms, or undefined
 * ```
 */
export class RobotsRules {
  private readonly byOrigin = new Map<string, Promise<OriginRules>>();
  /** The rules of the origins whose file was read: every later check is answered without waiting (one per page). */
  private readonly settled = new Map<string, OriginRules>();
  private readonly delays = new Map<string, number>();
  private readonly o: { fetch: RobotsFetch; warn: (message: string) => void };

  /**
   * @param o.fetch fetches a robots.txt through the guard (the run's session);
   * @param o.warn gets a warning when a file could not be read or was cut.
   */
  constructor(o: { fetch: RobotsFetch; warn: (message: string) => void }) {
    this.o = o;
  }

  /** Origins whose robots.txt was asked for so far (each fetched once). */
  get fetched(): number {
    return this.byOrigin.size;
  }

  /**
   * Whether the rules allow `url`: null when they do (or when there are none), else the rule that refuses it.
   * The first call for an origin fetches its robots.txt; the others wait for that one fetch.
   * @throws the signal's reason when aborted.
   */
  async check(url: string, signal?: AbortSignal): Promise<RobotsRefusal | null> {
    const origin = originOf(url);
    if (!origin) return null;
    if (signal?.aborted) throw signal.reason;
    const rules = this.settled.get(origin) ?? await this.rulesOf(origin, signal);
    if (!rules.robots) return null;
    const target = matchedUrl(url);
    if (rules.robots.isAllowed(target, ROBOTS_AGENT) !== false) return null;
    const line = rules.robots.getMatchingLineNumber(target, ROBOTS_AGENT);
    return { url, robotsUrl: rules.robotsUrl, line, rule: (rules.lines[line - 1] ?? '').replace(/#.*$/, '').trim().slice(0, 200) };
  }

  /** The origin's Crawl-delay in ms (at most {@link ROBOTS_LIMITS.maxCrawlDelayMs}), once its file was read; undefined without one. */
  crawlDelayMs(origin: string): number | undefined {
    return this.delays.get(origin);
  }

  private rulesOf(origin: string, signal?: AbortSignal): Promise<OriginRules> {
    let p = this.byOrigin.get(origin);
    if (!p) {
      p = this.load(origin, signal);
      p.then((rules) => this.settled.set(origin, rules), () => undefined);
      // Handled here once: a load that fails after the run was aborted (its callers gone, or the signal aborted
      // before untilAborted could listen) is no unhandled rejection, which would end a job worker's thread.
      p.catch(() => undefined);
      this.byOrigin.set(origin, p);
    }
    // A run aborted while another request waits for the file: that request stops now.
    return signal ? untilAborted(p, signal) : p;
  }

  private async load(origin: string, signal?: AbortSignal): Promise<OriginRules> {
    const robotsUrl = `${origin}/robots.txt`;
    const none: OriginRules = { robots: null, lines: [], robotsUrl };
    const answer = await this.o.fetch(robotsUrl, { maxBytes: ROBOTS_LIMITS.maxBytes, timeoutMs: ROBOTS_LIMITS.timeoutMs }, signal);
    if ('error' in answer) {
      if (signal?.aborted) throw signal.reason;
      // A host the guard refuses, or a name that does not resolve: the page's own load says so, no warning here.
      const code = (answer.error as { code?: unknown })?.code;
      if (code === 'target_forbidden' || code === 'dns_failed') return none;
      this.o.warn(`robots.txt of ${origin} could not be read (${((answer.error as Error)?.message ?? String(answer.error)).split('\n')[0]}); the run went on as if it had none`);
      return none;
    }
    if (answer.status >= 500) {
      this.o.warn(`robots.txt of ${origin} answered HTTP ${answer.status}; the run went on as if it had none`);
      return none;
    }
    if (answer.status >= 400 || answer.status < 200 || answer.status >= 300) return none;
    const { text, cut } = boundRobotsText(answer.text);
    if (cut) this.o.warn(`robots.txt of ${origin} has more than ${ROBOTS_LIMITS.maxRules} rules or ${ROBOTS_LIMITS.maxPatternChars} characters of patterns; the rules after that were not read`);
    const robots = robotsParser(robotsUrl, text);
    const delay = Number(robots.getCrawlDelay(ROBOTS_AGENT));
    if (Number.isFinite(delay) && delay > 0) this.delays.set(origin, Math.min(ROBOTS_LIMITS.maxCrawlDelayMs, Math.round(delay * 1000)));
    return { robots, lines: text.split(/\r\n|\r|\n/), robotsUrl };
  }
}
