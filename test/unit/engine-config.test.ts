/** parseConfig: defaults, and every kind of invalid config with its path, line and column. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Ajv } from 'ajv';
import { browserFeatures, ConfigError, MAX_CONFIG_BYTES, parseConfig, type ConfigProblem } from '../../lambdas/engine/config.ts';

function problems(yaml: string): ConfigProblem[] {
  try {
    parseConfig(yaml);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.code, 'invalid_config');
    return err.details;
  }
  assert.fail('expected an invalid_config error');
}

function problemAt(yaml: string, path: string): ConfigProblem {
  const all = problems(yaml);
  const p = all.find((x) => x.path === path);
  assert.ok(p, `no problem at ${path}: ${JSON.stringify(all)}`);
  return p;
}

const minimal = `target: { url: "https://example.com/" }
extract:
  container: div.item
  fields:
    - { name: title, selector: h2 }
`;

describe('parseConfig', () => {
  it('fills every default', () => {
    const c = parseConfig(`${minimal}pagination: { type: click, selector: a.next }
categories: {}
`);
    assert.equal(c.version, '2.0');
    assert.equal(c.target.engine, 'auto');
    assert.equal(c.target.browser.timeout, 15000);
    assert.equal(c.extract.type, 'list');
    assert.deepEqual(c.extract.fields[0], { name: 'title', selector: 'h2', type: 'text', transform: [], multiple: false });
    assert.equal(c.pagination?.max_pages, 10);
    assert.equal(c.pagination?.wait_after, 0);
    assert.deepEqual(c.categories, { container: '', link_selector: 'a', link_attribute: 'href', name_selector: '', max_categories: 50, wait_after: 2000 });
    assert.deepEqual(c.actions, []);
    assert.deepEqual(c.output, { format: 'json', deduplicate: false });
    assert.equal('default' in c.extract.fields[0]!, false, 'no default unless given');
  });

  it('keeps a null default and reads version 2.0 given as a number', () => {
    const c = parseConfig(`version: 2.0\n${minimal.replace('{ name: title, selector: h2 }', '{ name: title, selector: h2, default: null }')}`);
    assert.equal(c.extract.fields[0]!.default, null);
    assert.equal('default' in c.extract.fields[0]!, true);
  });

  it('deduplicate_fields implies deduplicate', () => {
    assert.equal(parseConfig(`${minimal}output: { deduplicate_fields: [title] }\n`).output.deduplicate, true);
    assert.equal(parseConfig(`${minimal}output: { deduplicate: false, deduplicate_fields: [title] }\n`).output.deduplicate, false);
  });

  it('points at the exact line and column of a bad value, an unknown key and a missing key', () => {
    const yaml = `version: "2.0"
target:
  url: https://example.com/
  engine: turbo
extract:
  container: div.item
  fields:
    - name: title
      selector: h2
      typo: 1
    - selector: p
`;
    const enumP = problemAt(yaml, 'target.engine');
    assert.deepEqual([enumP.line, enumP.column], [4, 3]);
    assert.match(enumP.message, /must be one of "lightweight", "heavy", "auto"; got string "turbo"/);
    const unknown = problemAt(yaml, 'extract.fields[0].typo');
    assert.deepEqual([unknown.line, unknown.column], [10, 7]);
    assert.match(unknown.message, /unknown key "typo"/);
    const missing = problemAt(yaml, 'extract.fields[1]');
    assert.deepEqual([missing.line, missing.column], [11, 7]);
    assert.match(missing.message, /missing required key "name"/);
  });

  it('reports YAML syntax errors with line and column', () => {
    const [p] = problems('target:\n  url: "https://x.test/\nextract: {}\n');
    assert.equal(p!.path, '');
    assert.ok(p!.line! >= 2, JSON.stringify(p));
    assert.match(p!.message, /^YAML syntax/);
    assert.match(problems('target: {url: a}\ntarget: {url: b}\nextract: {container: x, fields: [{name: a}]}')[0]!.message, /Map keys must be unique/);
  });

  it('refuses type-specific omissions: attribute without attribute, regex without pattern, eval without script', () => {
    for (const [type, key] of [['attribute', 'attribute'], ['regex', 'pattern'], ['eval', 'script']]) {
      const p = problemAt(minimal.replace('{ name: title, selector: h2 }', `{ name: x, type: ${type} }`), 'extract.fields[0]');
      assert.match(p.message, new RegExp(`missing required key "${key}"`));
    }
  });

  it('checks selectors, regexes and transforms, with the index of the transform', () => {
    assert.match(problemAt(minimal.replace('selector: h2', 'selector: "h2[" '), 'extract.fields[0].selector').message, /invalid CSS selector "h2\["/);
    assert.match(problemAt(minimal.replace('container: div.item', 'container: "div >> p"'), 'extract.container').message, /invalid CSS selector/);
    assert.match(problemAt(minimal.replace('{ name: title, selector: h2 }', '{ name: t, type: regex, pattern: "(" }'), 'extract.fields[0].pattern').message, /invalid regular expression/);
    const p = problemAt(minimal.replace('{ name: title, selector: h2 }', '{ name: t, transform: [strip, "slice:x", lowercase] }'), 'extract.fields[0].transform[1]');
    assert.match(p.message, /START must be an integer/);
    assert.equal(p.line, 5);
  });

  it('checks the semantics a schema cannot: target URL, names, detail link, url pattern, dedup fields', () => {
    assert.match(problemAt(minimal.replace('https://example.com/', 'ftp://example.com/'), 'target.url').message, /absolute http or https URL/);
    assert.match(problemAt(minimal.replace('https://example.com/', '/relative'), 'target.url').message, /absolute http or https URL/);
    assert.match(problemAt(`${minimal}    - { name: title, selector: h3 }\n`, 'extract.fields[1].name').message, /duplicate field name/);
    assert.match(problemAt(minimal.replace('name: title', 'name: _category'), 'extract.fields[0].name').message, /reserved/);
    assert.match(problemAt(`${minimal}detail_fields: { fields: [{ name: upc, selector: td }] }\n`, 'detail_fields').message, /needs a field of type link/);
    assert.match(problemAt(`${minimal}pagination: { type: url, url_pattern: "https://example.com/p" }\n`, 'pagination.url_pattern').message, /\{page\}/);
    assert.match(problemAt(`${minimal}pagination: { type: url }\n`, 'pagination').message, /missing required key "url_pattern"/);
    assert.match(problemAt(`${minimal}pagination: { type: click }\n`, 'pagination').message, /missing required key "selector"/);
    assert.match(problemAt(`${minimal}output: { deduplicate_fields: [nope] }\n`, 'output.deduplicate_fields[0]').message, /not a field/);
    assert.match(problemAt(minimal.replace('  container: div.item\n', ''), 'extract').message, /container/);
    assert.match(problemAt(`${minimal}pagination: { type: click, selector: a, max_pages: 0 }\n`, 'pagination.max_pages').message, />= 1/);
  });

  it('accepts a relative url_pattern (resolved against target.url) and a single without container', () => {
    parseConfig(`${minimal}pagination: { type: url, url_pattern: "/page/{page}/" }\n`);
    parseConfig('target: {url: "https://x.test/"}\nextract: {type: single, fields: [{name: t, selector: title}]}');
    parseConfig('target: {url: "https://x.test/"}\nextract: {type: table, container: table.data}');
  });

  it('refuses empty, non-mapping and oversized input', () => {
    assert.match(problems('')[0]!.message, /empty/);
    assert.match(problems('- a\n- b\n')[0]!.message, /YAML mapping/);
    assert.match(problems('just text')[0]!.message, /YAML mapping/);
    const big = `${minimal}description: "${'x'.repeat(MAX_CONFIG_BYTES)}"\n`;
    assert.match(problems(big)[0]!.message, /too large \(size: \d+ bytes, limit: 262144 bytes\)/);
  });

  it('refuses a YAML alias bomb', () => {
    const bomb = `a: &a ["x","x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
${minimal}`;
    assert.match(problems(bomb)[0]!.message, /Excessive alias count/);
  });

  it('the JSON Schema for editors is the one the validator uses, and is valid draft-07', () => {
    const schema = JSON.parse(fs.readFileSync(new URL('../../lambdas/engine/schema.json', import.meta.url), 'utf8'));
    const ajv = new Ajv({ strict: false });
    assert.equal(ajv.validateSchema(schema), true, JSON.stringify(ajv.errors));
    assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
    assert.deepEqual(Object.keys(schema.properties).sort(), ['actions', 'categories', 'description', 'detail_fields', 'extract', 'name', 'output', 'pagination', 'target', 'version']);
  });
});

describe('browserFeatures', () => {
  it('lists each feature that needs a browser with its path', () => {
    const c = parseConfig(`target: { url: "https://x.test/", engine: heavy }
extract:
  container: div
  fields:
    - { name: a, selector: p }
    - { name: b, type: eval, script: "el.dataset.id" }
actions:
  - { type: click, selector: button.more }
  - { type: scroll, direction: down, amount: full }
pagination: { type: scroll_infinite, max_pages: 5 }
`);
    assert.deepEqual(browserFeatures(c).map((f) => f.path), ['target.engine', 'extract.fields[1]', 'actions', 'pagination.type']);
    assert.deepEqual(browserFeatures(parseConfig(minimal)), []);
  });
});
