/**
 * The warnings of a run (problems that did not fail it): each message once, at most {@link MAX_WARNINGS}, and
 * reported in the order of the requests they are about, whatever order pages finish in.
 */

/** Warnings kept per run at most; later ones are dropped. */
export const MAX_WARNINGS = 200;

/** The sequence number of a warning about no one request: it sorts after every request's warnings. */
export const NO_REQUEST = Number.MAX_SAFE_INTEGER;

/**
 * A run's warnings.
 *
 * **Example usage:**
 * ```ts
 * const w = new Warnings();
 * w.add('detail page https://x/2: HTTP 404', req.seq);
 * w.add('stopped at the page limit of 10 pages per run'); // sorted last
 * w.list(); // messages by request order
 * ```
 */
export class Warnings {
  private readonly items: Array<{ seq: number; message: string }> = [];
  private readonly seen = new Set<string>();

  /**
   * Adds a warning unless the same message was added before or {@link MAX_WARNINGS} are kept already.
   * @param seq the `seq` of the request it is about (RequestQueue order); {@link NO_REQUEST} when none.
   */
  add(message: string, seq: number = NO_REQUEST): void {
    if (this.seen.has(message) || this.items.length >= MAX_WARNINGS) return;
    this.seen.add(message);
    this.items.push({ seq, message });
  }

  /** The messages sorted by request sequence number; warnings of one request keep the order they were added in. */
  list(): string[] {
    return [...this.items].sort((a, b) => a.seq - b.seq).map((w) => w.message);
  }
}
