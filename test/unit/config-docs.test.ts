/**
 * docs/config-language.md against the config schema (lambdas/engine/schema.ts), the one source of keys
 * and defaults: every key table of the docs lists exactly the schema's keys with the schema's defaults
 * and required keys, the type tables list the schema's types, every "default X" the docs mention
 * (in prose or in a YAML comment) is the schema's, and the example of a refused config is what
 * parseConfig answers.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { configSchema } from '../../lambdas/engine/schema.ts';
import { ConfigError, parseConfig } from '../../lambdas/engine/config.ts';

const DOC_PATH = path.resolve(import.meta.dirname, '../../docs/config-language.md');
const doc = fs.readFileSync(DOC_PATH, 'utf8');
const lines = doc.split('\n');

/** The parts of a JSON Schema this test reads. */
interface Node {
  type?: string;
  properties?: Record<string, Node>;
  required?: readonly string[];
  default?: unknown;
  enum?: readonly unknown[];
  items?: Node & { $ref?: string };
  allOf?: ReadonlyArray<{ if: Node; then: Node }>;
}
const root = configSchema as unknown as Node & { definitions: Record<string, Node> };

/** The schema node each `## ` section of the docs documents. */
const SECTIONS: Record<string, Node> = {
  'Top level': root,
  target: root.properties!.target!,
  extract: root.properties!.extract!,
  Fields: root.definitions.field!,
  detail_fields: root.properties!.detail_fields!,
  pagination: root.properties!.pagination!,
  categories: root.properties!.categories!,
  actions: root.definitions.action!,
  output: root.properties!.output!,
};

/** What the docs must say of one key: whether it is required, and its default (also one set in a `then`). */
interface KeyFacts { required: boolean; default?: unknown; hasDefault: boolean; enum?: readonly unknown[] }

/**
 * The keys of a schema node by dotted path (`browser.timeout`): nested mappings are documented in the
 * same table, except at the top level, whose sections document them.
 */
function keysOf(node: Node, nested: boolean, prefix = ''): Map<string, KeyFacts> {
  const out = new Map<string, KeyFacts>();
  for (const [key, prop] of Object.entries(node.properties ?? {})) {
    const conditional = (node.allOf ?? []).map((b) => b.then.properties?.[key]).find((p) => p && 'default' in p);
    const withDefault = 'default' in prop ? prop : conditional;
    out.set(prefix + key, {
      required: node.required?.includes(key) ?? false,
      hasDefault: withDefault !== undefined,
      default: withDefault?.default,
      enum: prop.enum,
    });
    if (nested && prop.properties) for (const [k, v] of keysOf(prop, true, `${prefix}${key}.`)) out.set(k, v);
  }
  return out;
}

/** The `## ` section each line of the docs is in. */
const sectionOfLine: string[] = [];
{
  let current = '';
  for (const line of lines) {
    const m = /^## (.+)$/.exec(line);
    if (m) current = m[1]!.trim();
    sectionOfLine.push(current);
  }
}

