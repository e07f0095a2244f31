/**
 * The SEO analyzer (POST /api/v1/tools/seo-analyzer/; docs/tools.md "SEO analyzer"): {@link analyzeSeo} reads one
 * page and its robots.txt into a {@link SeoReport} with Lighthouse's SEO audits and score; {@link seoReportSchema}
 * is the report's JSON Schema. The implementation is split by concern in this folder (analyze.ts says where).
 */
export { analyzeSeo } from './analyze.ts';
export { SEO_AUDIT_WEIGHTS } from './audit.ts';
export { seoReportSchema } from './schema.ts';
export type {
  AuditItem, HreflangLink, ImageSummary, LinkSummary, NonDescriptiveLink, RobotsDirectives, RobotsTxtSummary, SeoAudit, SeoAuditId, SeoReport,
} from './types.ts';
