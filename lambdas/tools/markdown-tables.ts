/**
 * GitHub Flavored Markdown tables for turndown in time linear in the table's size (issue 37): the table rules of
 * @joplin/turndown-plugin-gfm 1.0.68 with the same output, over a snapshot of each table taken once.
 *
 * Why not the plugin's own: its rules read `table.rows` for every heading cell and every column's alignment, and on
 * turndown's DOM (domino) `rows` is a live collection that walks the table again on each index read, so a table of
 * r rows costs O(r²) walks per column: 100 rows of 20 cells took 1.3 s, 200 rows 5.1 s, and a 5,000-row table would
 * take most of an hour. Here every table is read once, the first time a rule meets it (its rows in document order,
 * as `rows` has them on domino, which includes a nested table's; its column count; each column's alignment; whether
 * it holds blocks that keep it HTML or a table that makes it plain cells), cells know their index from one pass over
 * their row, and what a table contains is found by one walk shared by nested tables.
 *
 * Kept as the plugin has it (tests hold the two equal): a table holding a list, heading, rule or blockquote stays
 * HTML in a `joplin-table-wrapper` div; a table holding another table, or of one cell, is its cells' text; a table
 * without a heading row gets an empty one; `|` in a cell is escaped, line breaks are `<br>`; a column's alignment is
 * the majority of its cells' `align` / `text-align`. One difference: `colspan` is read up to 1,000, the HTML
 * standard's limit (the plugin repeats an empty cell as many times as the attribute says).
 */
import type TurndownService from 'turndown';

/** The HTML standard's cap on `colspan` (https://html.spec.whatwg.org/#attr-tdth-colspan). */
const MAX_COLSPAN = 1000;

