/**
 * Lighthouse's SEO category score over the analyzer's audits.
 */
import type { SeoAudit } from './types.ts';

/** Lighthouse's category score: the weighted mean of the applicable audits' 0/1 scores, as 0-100. */
export function seoScore(audits: SeoAudit[]): number {
  let total = 0;
  let weights = 0;
  for (const a of audits) {
    if (!a.applicable) continue;
    weights += a.weight;
    total += a.weight * (a.passed ? 1 : 0);
  }
  return weights === 0 ? 0 : Math.round((total / weights) * 100);
}
