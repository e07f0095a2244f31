/**
 * One pattern tested on one value, within the time budget of the detection under way.
 */
import type { Rule, Tech } from './fingerprint-index.ts';
import type { Has } from './page-inputs.ts';
import { resolveVersion } from './patterns.ts';

/** One pattern match: a technology, the pattern's confidence and the version it gave. */
export interface Detection {
  tech: Tech;
  confidence: number;
  version: string;
}

/**
 * The time budget of the detection under way (detection is synchronous, so one at a time): past `deadline`
 * (a `performance.now()` time), patterns are no longer tested and the report is marked partial.
 */
export const budget = { deadline: Number.POSITIVE_INFINITY, exhausted: false };

/**
 * Tests `rule` on `value` and adds a {@link Detection} to `out` when it matches; skipped when the value holds none of
 * the pattern's required literals (`has`) or the budget is spent (which it marks).
 */
export function test(rule: Rule, value: string, out: Detection[], has?: Has): void {
  const { literals } = rule.pattern;
  if (literals && has && !literals.some(has)) return;
  if (budget.exhausted) return;
  if (performance.now() > budget.deadline) {
    budget.exhausted = true;
    return;
  }
  const m = rule.pattern.regex.exec(value);
  if (m) out.push({ tech: rule.tech, confidence: rule.pattern.confidence, version: resolveVersion(rule.pattern.version, m) });
}
