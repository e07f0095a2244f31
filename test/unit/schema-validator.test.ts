/**
 * lambdas/engine/schema-validator.js, the config schema's validator as Ajv standalone code written at build time
 * by scripts/generate.ts (test/unit/generated.test.ts holds it to its source): it compiles nothing at run time
 * (no `new Function`, no `eval`, which a Manifest V3 extension forbids), imports nothing (Node and a browser
 * bundle load it alike), fills in the schema's defaults, and answers as an Ajv validator compiled at run time
 * with the same options does (same verdict, same errors, same defaults written), over every YAML example of the
 * docs and thousands of broken variants of them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { build, type Metafile } from 'esbuild';
import { parse as parseYaml } from 'yaml';
import { validate } from '../../lambdas/engine/schema-validator.js';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { configSchema } from '../../lambdas/engine/schema.ts';
import { CONFIG_AJV_OPTIONS } from '../../scripts/generate.ts';
import { quotesConfigYaml } from '../fixtures/site/quotes-config.ts';

const root = path.resolve(import.meta.dirname, '../..');
const MODULE_PATH = path.join(root, 'lambdas/engine/schema-validator.js');
const moduleText = fs.readFileSync(MODULE_PATH, 'utf8');

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The schema node at a path of property names (`['target', 'engine']`), through `properties`. */
function schemaAt(...keys: string[]): Mapping {
  return keys.reduce<Mapping>((node, k) => (node.properties as Record<string, Mapping>)[k]!, configSchema as unknown as Mapping);
}

/**
 * Every YAML example of docs/*.md and README.md (fences and the README's heredoc) and the fixture site's quotes
 * config. Whole configs (with `target` and `extract`) stay as they are; fragments (a section, a list of fields) are set into the
 * first whole one. Names say where each comes from.
 */
function exampleConfigs(): Array<[string, unknown]> {
  const texts: Array<[string, string]> = [];
  const docs = fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  for (const file of ['README.md', ...docs]) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    let n = 0;
    for (const m of text.matchAll(/```ya?ml\n([\s\S]*?)```|<<'YAML'\n([\s\S]*?)\nYAML\n/g)) texts.push([`${file} example ${n++}`, m[1] ?? m[2]!]);
  }
  texts.push(['quotes-config.ts', quotesConfigYaml('http://127.0.0.1:8080/quotes/')]);
  const parsed = texts.map(([name, text]): [string, unknown] => [name, parseYaml(text)]);
  const isWhole = (d: unknown) => isMapping(d) && 'target' in d && 'extract' in d;
  const whole = parsed.filter(([, d]) => isWhole(d));
  assert.ok(whole.length > 0, 'the docs have a whole config example');
  const base = whole[0]![1] as Mapping;
  const out = [...whole];
  for (const [name, d] of parsed) {
    if (isMapping(d) && !isWhole(d)) out.push([`${name} (in ${whole[0]![0]})`, { ...structuredClone(base), ...d }]);
    else if (Array.isArray(d)) out.push([`${name} (as extract.fields)`, { ...structuredClone(base), extract: { ...(base.extract as Mapping), fields: d } }]);
  }
  return out;
}

/** Values of the wrong type, empty, too small, non-integer, the forbidden name, and 60 and 101 astral characters. */
const WRONG: unknown[] = [null, 'x', '', -1, 0, 1.5, true, [], {}, ['x'], { x: 1 }, '__proto__', '\u{1F600}'.repeat(60), '\u{1F600}'.repeat(101)];

/** A copy of `config` with the value at `at` replaced (or removed, for `undefined`; an array item is spliced out). */
function setAt(config: unknown, at: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(config) as Mapping;
  let v = copy as Record<string | number, unknown>;
  for (const s of at.slice(0, -1)) v = v[s] as Record<string | number, unknown>;
  const last = at[at.length - 1]!;
  if (value !== undefined) v[last] = value;
  else if (Array.isArray(v)) v.splice(last as number, 1);
  else delete v[last];
  return copy;
}