/** Lines inside ``` fences, with the fence's language. */
const fenceOfLine: Array<string | null> = [];
{
  let lang: string | null = null;
  for (const line of lines) {
    const m = /^```(\w*)/.exec(line);
    if (m) { fenceOfLine.push(null); lang = lang === null ? m[1]! : null; continue; }
    fenceOfLine.push(lang);
  }
}

/** Every Markdown table of the docs: its section, header cells and rows of cells. */
function tables(): Array<{ section: string; header: string[]; rows: string[][]; line: number }> {
  const out: Array<{ section: string; header: string[]; rows: string[][]; line: number }> = [];
  const cells = (l: string) => l.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map((c) => c.trim());
  for (let i = 0; i < lines.length; i++) {
    if (fenceOfLine[i] !== null || !lines[i]!.startsWith('|') || !/^\|[-| ]+\|$/.test(lines[i + 1] ?? '')) continue;
    const rows: string[][] = [];
    let j = i + 2;
    for (; j < lines.length && lines[j]!.startsWith('|'); j++) rows.push(cells(lines[j]!));
    out.push({ section: sectionOfLine[i]!, header: cells(lines[i]!), rows, line: i + 1 });
    i = j;
  }
  return out;
}

/** The backticked words of a Markdown cell or text. */
const ticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** A default as the docs write it (`auto`, `15000`, `""`, `[]`), read as YAML. */
const valueOf = (text: string): unknown => parseYaml(text.replace(/^`|`$/g, ''));

describe('docs/config-language.md: key tables equal the schema', () => {
  const keyTables = tables().filter((t) => t.header.join('|') === 'Key|Default|Meaning');

  it('every section that documents a part of the config has one key table', () => {
    assert.deepEqual(keyTables.map((t) => t.section).sort(), Object.keys(SECTIONS).sort());
  });

  for (const table of keyTables) {
    const node = SECTIONS[table.section]!;
    const schemaKeys = keysOf(node, node !== root);
    it(`${table.section}: the same keys as the schema, with its defaults and required keys (table at line ${table.line})`, () => {
      const documented = new Map<string, string>();
      for (const [keyCell, defaultCell] of table.rows) {
        const keys = ticked(keyCell!);
        assert.ok(keys.length, `a key in ${keyCell}`);
        for (const k of keys) documented.set(k, defaultCell!);
      }
      assert.deepEqual([...documented.keys()].sort(), [...schemaKeys.keys()].sort(), 'documented keys = schema properties');
      for (const [key, cell] of documented) {
        const facts = schemaKeys.get(key)!;
        if (facts.required) assert.equal(cell, 'required', `${table.section} ${key} is required`);
        else if (!facts.hasDefault) assert.equal(cell, '—', `${table.section} ${key} has no default`);
        else {
          const first = ticked(cell)[0];
          assert.ok(first !== undefined, `${table.section} ${key}: the default, in backticks, in "${cell}"`);
          assert.deepEqual(valueOf(first), facts.default, `${table.section} ${key}: default`);
        }
      }
    });
  }
});

describe('docs/config-language.md: type tables equal the schema', () => {
  const typeTables = tables().filter((t) => t.header[0] === 'type');

  it('extract types: list, single, table, and which need a container', () => {
    const t = typeTables.find((x) => x.section === 'extract');
    assert.ok(t);
    assert.deepEqual(t.rows.map((r) => ticked(r[0]!)[0]), [...root.properties!.extract!.properties!.type!.enum!]);
  });

  it('field types, each with the extra key it requires', () => {
    const field = root.definitions.field!;
    const t = typeTables.find((x) => x.section === 'Fields');
    assert.ok(t);
    assert.deepEqual(t.rows.map((r) => ticked(r[0]!)[0]), [...field.properties!.type!.enum!]);
    for (const row of t.rows) {
      const type = ticked(row[0]!)[0]!;
      const needs = (field.allOf ?? []).filter((b) => (b.if.properties?.type as { const?: string } | undefined)?.const === type).flatMap((b) => b.then.required ?? []);
      const documented = /\(required\)/.test(row[2]!) ? ticked(row[2]!) : [];
      assert.deepEqual(documented, needs, `extra key of ${type}`);
    }
  });
});

/** A "default X" the docs write: its line (0-based), the value, the text before it in its paragraph or bullet. */
interface Mention { line: number; value: string; before: string; inYaml: boolean }

/** "(default X", ", default X" or "# default X": how the docs state a default, not "the field's default and …". */
const DEFAULT_MENTION = /(?:\(|, |#\s*)default:?\s+(`[^`]+`|"[^"]*"|-?[\w.]+)/g;

/** Every "default X" the docs write outside the key tables: in YAML comments and in prose. */
function defaultMentions(): Mention[] {
  const out: Mention[] = [];
  // Prose is read a paragraph or bullet at a time, so that a mention may wrap ("(default\n  2000 ms)").
  let block: { start: number; text: string } | null = null;
  const flush = () => {
    if (!block) return;
    for (const m of block.text.matchAll(DEFAULT_MENTION)) {
      const line = block.start + block.text.slice(0, m.index).split('\n').length - 1;
      out.push({ line, value: m[1]!, before: block.text.slice(0, m.index), inYaml: false });
    }
    block = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (fenceOfLine[i] === 'yaml') {
      const hash = line.indexOf('#');
      if (hash === -1) continue;
      for (const m of line.slice(hash).matchAll(DEFAULT_MENTION)) out.push({ line: i, value: m[1]!, before: line.slice(0, hash), inYaml: true });
      continue;
    }
    if (fenceOfLine[i] !== null || line.trim() === '' || /^(#|\||```)/.test(line)) { flush(); continue; }
    if (/^\s*(-|\d+\.) /.test(line)) flush();
    block = block ? { start: block.start, text: `${block.text}\n${line}` } : { start: i, text: line };
  }
  flush();
  return out;
}

/** The schema facts of a dotted key path under a node (following `fields[]` to the field definition). */
function factsAt(node: Node, keyPath: string[]): KeyFacts | undefined {
  let n: Node | undefined = node;
  for (const [i, key] of keyPath.entries()) {
    if (!n) return undefined;
    if (i === keyPath.length - 1) return keysOf(n, false).get(key);
    const next: Node | undefined = n.properties?.[key];
    const ref: string | undefined = next?.items?.$ref;
    n = ref ? root.definitions[ref.split('/').at(-1)!] : next;
  }
  return undefined;
}

/** The key path of a YAML line in a fenced block, from the indentation of the lines above it. */
function yamlKeyPath(lineIndex: number): string[] {
  let start = lineIndex;
  while (start > 0 && fenceOfLine[start - 1] !== null) start--;
  const stack: Array<{ indent: number; key: string }> = [];
  for (let i = start; i <= lineIndex; i++) {
    const m = /^(\s*)(- )?([A-Za-z_]+):/.exec(lines[i]!);
    if (!m) continue;
    const indent = m[1]!.length + (m[2] ? 2 : 0);
    while (stack.length && stack.at(-1)!.indent >= indent) stack.pop();
    stack.push({ indent, key: m[3]! });
  }
  return stack.map((s) => s.key);
}

describe('docs/config-language.md: every "default X" it mentions is the schema\'s', () => {
  const mentions = defaultMentions();

  it('finds the mentions (YAML comments and prose)', () => {
    assert.ok(mentions.filter((m) => m.inYaml).length >= 5, 'in YAML comments');
    assert.ok(mentions.filter((m) => !m.inYaml).length >= 2, 'in prose');
  });

  for (const m of mentions) {
    it(`line ${m.line + 1}: default ${m.value}`, () => {
      const section = sectionOfLine[m.line]!;
      const node = SECTIONS[section] ?? root;
      let keyPath: string[];
      let from = node;
      if (m.inYaml) {
        keyPath = yamlKeyPath(m.line);
        // A block that starts at a top-level key ("target:") is read from the top of the schema.
        if (node !== root.definitions.field && node !== root.definitions.action && root.properties![keyPath[0]!]) from = root;
      } else {
        // In prose, the key is the nearest backticked name before the mention. An SAI_ name is a setting
        // of the service (docs/limits.md), not a key of the config.
        const key = ticked(m.before).at(-1) ?? '';
        if (/^SAI_[A-Z_]+$/.test(key)) return;
        keyPath = key.split('.');
      }
      const facts = factsAt(from, keyPath);
      const key = keyPath.join('.');
      assert.ok(facts, `${section}, line ${m.line + 1}: "default ${m.value}" names no key of the schema (nearest: "${key}")`);
      assert.ok(facts.hasDefault, `${key} has no default in the schema`);
      assert.deepEqual(valueOf(m.value), facts.default, `${key}: the docs say default ${m.value}`);
    });
  }

  it('YAML comments listing a key\'s values ("lightweight | heavy | auto") list the schema\'s enum', () => {
    let checked = 0;
    for (let i = 0; i < lines.length; i++) {
      if (fenceOfLine[i] !== 'yaml') continue;
      const m = /#\s*([\w]+(?:\s*\|\s*[\w]+)+)/.exec(lines[i]!);
      if (!m) continue;
      const keyPath = yamlKeyPath(i);
      const node = SECTIONS[sectionOfLine[i]!] ?? root;
      const facts = factsAt(root.properties![keyPath[0]!] ? root : node, keyPath);
      assert.ok(facts?.enum, `line ${i + 1}: ${keyPath.join('.')} has an enum`);
      assert.deepEqual(m[1]!.split('|').map((s) => s.trim()), [...facts.enum], `line ${i + 1}`);
      checked++;
    }
    assert.ok(checked >= 3, `value lists checked: ${checked}`);
  });
});

describe('docs/config-language.md: the refused config of "Errors in a config" is answered as shown', () => {
  it('same paths, places and messages (up to the "…" the docs shorten with)', () => {
    const section = doc.slice(doc.indexOf('## Errors in a config'));
    const yamlBlock = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
    const shown = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!) as { error: string; details: Array<{ path: string; line: number; column: number; message: string }> };
    let err: ConfigError | undefined;
    try { parseConfig(yamlBlock); } catch (e) { err = e as ConfigError; }
    assert.ok(err instanceof ConfigError, 'the example is refused');
    assert.equal(err.message, shown.error);
    assert.deepEqual(err.details.map((d) => [d.path, d.line, d.column]), shown.details.map((d) => [d.path, d.line, d.column]));
    err.details.forEach((d, i) => {
      const [head] = shown.details[i]!.message.split('…');
      assert.ok(d.message.startsWith(head!), `${d.path}: "${d.message}" starts with "${head}"`);
    });
  });
});
