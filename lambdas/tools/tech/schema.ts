/**
 * The tech detector's response as a JSON Schema (published in docs/openapi.json by scripts/openapi.ts).
 */

/** JSON Schema (draft 7, ajv strict mode) of a {@link TechReport}: the tool's response body. */
export const techReportSchema = {
  $id: 'https://scrape-ai.dev/schemas/tools/tech-detector.json',
  title: 'TechReport',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'rendered', 'partial', 'technologies'],
  properties: {
    url: { type: 'string' },
    rendered: { type: 'boolean' },
    partial: { type: 'boolean' },
    technologies: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'version', 'categories', 'confidence', 'website'],
        properties: {
          name: { type: 'string', minLength: 1 },
          version: { type: ['string', 'null'], minLength: 1, maxLength: 15 },
          categories: { type: 'array', items: { type: 'string' } },
          confidence: { type: 'integer', minimum: 0, maximum: 100 },
          website: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;
