/**
 * The page the page-analysis tools read (SPEC.md area B; docs/tools.md): one document fetched through the
 * outbound guard by the engine's HTTP client (lambdas/net/fetch.ts), or rendered by the browser where a tool
 * needs it. The tools themselves (seo.ts, tech.ts, leads.ts, content.ts) are pure functions of a
 * {@link ToolPage} plus, where they need more pages, a {@link PageFetch} that goes through the same guard.
 */

/** One fetched (or rendered) document, as every page tool gets it. */
export interface ToolPage {
  /** The URL asked for. */
  requestedUrl: string;
  /** The final URL after redirects: the base for relative links (with `<base href>` on top). */
  url: string;
  /** HTTP status of the final response. */
  status: number;
  /** Response headers of the final response, lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Each `Set-Cookie` header of the final response, whole (`name=value; Path=/; …`). */
  setCookies: string[];
  /** MIME type without parameters, lower case ('' when the response named none). */
  contentType: string;
  /** The document's HTML: the body as served, or the rendered DOM serialised. */
  html: string;
  /** The URLs of each redirect hop, the requested URL first, the final URL last ([url] when none). */
  redirectChain: string[];
  /** Present when the page was rendered in a browser: what only a live page can tell. */
  rendered?: {
    /** Values of the JavaScript globals a tool asked for (dotted paths such as `jQuery.fn.jquery`); absent when undefined. */
    globals: Record<string, string | number | boolean>;
  };
}

/** A plain response of a follow-up request (robots.txt, a contact page), through the guard. */
export interface FetchedText {
  url: string;
  status: number;
  headers: Record<string, string>;
  contentType: string;
  text: string;
}

/**
 * Fetches another URL for a tool (a site's robots.txt, its contact page) through the outbound guard, with the
 * tool's time and size limits.
 * @returns the response, whatever its status; null when it could not be fetched at all (DNS, refused, time-out,
 *   refused by the guard): a follow-up page that fails is a finding, not an error of the tool.
 */
export type PageFetch = (url: string) => Promise<FetchedText | null>;
