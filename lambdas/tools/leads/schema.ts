/**
 * The lead generator's response as a JSON Schema (published in docs/openapi.json by scripts/openapi.ts).
 */
import type { LeadSourceType, SocialNetwork } from './types.ts';

const SOURCE_TYPES: LeadSourceType[] = ['mailto', 'text', 'obfuscated', 'cloudflare', 'tel', 'json-ld', 'link', 'meta'];
const NETWORKS: SocialNetwork[] = ['linkedin', 'x', 'facebook', 'instagram', 'youtube', 'github', 'tiktok', 'pinterest', 'threads', 'bluesky', 'mastodon', 'telegram', 'whatsapp'];
const sourcesSchema = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'page'],
    properties: { type: { type: 'string', enum: SOURCE_TYPES }, page: { type: 'string' } },
  },
} as const;

/** JSON Schema (draft-07, compiles under ajv strict mode) of LeadsReport (types.ts). */
export const leadsReportSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'LeadsReport',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'emails', 'phones', 'social', 'default_country', 'pages'],
  properties: {
    url: { type: 'string' },
    emails: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['email', 'sources'],
        properties: { email: { type: 'string', pattern: '^[^@\\s]+@[a-z0-9.-]+\\.[a-z]{2,24}$' }, sources: sourcesSchema },
      },
    },
    phones: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['e164', 'national', 'country', 'sources'],
        properties: {
          e164: { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$' },
          national: { type: 'string' },
          country: { type: ['string', 'null'], pattern: '^[A-Z]{2}$' },
          sources: sourcesSchema,
        },
      },
    },
    social: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['network', 'url', 'handle', 'sources'],
        properties: {
          network: { type: 'string', enum: NETWORKS },
          url: { type: 'string', pattern: '^https://' },
          handle: { type: 'string', minLength: 1 },
          sources: sourcesSchema,
        },
      },
    },
    default_country: {
      type: 'object',
      additionalProperties: false,
      required: ['country', 'from'],
      properties: {
        country: { type: ['string', 'null'], pattern: '^[A-Z]{2}$' },
        from: { type: ['string', 'null'], enum: ['json-ld', 'tld', 'html-lang', 'og-locale', 'text', 'english', null] },
      },
    },
    pages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['url', 'status'],
        properties: { url: { type: 'string' }, status: { type: ['integer', 'null'] }, skipped: { type: 'string' } },
      },
    },
  },
} as const;
