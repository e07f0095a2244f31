/**
 * The page budget of a run (`maxPages`, docs/limits.md): how many pages may start, all kinds together. A
 * listing step, the index page and a detail page each take one slot when they start; an in-page step that
 * changed nothing gives its slot back. The user's stop button lowers the budget to the pages already started.
 * Which request gets a slot first is the scheduler's business (./scheduler.ts).
 */

/** Pages one run may load when `maxPages` is not given (docs/limits.md). */
export const DEFAULT_MAX_PAGES = 1000;

/**
 * A count of started pages against a limit.
 *
 * **Example usage:**
 * ```ts
 * const b = new PageBudget(2);
 * b.tryStart(); b.tryStart(); // true, true
 * b.tryStart();               // false: the third page is refused
 * b.spentMessage();           // "stopped at the page limit of 2 pages per run"
 * ```
 */
export class PageBudget {
  private limit: number;
  private startedPages = 0;
  private byUser = false;

  /** @param maxPages pages the run may start; undefined for {@link DEFAULT_MAX_PAGES}. */
  constructor(maxPages: number = DEFAULT_MAX_PAGES) {
    this.limit = maxPages;
  }

  /** Pages started so far (slots given back not counted). */
  get started(): number {
    return this.startedPages;
  }

  /** The limit: `maxPages`, or the pages started when the user stopped the run. */
  get max(): number {
    return this.limit;
  }

  /** Whether {@link stopByUser} was called. */
  get stoppedByUser(): boolean {
    return this.byUser;
  }

  /** Takes a slot when one is left. @returns false when the budget is spent (nothing taken). */
  tryStart(): boolean {
    if (this.startedPages >= this.limit) return false;
    this.startedPages++;
    return true;
  }

  /**
   * Takes a slot when one is left beyond `heldBack` slots kept for other work (the listings' pages).
   * @returns false when fewer than `heldBack + 1` slots are left (nothing taken).
   */
  tryStartBeyond(heldBack: number): boolean {
    if (this.startedPages + heldBack >= this.limit) return false;
    this.startedPages++;
    return true;
  }

  /** Gives a slot back: the page it was taken for did not load anything. */
  giveBack(): void {
    this.startedPages--;
  }

  /** The user stopped the run: no page starts any more (the limit becomes the pages started). */
  stopByUser(): void {
    this.byUser = true;
    this.limit = Math.min(this.limit, this.startedPages);
  }

  /** The run's warning once a page was refused: the page limit, or the user's stop. */
  spentMessage(): string {
    if (this.byUser) return `stopped by the user after ${this.startedPages} page(s)`;
    return `stopped at the page limit of ${this.limit} pages per run`;
  }
}
