/**
 * parseConfig (lambdas/engine/config.ts): the YAML config language of docs/spec.md parsed into a normalized
 * config with every default filled in, or refused with ConfigError (code `invalid_config`) whose details
 * give, per problem, the config path, the 1-based line and column in the YAML text and a reason.
 * Also browserFeatures / assertLightweight: what only a browser can run, with its path.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertLightweight,
  browserFeatures,
  ConfigError,
  MAX_CONFIG_BYTES,
  MAX_CONFIG_PROBLEMS,
  parseConfig,
  type ConfigProblem,
} from '../../lambdas/engine/config.ts';
import { isCodedError } from '../../lambdas/errors.ts';
import { MAX_CONFIG_DEPTH, MAX_CONFIG_TOKENS, MAX_MAPPING_KEYS } from '../../lambdas/engine/config-source.ts';

/** The ConfigError parseConfig throws for `yaml` (fails the test when the config is accepted). */
function refuse(yaml: string): ConfigError {
  try {
    parseConfig(yaml);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    assert.equal(err.code, 'invalid_config');
    assert.ok(isCodedError(err));
    assert.ok(Array.isArray(err.details) && err.details.length > 0, 'at least one problem');
    for (const d of err.details) {
      assert.equal(typeof d.path, 'string');
      assert.equal(typeof d.message, 'string');
      assert.ok(d.message.length > 0);
    }
    return err;
  }
  assert.fail(`config was accepted:\n${yaml}`);
}

/** The problem at `path` (fails the test when there is none). */
function problemAt(err: ConfigError, path: string): ConfigProblem {
  const found = err.details.find((d) => d.path === path);
  assert.ok(found, `no problem at "${path}"; got ${JSON.stringify(err.details)}`);
  return found;
}

/**
 * 1-based line and column of the `occurrence`-th (1-based) appearance of `marker` in `text`, counted
 * independently of the yaml library, so the expected places come from the text itself.
 */
