/**
 * API configs (target.api, issue 38; docs/config-language.md, "Reading a JSON API"): the schema and the checks of
 * parseConfig (each refusal at its path, line and column), the requests ApiSource makes (placeholders, query, body,
 * headers), what an answer means (JSON or api_not_json, records or api_no_records), field values by JMESPath, where
 * each pagination kind goes next and each stop condition, and the bounds of queries (api_query_limit).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig, type ScrapeConfig } from '../../lambdas/engine/config.ts';
import { ApiSource, parseAnswer, requestKey, type ApiAnswer } from '../../lambdas/engine/api/api-source.ts';
import { compileQuery, QueryBudget, QueryLimitError, runQuery, type JsonValue } from '../../lambdas/engine/api/json-query.ts';
import { chooseEngine } from '../../lambdas/engine/choose.ts';

const T = 'https://shop.example/list/';

function problems(yaml: string): Array<{ path: string; line?: number; column?: number; message: string }> {
  try {
    parseConfig(yaml);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.details;
  }
  assert.fail('the config was accepted');
}

function refusedAt(yaml: string, path: string, message: RegExp): void {
  const found = problems(yaml);
  assert.ok(found.some((p) => p.path === path && message.test(p.message)), `${path} ${message}: got ${JSON.stringify(found, null, 1)}`);
}

const api = (extra = '', apiKeys = 'url: "/api/items?page={page}"') => `target:
  url: ${T}
  api: { ${apiKeys} }
extract:
  records: data.items
  fields:
    - { name: title, path: title }
${extra}`;

function answer(body: unknown, url = 'https://shop.example/api/items', extra: Partial<ApiAnswer> = {}): ApiAnswer {
  return { requestedUrl: url, url, status: 200, contentType: 'application/json', text: typeof body === 'string' ? body : JSON.stringify(body), ...extra };
}

function readOne(config: ScrapeConfig, body: JsonValue, pos = new ApiSource(config).first(), at = { index: 0, recordsSoFar: 0 }) {
  const source = new ApiSource(config);
  const a = answer(body);
  return source.read(a, parseAnswer(a), pos, at, new QueryBudget());
}

describe('API configs: the schema and the checks of parseConfig', () => {
  it('a valid config gets its defaults (GET, list) and keeps 2.0 keys as they are', () => {
    const c = parseConfig(api('pagination: { type: page, total_path: meta.total }\noutput: { limit: 5 }\n'));
    assert.equal(c.target.api!.method, 'GET');
    assert.equal(c.extract.type, 'list');
    assert.equal(c.extract.records, 'data.items');
    assert.deepEqual(c.extract.fields[0], { name: 'title', path: 'title', type: 'text', transform: [], multiple: false });
    assert.equal(c.pagination!.max_pages, 10);
    assert.equal(c.version, '2.0');
  });

  it('keys of target.api are the schema\'s: an unknown one, a method other than GET and POST, a body that is a string', () => {
    refusedAt(api('', 'url: /api, verb: GET'), 'target.api.verb', /unknown key "verb" in target.api/);
    refusedAt(api('', 'url: /api, method: PUT'), 'target.api.method', /must be one of "GET", "POST"; got string "PUT"/);
    refusedAt(api('', 'url: /api, method: POST, body: "q=1"'), 'target.api.body', /must be a mapping or a list; got string "q=1"/);
    refusedAt(api('', 'method: POST'), 'target.api', /missing required key "url"/);
  });

  it('the URL, relative to target.url, must be http(s); a body needs POST', () => {
    refusedAt(api('', 'url: "ftp://x/{page}"'), 'target.api.url', /must be an http or https URL/);
    refusedAt(api('', 'url: /api/search, body: { q: 1 }'), 'target.api.body', /a body is sent with method: POST/);
  });

  it('headers: credentials and what the client owns are refused, with the reason', () => {
    refusedAt(api('', 'url: /api, headers: { Cookie: "a=1" }'), 'target.api.headers.Cookie', /no credentials of yours in it/);
    refusedAt(api('', 'url: /api, headers: { Authorization: "Bearer x" }'), 'target.api.headers.Authorization', /cannot be set by a config/);
    refusedAt(api('', 'url: /api, headers: { Host: evil.example }'), 'target.api.headers.Host', /the HTTP client sets it/);
    refusedAt(api('', 'url: /api, headers: { "a b": x }'), 'target.api.headers.a b', /not an HTTP header name/);
    refusedAt(api('', 'url: /api, headers: { X-A: "a\\r\\nX-B: b" }'), 'target.api.headers.X-A', /line breaks/);
    parseConfig(api('', 'url: /api, headers: { Accept: application/json, X-Requested-With: XMLHttpRequest, X-Algolia-API-Key: abc }'));
  });

  it('JMESPath queries are compiled at validation: a syntax error, an unknown function, let, a query too long, each at its line and column', () => {
    const bad = problems(`target: { url: "${T}", api: { url: /api } }
extract:
  records: "items["
  fields:
    - { name: a, path: "foo(@)" }
    - { name: b, path: "${'x.'.repeat(600)}x" }
pagination: { type: next_url, next_url_path: "links.next | ", total_path: "let $a = 1 in $a" }
`);
    const at = (path: string) => bad.find((p) => p.path === path);
    assert.match(at('extract.records')!.message, /invalid JMESPath query "items\[": Syntax error/);
    assert.deepEqual([at('extract.records')!.line, at('extract.records')!.column], [3, 3]);
    assert.match(at('extract.fields[0].path')!.message, /unknown function foo\(\); known: abs, avg,/);
    assert.match(at('extract.fields[1].path')!.message, /must NOT have more than 1000 characters/);
    assert.match(at('pagination.next_url_path')!.message, /invalid JMESPath query/);
    assert.ok(at('pagination.total_path'), 'let refused');
  });

  it('keys of HTML configs are refused with target.api, each saying what to use instead', () => {
    const yaml = `target: { url: "${T}", api: { url: /api } }
extract:
  container: div.item
  following_siblings: 1
  fields:
    - { name: a, selector: h2 }
    - { name: b, path: x, type: html }
    - { name: c, path: x, type: eval, script: "1" }
pagination: { type: click, selector: a.next }
categories: { container: nav }
actions: [{ type: click, selector: "#go" }]
`;
    const found = problems(yaml);
    const by = (path: string) => found.filter((p) => p.path === path).map((p) => p.message).join(' | ');
    assert.match(by('extract.container'), /reads its records with extract.records/);
    assert.match(by('extract.following_siblings'), /HTML configs only/);
    assert.match(by('extract.fields[0].selector'), /by path \(a JMESPath query into the record\), not a CSS selector/);
    assert.match(by('extract.fields[0]'), /missing required key "path"/);
    assert.match(by('extract.fields[1].type'), /type html reads an HTML element/);
    assert.match(by('extract.fields[2].type'), /type eval reads an HTML element/);
    assert.match(by('pagination.type'), /type click moves through HTML pages; an API config paginates with page, offset, cursor or next_url/);
    assert.match(by('categories'), /an API config has none/);
    assert.match(by('actions'), /an API config loads none/);
    refusedAt(`target: { url: "${T}", api: { url: /api } }\nextract: { type: table, fields: [{ name: a, path: a }] }\n`, 'extract.type', /type table reads an HTML table/);
  });

  it('each pagination type needs its placeholder and its keys', () => {
    refusedAt(api('pagination: { type: offset }\n'), 'pagination.type', /pagination type offset fills \{offset\}: put it in target.api.url, target.api.query or target.api.body/);
    refusedAt(api('pagination: { type: cursor }\n', 'url: /api, query: { after: "{cursor}" }'), 'pagination', /missing required key "cursor_path"/);
    refusedAt(api('pagination: { type: next_url }\n'), 'pagination', /missing required key "next_url_path"/);
    refusedAt(api('pagination: { type: page, cursor_path: c }\n'), 'pagination.cursor_path', /cursor only/);
    refusedAt(api('pagination: { type: next_url, next_url_path: n, step: 2 }\n'), 'pagination.step', /page and offset only/);
    refusedAt(api('pagination: { type: page, step: 0 }\n'), 'pagination.step', /must be >= 1/);
    parseConfig(api('pagination: { type: page }\n', 'url: /api, method: POST, body: { paging: { n: "{page}" } }'));
    parseConfig(api('pagination: { type: offset }\n', 'url: /api, query: { from: "{offset}" }'));
  });

  it('keys of API configs are refused without target.api', () => {
    const found = problems(`target: { url: "${T}" }
extract:
  container: li
  records: items
  fields:
    - { name: a, path: a }
detail_fields:
  fields:
    - { name: d, selector: p, path: d }
pagination: { type: page }
`);
    const paths = found.map((p) => p.path);
    for (const p of ['extract.records', 'extract.fields[0].path', 'detail_fields.fields[0].path', 'pagination.type']) assert.ok(paths.includes(p), `${p} in ${paths.join(', ')}`);
    assert.match(found.find((p) => p.path === 'pagination.type')!.message, /needs target.api/);
    refusedAt(`target: { url: "${T}" }\nextract: { container: li, fields: [{ name: a }] }\npagination: { type: url, url_pattern: "?p={page}", total_path: total }\n`, 'pagination.total_path', /API configs only/);
  });

  it('detail fields of an API config are HTML fields: a path there is refused', () => {
    refusedAt(api(`    - { name: url, path: url, type: link }
detail_fields:
  fields:
    - { name: d, path: d }
`), 'detail_fields.fields[0].path', /detail pages are HTML pages/);
  });

  it('engine auto picks the lightweight engine without probing; an eval detail field still needs the browser', async () => {
    const probe = async () => assert.fail('nothing is probed');
    const plain = await chooseEngine(parseConfig(api()), probe);
    assert.deepEqual([plain.engine, plain.reason], ['lightweight', 'auto: the config reads a JSON API (target.api) over plain HTTP, no browser needed']);
    const evalDetail = await chooseEngine(parseConfig(api(`    - { name: url, path: url, type: link }
detail_fields:
  fields:
    - { name: d, type: eval, script: "document.title" }
`)), probe);
    assert.equal(evalDetail.engine, 'heavy');
  });
});

describe('API configs: the requests', () => {
  it('{page} in the URL, URL-encoded; query parameters added; Accept defaulted; the config\'s headers kept', () => {
    const s = new ApiSource(parseConfig(api('pagination: { type: page, start: 3, step: 2 }\n', 'url: "/api/items/{page}?lang=en", query: { q: "a b&c", n: 5, exact: true }, headers: { X-Requested-With: XMLHttpRequest }')));
    const first = s.first();
    assert.deepEqual(first, { page: 3 });
    const r = s.request(first);
    assert.equal(r.url, 'https://shop.example/api/items/3?lang=en&q=a+b%26c&n=5&exact=true');
    assert.deepEqual(r.headers, { accept: 'application/json, text/plain, */*', 'x-requested-with': 'XMLHttpRequest' });
    assert.equal(r.method, 'GET');
    assert.equal(r.body, undefined);
  });

  it('a query parameter that is exactly {cursor} is left out of the first request, then carries the cursor', () => {
    const s = new ApiSource(parseConfig(api('pagination: { type: cursor, cursor_path: next }\n', 'url: /api/items, query: { first: 10, after: "{cursor}" }')));
    assert.equal(s.request(s.first()).url, 'https://shop.example/api/items?first=10');
    assert.equal(s.request({ cursor: 'a/b=' }).url, 'https://shop.example/api/items?first=10&after=a%2Fb%3D');
  });

  it('POST: the body is JSON; a string that is exactly a placeholder becomes its value, typed; Content-Type defaulted', () => {
    const s = new ApiSource(parseConfig(api('pagination: { type: page }\n', 'url: /api/search, method: POST, body: { query: shoes, page: "{page}", label: "page {page}", nested: [{ p: "{page}" }] }')));
    const r = s.request({ page: 2 });
    assert.equal(r.method, 'POST');
    assert.deepEqual(JSON.parse(r.body!), { query: 'shoes', page: 2, label: 'page 2', nested: [{ p: 2 }] });
    assert.equal(r.headers['content-type'], 'application/json');
    const cursor = new ApiSource(parseConfig(api('pagination: { type: cursor, cursor_path: c }\n', 'url: /api/q, method: POST, body: { after: "{cursor}" }')));
    assert.deepEqual(JSON.parse(cursor.request(cursor.first()).body!), { after: null });
    assert.notEqual(requestKey(s.request({ page: 2 })), requestKey(s.request({ page: 3 })), 'the body is part of the key');
  });

  it('next_url: the URL read from the answer is sent as it is', () => {
    const s = new ApiSource(parseConfig(api('pagination: { type: next_url, next_url_path: links.next }\n', 'url: /api/items, query: { per: 5 }')));
    assert.equal(s.request({ url: 'https://shop.example/api/items?cursor=9' }).url, 'https://shop.example/api/items?cursor=9');
  });
});

