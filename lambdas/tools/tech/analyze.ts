/**
 * Step 2 of the detection (detect.ts): every pattern of an index tested on its input.
 */
import { budget, test, type Detection } from './detection.ts';
import { matchDom } from './dom.ts';
import { fingerprints, type Index, type Rule, type Tech } from './fingerprint-index.ts';
import { clip, LIMITS } from './limits.ts';
import type { Has, PageInputs } from './page-inputs.ts';

/** Step 2 of the module comment over one index, for the technologies `gate` lets through. */
export function analyze(index: Index, inputs: PageInputs, gate: (t: Tech) => boolean): Detection[] {
  const out: Detection[] = [];
  const each = (rules: Rule[] | undefined, value: string, has?: Has): void => {
    if (!rules) return;
    if (!has) {
      const lower = value.toLowerCase();
      has = (l) => lower.includes(l);
    }
    for (const rule of rules) if (gate(rule.tech)) test(rule, value, out, has);
  };
  // Many values, many patterns (script URLs): a pattern whose literal is in none of them is skipped at once.
  const eachOfMany = (rules: Rule[], values: string[]): void => {
    if (!values.length) return;
    const lowers = values.map((v) => v.toLowerCase());
    const all = lowers.join('\u0000');
    for (const rule of rules) {
      const { literals } = rule.pattern;
      if (!gate(rule.tech) || (literals && !literals.some((l) => all.includes(l)))) continue;
      values.forEach((v, i) => test(rule, v, out, (l) => lowers[i]!.includes(l)));
    }
  };
  // The small inputs (headers, cookies, meta, the URL, globals: bounded in number and length by LIMITS) are tested
  // whatever the time: the budget is for the large ones, and parsing a 5 MB page may spend all of it on a loaded
  // machine (the generator meta of such a page went unreported at load 8).
  const deadline = budget.deadline;
  budget.deadline = Number.POSITIVE_INFINITY;
  try {
    for (const [name, value] of inputs.headers) each(index.headers.get(name), value);
    for (const [name, value] of inputs.cookies) {
      each(index.cookies.get(name), value);
      for (const { key, name: re, rule } of index.cookiePatterns) {
        if (gate(rule.tech) && (key === name || re?.test(name))) test(rule, value, out);
      }
    }
    for (const [name, values] of inputs.meta) for (const value of values) each(index.meta.get(name), value);
    if (inputs.url) each(index.url, inputs.url);
    if (inputs.globals) {
      for (const [path, value] of Object.entries(inputs.globals)) {
        if (value === undefined || value === null) continue;
        each(index.js.get(path), clip(String(value), LIMITS.valueChars));
      }
    }
  } finally {
    budget.deadline = deadline;
  }
  // The larger inputs last: if the time budget runs out, it is on them.
  eachOfMany(index.scriptSrc, inputs.scriptSrc);
  for (const field of ['html', 'scripts', 'css', 'text'] as const) {
    const value = inputs[field];
    if (!value) continue;
    inputs.literals[field] ??= fingerprints().scanner.scan(value.toLowerCase());
    each(index[field], value, inputs.literals[field]);
  }
  matchDom(index.dom, inputs, gate, out);
  return out;
}
