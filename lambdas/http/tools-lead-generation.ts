/**
 * POST /api/v1/tools/lead-generation/ (SPEC.md area B; docs/tools.md "lead-generation"): the page's emails, phone
 * numbers and social profiles; with `follow_contact_pages`, the site's contact and about pages' too.
 */
import { runPageTool } from '../core/tools.ts';
import { findLeads } from '../tools/leads.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

interface LeadsBody { url: string; follow_contact_pages?: boolean }

export const handler = apiHandler<LeadsBody>(route('POST', '/api/v1/tools/lead-generation/'), async (_event, { svc, account, body }) =>
  json(200, await runPageTool(svc, account, 'lead-generation', body.url, (page, fetch) => findLeads(page, { followContactPages: body.follow_contact_pages ?? false, fetch }))));