describe('API configs: answers and records', () => {
  it('not JSON: api_not_json with the content type and the first characters; a BOM is dropped; too deep: api_not_json', () => {
    assert.throws(() => parseAnswer(answer('<!DOCTYPE html><p>hi', undefined, { contentType: 'text/html' })), (e: Error & { code: string }) => e.code === 'api_not_json' && /not JSON: text\/html, starting "<!DOCTYPE html><p>hi"/.test(e.message));
    assert.throws(() => parseAnswer(answer('')), /empty/);
    assert.deepEqual(parseAnswer(answer('\uFEFF{"a":1}')), { a: 1 });
    assert.throws(() => parseAnswer(answer(`${'['.repeat(101)}${']'.repeat(101)}`)), (e: Error & { code: string }) => e.code === 'api_not_json' && /deeper than 100 levels/.test(e.message));
    assert.ok(parseAnswer(answer(`${'['.repeat(100)}${']'.repeat(100)}`)));
  });

  it('records: a list, an object (one record), the whole answer without extract.records; nothing or a scalar: api_no_records naming the answer\'s keys', () => {
    const c = parseConfig(api());
    assert.equal(readOne(c, { data: { items: [{ title: 'a' }, { title: 'b' }] } }).rows.length, 2);
    assert.deepEqual(readOne(c, { data: { items: { title: 'only' } } }).rows, [{ title: 'only' }]);
    const whole = parseConfig(`target: { url: "${T}", api: { url: /api } }\nextract: { fields: [{ name: title, path: title }] }\n`);
    assert.deepEqual(readOne(whole, [{ title: 'x' }, { title: 'y' }]).rows, [{ title: 'x' }, { title: 'y' }]);
    assert.throws(() => readOne(c, { results: [], total: 0 }), (e: Error & { code: string; details: unknown[] }) =>
      e.code === 'api_no_records' && /extract.records "data.items" gives nothing .* the answer is an object with keys results, total/.test(e.message)
      && JSON.stringify(e.details).includes('"keys":["results","total"]'));
    assert.throws(() => readOne(c, { data: { items: 'none' } }), /gives a string \("none"\)/);
  });

  it('field values by path: types, transforms, defaults, lists and objects', () => {
    const c = parseConfig(`target: { url: "${T}", api: { url: /api/v1/items } }
extract:
  records: items
  fields:
    - { name: title, path: name, transform: [strip, uppercase] }
    - { name: price, path: price.amount }
    - { name: price_text, path: price.amount, transform: ["template:{value} EUR"] }
    - { name: url, path: slug, type: link, transform: ["template:/p/{value}/"] }
    - { name: image, path: "images[0]", type: image_url }
    - { name: tags, path: tags, transform: [uppercase] }
    - { name: tag_count, path: tags, type: count }
    - { name: on_sale, path: sale, type: exists }
    - { name: sku, path: code, type: regex, pattern: "SKU-(\\\\d+)", transform: [to_number] }
    - { name: meta, path: meta }
    - { name: missing, path: nope, default: "-" }
    - { name: blank, path: empty, default: 0 }
    - { name: one, path: name, multiple: true }
    - { name: first_tag, path: "tags[0]" }
`);
    const r = readOne(c, { items: [{ name: ' Shoe ', price: { amount: 12.5 }, slug: 'shoe', images: ['//cdn.example/s.jpg'], tags: ['new', '', 'red'], sale: false, code: 'SKU-0042', meta: { w: 1 }, empty: '  ' }] });
    assert.deepEqual(r.rows, [{
      title: 'SHOE', price: 12.5, price_text: '12.5 EUR', url: 'https://shop.example/p/shoe/', image: 'https://cdn.example/s.jpg', tags: ['NEW', 'RED'],
      tag_count: 3, on_sale: true, sku: 42, meta: { w: 1 }, missing: '-', blank: 0, one: [' Shoe '], first_tag: 'new',
    }]);
    const none = readOne(c, { items: [{}] }).rows[0]!;
    assert.deepEqual([none.tag_count, none.on_sale, none.tags, none.url, none.missing], [0, false, null, null, '-']);
  });

  it('single keeps the first record; more than 10,000 records: the first 10,000 and a warning', () => {
    const single = parseConfig(`target: { url: "${T}", api: { url: /api } }\nextract: { type: single, records: items, fields: [{ name: n, path: n }] }\n`);
    assert.deepEqual(readOne(single, { items: [{ n: 1 }, { n: 2 }] }).rows, [{ n: 1 }]);
    const many = readOne(parseConfig(`target: { url: "${T}", api: { url: /api } }\nextract: { records: items, fields: [{ name: n, path: "@" }] }\n`), { items: Array.from({ length: 10_005 }, (_, i) => i) });
    assert.equal(many.rows.length, 10_000);
    assert.equal(many.recordCount, 10_005);
    assert.match(many.warnings[0]!, /has 10005 records; the first 10000 are read/);
  });
});

