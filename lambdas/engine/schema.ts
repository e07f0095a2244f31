/**
 * The JSON Schema of the YAML config language (docs/spec.md, "YAML config language"; reference:
 * docs/config-language.md): the one source of its keys, types and defaults.
 *
 * - config.ts validates with it, and Ajv's `useDefaults` fills every `default` from it
 *   (https://ajv.js.org/guide/modifying-data.html#assigning-defaults): no second list of defaults in code;
 * - the TypeScript types of a parsed config (`ScrapeConfig`, `FieldSpec`, `ActionSpec`) are derived from it
 *   with json-schema-to-ts `FromSchema` (a key with a default is required in the type, since Ajv fills it);
 * - lambdas/engine/schema.json, the file editors point at, is written from it by `node scripts/generate.ts`
 *   (test/unit/generated.test.ts fails while the two differ);
 * - test/unit/config-docs.test.ts holds docs/config-language.md to its keys and defaults.
 *
 * Defaults that hold for one `type` only (a scroll action's `direction` and `amount`) sit in a `then`
 * branch: Ajv fills them there, and they stay optional in the derived type.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

const field = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^(?!__proto__$)', description: 'The row key (any text but __proto__; names starting with _category are reserved).' },
    selector: { type: 'string', minLength: 1, description: 'CSS selector inside the item; absent: the item element itself.' },
    path: { type: 'string', minLength: 1, maxLength: 1000, description: 'API configs (target.api): a JMESPath query into the record (https://jmespath.site), instead of selector.' },
    type: {
      enum: ['text', 'attribute', 'html', 'link', 'image_url', 'count', 'exists', 'regex', 'eval'],
      default: 'text',
      description: 'What to take from the element.',
    },
    attribute: { type: 'string', minLength: 1, description: 'type attribute: the attribute name.' },
    pattern: { type: 'string', minLength: 1, description: 'type regex: the regular expression; the first capture group when it has one.' },
    script: { type: 'string', minLength: 1, description: 'type eval: a JavaScript expression (or function body) run in the page (browser engine).' },
    transform: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description: 'Transforms applied in order (to_number, "regex:(\\d+)", "split:,:0", ...).',
    },
    default: { description: 'The value when nothing is extracted (any value, null allowed); absent: null.' },
    multiple: { type: 'boolean', default: false, description: 'Extension: every match as an array instead of the first match.' },
  },
  allOf: [
    { if: { properties: { type: { const: 'attribute' } }, required: ['type'] }, then: { required: ['attribute'] } },
    { if: { properties: { type: { const: 'regex' } }, required: ['type'] }, then: { required: ['pattern'] } },
    { if: { properties: { type: { const: 'eval' } }, required: ['type'] }, then: { required: ['script'] } },
  ],
} as const satisfies JSONSchema;

const action = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { enum: ['click', 'scroll', 'type', 'select', 'hover', 'keyboard', 'script'], description: 'What the action does.' },
    selector: { type: 'string', minLength: 1, description: 'click, type, select, hover: CSS selector of the element.' },
    direction: { enum: ['down', 'up'], description: 'scroll: the direction (default down).' },
    amount: { anyOf: [{ const: 'full' }, { type: 'integer', minimum: 1 }], description: 'scroll: pixels, or full for the whole page (default full).' },
    value: { type: 'string', description: 'type: the text to type; select: the option value.' },
    key: { type: 'string', minLength: 1, description: 'keyboard: a key name (End, Enter, ArrowDown, ...).' },
    script: { type: 'string', minLength: 1, description: 'script: JavaScript run in the page.' },
    wait_after: { type: 'integer', minimum: 0, maximum: 60000, default: 500, description: 'Milliseconds to wait after the action (or for the navigation it started).' },
  },
  allOf: [
    { if: { properties: { type: { enum: ['click', 'type', 'select', 'hover'] } }, required: ['type'] }, then: { required: ['selector'] } },
    { if: { properties: { type: { enum: ['type', 'select'] } }, required: ['type'] }, then: { required: ['value'] } },
    { if: { properties: { type: { const: 'keyboard' } }, required: ['type'] }, then: { required: ['key'] } },
    { if: { properties: { type: { const: 'script' } }, required: ['type'] }, then: { required: ['script'] } },
    {
      if: { properties: { type: { const: 'scroll' } }, required: ['type'] },
      then: { properties: { direction: { default: 'down' }, amount: { default: 'full' } } },
    },
  ],
} as const satisfies JSONSchema;

/** The schema of a config, draft-07 (the draft yaml-language-server and most editors read). */
export const configSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://scrape-ai.dev/schemas/config-2.0.json',
  title: 'scrape-ai YAML scraping config, version 2.0',
  description: 'The YAML config language of docs/spec.md. Reference: docs/config-language.md. Generated from lambdas/engine/schema.ts by `node scripts/generate.ts`: edit that file, not this one. Point your editor at this file (# yaml-language-server: $schema=<path>/lambdas/engine/schema.json).',
  type: 'object',
  additionalProperties: false,
  required: ['target', 'extract'],
  properties: {
    version: { enum: ['2.0', 2], default: '2.0', description: 'Language version. Only 2.0 exists (a bare 2.0 is read as "2.0").' },
    name: { type: 'string', maxLength: 200, description: 'A name for people.' },
    description: { type: 'string', maxLength: 5000, description: 'A description for people.' },
    target: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      description: 'Where to start and with which engine.',
      properties: {
        url: { type: 'string', minLength: 1, maxLength: 2048, description: 'The first page: an absolute http or https URL.' },
        engine: {
          enum: ['lightweight', 'heavy', 'auto'],
          default: 'auto',
          description: 'lightweight: HTTP and HTML parsing, no browser. heavy: a real browser. auto: decided per run.',
        },
        browser: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'Browser engine settings.',
          properties: {
            wait_selector: { type: 'string', minLength: 1, description: 'CSS selector awaited before scraping (browser engine).' },
            timeout: { type: 'integer', minimum: 0, maximum: 120000, default: 15000, description: 'Milliseconds to wait for wait_selector.' },
          },
        },
        robots: {
          enum: ['obey', 'ignore'],
          default: 'obey',
          description: "obey: robots.txt rules (and Crawl-delay) of every host the run loads are kept. ignore: they are not read; allowed only where the plans file allows it (robots_ignore).",
        },
        politeness: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'The pace of requests to each host (listing, detail and category pages, both engines).',
          properties: {
            mode: { enum: ['auto', 'fixed'], default: 'auto', description: 'auto: the gap between requests follows the host\'s latency and slows down on 429 and 503 answers (AutoThrottle). fixed: the gap is delay.' },
            delay: { type: 'integer', minimum: 0, maximum: 60000, default: 0, description: 'Milliseconds between the starts of two requests to one host, at least (fixed: exactly); a robots.txt Crawl-delay raises it.' },
            max_delay: { type: 'integer', minimum: 0, maximum: 120000, default: 30000, description: 'auto: the largest gap it slows down to, milliseconds.' },
            target_concurrency: { type: 'number', exclusiveMinimum: 0, maximum: 64, description: 'auto: requests in flight to one host it aims at (the gap follows latency / this); absent: no latency term, the run\'s concurrency (SAI_JOB_CONCURRENCY) bounds the requests in flight.' },
          },
        },
        api: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          description: "Read the records from the site's JSON API instead of its HTML: the request that answers them (docs/config-language.md, \"Reading a JSON API\"). The crawler sends it over HTTP through the outbound guard on either engine; target.url stays the page it serves.",
          properties: {
            url: { type: 'string', minLength: 1, maxLength: 2048, description: 'The endpoint: an http(s) URL, absolute or relative to target.url; may hold the placeholders {page}, {offset}, {cursor}.' },
            method: { enum: ['GET', 'POST'], default: 'GET', description: 'GET, or POST with a JSON body.' },
            query: {
              type: 'object',
              maxProperties: 50,
              additionalProperties: { type: ['string', 'number', 'boolean'] },
              description: 'Query parameters added to the URL (values may hold placeholders; a parameter whose value is a placeholder with no value yet, the first {cursor}, is left out).',
            },
            body: { type: ['object', 'array'], description: 'POST: the JSON body. A string that is a placeholder becomes its value (a number for {page} and {offset}); placeholders inside longer strings are replaced as text.' },
            headers: {
              type: 'object',
              maxProperties: 20,
              additionalProperties: { type: 'string', maxLength: 1000 },
              description: 'Request headers the site needs (Accept, X-Requested-With, a public API key); Cookie, Authorization, Host and hop-by-hop headers are refused.',
            },
          },
        },
        proxy: {
          type: 'string',
          minLength: 1,
          maxLength: 100,
          pattern: '^[A-Za-z0-9_.-]+$',
          description: "none: no upstream proxy. A group name: the operator's proxy group of that name (SAI_PROXIES). Absent: the operator's default group, none if there is none.",
        },
      },
    },
    extract: {
      type: 'object',
      additionalProperties: false,
      description: 'The items of a page and their fields.',
      properties: {
        container: { type: 'string', minLength: 1, description: 'CSS selector of each item (list), of the item (single) or of the table (table); required for list and table.' },
        records: { type: 'string', minLength: 1, maxLength: 1000, description: "API configs (target.api): a JMESPath query giving the answer's records (a list; an object is one record); absent: the whole answer." },
        type: { enum: ['list', 'single', 'table'], default: 'list', description: 'list: a row per container match; single: one row; table: a row per table row.' },
        fields: { type: 'array', items: { $ref: '#/definitions/field' }, maxItems: 200, default: [], description: 'The fields of each item; at least one, except for table.' },
        following_siblings: {
          type: 'integer',
          minimum: 0,
          maximum: 10,
          default: 0,
          description: 'Extension, list only: each item is the container match plus up to this many of its following element siblings, stopping before the next container match (a record spread over rows, dt/dd pairs, a heading and its paragraph). Field selectors then match the whole document and keep the elements that are one of the item\'s elements or inside one, in document order.',
        },
      },
    },
    detail_fields: {
      type: 'object',
      additionalProperties: false,
      required: ['fields'],
      description: "Fields taken from each item's own page (the URL of its first link field).",
      properties: {
        fields: { type: 'array', minItems: 1, items: { $ref: '#/definitions/field' }, maxItems: 200, description: 'The fields of the detail page.' },
      },
    },
    pagination: {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      description: 'How to reach the next listing page.',
      properties: {
        type: {
          enum: ['click', 'url', 'scroll_infinite', 'page', 'offset', 'cursor', 'next_url'],
          description: 'click: a next or load-more control; url: a URL pattern; scroll_infinite: scroll (browser engine). API configs (target.api): page or offset (a parameter stepped), cursor or next_url (read from each answer).',
        },
        selector: { type: 'string', minLength: 1, description: 'click: CSS selector of the next or load-more control.' },
        url_pattern: { type: 'string', minLength: 1, description: 'url: a URL containing {page}, absolute or relative to the listing\'s first page.' },
        max_pages: { type: 'integer', minimum: 1, maximum: 1000, default: 10, description: 'Listing pages in all, the first one included.' },
        wait_after: { type: 'integer', minimum: 0, maximum: 60000, default: 0, description: 'Milliseconds to wait after each step.' },
        start: { type: 'integer', minimum: 0, description: 'page, offset: the first value of {page} (default 1) or {offset} (default 0).' },
        step: { type: 'integer', minimum: 1, description: 'page, offset: added after each answer (page: default 1; offset: default the number of records the answer gave).' },
        cursor_path: { type: 'string', minLength: 1, maxLength: 1000, description: 'cursor: a JMESPath query giving the next {cursor} from an answer; null or empty ends the listing.' },
        next_url_path: { type: 'string', minLength: 1, maxLength: 1000, description: 'next_url: a JMESPath query giving the next URL from an answer (absolute or relative to the answer); null or empty ends the listing.' },
        total_path: { type: 'string', minLength: 1, maxLength: 1000, description: 'API configs: a JMESPath query giving the total number of records; the listing ends once that many are read.' },
        has_more_path: { type: 'string', minLength: 1, maxLength: 1000, description: 'API configs: a JMESPath query giving whether more answers follow; false or null ends the listing.' },
        stop_condition: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'When to stop before max_pages.',
          properties: {
            max_items: { type: 'integer', minimum: 1, description: 'Stop once this many items are collected (per category with categories).' },
          },
        },
      },
      allOf: [
        { if: { properties: { type: { const: 'click' } }, required: ['type'] }, then: { required: ['selector'] } },
        { if: { properties: { type: { const: 'url' } }, required: ['type'] }, then: { required: ['url_pattern'] } },
        { if: { properties: { type: { const: 'cursor' } }, required: ['type'] }, then: { required: ['cursor_path'] } },
        { if: { properties: { type: { const: 'next_url' } }, required: ['type'] }, then: { required: ['next_url_path'] } },
      ],
    },
    categories: {
      type: 'object',
      additionalProperties: false,
      description: 'Crawl every category linked from the first page.',
      properties: {
        container: { type: 'string', default: '', description: 'CSS selector wrapping the category links; empty: the whole page.' },
        link_selector: { type: 'string', minLength: 1, default: 'a', description: 'CSS selector of the category links inside the container.' },
        link_attribute: { type: 'string', minLength: 1, default: 'href', description: 'The attribute holding the category URL.' },
        name_selector: { type: 'string', default: '', description: "CSS selector of the name inside the link; empty: the link's text." },
        max_categories: { type: 'integer', minimum: 1, maximum: 500, default: 50, description: 'At most this many categories, in page order.' },
        wait_after: { type: 'integer', minimum: 0, maximum: 60000, default: 2000, description: 'Milliseconds to wait after each category.' },
      },
    },
    actions: {
      type: 'array',
      maxItems: 100,
      items: { $ref: '#/definitions/action' },
      default: [],
      description: 'Browser actions run in order before extraction (browser engine).',
    },
    output: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Deduplication and a row limit.',
      properties: {
        format: { enum: ['json'], default: 'json', description: 'The only format.' },
        deduplicate: { type: 'boolean', default: false, description: 'Drop rows equal to an earlier row (true when deduplicate_fields is given and this is not).' },
        deduplicate_fields: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, description: 'Compare only these fields.' },
        limit: { type: 'integer', minimum: 1, description: 'Keep at most this many rows.' },
      },
    },
  },
  definitions: { field, action },
} as const satisfies JSONSchema;

/** A config as Ajv leaves it after validation with `useDefaults`: every key with a default is present. */
export type ValidatedConfig = FromSchema<typeof configSchema>;

/**
 * A config after `parseConfig` (config.ts): validated, every default filled in, `version` written `"2.0"`.
 * Plain data (it crosses thread and process boundaries). Keys, units and defaults: {@link configSchema}.
 */
export type ScrapeConfig = Omit<ValidatedConfig, 'version'> & { version: '2.0' };

/** A field definition with its defaults applied (`type` text, `transform` [], `multiple` false). */
export type FieldSpec = ScrapeConfig['extract']['fields'][number];

/** Field types of the config language (docs/spec.md, "YAML config language"; docs/config-language.md, "Fields"). */
export type FieldType = FieldSpec['type'];

/** A browser action with its defaults applied (`wait_after` 500 ms; for scroll, `direction` down, `amount` full). */
export type ActionSpec = ScrapeConfig['actions'][number];