function where(text: string, marker: string, occurrence = 1): { line: number; column: number } {
  let at = -1;
  for (let i = 0; i < occurrence; i++) {
    at = text.indexOf(marker, at + 1);
    assert.notEqual(at, -1, `marker ${JSON.stringify(marker)} #${occurrence} not in the YAML`);
  }
  const before = text.slice(0, at).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

function assertPlace(p: ConfigProblem, expected: { line: number; column: number }): void {
  assert.deepEqual({ line: p.line, column: p.column }, expected, `place of ${p.path}: ${p.message}`);
}

/** A small valid config with a given rest appended. */
const MINIMAL = `target:
  url: https://quotes.toscrape.com/
extract:
  container: div.quote
  fields:
    - name: text
      selector: span.text
`;

describe('parseConfig on valid configs', () => {
  it('fills every default of the language', () => {
    const c = parseConfig(MINIMAL);
    assert.equal(c.version, '2.0');
    assert.equal(c.target.url, 'https://quotes.toscrape.com/');
    assert.equal(c.target.engine, 'auto');
    assert.equal(c.target.browser.timeout, 15000);
    assert.equal(c.target.browser.wait_selector, undefined);
    assert.equal(c.extract.type, 'list');
    assert.equal(c.extract.container, 'div.quote');
    assert.equal(c.extract.following_siblings, 0);
    assert.deepEqual(c.extract.fields, [{ name: 'text', selector: 'span.text', type: 'text', transform: [], multiple: false }]);
    assert.equal('default' in c.extract.fields[0]!, false, 'no default unless the config gives one');
    assert.deepEqual(c.actions, []);
    assert.deepEqual(c.output, { format: 'json', deduplicate: false });
    assert.equal(c.pagination, undefined);
    assert.equal(c.categories, undefined);
    assert.equal(c.detail_fields, undefined);
  });

  it('fills pagination defaults: max_pages 10, wait_after 0, no stop condition', () => {
    const c = parseConfig(`${MINIMAL}pagination:\n  type: click\n  selector: li.next a\n`);
    assert.deepEqual(c.pagination, { type: 'click', selector: 'li.next a', max_pages: 10, wait_after: 0, stop_condition: {} });
  });

  it('fills categories defaults: container "", link_selector a, link_attribute href, max_categories 50, wait_after 2000', () => {
    const c = parseConfig(`${MINIMAL}categories: {}\n`);
    assert.deepEqual(c.categories, { container: '', link_selector: 'a', link_attribute: 'href', name_selector: '', max_categories: 50, wait_after: 2000 });
    const given = parseConfig(`${MINIMAL}categories:\n  container: .tags-box\n  link_selector: a.tag\n  max_categories: 3\n  wait_after: 0\n`);
    assert.deepEqual(given.categories, { container: '.tags-box', link_selector: 'a.tag', link_attribute: 'href', name_selector: '', max_categories: 3, wait_after: 0 });
  });

  it('keeps what the config gives: every key of the language in one config', () => {
    const c = parseConfig(`version: "2.0"
name: Books
description: every key once
target:
  url: https://books.toscrape.com/
  engine: lightweight
  browser: { wait_selector: article.product_pod, timeout: 5000 }
extract:
  container: article.product_pod
  type: list
  fields:
    - { name: title, selector: h3 a, type: attribute, attribute: title }
    - { name: url, selector: h3 a, type: link }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number], default: 0 }
    - { name: code, selector: p, type: regex, pattern: "(\\\\d+)", default: null }
    - { name: tags, selector: a, multiple: true }
detail_fields:
  fields:
    - { name: upc, selector: "table tr:first-child td" }
pagination:
  type: url
  url_pattern: "/catalogue/page-{page}.html"
  max_pages: 3
  wait_after: 100
  stop_condition: { max_items: 50 }
output:
  format: json
  deduplicate_fields: [url]
  limit: 40
`);
    assert.equal(c.name, 'Books');
    assert.equal(c.description, 'every key once');
    assert.deepEqual(c.target, { url: 'https://books.toscrape.com/', engine: 'lightweight', browser: { timeout: 5000, wait_selector: 'article.product_pod' }, robots: 'obey', politeness: { mode: 'auto', delay: 0, max_delay: 30000 } });
    assert.deepEqual(c.extract.fields.map((f) => f.type), ['attribute', 'link', 'text', 'regex', 'text']);
    assert.equal(c.extract.fields[0]!.attribute, 'title');
    assert.deepEqual(c.extract.fields[2]!.transform, ['strip_currency', 'to_number']);
    assert.equal(c.extract.fields[2]!.default, 0);
    assert.equal(c.extract.fields[3]!.pattern, '(\\d+)');
    assert.ok('default' in c.extract.fields[3]! && c.extract.fields[3].default === null, 'a null default is kept as null');
    assert.equal(c.extract.fields[4]!.multiple, true);
    assert.deepEqual(c.detail_fields?.fields.map((f) => f.name), ['upc']);
    assert.deepEqual(c.pagination, { type: 'url', url_pattern: '/catalogue/page-{page}.html', max_pages: 3, wait_after: 100, stop_condition: { max_items: 50 } });
    assert.deepEqual(c.output, { format: 'json', deduplicate: true, deduplicate_fields: ['url'], limit: 40 });
  });

  it('reads version written as a bare 2.0 number', () => {
    assert.equal(parseConfig(`version: 2.0\n${MINIMAL}`).version, '2.0');
  });

  it('deduplicate_fields implies deduplicate unless deduplicate is false', () => {
    assert.equal(parseConfig(`${MINIMAL}output: { deduplicate_fields: [text] }\n`).output.deduplicate, true);
    assert.equal(parseConfig(`${MINIMAL}output: { deduplicate: false, deduplicate_fields: [text] }\n`).output.deduplicate, false);
  });

  it('single needs no container; table needs no fields', () => {
    const single = parseConfig('target: { url: "https://e.com/" }\nextract: { type: single, fields: [{ name: h1, selector: h1 }] }\n');
    assert.equal(single.extract.type, 'single');
    assert.equal(single.extract.container, undefined);
    const table = parseConfig('target: { url: "https://e.com/" }\nextract: { type: table, container: table.quotes }\n');
    assert.deepEqual(table.extract.fields, []);
  });

  it('fills action defaults: wait_after 500 ms for every action, direction down and amount full for scroll only', () => {
    const c = parseConfig(`${MINIMAL}actions:\n  - { type: scroll }\n  - { type: click, selector: button.more }\n  - { type: scroll, direction: up, amount: 300, wait_after: 0 }\n`);
    assert.deepEqual(c.actions, [
      { type: 'scroll', direction: 'down', amount: 'full', wait_after: 500 },
      { type: 'click', selector: 'button.more', wait_after: 500 },
      { type: 'scroll', direction: 'up', amount: 300, wait_after: 0 },
    ]);
  });

  it('a YAML alias shares no defaults between the places that use it', () => {
    // Ajv writes defaults into the data; `*empty` must not receive target.browser's timeout and then
    // be refused in pagination.stop_condition for it.
    const c = parseConfig(`target:
  url: https://e.com/
  browser: &empty {}
extract: { container: div, fields: [{ name: a }] }
pagination: { type: click, selector: a.next, stop_condition: *empty }
`);
    assert.deepEqual(c.target.browser, { timeout: 15000 });
    assert.deepEqual(c.pagination?.stop_condition, {});
  });

  it('the result is plain data (it crosses process boundaries)', () => {
    const c = parseConfig(`${MINIMAL}pagination: { type: click, selector: "li.next a" }\n`);
    assert.deepEqual(structuredClone(c), c);
  });
});

describe('parseConfig: problems with path, line and column', () => {
  const yaml = `version: "2.0"
name: Quotes
target:
  url: https://quotes.toscrape.com/
  engine: lightweight
extract:
  container: div.quote
  fields:
    - name: text
      selector: span.text
    - name: author
      selector: small.author
      type: txt
`;

  it('a bad enum value points at its key', () => {
    const err = refuse(yaml);
    assert.equal(err.details.length, 1);
    const p = problemAt(err, 'extract.fields[1].type');
    assertPlace(p, where(yaml, 'type: txt'));
    assert.deepEqual({ line: p.line, column: p.column }, { line: 13, column: 7 });
    assert.match(p.message, /must be one of "text", "attribute", .*"eval"; got string "txt"/);
    assert.match(err.message, /^Invalid config: extract\.fields\[1\]\.type: .* \(line 13, column 7\)$/);
  });

  it('an unknown key, with the place of the key', () => {
    const text = yaml.replace('  container: div.quote', '  contianer: div.quote').replace('type: txt', 'type: text');
    const err = refuse(text);
    const p = problemAt(err, 'extract.contianer');
    assertPlace(p, where(text, 'contianer'));
    assert.equal(p.message, 'unknown key "contianer" in extract');
  });

  it('an unknown key at the top level', () => {
    const text = `${MINIMAL}outputs: { limit: 3 }\n`;
    const p = problemAt(refuse(text), 'outputs');
    assertPlace(p, where(text, 'outputs'));
    assert.match(p.message, /unknown key "outputs" in the top level/);
  });

  it('a bad engine value', () => {
    const text = yaml.replace('engine: lightweight', 'engine: turbo').replace('type: txt', 'type: text');
    const p = problemAt(refuse(text), 'target.engine');
    assertPlace(p, where(text, 'engine: turbo'));
    assert.match(p.message, /must be one of "lightweight", "heavy", "auto"; got string "turbo"/);
  });

  it('a missing required key points at the mapping that lacks it', () => {
    const noUrl = 'name: x\ntarget:\n  engine: auto\nextract: { container: div, fields: [{ name: a }] }\n';
    const p = problemAt(refuse(noUrl), 'target');
    assertPlace(p, where(noUrl, 'target:'));
    assert.equal(p.message, 'missing required key "url"');

    const noName = `${MINIMAL}    - selector: small.author\n      type: text\n`;
    const q = problemAt(refuse(noName), 'extract.fields[1]');
    assertPlace(q, where(noName, 'selector: small.author'));
    assert.equal(q.message, 'missing required key "name"');

    const noTarget = 'extract: { container: div, fields: [{ name: a }] }\n';
    assert.match(refuse(noTarget).details[0]!.message, /missing required key "target"/);
    assert.match(refuse('target: { url: "https://e.com/" }\n').details[0]!.message, /missing required key "extract"/);
  });

  it('type-specific required keys: attribute, regex pattern, eval script, click selector, url url_pattern', () => {
    const cases: Array<[string, string, string]> = [
      ['extract: { container: div, fields: [{ name: a, type: attribute }] }', 'extract.fields[0]', 'attribute'],
      ['extract: { container: div, fields: [{ name: a, type: regex }] }', 'extract.fields[0]', 'pattern'],
      ['extract: { container: div, fields: [{ name: a, type: eval }] }', 'extract.fields[0]', 'script'],
      ['extract: { container: div, fields: [{ name: a }] }\npagination: { type: click }', 'pagination', 'selector'],
      ['extract: { container: div, fields: [{ name: a }] }\npagination: { type: url }', 'pagination', 'url_pattern'],
      ['extract: { container: div, fields: [{ name: a }] }\nactions: [{ type: type, selector: input }]', 'actions[0]', 'value'],
    ];
    for (const [rest, path, key] of cases) {
      const p = problemAt(refuse(`target: { url: "https://e.com/" }\n${rest}\n`), path);
      assert.equal(p.message, `missing required key "${key}"`, rest);
    }
  });

  it('wrong value types, with the got value in the message', () => {
    const text = `${MINIMAL}pagination:\n  type: click\n  selector: li.next a\n  max_pages: ten\n`;
    const p = problemAt(refuse(text), 'pagination.max_pages');
    assertPlace(p, where(text, 'max_pages'));
    assert.equal(p.message, 'must be an integer; got string "ten"');
    const list = problemAt(refuse('target: [1, 2]\nextract: { container: div, fields: [{ name: a }] }\n'), 'target');
    assert.equal(list.message, 'must be a mapping; got a list');
    const transform = `${MINIMAL}      transform: strip\n`;
    const t = problemAt(refuse(transform), 'extract.fields[0].transform');
    assert.equal(t.message, 'must be a list; got string "strip"');
    assertPlace(t, where(transform, 'transform'));
  });

  it('ranges: max_pages at least 1, limit at least 1, timeout at most 120000', () => {
    assert.match(problemAt(refuse(`${MINIMAL}pagination: { type: click, selector: a, max_pages: 0 }\n`), 'pagination.max_pages').message, />= 1/);
    assert.match(problemAt(refuse(`${MINIMAL}output: { limit: 0 }\n`), 'output.limit').message, />= 1/);
    assert.match(problemAt(refuse('target: { url: "https://e.com/", browser: { timeout: 999999 } }\nextract: { container: div, fields: [{ name: a }] }\n'), 'target.browser.timeout').message, /<= 120000/);
  });

  it('lists every problem, each at its own place', () => {
    const text = `target:
  url: https://e.com/
  engin: heavy
extract:
  container: div
  fields:
    - { name: a, type: texte }
pagination:
  type: jump
`;
    const err = refuse(text);
    assertPlace(problemAt(err, 'target.engin'), where(text, 'engin'));
    assertPlace(problemAt(err, 'extract.fields[0].type'), where(text, 'type: texte'));
    assertPlace(problemAt(err, 'pagination.type'), where(text, 'type: jump'));
    assert.equal(err.details.length, 3);
    assert.match(err.message, /and 2 more problem\(s\)$/);
  });
});

describe('parseConfig: every problem at once', () => {
  it('a misspelt key is an unknown key and a missing required key', () => {
    const text = MINIMAL.replace('container: div.quote', 'contianer: div.quote');
    const err = refuse(text);
    const unknown = problemAt(err, 'extract.contianer');
    assert.equal(unknown.message, 'unknown key "contianer" in extract');
    assertPlace(unknown, where(text, 'contianer'));
    const missing = problemAt(err, 'extract');
    assert.match(missing.message, /^missing required key "container"/);
    assertPlace(missing, where(text, 'extract:'));
    assert.equal(err.details.length, 2);
  });

  it('each bad transform of a list is its own problem, at its index', () => {
    const text = `${MINIMAL}      transform: [foo, "split:a:x", "regex:("]\n`;
    const err = refuse(text);
    assert.deepEqual(err.details.map((d) => d.path), ['extract.fields[0].transform[0]', 'extract.fields[0].transform[1]', 'extract.fields[0].transform[2]']);
    assert.match(err.details[0]!.message, /unknown transform "foo"/);
    assert.match(err.details[1]!.message, /INDEX must be an integer, got "x"/);
    assert.match(err.details[2]!.message, /invalid regular expression/);
    assertPlace(err.details[0]!, where(text, 'foo'));
    assertPlace(err.details[1]!, where(text, '"split:a:x"'));
    assertPlace(err.details[2]!, where(text, '"regex:("'));
  });

  it('schema and semantic problems together, in document order', () => {
    const text = `target:
  url: ftp://e.com/
  engine: turbo
extract:
  container: "div>>"
  fields:
    - { name: a, selector: "p[[" , type: txt }
    - { name: a, transform: [nope] }
pagination: { type: url, url_pattern: "/page/2/", max_pages: 0 }
output: { deduplicate_fields: [b] }
`;
    const err = refuse(text);
    assert.deepEqual(err.details.map((d) => d.path), [
      'target.url', 'target.engine', 'extract.container',
      'extract.fields[0].selector', 'extract.fields[0].type',
      'extract.fields[1].name', 'extract.fields[1].transform[0]',
      'pagination.url_pattern', 'pagination.max_pages',
      'output.deduplicate_fields[0]',
    ]);
    const places = err.details.map((d) => [d.line!, d.column!] as const);
    assert.deepEqual(places, [...places].sort((a, b) => a[0] - b[0] || a[1] - b[1]), 'sorted by line, then column');
    assert.match(err.message, /^Invalid config: target\.url: must be an absolute http or https URL; got "ftp:\/\/e\.com\/" \(line 2, column 3\) and 9 more problem\(s\)$/);
  });

  it('a value of the wrong type is one problem, not also a semantic one', () => {
    const err = refuse('target: { url: 42 }\nextract: { container: [div], fields: [{ name: a, selector: 3, transform: [1] }] }\n');
    assert.deepEqual(err.details.map((d) => `${d.path}: ${d.message}`), [
      'target.url: must be a string; got number 42',
      'extract.container: must be a string; got a list',
      'extract.fields[0].selector: must be a string; got number 3',
      'extract.fields[0].transform[0]: must be a string; got number 1',
    ]);
  });

  it('alternatives are one problem that names each (scroll amount: "full" or a number of pixels)', () => {
    const p = problemAt(refuse(`${MINIMAL}actions: [{ type: scroll, amount: half }]\n`), 'actions[0].amount');
    assert.equal(p.message, 'must be "full" or an integer; got string "half"');
  });

  it(`lists at most ${MAX_CONFIG_PROBLEMS} problems and says how many there are`, () => {
    const fields = Array.from({ length: 80 }, (_, i) => `    - { name: f${i}, transform: [nope${i}] }`).join('\n');
    const err = refuse(`target: { url: "https://e.com/" }\nextract:\n  container: div\n  fields:\n${fields}\n`);
    assert.equal(err.details.length, MAX_CONFIG_PROBLEMS);
    assert.equal(err.details[0]!.path, 'extract.fields[0].transform[0]');
    assert.equal(err.details.at(-1)!.path, `extract.fields[${MAX_CONFIG_PROBLEMS - 1}].transform[0]`);
    assert.match(err.message, new RegExp(`and 79 more problem\\(s\\); details list the first ${MAX_CONFIG_PROBLEMS}$`));
  });
});

describe('parseConfig: YAML syntax errors', () => {
  it('a tab used as indentation, with line and column', () => {
    const text = 'target:\n  url: https://e.com/\nextract:\n\tcontainer: div\n';
    const err = refuse(text);
    assert.equal(err.details[0]!.path, '');
    assert.deepEqual({ line: err.details[0]!.line, column: err.details[0]!.column }, { line: 4, column: 1 });
    assert.match(err.details[0]!.message, /^YAML syntax: .*tab/i);
  });

  it('a mapping key indented out of line', () => {
    const text = 'target:\n  url: https://e.com/\n extract: x\n';
    const err = refuse(text);
    assert.equal(err.details[0]!.line, 3);
    assert.match(err.details[0]!.message, /^YAML syntax: /);
    assert.match(err.message, /\(line 3, column \d+\)/);
  });

  it('a key given twice, at the second, naming the line of the first', () => {
    const text = `${MINIMAL}target:\n  url: https://other.example/\n`;
    const err = refuse(text);
    assertPlace(err.details[0]!, where(text, 'target:', 2));
    assert.match(err.details[0]!.message, /^duplicate key "target" \(first at line 1\): keys of a mapping must be unique$/);
  });

  it('every duplicate key, in flow and block mappings, at any depth', () => {
    const text = `${MINIMAL}      selector: again\n    - { name: b, selector: c, name: d }\n`;
    const err = refuse(text);
    assert.deepEqual(err.details.map((d) => [d.line, d.message.replace(/: keys of .*/, '')]), [
      [where(text, 'selector: again').line, `duplicate key "selector" (first at line ${where(text, 'selector: span').line})`],
      [where(text, 'name: d').line, `duplicate key "name" (first at line ${where(text, 'name: d').line})`],
    ]);
  });

  it('a document that is not a mapping', () => {
    for (const text of ['- target\n- extract\n', 'just a string\n', '42\n']) {
      const err = refuse(text);
      assert.match(err.details[0]!.message, /a config is a YAML mapping/, text);
    }
  });

  it('an alias bomb is refused, not expanded', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
    const started = Date.now();
    const err = refuse(`${lines.join('\n')}\n${MINIMAL}`);
    assert.ok(Date.now() - started < 2000, 'refused quickly');
    // Refused for the aliases themselves, before the unknown keys a..h are even looked at.
    assert.match(err.details[0]!.message, /alias/i);
  });
});