describe('API configs: pagination, each kind and each stop', () => {
  const items = (n: number) => ({ data: { items: Array.from({ length: n }, (_, i) => ({ title: `t${i}` })) } });

  it('page: start and step; no pagination ends at once', () => {
    const c = parseConfig(api('pagination: { type: page, start: 0, step: 5 }\n'));
    assert.deepEqual(readOne(c, items(3), { page: 0 }).next, { page: 5 });
    const none = readOne(parseConfig(api()), items(3));
    assert.deepEqual([none.next, none.why], [null, 'no pagination']);
  });

  it('an answer without records ends; max_pages ends', () => {
    const c = parseConfig(api('pagination: { type: page, max_pages: 3 }\n'));
    assert.deepEqual(readOne(c, items(0), { page: 1 }).why, 'an answer without records');
    assert.deepEqual(readOne(c, items(2), { page: 2 }, { index: 1, recordsSoFar: 2 }).next, { page: 3 });
    assert.deepEqual(readOne(c, items(2), { page: 3 }, { index: 2, recordsSoFar: 4 }).why, 'max_pages (3)');
  });

  it('offset: the step is the records of the answer unless given; total_path counts from the offset', () => {
    const c = parseConfig(api('pagination: { type: offset, total_path: meta.total }\n', 'url: "/api/items?offset={offset}"'));
    assert.deepEqual(readOne(c, { ...items(4), meta: { total: 10 } }, { offset: 0 }).next, { offset: 4 });
    const end = readOne(c, { ...items(4), meta: { total: 10 } }, { offset: 6 }, { index: 1, recordsSoFar: 4 });
    assert.deepEqual([end.next, end.why], [null, 'the total of 10 record(s) read']);
    const stepped = parseConfig(api('pagination: { type: offset, step: 25 }\n', 'url: "/api/items?offset={offset}"'));
    assert.deepEqual(readOne(stepped, items(4), { offset: 50 }).next, { offset: 75 });
  });

  it('page with total_path counts the records read by the listing; a total given as a string counts too', () => {
    const c = parseConfig(api('pagination: { type: page, total_path: total }\n'));
    assert.deepEqual(readOne(c, { ...items(5), total: 12 }, { page: 2 }, { index: 1, recordsSoFar: 5 }).next, { page: 3 });
    assert.equal(readOne(c, { ...items(2), total: '12' }, { page: 3 }, { index: 2, recordsSoFar: 10 }).next, null);
  });

  it('has_more_path: false, null, 0, "" and "false" end the listing; true goes on', () => {
    const c = parseConfig(api('pagination: { type: page, has_more_path: more }\n'));
    for (const more of [false, null, 0, '', 'false']) assert.equal(readOne(c, { ...items(1), more }, { page: 1 }).next, null, JSON.stringify(more));
    assert.deepEqual(readOne(c, { ...items(1), more: true }, { page: 1 }).next, { page: 2 });
  });

  it('cursor: the next cursor from the answer; none, empty or an object ends', () => {
    const c = parseConfig(api('pagination: { type: cursor, cursor_path: page_info.end }\n', 'url: "/api/items?after={cursor}"'));
    assert.deepEqual(readOne(c, { ...items(2), page_info: { end: 'abc' } }).next, { cursor: 'abc' });
    assert.deepEqual(readOne(c, { ...items(2), page_info: { end: 7 } }).next, { cursor: 7 });
    for (const end of [null, '', { x: 1 }]) assert.equal(readOne(c, { ...items(2), page_info: { end } }).next, null);
  });

  it('next_url: resolved against the answer\'s URL; none or a non-http URL ends', () => {
    const c = parseConfig(api('pagination: { type: next_url, next_url_path: links.next }\n'));
    assert.deepEqual(readOne(c, { ...items(2), links: { next: '?page=2' } }).next, { url: 'https://shop.example/api/items?page=2' });
    assert.deepEqual(readOne(c, { ...items(2), links: { next: 'https://other.example/p2' } }).next, { url: 'https://other.example/p2' });
    assert.equal(readOne(c, { ...items(2), links: { next: null } }).next, null);
    assert.match(readOne(c, { ...items(2), links: { next: 'javascript:alert(1)' } }).why, /not an http\(s\) URL/);
  });
});