/** Every place of a config set to each {@link WRONG} value, removed, and every mapping given an unknown key. */
function brokenConfigs(name: string, config: unknown): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  const walk = (v: unknown, at: Array<string | number>) => {
    if (at.length) {
      WRONG.forEach((w, i) => out.push([`${name}: ${at.join('.')} = WRONG[${i}]`, setAt(config, at, w)]));
      out.push([`${name}: ${at.join('.')} removed`, setAt(config, at, undefined)]);
    }
    if (isMapping(v)) {
      out.push([`${name}: ${at.join('.') || 'top level'} + unknown key`, setAt(config, [...at, 'no_such_key'], 1)]);
      for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...at, i]));
  };
  walk(config, []);
  return out;
}

/** What a validator makes of (a copy of) `data`: its verdict, its errors and the data with the defaults it wrote. */
function outcome(v: { (data: unknown): boolean; errors?: unknown }, data: unknown): { valid: boolean; errors: unknown; data: unknown } {
  const copy = structuredClone(data);
  const valid = v(copy);
  return { valid, errors: v.errors ?? null, data: copy };
}

describe('schema-validator.js: the config validator as standalone code', () => {
  it('contains no code compiled at run time and imports nothing', () => {
    assert.ok(moduleText.length > 10_000, 'the module has the validator');
    assert.ok(!moduleText.includes('new Function'), 'no new Function');
    assert.doesNotMatch(moduleText, /\beval\s*\(/, 'no eval(');
    assert.doesNotMatch(moduleText, /\brequire\s*\(/, 'no require(: ajv runtime helpers are inlined');
    assert.doesNotMatch(moduleText, /^\s*import\b|\bimport\s*\(/m, 'no import');
    assert.match(moduleText, /^\/\/ Generated by `node scripts\/generate\.ts`/, 'says it is generated and how');
    assert.match(moduleText, /^export const validate = validate\d+;$/m);
  });

  it('bundles for a browser with esbuild on its own: no ajv, no Node module', async () => {
    const r = await build({ entryPoints: [MODULE_PATH], bundle: true, platform: 'browser', format: 'esm', write: false, metafile: true, logLevel: 'silent' });
    assert.deepEqual(Object.keys((r.metafile as Metafile).inputs), ['lambdas/engine/schema-validator.js']);
    const bundled = (await import(`data:text/javascript;base64,${Buffer.from(r.outputFiles[0]!.text).toString('base64')}`)) as { validate: typeof validate };
    assert.equal(bundled.validate({ target: { url: 'https://example.com/' }, extract: { fields: [{ name: 'a' }] } }), true);
    assert.equal(bundled.validate({ target: {} }), false);
  });

  it('parseConfig of a config without the optional keys returns the schema\'s defaults filled in', () => {
    const c = parseConfig('target: { url: "https://example.com/" }\nextract:\n  container: li\n  fields:\n    - { name: title }\n');
    assert.equal(c.target.engine, schemaAt('target', 'engine').default);
    assert.equal(c.target.browser.timeout, (schemaAt('target', 'browser').properties as Record<string, Mapping>).timeout!.default);
    assert.equal(c.extract.type, schemaAt('extract', 'type').default);
    const field = (configSchema.definitions.field.properties as Record<string, Mapping>);
    assert.equal(c.extract.fields[0]!.type, field.type!.default);
    assert.equal(c.extract.fields[0]!.multiple, field.multiple!.default);
    assert.deepEqual(c.actions, schemaAt('actions').default);
    assert.equal(c.output.format, schemaAt('output', 'format').default);
    assert.equal(c.output.deduplicate, schemaAt('output', 'deduplicate').default);
    for (const v of [c.target.engine, c.extract.type, c.extract.fields[0]!.type, c.output.format]) assert.notEqual(v, undefined);
  });

  it('the validator itself writes the defaults into the data it is given', () => {
    const data: Mapping = { target: { url: 'https://example.com/' }, extract: { fields: [{ name: 'a' }] } };
    assert.equal(validate(data), true);
    assert.equal(validate.errors, null);
    assert.equal((data.target as Mapping).engine, schemaAt('target', 'engine').default);
    assert.equal(((data.extract as Mapping).fields as Mapping[])[0]!.type, (configSchema.definitions.field.properties.type as Mapping).default);
  });

  it('errors are those of the last call: a valid call after an invalid one has none', () => {
    assert.equal(validate({ target: 1 }), false);
    assert.ok(Array.isArray(validate.errors) && validate.errors.length >= 2, 'target\'s type and the missing extract');
    assert.ok(validate.errors.some((e) => e.keyword === 'required' && e.instancePath === ''), 'extract missing');
    assert.ok(validate.errors.some((e) => e.keyword === 'type' && e.instancePath === '/target'), 'target not a mapping');
    assert.equal(validate({ target: { url: 'https://example.com/' }, extract: { fields: [{ name: 'a' }] } }), true);
    assert.equal(validate.errors, null);
  });

  it('counts characters as code points (ajv\'s ucs2length, inlined): 60 emoji fit a 100-character name, 101 do not', () => {
    const withName = (name: string) => ({ target: { url: 'https://example.com/' }, extract: { fields: [{ name }] } });
    const maxLength = (configSchema.definitions.field.properties.name as Mapping).maxLength as number;
    assert.ok('\u{1F600}'.repeat(60).length > maxLength, '60 emoji are more than maxLength UTF-16 code units');
    assert.equal(validate(withName('\u{1F600}'.repeat(60))), true);
    assert.equal(validate(withName('\u{1F600}'.repeat(maxLength + 1))), false);
    assert.deepEqual(validate.errors?.map((e) => [e.instancePath, e.keyword]), [['/extract/fields/0/name', 'maxLength']]);
  });

  it('answers as ajv compiling the schema at run time does: verdict, errors and defaults, examples and broken variants', (t) => {
    const compiled = new Ajv(CONFIG_AJV_OPTIONS).compile(configSchema);
    const examples = exampleConfigs();
    const cases: Array<[string, unknown]> = [
      ...examples,
      ...examples.flatMap(([name, c]) => brokenConfigs(name, c)),
      ['null', null], ['a list', [1, 2]], ['a string', 'target'], ['empty mapping', {}],
      ['500 fields', { target: { url: 'https://example.com/' }, extract: { fields: Array.from({ length: 500 }, (_, i) => ({ name: `f${i}`, type: i % 2 ? 'bogus' : 'text' })) } }],
    ];
    let valid = 0;
    const keywords = new Set<string>();
    for (const [name, data] of cases) {
      const ours = outcome(validate, data);
      const theirs = outcome(compiled, data);
      assert.deepEqual(ours, theirs, name);
      if (ours.valid) valid++;
      for (const e of (ours.errors ?? []) as Array<{ keyword: string }>) keywords.add(e.keyword);
    }
    // The docs' whole configs are valid, but for the one config-language.md shows refused (its `contianer` typo);
    // fragments may hold placeholders (`fields: [ … ]`).
    const whole = examples.filter(([name]) => !name.includes('(in ') && !name.includes('(as '));
    assert.ok(whole.length >= 3, `${whole.length} whole configs`);
    const refused = whole.filter(([, data]) => !outcome(validate, data).valid).map(([name]) => name);
    assert.equal(refused.length, 1, refused.join(', '));
    assert.match(JSON.stringify(whole.find(([name]) => name === refused[0])![1]), /"contianer"/);
    t.diagnostic(`${examples.length} examples, ${cases.length} cases: ${valid} valid, ${cases.length - valid} invalid; error keywords: ${[...keywords].sort().join(', ')}`);
    assert.ok(cases.length > 5000, `${cases.length} cases`);
    assert.ok(valid > 100 && cases.length - valid > 1000, `${valid} valid, ${cases.length - valid} invalid`);
    for (const k of ['type', 'required', 'additionalProperties', 'enum', 'minLength', 'maxLength', 'minimum', 'pattern', 'anyOf', 'if']) {
      assert.ok(keywords.has(k), `some case fails the ${k} keyword`);
    }
  });
});
