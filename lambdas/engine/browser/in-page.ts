/**
 * Functions that run inside the page (serialized by puppeteer's `page.evaluate`, and by the extension's
 * `chrome.scripting.executeScript`): they may use only their arguments and the page's globals, nothing imported.
 * Kept in one module so the rest of the engine never writes JavaScript in strings. `eval` fields are here; the
 * browser steps' in-page functions (actions, waits, pagination) are in ./in-page-steps.ts.
 */

/** How the page's items are enumerated, mirroring extractItems() in extract.ts. */
export interface ItemQuery {
  type: 'list' | 'single' | 'table';
  container?: string;
}

/** One eval field to run in the page. */
export interface EvalField {
  name: string;
  selector?: string;
  script: string;
}

/** A value or the error a script threw, per item and field. */
export type EvalOutcome = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Runs eval fields on the page's items, from item `start` on. In scope of each script: `el` and `item`
 * (the item element: with `extract.following_siblings`, the container match, so item i is still row i), `field` (the first match of the field's selector inside the item, or null),
 * `document` and `window`. A script is an expression (`el.dataset.id`) or, when that does not parse,
 * a function body with `return` (`const a = el.querySelector('a'); return a && a.href;`).
 * Values must survive structured cloning (JSON-like); DOM nodes are turned into their text.
 */
export function evalFieldsInPage(q: ItemQuery, fields: EvalField[], start: number): EvalOutcome[][] {
  const items: Element[] = [];
  if (q.type === 'single') {
    const one = q.container ? document.querySelector(q.container) : document.documentElement;
    if (one) items.push(one);
  } else if (q.type === 'table') {
    for (const t of Array.from(document.querySelectorAll(q.container!))) {
      const table = t.tagName === 'TABLE' ? t : t.querySelector('table');
      if (!table) continue;
      for (const tr of Array.from(table.querySelectorAll('tr'))) {
        if (tr.closest('table') === table && tr.querySelector(':scope > td')) items.push(tr);
      }
    }
  } else {
    items.push(...Array.from(document.querySelectorAll(q.container!)));
  }
  const compiled = fields.map((f) => {
    try {
      return new Function('el', 'item', 'field', 'document', 'window', `return (${f.script}\n);`);
    } catch {
      try {
        return new Function('el', 'item', 'field', 'document', 'window', f.script);
      } catch (err) {
        return err as Error;
      }
    }
  });
  const plain = (v: unknown): unknown => {
    if (v instanceof Node) return v.textContent;
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return null;
    if (typeof v === 'bigint') return String(v);
    try {
      return JSON.parse(JSON.stringify(v)) as unknown;
    } catch {
      return String(v);
    }
  };
  return items.slice(start).map((el) => fields.map((f, i) => {
    const fn = compiled[i]!;
    if (fn instanceof Error) return { ok: false as const, error: `${fn.name}: ${fn.message}` };
    try {
      const target = f.selector ? el.querySelector(f.selector) : el;
      return { ok: true as const, value: plain((fn as (...a: unknown[]) => unknown)(el, el, target, document, window)) };
    } catch (err) {
      return { ok: false as const, error: `${(err as Error).name ?? 'Error'}: ${(err as Error).message ?? String(err)}` };
    }
  }));
}
