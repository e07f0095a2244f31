/**
 * A multi-literal scanner (Aho-Corasick) the detector's pre-filters use on its large inputs.
 */

/**
 * Finds which of many literals occur in a text in one pass (Aho-Corasick, as a DFA over printable ASCII): the
 * pre-filter of the patterns run on the large inputs (HTML, inline scripts, text, styles), where a search per
 * pattern would read half a megabyte hundreds of times.
 */
export class LiteralScanner {
  /** Printable ASCII, 0x20-0x7e: the only characters a literal has (see {@link requiredLiterals}). */
  private static readonly WIDTH = 95;
  private readonly next: Int32Array;
  private readonly fail: Int32Array;
  /** Nodes in breadth-first order (failure links point earlier). */
  private readonly order: Int32Array;
  private readonly ends = new Map<string, number>();

  /** @param literals lower-case printable ASCII strings (others are ignored). */
  constructor(literals: Iterable<string>) {
    const W = LiteralScanner.WIDTH;
    const trie: number[][] = [new Array<number>(W).fill(-1)];
    for (const literal of literals) {
      if (this.ends.has(literal) || !/^[\x20-\x7e]+$/.test(literal)) continue;
      let node = 0;
      for (let i = 0; i < literal.length; i++) {
        const c = literal.charCodeAt(i) - 0x20;
        if (trie[node]![c] === -1) {
          trie[node]![c] = trie.length;
          trie.push(new Array<number>(W).fill(-1));
        }
        node = trie[node]![c]!;
      }
      this.ends.set(literal, node);
    }
    const n = trie.length;
    this.next = new Int32Array(n * W);
    this.fail = new Int32Array(n);
    this.order = new Int32Array(n);
    let head = 0;
    let tail = 0;
    this.order[tail++] = 0;
    while (head < tail) {
      const node = this.order[head++]!;
      for (let c = 0; c < W; c++) {
        const child = trie[node]![c]!;
        if (child === -1) {
          this.next[node * W + c] = node === 0 ? 0 : this.next[this.fail[node]! * W + c]!;
        } else {
          this.fail[child] = node === 0 ? 0 : this.next[this.fail[node]! * W + c]!;
          this.next[node * W + c] = child;
          this.order[tail++] = child;
        }
      }
    }
  }

  /** Whether `literal` was given to the constructor (and so can be answered by {@link scan}). */
  knows(literal: string): boolean {
    return this.ends.has(literal);
  }

  /**
   * Scans `lower` (a lower-cased text) once.
   * @returns whether a literal given to the constructor occurs in it (false for literals it was not given).
   */
  scan(lower: string): (literal: string) => boolean {
    const W = LiteralScanner.WIDTH;
    const seen = new Uint8Array(this.fail.length);
    let state = 0;
    for (let i = 0; i < lower.length; i++) {
      const c = lower.charCodeAt(i) - 0x20;
      state = c >= 0 && c < W ? this.next[state * W + c]! : 0;
      seen[state] = 1;
    }
    // A node reached means every suffix of its string occurred too.
    for (let k = this.order.length - 1; k > 0; k--) {
      const node = this.order[k]!;
      if (seen[node]) seen[this.fail[node]!] = 1;
    }
    return (literal) => {
      const end = this.ends.get(literal);
      return end !== undefined && seen[end] === 1;
    };
  }
}
