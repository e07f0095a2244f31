/**
 * `eval` fields (browser): scripts run in the page on each item (listing) or on the page (detail), whose values
 * replace the fields' values read from the HTML, through the fields' transforms.
 */
import type { FieldSpec } from '../config.ts';
import { compileFields, type Row } from '../extract.ts';
import type { EvalField, EvalOutcome } from '../browser/in-page.ts';

/** The `eval` fields of a field list, as the page runs them (name, script, optional selector). */
export function evalFieldsOf(fields: readonly FieldSpec[]): EvalField[] {
  return fields.filter((f) => f.type === 'eval').map((f) => ({ name: f.name, script: f.script!, ...(f.selector ? { selector: f.selector } : {}) }));
}

/**
 * Puts the values `eval` fields got in the page into the rows, through the fields' transforms, in place. A
 * value that is null, undefined or '' (after transforms), and a field whose script failed or had no item, take
 * the field's default (null without one).
 * @param outcomes per row (by position), per field of `evalFields` (by position).
 * @param specs the field specs `evalFields` come from (by name): their transforms and defaults.
 * @param warn gets a warning per failed field and one when the page had a different number of items.
 */
export function mergeEval(rows: Row[], outcomes: EvalOutcome[][], evalFields: EvalField[], specs: readonly FieldSpec[], warn: (message: string) => void): void {
  if (outcomes.length !== rows.length) warn(`eval fields: the page has ${outcomes.length} items where the HTML had ${rows.length}; values matched by position`);
  const compiled = evalFields.map((f) => compileFields([specs.find((s) => s.name === f.name)!])[0]!);
  rows.forEach((row, i) => evalFields.forEach((f, j) => {
    const spec = compiled[j]!.spec;
    const out = outcomes[i]?.[j];
    if (out?.ok) {
      let v = out.value;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null) {
        for (const t of compiled[j]!.transforms) v = t(v as string | number | boolean | null);
      }
      row[f.name] = v === null || v === undefined || v === '' ? ('default' in spec ? spec.default : null) : v;
    } else {
      row[f.name] = 'default' in spec ? spec.default : null;
      warn(`eval field "${f.name}": ${out ? out.error : 'no matching item in the page'}`);
    }
  }));
}
