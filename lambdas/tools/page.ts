/**
 * The page the page-analysis tools read (docs/spec.md, "Tool endpoints"; docs/tools.md): one document fetched through the
 * outbound guard by the engine's HTTP client (lambdas/net/fetch.ts), or rendered by the browser where a tool
 * needs it. The tools themselves (seo/, tech/, leads/, content.ts) are pure functions of a
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

// ---------------------------------------------------------------------------------------------------------------
// Bounded reading (docs/tools.md, "Limits of the analysis"). Every page is hostile input: the tools read a page's
// tree (parseHtml() bounds its depth, nodes and text, engine/html/limits.ts) with loops, never recursion, and cut
// what they read where one element or one value could make them spend more than the page's size.

/** A node of the tree parseHtml() builds, as far as the readers below look at it. */
interface TextTreeNode {
  type: string;
  data?: string;
  name?: string;
  children?: TextTreeNode[];
}

/**
 * The text inside `node` (the content of scripts, styles and templates inside it left out unless `skipScripts`
 * is false, as DOM `textContent` keeps it), walked without
 * recursion and cut at `maxChars` characters and `maxNodes` nodes visited: a heading or a link nested 500 deep in
 * 500 others would otherwise be read once for each.
 */
export function boundedText(node: TextTreeNode, maxChars: number, maxNodes = maxChars * 4, skipScripts = true): string {
  let out = '';
  let visited = 0;
  const stack: TextTreeNode[] = [];
  // The first children only: pushing all of a million children would cost a million steps a call.
  const push = (children: TextTreeNode[]): void => {
    for (let i = Math.min(children.length, maxNodes - visited) - 1; i >= 0; i--) stack.push(children[i]!);
  };
  if (node.children) push(node.children);
  while (stack.length && out.length < maxChars && visited < maxNodes) {
    const n = stack.pop()!;
    visited++;
    if (n.type === 'text') out += (n.data ?? '').slice(0, maxChars - out.length);
    else if (n.children && n.type !== 'comment' && (!skipScripts || (n.type !== 'script' && n.type !== 'style' && n.name !== 'template'))) push(n.children);
  }
  return out;
}

/** The first `max / 2` and the last `max / 2` items when there are more than `max` (contact details sit in footers). */
export function headAndTail<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  const half = Math.floor(max / 2);
  return [...items.slice(0, half), ...items.slice(items.length - (max - half))];
}

/** The first and last `max / 2` characters of a text longer than `max`, joined by a line break. */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n${text.slice(text.length - (max - half))}`;
}
