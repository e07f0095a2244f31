/**
 * POST /api/v1/tools/lead-generation/ (docs/spec.md, "Tool endpoints"; docs/tools.md "lead-generation"): the page's emails, phone
 * numbers and social profiles; with `follow_contact_pages`, the site's contact and about pages' too. Every page is
 * fetched and read in a tool worker (core/tool-thread.ts).
 */
import { runPageTool, toolWork } from '../core/tools.ts';
import { findLeads } from '../tools/leads/index.ts';
import { apiHandler, jsonText } from './middleware.ts';
import { route } from '../routes.ts';

interface LeadsBody { url: string; follow_contact_pages?: boolean }

const work = toolWork<LeadsBody>('lead-generation', import.meta.url, async ({ page, fetch }, b) =>
  findLeads(await page(), { followContactPages: b.follow_contact_pages ?? false, fetch }));

export const handler = apiHandler<LeadsBody>(route('POST', '/api/v1/tools/lead-generation/'), async (_event, { svc, account, body }) =>
  jsonText(200, await runPageTool(svc, account, work, body.url, body)));
