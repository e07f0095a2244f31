/**
 * Every tool's answer names the URL it analysed (issue 28): the page tools their page's URL; the tools whose work is
 * about a host (DNS/WHOIS, the SSL checker) the URL they were given, after WHATWG URL normalization, with their host
 * report (docs/tools.md).
 */

/** The `url` property of a tool's answer. */
export const targetUrlProperty = { type: 'string', minLength: 1, description: 'The URL the tool was given, normalized (WHATWG URL), before any redirect' } as const;

/**
 * A tool answer's JSON Schema: a host report's schema with `url` (required) added, under the answer's own `$id` and
 * title (the report's schema keeps its own for the tool function's unit tests).
 */
export function withTargetUrl<S extends { required: readonly string[]; properties: Record<string, unknown> }>(schema: S, id: string, title: string) {
  return { ...schema, $id: id, title, required: ['url', ...schema.required], properties: { url: targetUrlProperty, ...schema.properties } };
}