/** Elements whose presence keeps a table HTML (the plugin's `tableShouldBeHtml` list). */
const HTML_KEEPING = new Set(['UL', 'OL', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HR', 'BLOCKQUOTE']);

const ALIGN_BORDER: Readonly<Record<string, string>> = { left: ':---', right: '---:', center: ':---:' };

type El = HTMLElement;

/** One table, read once. */
interface TableFacts {
  /** Stays HTML: holds an element of {@link HTML_KEEPING}. */
  html: boolean;
  /** Its cells are plain text: one row of at most one cell, or a table inside. */
  skipped: boolean;
  /** Every `tr` inside, in document order (as domino's `rows`), read when first needed. */
  rows?: El[];
  /** The most child nodes of any row. */
  colCount?: number;
  /** Each column's alignment ('' none), made on first use. */
  alignments?: string[];
}

/** What a subtree holds, as bits. */
const HOLDS_TABLE = 1;
const HOLDS_HTML_KEEPING = 2;

/**
 * The plugin's table rules, read from snapshots. Facts are kept per node in WeakMaps: a converted tree that is
 * dropped takes its facts with it.
 */
export function linearTables(service: TurndownService): void {
  const tables = new WeakMap<Node, TableFacts>();
  /** What each table's descendants hold (tables only: a walk skips a table already read). */
  const holds = new WeakMap<Node, number>();

  /**
   * What `table`'s descendants hold: one walk by sibling pointers (no stack but one entry per open table), which
   * stores each table inside it on the way and skips any table read before, so nested tables cost O(n) in all.
   */
  function holdsOf(table: Node): number {
    const known = holds.get(table);
    if (known !== undefined) return known;
    const open: Array<{ node: Node; bits: number }> = [{ node: table, bits: 0 }];
    const leave = (n: Node) => {
      if (open.length > 1 && open[open.length - 1]!.node === n) {
        const f = open.pop()!;
        holds.set(n, f.bits);
        open[open.length - 1]!.bits |= f.bits | HOLDS_TABLE;
      }
    };
    /** The node after `n`'s subtree inside `table`, leaving every table it climbs out of; null at the end. */
    const after = (n: Node): Node | null => {
      for (let at: Node | null = n; at && at !== table; at = at.parentNode) {
        leave(at);
        if (at.nextSibling) return at.nextSibling;
      }
      return null;
    };
    let at: Node | null = table.firstChild;
    while (at) {
      let descend = false;
      if (at.nodeType === 1) {
        const name = at.nodeName;
        if (name === 'TABLE') {
          const inner = holds.get(at);
          if (inner !== undefined) open[open.length - 1]!.bits |= inner | HOLDS_TABLE;
          else {
            open.push({ node: at, bits: 0 });
            descend = true;
          }
        } else {
          if (HTML_KEEPING.has(name)) open[open.length - 1]!.bits |= HOLDS_HTML_KEEPING;
          descend = true;
        }
      }
      at = descend && at.firstChild ? at.firstChild : after(at);
    }
    const bits = open[0]!.bits;
    holds.set(table, bits);
    return bits;
  }

  function facts(table: El): TableFacts {
    const known = tables.get(table);
    if (known) return known;
    const bits = holdsOf(table);
    const f: TableFacts = { html: (bits & HOLDS_HTML_KEEPING) !== 0, skipped: (bits & HOLDS_TABLE) !== 0 };
    if (!f.skipped) {
      const rows = rowsOf(f, table);
      f.skipped = rows.length === 1 && rows[0]!.childNodes.length <= 1;
    }
    tables.set(table, f);
    return f;
  }

  /** The table's rows in document order; read once, only for a table with no table inside (so walks never overlap). */
  function rowsOf(f: TableFacts, table: El): El[] {
    if (f.rows) return f.rows;
    const rows: El[] = [];
    let colCount = 0;
    for (let at: Node | null = table.firstChild; at;) {
      if (at.nodeType === 1 && at.nodeName === 'TR') {
        rows.push(at as El);
        colCount = Math.max(colCount, at.childNodes.length);
      }
      if (at.firstChild) {
        at = at.firstChild;
        continue;
      }
      while (at && at !== table && !at.nextSibling) at = at.parentNode;
      at = at && at !== table ? at.nextSibling : null;
    }
    f.rows = rows;
    f.colCount = colCount;
    return rows;
  }

  function alignment(node: Node | undefined): string {
    if (!node) return '';
    const el = node as El;
    // `style` is parsed only where there is one (its text-align is '' otherwise).
    return (el.getAttribute('align') || (el.getAttribute('style') ? el.style.textAlign : '') || '').toLowerCase();
  }

  /** Each column's alignment: the most common among its cells, the first to lead on a tie (the plugin's vote). */
  function alignments(f: TableFacts, table: El): string[] {
    if (f.alignments) return f.alignments;
    const rows = rowsOf(f, table);
    const out: string[] = [];
    for (let col = 0; col < f.colCount!; col++) {
      const votes: Record<string, number> = { left: 0, right: 0, center: 0, '': 0 };
      let align = '';
      for (const row of rows) {
        if (col >= row.childNodes.length) continue;
        const a = alignment(row.childNodes[col]);
        votes[a] = (votes[a] ?? 0) + 1;
        if (votes[a]! > votes[align]!) align = a;
      }
      out.push(align);
    }
    f.alignments = out;
    return out;
  }

  const border = (align: string) => (align ? ALIGN_BORDER[align] ?? '---' : '---');

  function parentTable(node: Node): El | null {
    for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName === 'TABLE') return p as El;
    return null;
  }

  function parentDiv(node: Node): El | null {
    for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName === 'DIV') return p as El;
    return null;
  }

  /** A cell's Markdown; the first of its row (index 0 among the row's child nodes, as the plugin counts) opens it. */
  function cell(content: string, node: El | null, index?: number): string {
    const first = index === undefined ? node?.parentNode?.firstChild === node : index === 0;
    let text = content.trim().replace(/\n\r/g, '<br>').replace(/\n/g, '<br>').replace(/\|+/g, '\\|');
    while (text.length < 3) text += ' ';
    if (node) {
      const span = Math.min(Number(node.getAttribute('colspan') || 1), MAX_COLSPAN);
      for (let s = 1; s < span; s++) text += ' | ' + '   ';
    }
    return (first ? '| ' : ' ') + text + ' |';
  }

  function isFirstTbody(el: Node): boolean {
    const prev = el.previousSibling;
    return el.nodeName === 'TBODY' && (!prev || (prev.nodeName === 'THEAD' && /^\s*$/i.test(prev.textContent ?? '')));
  }

  function isHeadingRow(tr: El): boolean {
    const parent = tr.parentNode!;
    if (parent.nodeName === 'THEAD') return true;
    if (parent.firstChild !== tr || !(parent.nodeName === 'TABLE' || isFirstTbody(parent))) return false;
    for (let n = tr.firstChild; n; n = n.nextSibling) if (n.nodeName !== 'TH') return false;
    return true;
  }

  const skipped = (table: El | null) => !table || facts(table).skipped;

  service.addRule('tableCell', {
    filter: ['th', 'td'],
    replacement: (content, node) => (skipped(parentTable(node)) ? content : cell(content, node)),
  });

  service.addRule('tableRow', {
    filter: 'tr',
    replacement: (content, node) => {
      const table = parentTable(node);
      if (skipped(table)) return content;
      let borderCells = '';
      if (isHeadingRow(node)) {
        const f = facts(table!);
        const aligns = alignments(f, table!);
        for (let i = 0; i < f.colCount!; i++) {
          const child = i < node.childNodes.length ? (node.childNodes[i] as El) : null;
          borderCells += cell(border(aligns[i]!), child, i);
        }
      }
      return '\n' + content + (borderCells ? '\n' + borderCells : '');
    },
  });

  service.addRule('table', {
    filter: (node) => node.nodeName === 'TABLE',
    replacement: (content, node) => {
      const f = facts(node);
      if (f.html) {
        const html = node.outerHTML;
        const div = parentDiv(node);
        return div === null || !div.classList.contains('joplin-table-wrapper') ? `\n\n<div class="joplin-table-wrapper">${html}</div>\n\n` : html;
      }
      if (f.skipped) return content;
      const body = content.replace(/\n+/g, '\n');
      // The plugin tests the second line of the trimmed body, or the only one when there is one (found without
      // splitting 5,000 lines to read one).
      const trimmed = body.trim();
      const end1 = trimmed.indexOf('\n');
      const end2 = end1 < 0 ? -1 : trimmed.indexOf('\n', end1 + 1);
      const second = end1 < 0 ? trimmed : trimmed.slice(end1 + 1, end2 < 0 ? undefined : end2);
      const secondLineIsDivider = /\| :?---/.test(second);
      let emptyHeader = '';
      const colCount = (rowsOf(f, node), f.colCount!);
      if (colCount && !secondLineIsDivider) {
        const aligns = alignments(f, node);
        emptyHeader = '|' + '     |'.repeat(colCount) + '\n' + '|';
        for (let i = 0; i < colCount; i++) emptyHeader += ' ' + border(aligns[i]!) + ' |';
      }
      const caption = node.querySelector('caption')?.textContent || '';
      return `\n\n${caption ? `${caption}\n\n` : ''}${`${emptyHeader}${body}`.trimStart()}\n\n`;
    },
  });

  service.addRule('tableCaption', { filter: ['caption'], replacement: () => '' });
  service.addRule('tableColgroup', { filter: ['colgroup', 'col'], replacement: () => '' });
  service.addRule('tableSection', { filter: ['thead', 'tbody', 'tfoot'], replacement: (content) => content });
}
