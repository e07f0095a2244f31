/**
 * The SEO analyzer's response as a JSON Schema (published in docs/openapi.json by scripts/openapi.ts).
 */
import { SEO_AUDIT_WEIGHTS } from './audit.ts';

const stringArray = { type: 'array', items: { type: 'string' } } as const;
const nullableString = { type: ['string', 'null'] } as const;

/**
 * JSON Schema of {@link SeoReport}: keywords common to drafts 07 and 2020-12 only (no `$schema`, so ajv 8's
 * default `Ajv` class compiles it, in strict mode with `allowUnionTypes`; so does `Ajv2020`); closed objects
 * (`additionalProperties: false`) wherever the shape is fixed; the keyed maps (`open_graph`,
 * `twitter_card`, audit items) are open with typed values.
 */
export const seoReportSchema = {
  $id: 'https://scrape-ai.dev/schemas/tools/seo-report.json',
  title: 'SEO analyzer response',
  type: 'object',
  additionalProperties: false,
  required: [
    'url', 'status', 'content_type', 'title', 'meta_description', 'canonical', 'robots', 'lang', 'viewport', 'hreflang',
    'open_graph', 'twitter_card', 'structured_data', 'headings', 'word_count', 'links', 'images', 'robots_txt', 'audits',
    'score', 'warnings',
  ],
  properties: {
    url: { type: 'string' },
    status: { type: 'integer' },
    content_type: { type: 'string' },
    title: nullableString,
    meta_description: nullableString,
    canonical: nullableString,
    robots: {
      type: 'object',
      additionalProperties: false,
      required: ['meta', 'x_robots_tag', 'noindex', 'nofollow'],
      properties: { meta: nullableString, x_robots_tag: nullableString, noindex: { type: 'boolean' }, nofollow: { type: 'boolean' } },
    },
    lang: nullableString,
    viewport: nullableString,
    hreflang: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['lang', 'url'], properties: { lang: { type: 'string' }, url: { type: 'string' } } },
    },
    open_graph: { type: 'object', additionalProperties: { anyOf: [{ type: 'string' }, stringArray] } },
    twitter_card: { type: 'object', additionalProperties: { type: 'string' } },
    structured_data: {
      type: 'object',
      additionalProperties: false,
      required: ['json_ld', 'microdata', 'rdfa', 'types', 'errors'],
      properties: {
        json_ld: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'id', 'nested_types'],
            properties: { type: stringArray, id: nullableString, nested_types: stringArray },
          },
        },
        microdata: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['type', 'id', 'top_level'],
            properties: { type: stringArray, id: nullableString, top_level: { type: 'boolean' } },
          },
        },
        rdfa: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, required: ['type'], properties: { type: stringArray } },
        },
        types: stringArray,
        errors: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['syntax', 'index', 'message'],
            properties: { syntax: { const: 'json-ld' }, index: { type: 'integer', minimum: 0 }, message: { type: 'string' } },
          },
        },
      },
    },
    headings: {
      type: 'object',
      additionalProperties: false,
      required: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
      properties: { h1: stringArray, h2: stringArray, h3: stringArray, h4: stringArray, h5: stringArray, h6: stringArray },
    },
    word_count: { type: 'integer', minimum: 0 },
    links: {
      type: 'object',
      additionalProperties: false,
      required: ['internal', 'external', 'nofollow', 'other', 'non_descriptive'],
      properties: {
        internal: { type: 'integer', minimum: 0 },
        external: { type: 'integer', minimum: 0 },
        nofollow: { type: 'integer', minimum: 0 },
        other: { type: 'integer', minimum: 0 },
        non_descriptive: {
          type: 'array',
          maxItems: 50,
          items: { type: 'object', additionalProperties: false, required: ['href', 'text'], properties: { href: { type: 'string' }, text: { type: 'string' } } },
        },
      },
    },
    images: {
      type: 'object',
      additionalProperties: false,
      required: ['count', 'without_alt', 'without_alt_srcs'],
      properties: {
        count: { type: 'integer', minimum: 0 },
        without_alt: { type: 'integer', minimum: 0 },
        without_alt_srcs: { ...stringArray, maxItems: 20 },
      },
    },
    robots_txt: {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'found', 'status', 'allowed', 'disallowed_bots', 'sitemaps', 'note'],
      properties: {
        url: { type: 'string' },
        found: { type: 'boolean' },
        status: { type: ['integer', 'null'] },
        allowed: { type: 'boolean' },
        disallowed_bots: stringArray,
        sitemaps: stringArray,
        note: nullableString,
      },
    },
    audits: {
      type: 'array',
      minItems: 10,
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title', 'passed', 'applicable', 'weight', 'details'],
        properties: {
          id: { enum: Object.keys(SEO_AUDIT_WEIGHTS) },
          title: { type: 'string' },
          passed: { type: 'boolean' },
          applicable: { type: 'boolean' },
          weight: { type: 'number', minimum: 0 },
          details: {
            type: 'object',
            additionalProperties: false,
            required: ['explanation', 'items'],
            properties: {
              explanation: nullableString,
              items: { type: 'array', items: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } } },
            },
          },
        },
      },
    },
    score: { type: 'integer', minimum: 0, maximum: 100 },
    warnings: stringArray,
  },
} as const;