describe('parseConfig: semantic checks', () => {
  it('an invalid CSS selector, at the selector key', () => {
    const text = `${MINIMAL}    - name: price\n      selector: "p.price[["\n`;
    const p = problemAt(refuse(text), 'extract.fields[1].selector');
    assertPlace(p, where(text, 'selector: "p.price[["'));
    assert.match(p.message, /invalid CSS selector "p\.price\[\["/);
  });

  it('invalid selectors in container, pagination, categories and actions', () => {
    const err = refuse(`target: { url: "https://e.com/" }
extract: { container: "div>>", fields: [{ name: a }] }
pagination: { type: click, selector: "a:nope(" }
categories: { link_selector: "a[", name_selector: "!!" }
`);
    for (const path of ['extract.container', 'pagination.selector', 'categories.link_selector', 'categories.name_selector']) {
      assert.match(problemAt(err, path).message, /invalid CSS selector/, path);
    }
  });

  it('an invalid regex pattern, at the pattern key', () => {
    const text = `${MINIMAL}    - name: n\n      type: regex\n      pattern: "(\\\\d+"\n`;
    const p = problemAt(refuse(text), 'extract.fields[1].pattern');
    assertPlace(p, where(text, 'pattern:'));
    assert.match(p.message, /invalid regular expression/);
  });

  it('a regex RE2 cannot run (backreference, lookahead, lookbehind) is refused at validation, at its place, naming RE2', () => {
    const text = `${MINIMAL}      transform: [strip, "regex:(\\\\w)\\\\1"]
    - name: n
      type: regex
      pattern: "(?<=Price: )\\\\d+"
    - name: m
      selector: p
      transform: ["regex:x(?!y)"]
`;
    const err = refuse(text);
    assert.deepEqual(err.details.map((d) => d.path), ['extract.fields[0].transform[1]', 'extract.fields[1].pattern', 'extract.fields[2].transform[0]']);
    const [backref, lookbehind, lookahead] = err.details as [ConfigProblem, ConfigProblem, ConfigProblem];
    assertPlace(backref, where(text, '"regex:(\\\\w)'));
    assert.match(backref.message, /backreferences \(\\1\) are not supported \(RE2 syntax/);
    assertPlace(lookbehind, where(text, 'pattern:'));
    assert.match(lookbehind.message, /lookbehind .* not supported \(RE2 syntax/);
    assertPlace(lookahead, where(text, '"regex:x(?!y)"'));
    assert.match(lookahead.message, /lookahead .* not supported/);
    assert.match(err.message, /^Invalid config: extract\.fields\[0\]\.transform\[1\]: regex:\(\\w\)\\1: invalid regular expression/);
    // The catastrophic patterns of issue 24 are valid RE2: accepted (they run in linear time).
    parseConfig(`${MINIMAL}      transform: ["regex:^(a+)+$", "regex:(a|aa)*b", "regex:(?i)^\\\\s*price\\\\s*:\\\\s*([\\\\s\\\\S]*)$"]\n`);
  });

  it('a regex too large for the linear-time bound (RE2 program of more than 2,000 instructions) is refused', () => {
    const text = `${MINIMAL}    - name: n\n      type: regex\n      pattern: "${'(?:abc|def)'.repeat(400)}"\n`;
    const p = problemAt(refuse(text), 'extract.fields[1].pattern');
    assertPlace(p, where(text, 'pattern:'));
    assert.match(p.message, /is too large: \d+ RE2 instructions, at most 2000/);
  });

  it('a bad transform: the path carries the index of the transform, the place is that list item', () => {
    const text = `${MINIMAL}    - name: price
      selector: p.price_color
      transform:
        - strip_currency
        - to_number
        - "split:,"
`;
    const p = problemAt(refuse(text), 'extract.fields[1].transform[2]');
    assertPlace(p, where(text, '"split:,"'));
    assert.match(p.message, /split needs DELIM and INDEX/);

    const flow = `${MINIMAL}      transform: [strip, to_int]\n`;
    const q = problemAt(refuse(flow), 'extract.fields[0].transform[1]');
    assertPlace(q, where(flow, 'to_int'));
    assert.match(q.message, /unknown transform "to_int"/);
  });

  it('detail_fields need a link field (a non-multiple one) in extract.fields', () => {
    const text = `${MINIMAL}detail_fields:\n  fields:\n    - { name: born, selector: .author-born-date }\n`;
    const p = problemAt(refuse(text), 'detail_fields');
    assertPlace(p, where(text, 'detail_fields'));
    assert.match(p.message, /needs a field of type link/);
    const multiple = `${MINIMAL}    - { name: links, selector: a, type: link, multiple: true }\ndetail_fields:\n  fields:\n    - { name: born, selector: .x }\n`;
    problemAt(refuse(multiple), 'detail_fields');
    const ok = `${MINIMAL}    - { name: about, selector: "span a", type: link }\ndetail_fields:\n  fields:\n    - { name: born, selector: .x }\n`;
    assert.equal(parseConfig(ok).detail_fields?.fields[0]?.name, 'born');
  });

  it('field names: unique, not _category…, detail names distinct from item names', () => {
    assert.match(problemAt(refuse(`${MINIMAL}    - { name: text, selector: p }\n`), 'extract.fields[1].name').message, /duplicate field name "text"/);
    assert.match(problemAt(refuse(`${MINIMAL}    - { name: _category, selector: p }\n`), 'extract.fields[1].name').message, /reserved/);
    const clash = `${MINIMAL}    - { name: u, selector: a, type: link }\ndetail_fields:\n  fields:\n    - { name: text, selector: p }\n`;
    assert.match(problemAt(refuse(clash), 'detail_fields.fields[0].name').message, /already a field of extract\.fields/);
  });

  it('url pagination without {page} in url_pattern', () => {
    const text = `${MINIMAL}pagination:\n  type: url\n  url_pattern: https://quotes.toscrape.com/page/2/\n`;
    const p = problemAt(refuse(text), 'pagination.url_pattern');
    assertPlace(p, where(text, 'url_pattern'));
    assert.equal(p.message, 'must contain the placeholder {page}');
  });

  it('url_pattern may be relative to target.url, but not another scheme', () => {
    assert.equal(parseConfig(`${MINIMAL}pagination: { type: url, url_pattern: "page/{page}/" }\n`).pagination?.url_pattern, 'page/{page}/');
    assert.match(problemAt(refuse(`${MINIMAL}pagination: { type: url, url_pattern: "ftp://e.com/{page}" }\n`), 'pagination.url_pattern').message, /http or https/);
  });

  it('target.url must be an absolute http(s) URL', () => {
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', '/relative/path', 'not a url', 'data:text/html,hi']) {
      const text = `target:\n  url: "${url}"\nextract: { container: div, fields: [{ name: a }] }\n`;
      const p = problemAt(refuse(text), 'target.url');
      assertPlace(p, where(text, 'url:'));
      assert.match(p.message, /absolute http or https URL/, url);
    }
    assert.equal(parseConfig('target: { url: "  http://example.com/x  " }\nextract: { container: div, fields: [{ name: a }] }\n').target.url, 'http://example.com/x');
  });

  it('list and table need a container; list needs fields', () => {
    assert.match(problemAt(refuse('target: { url: "https://e.com/" }\nextract: { fields: [{ name: a }] }\n'), 'extract').message, /"container"/);
    assert.match(problemAt(refuse('target: { url: "https://e.com/" }\nextract: { type: table }\n'), 'extract').message, /"container"/);
    assert.match(problemAt(refuse('target: { url: "https://e.com/" }\nextract: { container: div }\n'), 'extract').message, /"fields"/);
  });

  it('deduplicate_fields must name fields of the config (category metadata included when categories are on)', () => {
    const text = `${MINIMAL}output:\n  deduplicate_fields: [text, txet]\n`;
    const p = problemAt(refuse(text), 'output.deduplicate_fields[1]');
    assertPlace(p, where(text, 'txet'));
    assert.match(p.message, /"txet" is not a field/);
    assert.deepEqual(parseConfig(`${MINIMAL}categories: {}\noutput: { deduplicate_fields: [_category, text] }\n`).output.deduplicate_fields, ['_category', 'text']);
  });
});

describe('parseConfig: extract.following_siblings', () => {
  const withSiblings = (value: string, type = 'list') => `target:
  url: https://quotes.toscrape.com/tableful/
extract:
  type: ${type}
  container: "tr[style]"
  following_siblings: ${value}
  fields:
    - { name: quote, selector: td }
`;

  it('defaults to 0 for every type; 0 to 10 are kept for a list', () => {
    assert.equal(parseConfig(MINIMAL).extract.following_siblings, 0);
    assert.equal(parseConfig('target: { url: "https://e.com/" }\nextract: { type: table, container: table }\n').extract.following_siblings, 0);
    for (const n of [0, 1, 2, 10]) assert.equal(parseConfig(withSiblings(String(n))).extract.following_siblings, n);
    // 0 says nothing about the items, so single and table accept it.
    assert.equal(parseConfig(withSiblings('0', 'single')).extract.following_siblings, 0);
    assert.equal(parseConfig(withSiblings('0', 'table')).extract.following_siblings, 0);
  });

  it('out of range or not an integer: one problem at the key, with line and column', () => {
    const cases: Array<[string, RegExp]> = [
      ['-1', /^must be >= 0; got number -1$/],
      ['11', /^must be <= 10; got number 11$/],
      ['"2"', /^must be an integer; got string "2"$/],
      ['two', /^must be an integer; got string "two"$/],
      ['1.5', /^must be an integer; got number 1.5$/],
      ['true', /^must be an integer; got boolean true$/],
    ];
    for (const [value, message] of cases) {
      const text = withSiblings(value);
      const err = refuse(text);
      assert.equal(err.details.length, 1, `${value}: ${JSON.stringify(err.details)}`);
      const p = problemAt(err, 'extract.following_siblings');
      assert.match(p.message, message, value);
      assertPlace(p, where(text, 'following_siblings'));
      assert.deepEqual({ line: p.line, column: p.column }, { line: 6, column: 3 });
      assert.match(err.message, /^Invalid config: extract\.following_siblings: .* \(line 6, column 3\)$/);
    }
  });

  it('a non-zero value with type single or table is refused at the key: it applies to lists only', () => {
    for (const type of ['single', 'table']) {
      const text = withSiblings('1', type);
      const err = refuse(text);
      assert.equal(err.details.length, 1, JSON.stringify(err.details));
      const p = problemAt(err, 'extract.following_siblings');
      assert.equal(p.message, `applies to type list only (a record spread over sibling elements); got type ${type}: remove it or set it to 0`);
      assertPlace(p, where(text, 'following_siblings'));
    }
    // Reported with the other problems, in document order.
    const text = `target: { url: "https://e.com/" }\nextract:\n  type: table\n  container: "tr["\n  following_siblings: 3\n`;
    assert.deepEqual(refuse(text).details.map((d) => [d.path, d.line]), [['extract.container', 4], ['extract.following_siblings', 5]]);
  });
});

describe('parseConfig: input size', () => {
  it('empty or blank input', () => {
    for (const text of ['', '   \n\t\n']) {
      const err = refuse(text);
      assert.equal(err.details[0]!.path, '');
      assert.match(err.details[0]!.message, /empty/);
    }
  });

  it('input over 256 KiB is refused before parsing; just under is parsed', () => {
    const pad = (n: number) => `${MINIMAL}#${'x'.repeat(n)}\n`;
    const base = Buffer.byteLength(pad(0));
    const over = pad(MAX_CONFIG_BYTES - base + 1);
    assert.equal(Buffer.byteLength(over), MAX_CONFIG_BYTES + 1);
    assert.match(refuse(over).details[0]!.message, /too large .*262145 bytes.*262144 bytes/);
    const at = pad(MAX_CONFIG_BYTES - base);
    assert.equal(Buffer.byteLength(at), MAX_CONFIG_BYTES);
    assert.equal(parseConfig(at).extract.container, 'div.quote');
  });

  it(`more than ${MAX_CONFIG_TOKENS} YAML tokens: refused where the cap is crossed, before the tree is built`, () => {
    // Each line `kN: 1` is five tokens (key, ':', ' ', value, line break): the cap is crossed by the
    // first token of the line after MAX_CONFIG_TOKENS / 5 lines.
    const lines = MAX_CONFIG_TOKENS / 5;
    const text = Array.from({ length: lines + 10 }, (_, i) => `k${i}: 1\n`).join('');
    const err = refuse(text);
    assert.equal(err.details.length, 1);
    assertPlace(err.details[0]!, { line: lines + 1, column: 1 });
    assert.match(err.details[0]!.message, /too long: more than 50,000 YAML tokens/);
    // Exactly at the cap: not refused for its length (it fails later, for its keys).
    const at = refuse(Array.from({ length: lines }, (_, i) => `k${i}: 1\n`).join(''));
    assert.doesNotMatch(at.details[0]!.message, /too long/);
  });

  it('blank lines and comments count as tokens (the parser pays for each line)', () => {
    assert.match(refuse(`${MINIMAL}${'\n'.repeat(MAX_CONFIG_TOKENS)}`).details[0]!.message, /too long/);
    assert.match(refuse(`${MINIMAL}${'# x\n'.repeat(MAX_CONFIG_TOKENS / 2)}`).details[0]!.message, /too long/);
    assert.equal(parseConfig(`${MINIMAL}${'# a comment\n'.repeat(1000)}`).extract.container, 'div.quote');
  });

  it(`nesting deeper than ${MAX_CONFIG_DEPTH} levels, in flow and in block style, refused at the level that crosses it`, () => {
    const flow = `x: ${'['.repeat(MAX_CONFIG_DEPTH + 5)}1${']'.repeat(MAX_CONFIG_DEPTH + 5)}\n`;
    const err = refuse(flow);
    assert.equal(err.details.length, 1);
    assert.match(err.details[0]!.message, /nested too deeply: more than 32 levels/);
    // The block mapping of `x` is one level, so the cap is crossed by the 32nd '['.
    assertPlace(err.details[0]!, { line: 1, column: 4 + MAX_CONFIG_DEPTH - 1 });
    const compact = `x:\n  ${'- '.repeat(MAX_CONFIG_DEPTH + 1)}1\n`;
    assert.match(refuse(compact).details[0]!.message, /nested too deeply/);
    let indented = 'x:\n';
    for (let i = 1; i <= MAX_CONFIG_DEPTH + 1; i++) indented += `${'  '.repeat(i)}k${i}:\n`;
    assert.match(refuse(indented).details[0]!.message, /nested too deeply/);
    // 10,000 levels: refused by the scan, not by a stack overflow of the parser.
    assert.match(refuse(`x: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`).details[0]!.message, /nested too deeply/);
  });

  it(`a mapping of more than ${MAX_MAPPING_KEYS} keys is one problem, not one per key`, () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i}: 1\n`).join('');
    const err = refuse(`${MINIMAL}output:\n${keys(5000).replace(/^/gm, '  ')}`);
    assert.equal(err.details.length, 1);
    assert.match(err.details[0]!.message, /^output has 5000 keys; a mapping of a config has at most 100$/);
    assertPlace(err.details[0]!, where(`${MINIMAL}output:\n  k0`, 'k0'));
    // At the cap: each key is its own (unknown key) problem, listed up to MAX_CONFIG_PROBLEMS.
    const atCap = refuse(`${MINIMAL}output:\n${keys(MAX_MAPPING_KEYS - 1).replace(/^/gm, '  ')}`);
    assert.equal(atCap.details.length, MAX_CONFIG_PROBLEMS);
    assert.match(atCap.message, /and 98 more problem/);
  });

  it('counts bytes, not characters', () => {
    // 3 bytes per character: under the limit in characters, over it in bytes.
    const text = `${MINIMAL}# ${'€'.repeat(Math.ceil(MAX_CONFIG_BYTES / 3))}\n`;
    assert.ok(text.length < MAX_CONFIG_BYTES);
    assert.match(refuse(text).details[0]!.message, /too large/);
  });
});