describe('JMESPath queries: bounds', () => {
  const run = (q: string, v: JsonValue) => runQuery(compileQuery(q), v, new QueryBudget());

  it('ordinary queries run: projections, filters, functions', () => {
    const d = { items: [{ n: 'a', p: 3 }, { n: 'b', p: 0 }] };
    assert.deepEqual(run('items[?p > `0`].n', d), ['a']);
    assert.deepEqual(run('items[*].{name: n, price: p}', d), [{ name: 'a', price: 3 }, { name: 'b', price: 0 }]);
    assert.equal(run('join(\'-\', items[].n)', d), 'a-b');
    assert.equal(run('length(items)', d), 2);
    assert.equal(run('nope.deeper', d), null);
  });

  it('a query that doubles a list at each step stops at 1,000,000 elements, in well under its time budget', () => {
    const doubling = Array.from({ length: 24 }, () => '[@,@][]').join(' | ');
    assert.throws(() => run(doubling, [1]), (e: Error) => e instanceof QueryLimitError && (e as QueryLimitError).code === 'api_query_limit' && /an array of 1048576 elements/.test(e.message));
  });

  it('functions whose result could be huge are checked before they run', () => {
    assert.throws(() => run('pad_left(\'\', `100000000`)', null), /pad_left\(\) to 100000000 characters/);
    const big = 'x'.repeat(1_500_000);
    assert.throws(() => run('join(\'\', [@, @])', big), /join\(\) making 3000000 characters/);
    assert.throws(() => run('replace(@, \'x\', \'yy\')', big), /replace\(\) making up to/);
    assert.throws(() => run('to_string([@, @])', big), /to_string\(\) of a value over/);
    assert.equal(run('replace(@, \'x\', \'y\')', 'xx'), 'yy');
  });

  it('the steps of one answer\'s queries share a budget', () => {
    const budget = new QueryBudget();
    const q = compileQuery('a[*].b[*].c');
    const d = { a: Array.from({ length: 1000 }, () => ({ b: Array.from({ length: 1000 }, () => ({ c: 1 })) })) };
    assert.throws(() => { for (let i = 0; i < 30; i++) runQuery(q, d as JsonValue, budget); }, /20000000 steps|20000000 array elements/);
  });

  it('a runtime type error names the query', () => {
    assert.throws(() => run('length(@)', 5), /JMESPath query "length\(@\)": Invalid type/);
  });
});
