/**
 * Detail pages: each listing item's own page (its first single `link` field), queued as the listing page is read
 * and loaded while the listing goes on, each page once. A detail page that fails, or is not HTML, gives its fields'
 * defaults and a warning; so does one dropped at the page limit. Its row is merged into the item's row at the end.
 */
import type { ScrapeConfig } from '../config.ts';
import type { Row } from '../extract.ts';
import type { EvalField } from '../browser/in-page.ts';
import type { LoadedDocument } from '../loaders/page-loader.ts';
import { pageKey, type CrawlRequest, type RequestQueue } from '../request-queue.ts';
import { RobotsDisallowedError } from './access.ts';
import { isLoadFailure, messageOf, pageWarning, unreadable } from './documents.ts';
import { evalFieldsOf, mergeEval } from './eval-fields.ts';
import type { PageReader } from './page-reader.ts';
import type { ProgressTracker } from './progress.ts';
import { detailReady } from './readiness.ts';
import type { Sessions } from './sessions.ts';
import type { Warnings } from './warnings.ts';

/** What {@link DetailPages} works with. */
export interface DetailPagesDeps {
  queue: RequestQueue;
  sessions: Sessions;
  /** Reads each page into its row (./page-reader.ts), on this thread or another. */
  reader: PageReader;
  warnings: Warnings;
  progress: ProgressTracker;
  /** The run's abort signal (loads stop with it). */
  signal: AbortSignal;
  /** Wakes workers waiting for work (detail requests were queued). */
  wake: () => void;
  /** Gives a page-budget slot back (a detail page robots.txt kept out loads nothing). */
  giveBack?: () => void;
}

/**
 * The detail pages of a run: queueing, loading and reading them, and their rows by page.
 *
 * **Example usage:**
 * ```ts
 * const d = new DetailPages(config, { queue, sessions, reader, warnings, progress, signal, wake });
 * d.enqueue(rows);               // one detail request per new link
 * await d.handle(req, worker);   // a worker loads one
 * d.rowFor(rows[0]!);            // its fields, or null for their defaults
 * ```
 */
export class DetailPages {
  /** The listing field whose URL is an item's detail page; undefined without detail_fields (nothing is queued). */
  readonly linkField: string | undefined;
  private readonly evalFields: EvalField[];
  /** Detail rows by page key (null: the page gave nothing; its fields take their defaults). */
  private readonly rows = new Map<string, Row | null>();

  private readonly config: ScrapeConfig;
  private readonly d: DetailPagesDeps;

  constructor(config: ScrapeConfig, deps: DetailPagesDeps) {
    this.config = config;
    this.d = deps;
    this.evalFields = config.detail_fields ? evalFieldsOf(config.detail_fields.fields) : [];
    this.linkField = config.detail_fields ? config.extract.fields.find((f) => f.type === 'link' && !f.multiple)?.name : undefined;
  }

  /** Queues the detail page of each row whose link field holds an http(s) URL not queued before (priority 1). */
  enqueue(rows: Row[]): void {
    if (!this.linkField) return;
    let added = false;
    for (const row of rows) {
      const url = row[this.linkField];
      if (typeof url !== 'string' || !/^https?:/i.test(url)) continue;
      const key = pageKey(url);
      if (this.d.queue.add({ label: 'detail', url, uniqueKey: `detail:${key}` }, 1)) added = true;
    }
    if (added) this.d.wake();
  }

  /**
   * Loads and reads one detail page in worker `worker`'s session. A load failure of LOAD_FAILURE_CODES, or a
   * document that cannot be read, is a warning (the fields take their defaults).
   * @throws the loader's fatal errors (browser crashed, the run aborted).
   */
  async handle(req: CrawlRequest, worker: number): Promise<void> {
    const url = req.url!;
    const key = pageKey(url);
    const session = await this.d.sessions.detail(worker);
    let doc: LoadedDocument;
    try {
      doc = await session.load(url, { ready: detailReady(this.config), signal: this.d.signal });
    } catch (err) {
      if (!isLoadFailure(err) || this.d.signal.aborted) throw err;
      if (err instanceof RobotsDisallowedError) {
        // One warning per rule at the end of the run (SiteAccess.summary), not one per page.
        this.d.sessions.access?.noteSkipped(err);
        this.d.giveBack?.();
        this.rows.set(key, null);
        return;
      }
      this.d.warnings.add(pageWarning('detail page', url, messageOf(err)), req.seq);
      this.rows.set(key, null);
      this.d.progress.report('');
      return;
    }
    const bad = unreadable(doc);
    if (bad) {
      this.d.warnings.add(pageWarning('detail page', url, bad.message), req.seq);
      this.rows.set(key, null);
      this.d.progress.report('');
      return;
    }
    this.d.progress.pageRead('detail');
    const row = await this.d.reader.readDetail(doc.html, doc.url);
    if (this.evalFields.length && session.browser) {
      mergeEval([row], await session.browser.evalFields({ type: 'single' }, this.evalFields, 0), this.evalFields, this.config.detail_fields!.fields, (m) => this.d.warnings.add(m));
    }
    this.rows.set(key, row);
    this.d.progress.report('');
  }

  /** A detail request not loaded (the page limit): its fields take their defaults. */
  drop(req: CrawlRequest): void {
    this.rows.set(pageKey(req.url!), null);
  }

  /** The detail row of a listing row (by its link field), or null when it has none (its fields take their defaults). */
  rowFor(listingRow: Row): Row | null {
    const url = this.linkField ? listingRow[this.linkField] : undefined;
    return typeof url === 'string' ? this.rows.get(pageKey(url)) ?? null : null;
  }
}
