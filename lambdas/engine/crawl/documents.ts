/**
 * What a loaded document means for the run: whether it can be read (status, content type), how the run's first
 * page fails the run, and which failures of a later page only warn (docs/errors.md).
 */
import { CodedError, isCodedError } from '../../errors.ts';
import { LOAD_FAILURE_CODES, type LoadedDocument, type PageSession, type ReadyCondition } from '../loaders/page-loader.ts';
import type { Warnings } from './warnings.ts';
import { pageKind } from '../page-facts.ts';


/** The first line of an error's message (of `String(err)` for a non-error). */
export function messageOf(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).split('\n')[0]!;
}

/**
 * A warning about one page, `<what> <url>: <message>`, with the URL said once: a load error's message often starts with
 * the URL again (`https://x/2 answered HTTP 404`), which is dropped; elsewhere in the message it becomes "it".
 * **Example usage:** `pageWarning('detail page', url, messageOf(err))` → `detail page https://x/2: answered HTTP 404`.
 */
export function pageWarning(what: string, url: string, message: string): string {
  const rest = message.startsWith(`${url} `) ? message.slice(url.length + 1) : message.split(url).join('it');
  return `${what} ${url}: ${rest}`;
}

/** A failure of one page that leaves the run going (warning), as opposed to one that ends it. */
export function isLoadFailure(err: unknown): boolean {
  return isCodedError(err) && LOAD_FAILURE_CODES.has(err.code);
}

/** Why a document cannot be read. */
export interface Unreadable {
  message: string;
  /** The HTTP status, for a 4xx/5xx answer. */
  status?: number;
  /** The content type, for an answer that is not HTML. */
  contentType?: string;
}

/**
 * Why a loaded document cannot be read (HTTP 400 or more; neither HTML nor XML by page-facts.ts's one rule,
 * `pageKind`: plain text, JSON, images are not read), or null when it can.
 */
export function unreadable(doc: LoadedDocument): Unreadable | null {
  if (doc.status >= 400) return { message: `${doc.requestedUrl} answered HTTP ${doc.status}`, status: doc.status };
  const kind = pageKind(doc.contentType, doc.html);
  if (kind !== 'html' && kind !== 'xml') return { message: `${doc.requestedUrl} is ${doc.contentType || 'a body with no content type'}, not an HTML page`, contentType: doc.contentType };
  return null;
}

/**
 * The error the run fails with when its first page could not be loaded: `fetch_failed` becomes `target_failed`
 * naming the URL (as the HTTP loader and the browser both name it); any other error is returned as it is.
 */
export function firstPageError(err: unknown, url: string): unknown {
  if (!isCodedError(err) || err.code !== 'fetch_failed') return err;
  return new CodedError('target_failed', `${url} could not be loaded: ${messageOf(err)}`, [{ url }]);
}

/** Warns when the config's wait_selector did not appear on a document (browser). @param seq the request's. */
export function noteWait(doc: LoadedDocument, warnings: Warnings, seq?: number): void {
  if (doc.waitTimedOut) warnings.add(`target.browser.wait_selector "${doc.waitTimedOut.selector}" did not appear within ${doc.waitTimedOut.timeoutMs} ms on ${doc.url}`, seq);
}

/**
 * Loads the run's first page (the target, or the categories' index): any failure fails the run.
 * @throws CodedError `target_failed` (not reachable, 4xx/5xx, not HTML; details: url, status, content_type);
 *   the loader's other codes (`target_forbidden`, `dns_failed`, `response_too_large`, browser ones) as they are.
 */
export async function loadFirst(session: PageSession, url: string, o: { ready: ReadyCondition | undefined; signal: AbortSignal; warnings: Warnings }): Promise<LoadedDocument> {
  let doc: LoadedDocument;
  try {
    doc = await session.load(url, { ready: o.ready, signal: o.signal });
  } catch (err) {
    throw firstPageError(err, url);
  }
  const bad = unreadable(doc);
  if (bad) throw new CodedError('target_failed', bad.message, [{ url, ...(bad.status ? { status: bad.status } : {}), ...(bad.contentType !== undefined ? { content_type: bad.contentType } : {}) }]);
  noteWait(doc, o.warnings);
  return doc;
}
