/**
 * The tech detector (POST /api/v1/tools/tech-detector/; docs/tools.md "tech-detector"): {@link detectTechnologies}
 * finds the technologies a page shows from the Wappalyzer-format fingerprints; {@link techReportSchema} is the
 * report's JSON Schema. The implementation is split by concern in this folder (detect.ts says where).
 */
export { detectTechnologies } from './detect.ts';
export { domPrefilter } from './dom.ts';
export { jsGlobalPaths } from './fingerprint-index.ts';
export { LIMITS } from './limits.ts';
export { LiteralScanner } from './literal-scanner.ts';
export { boundQuantifiers, requiredLiterals, resolveVersion } from './patterns.ts';
export { techReportSchema } from './schema.ts';
export type { DetectedTechnology, TechReport } from './types.ts';
