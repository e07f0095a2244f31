/**
 * Step 3 of the detection (detect.ts): detections summed per technology, excludes and implies applied, as
 * Wappalyzer's `resolve` does.
 */
import type { Detection } from './detection.ts';
import type { Tech } from './fingerprint-index.ts';

/** A technology as resolved: confidence summed, version chosen. */
export interface Resolved {
  tech: Tech;
  confidence: number;
  version: string;
}

/** Wappalyzer's choice among versions: the longest, at most 15 characters, not a long number (a timestamp). */
function betterVersion(candidate: string, current: string): string {
  return candidate.length > current.length && candidate.length <= 15 && (Number.parseInt(candidate, 10) || 0) < 10000 ? candidate : current;
}

/** Step 3 of the module comment: sums, excludes, implies. */
export function resolve(detections: Detection[], techs: Map<string, Tech>): Map<string, Resolved> {
  const resolved = new Map<string, Resolved>();
  for (const d of detections) {
    const r = resolved.get(d.tech.name);
    if (r) {
      r.confidence = Math.min(100, r.confidence + d.confidence);
      r.version = betterVersion(d.version, r.version);
    } else {
      resolved.set(d.tech.name, { tech: d.tech, confidence: Math.min(100, d.confidence), version: betterVersion(d.version, '') });
    }
  }
  for (const name of [...resolved.keys()]) {
    const r = resolved.get(name);
    if (!r) continue; // excluded by one before it
    for (const excluded of r.tech.excludes) if (excluded !== name) resolved.delete(excluded);
  }
  let changed = true;
  while (changed) {
    changed = false;
    for (const r of [...resolved.values()]) {
      for (const implied of r.tech.implies) {
        const tech = techs.get(implied.name);
        if (!tech || resolved.has(tech.name)) continue;
        resolved.set(tech.name, { tech, confidence: Math.min(r.confidence, implied.confidence), version: betterVersion(implied.version, '') });
        changed = true;
      }
    }
  }
  return resolved;
}