describe('browserFeatures and assertLightweight', () => {
  it('are empty / silent for a config the lightweight engine can run', () => {
    const c = parseConfig(`${MINIMAL}pagination: { type: click, selector: "li.next a" }\n`);
    assert.deepEqual(browserFeatures(c), []);
    assert.doesNotThrow(() => assertLightweight(c));
    assert.deepEqual(browserFeatures(parseConfig('target: { url: "https://e.com/", engine: lightweight }\nextract: { container: div, fields: [{ name: a }] }\n')), []);
  });

  it('list eval fields, actions, scroll_infinite and engine heavy, each with its path', () => {
    const c = parseConfig(`target: { url: "https://e.com/", engine: heavy }
extract:
  container: div
  fields:
    - { name: a }
    - { name: link, selector: a, type: link }
    - { name: js, type: eval, script: "document.title" }
detail_fields:
  fields:
    - { name: b }
    - { name: js2, type: eval, script: "1 + 1" }
actions:
  - { type: click, selector: button.cookies }
  - { type: scroll }
  - { type: click, selector: button.more }
pagination: { type: scroll_infinite }
`);
    const features = browserFeatures(c);
    assert.deepEqual(features.map((f) => f.path), ['target.engine', 'extract.fields[2]', 'detail_fields.fields[1]', 'actions', 'pagination.type']);
    assert.match(features[1]!.reason, /eval field "js"/);
    assert.match(features[2]!.reason, /eval field "js2"/);
    assert.match(features[3]!.reason, /3 action\(s\) \(click, scroll\)/);
    assert.match(features[4]!.reason, /scroll_infinite/);
    try {
      assertLightweight(c);
      assert.fail('should need a browser');
    } catch (err) {
      assert.ok(isCodedError(err));
      assert.equal(err.code, 'browser_required');
      // Each feature the lightweight engine cannot run is named (engine: heavy is a choice of engine, not
      // something the lightweight engine fails at, so it may or may not be listed here).
      const paths = (err.details as Array<{ path: string }>).map((d) => d.path);
      assert.deepEqual(paths.filter((p) => p !== 'target.engine'), ['extract.fields[2]', 'detail_fields.fields[1]', 'actions', 'pagination.type']);
      assert.match(err.message, /extract\.fields\[2\]/);
    }
  });

  it('engine auto with only lightweight features needs no browser; any one feature alone does', () => {
    const one = (rest: string) => browserFeatures(parseConfig(`target: { url: "https://e.com/" }\n${rest}\n`)).map((f) => f.path);
    assert.deepEqual(one('extract: { container: div, fields: [{ name: a, type: eval, script: x }] }'), ['extract.fields[0]']);
    assert.deepEqual(one('extract: { container: div, fields: [{ name: a }] }\nactions: [{ type: keyboard, key: End }]'), ['actions']);
    assert.deepEqual(one('extract: { container: div, fields: [{ name: a }] }\npagination: { type: scroll_infinite, max_pages: 3 }'), ['pagination.type']);
  });
});
