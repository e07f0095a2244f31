/**
 * Exports (lambdas/export/rows-export.ts, docs/exports.md): column order, CSV (RFC 4180, BOM, CRLF), XLSX read
 * back with read-excel-file (an independent reader), JSON, the flattening rule shared by CSV and XLSX, the `'` before
 * formula-like CSV text (and `raw`), XLSX text never written as a formula.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inflateRawSync } from 'node:zlib';
import readXlsxFile from 'read-excel-file/node';
import { cellOptionProblems, checkCellOptions, csvField, exportColumns, exportRows, flattenValue, isExportFormat, rowsCsv, sheetName, type ExportFormat } from '../../lambdas/export/rows-export.ts';

/** A minimal RFC 4180 reader for the tests (quoted fields, doubled quotes, CRLF records). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { record.push(field); field = ''; }
    else if (ch === '\r' && text[i + 1] === '\n') { record.push(field); records.push(record); record = []; field = ''; i++; }
    else field += ch;
  }
  assert.equal(field + record.join(''), '', 'the text ends with CRLF');
  return records;
}

async function readXlsx(body: Buffer): Promise<{ sheet: string; data: unknown[][] }> {
  const sheets = await readXlsxFile(body, { trim: false });
  assert.equal(sheets.length, 1);
  return sheets[0]! as { sheet: string; data: unknown[][] };
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The text files of a ZIP archive (an XLSX), by name: its central directory read, each entry inflated. */
function unzip(zip: Buffer): Map<string, string> {
  const files = new Map<string, string>();
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(end >= 0, 'a ZIP end-of-central-directory record');
  let at = zip.readUInt32LE(end + 16);
  for (let n = zip.readUInt16LE(end + 10); n > 0; n--) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50, 'a central directory entry');
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    const data = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(data, data + size);
    files.set(name, (method === 8 ? inflateRawSync(raw) : raw).toString('utf8'));
    at += 46 + skip;
  }
  return files;
}

describe('exportColumns', () => {
  it('lists keys in the order they first appear across rows, a key only later rows have last', () => {
    const rows = [{ title: 'a', price: 1 }, { title: 'b', rating: 5 }, { price: 2, title: 'c', stock: true }];
    assert.deepEqual(exportColumns(rows), ['title', 'price', 'rating', 'stock']);
  });
  it('is empty for no rows', () => {
    assert.deepEqual(exportColumns([]), []);
  });
});

describe('flattenValue', () => {
  it('keeps scalars, empties null and undefined, writes arrays and objects as JSON text', () => {
    assert.equal(flattenValue('x'), 'x');
    assert.equal(flattenValue(''), '');
    assert.equal(flattenValue(0), 0);
    assert.equal(flattenValue(-1.25), -1.25);
    assert.equal(flattenValue(false), false);
    assert.equal(flattenValue(null), null);
    assert.equal(flattenValue(undefined), null);
    assert.equal(flattenValue(['a', 'b, c']), '["a","b, c"]');
    assert.equal(flattenValue([]), '[]');
    assert.equal(flattenValue({ k: 1, n: { m: [true] } }), '{"k":1,"n":{"m":[true]}}');
  });
  it('writes non-finite numbers, bigints and dates as text', () => {
    assert.equal(flattenValue(Number.NaN), 'NaN');
    assert.equal(flattenValue(Infinity), 'Infinity');
    assert.equal(flattenValue(10n), '10');
    assert.equal(flattenValue([1n]), '["1"]');
    assert.equal(flattenValue(new Date(Date.UTC(2026, 0, 2, 3, 4, 5))), '2026-01-02T03:04:05.000Z');
    assert.equal(flattenValue(new Date(Number.NaN)), null);
  });
  it('is lossless for nested values: the JSON text parses back to the value', () => {
    const value = { tags: ['love', 'life'], author: { name: 'Jane "J" Austen', born: null } };
    assert.deepEqual(JSON.parse(flattenValue(value) as string), value);
  });
});

describe('CSV', () => {
  it('quotes fields with a comma, quote, CR or LF and doubles the quotes (RFC 4180)', () => {
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('line\nbreak'), '"line\nbreak"');
    assert.equal(csvField('cr\rhere'), '"cr\rhere"');
    assert.equal(csvField(null), '');
    assert.equal(csvField(true), 'true');
    assert.equal(csvField(3.5), '3.5');
  });

  it('starts with the UTF-8 BOM, has a header in field order and CRLF line ends; values round-trip', async () => {
    const rows = [
      { text: '“The world”, he said, "is ours"', author: 'Émile Zola', tags: ['a', 'b'], n: 1 },
      { text: 'multi\nline\r\nvalue', author: '日本 😀', n: -2.5 },
      { author: 'only author', extra: false },
    ];
    const file = await exportRows(rows, 'csv');
    assert.equal(file.contentType, 'text/csv; charset=utf-8');
    assert.equal(file.extension, 'csv');
    assert.deepEqual(Buffer.from(file.body).subarray(0, 3), BOM);
    const text = Buffer.from(file.body).subarray(3).toString('utf8');
    assert.ok(text.startsWith('text,author,tags,n,extra\r\n'));
    assert.equal(text.split('\r\n').length - 1, 1 + rows.length + 1, 'one CRLF per record plus the one inside a value');
    assert.ok(!/[^\r]\n/.test(text.replace('multi\nline', '')), 'no bare LF outside quoted values');
    assert.deepEqual(parseCsv(text), [
      ['text', 'author', 'tags', 'n', 'extra'],
      ['“The world”, he said, "is ours"', 'Émile Zola', '["a","b"]', '1', ''],
      ['multi\nline\r\nvalue', '日本 😀', '', '-2.5', ''],
      ['', 'only author', '', '', 'false'],
    ]);
  });

  it("prefixes text cells that start with =, +, -, @, tab or CR with ' (OWASP CSV injection), header cells too", () => {
    const rows = [{ a: '=1+1', b: '+33 1 23 45 67 89', c: '-2+3+cmd|\' /C calc\'!A0', d: '@SUM(A1:A2)', e: '\t=1', f: '\r=1', g: '=A1,B1', h: '=HYPERLINK("http://x.example","go")' }];
    assert.deepEqual(parseCsv(rowsCsv(rows).slice(1))[1], ["'=1+1", "'+33 1 23 45 67 89", "'-2+3+cmd|' /C calc'!A0", "'@SUM(A1:A2)", "'\t=1", "'\r=1", "'=A1,B1", '\'=HYPERLINK("http://x.example","go")']);
    assert.equal(csvField('=A1,B1'), '"\'=A1,B1"', 'the quote goes inside the RFC 4180 quoting');
    assert.equal(rowsCsv([{ '=cmd': 1, '@h': 2 }]), "\uFEFF'=cmd,'@h\r\n1,2\r\n", 'field names are cells too');
  });

  it('leaves numbers, booleans, plain signed numbers as text, other text and nested values alone', () => {
    const rows = [{ n: -5, m: 1.5, t: true, s: '-5', p: '+1.5', e: '-2e3', x: 'a=b', y: ' =1', l: ['=1'], o: { k: '=1' }, z: '' }];
    assert.equal(rowsCsv(rows), '\uFEFFn,m,t,s,p,e,x,y,l,o,z\r\n-5,1.5,true,-5,+1.5,-2e3,a=b, =1,"[""=1""]","{""k"":""=1""}",\r\n');
    for (const v of ['-', '+', '-5 apples', '--5', '-.', '-1e', '+33 1']) assert.ok(csvField(v).startsWith("'"), `${v} is not a plain number`);
  });

  it('raw: every cell exactly as scraped, through exportRows too', async () => {
    const rows = [{ '=h': '=1+1', b: '+33 1 23', c: '-5', d: '@x', e: '\tx' }];
    assert.equal(rowsCsv(rows, undefined, true), '\uFEFF=h,b,c,d,e\r\n=1+1,+33 1 23,-5,@x,\tx\r\n');
    assert.equal(csvField('=1', true), '=1');
    const raw = Buffer.from((await exportRows(rows, 'csv', { raw: true })).body).toString('utf8');
    assert.equal(raw, rowsCsv(rows, undefined, true));
    const safe = Buffer.from((await exportRows(rows, 'csv')).body).toString('utf8');
    assert.equal(safe, "\uFEFF'=h,b,c,d,e\r\n'=1+1,'+33 1 23,-5,'@x,'\tx\r\n");
    assert.deepEqual(await exportRows(rows, 'json', { raw: true }), await exportRows(rows, 'json'), 'raw changes nothing in JSON');
  });

  it('uses the given columns (order, subset, a column no row has)', () => {
    const text = rowsCsv([{ a: 1, b: 2 }], ['b', 'z', 'a']);
    assert.equal(text, '\uFEFFb,z,a\r\n2,,1\r\n');
  });

  it('no rows: the BOM alone, or a header line when columns are given', async () => {
    const file = await exportRows([], 'csv');
    assert.deepEqual(Buffer.from(file.body), BOM);
    const header = await exportRows([], 'csv', { columns: ['title', 'price'] });
    assert.equal(Buffer.from(header.body).toString('utf8'), '\uFEFFtitle,price\r\n');
  });

  it('does not take an inherited property for a missing field', () => {
    assert.equal(rowsCsv([{ toString: 'x' }, {}], ['toString', 'constructor']), '\uFEFFtoString,constructor\r\nx,\r\n,\r\n');
  });
});

describe('XLSX', () => {
  it('reads back with read-excel-file: header, types kept (number, boolean, string), empty cells, unicode', async () => {
    const rows = [
      { title: 'Café, "quoted"', price: 12.5, in_stock: true, tags: ['x', 'y'], meta: { a: 1 } },
      { title: '日本 😀\nsecond line', price: 0, in_stock: false, tags: [], meta: null },
      { title: '=SUM(A1:A2)', rating: 4 },
    ];
    const file = await exportRows(rows, 'xlsx');
    assert.equal(file.contentType, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    assert.equal(file.extension, 'xlsx');
    assert.deepEqual(Buffer.from(file.body).subarray(0, 2), Buffer.from('PK'), 'a ZIP package');
    const sheet = await readXlsx(Buffer.from(file.body));
    assert.equal(sheet.sheet, 'Rows');
    assert.deepEqual(sheet.data, [
      ['title', 'price', 'in_stock', 'tags', 'meta', 'rating'],
      ['Café, "quoted"', 12.5, true, '["x","y"]', '{"a":1}', null],
      ['日本 😀\nsecond line', 0, false, '[]', null, null],
      ['=SUM(A1:A2)', null, null, null, null, 4],
    ]);
    assert.equal(typeof sheet.data[1]![1], 'number');
    assert.equal(typeof sheet.data[1]![2], 'boolean');
  });

  it('flattens nested values exactly as the CSV does', async () => {
    const rows = [{ list: ['a', 'b; c', 1], obj: { k: [null, { z: '"' }] }, n: 3, s: 'text' }];
    const csv = parseCsv(Buffer.from((await exportRows(rows, 'csv')).body).subarray(3).toString('utf8'));
    const xlsx = await readXlsx(Buffer.from((await exportRows(rows, 'xlsx')).body));
    assert.deepEqual(xlsx.data[1]!.map((v) => String(v)), csv[1]);
    assert.equal(xlsx.data[1]![0], '["a","b; c",1]');
  });

  it('writes formula-like text as string cells, never formulas, and unchanged (no quote added)', async () => {
    const values = ['=1+1', '+33 1 23', '-2+3', '@SUM(A1)', '\t=1', '=HYPERLINK("http://x.example","go")'];
    const rows = [Object.fromEntries(values.map((v, i) => [`c${i}`, v]))];
    const body = Buffer.from((await exportRows(rows, 'xlsx')).body);
    const sheet = await readXlsx(body);
    assert.deepEqual(sheet.data[1], values);
    const files = unzip(body);
    const sheetXml = [...files].find(([name]) => /^xl\/worksheets\/sheet\d+\.xml$/.test(name))?.[1];
    assert.ok(sheetXml, `a worksheet among ${[...files.keys()].join(', ')}`);
    assert.ok(!/<f[\s>]/.test(sheetXml), 'no formula element in the sheet');
    const cells = [...sheetXml.matchAll(/<c r="[A-Z]+2"([^>]*)>/g)].map((m) => m[1]);
    assert.equal(cells.length, values.length);
    for (const attrs of cells) assert.match(attrs!, /\bt="s"/, 'each a shared-string cell');
    const shared = files.get('xl/sharedStrings.xml') ?? '';
    assert.ok(shared.includes('=1+1') && !shared.includes("'=1+1"), 'the text kept as scraped');
  });

  it('keeps a literal _xHHHH_ and leading or trailing spaces', async () => {
    const sheet = await readXlsx(Buffer.from((await exportRows([{ s: 'id_x0041_end', t: '  padded  ' }], 'xlsx')).body));
    assert.deepEqual(sheet.data[1], ['id_x0041_end', '  padded  ']);
  });

  it('names the sheet as asked, cleaned to Excel rules', async () => {
    const sheet = await readXlsx(Buffer.from((await exportRows([{ a: 1 }], 'xlsx', { sheetName: 'Quotes: 2026/11' })).body));
    assert.equal(sheet.sheet, 'Quotes_ 2026_11');
    assert.equal(sheetName('x'.repeat(40)).length, 31);
    assert.equal(sheetName(''), 'Rows');
    assert.equal(sheetName("'"), 'Rows');
  });

  it('no rows: a header-only sheet with columns, an empty sheet without', async () => {
    assert.deepEqual((await readXlsx(Buffer.from((await exportRows([], 'xlsx', { columns: ['a', 'b'] })).body))).data, [['a', 'b']]);
    assert.deepEqual((await readXlsx(Buffer.from((await exportRows([], 'xlsx')).body))).data, []);
  });

  it('writes a thousand rows', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ i, s: `row ${i}` }));
    const sheet = await readXlsx(Buffer.from((await exportRows(rows, 'xlsx')).body));
    assert.equal(sheet.data.length, 1001);
    assert.deepEqual(sheet.data[1000], [999, 'row 999']);
  });
});

describe('JSON', () => {
  it('is the rows as a 2-space pretty-printed array, values unflattened', async () => {
    const rows = [{ a: 'é 日本 😀', tags: ['x'], n: null, o: { k: 1 } }, { b: true }];
    const file = await exportRows(rows, 'json');
    assert.equal(file.contentType, 'application/json; charset=utf-8');
    assert.equal(file.extension, 'json');
    const text = Buffer.from(file.body).toString('utf8');
    assert.deepEqual(JSON.parse(text), rows);
    assert.ok(text.startsWith('[\n  {\n    "a": "é 日本 😀",\n    "tags": [\n      "x"\n    ]'), text.slice(0, 60));
    assert.equal(Buffer.from((await exportRows([], 'json')).body).toString('utf8'), '[]');
  });
});

describe('formats', () => {
  it('knows json, csv and xlsx only', async () => {
    assert.ok(isExportFormat('json') && isExportFormat('csv') && isExportFormat('xlsx'));
    for (const bad of ['pdf', 'CSV', '', undefined, 1, 'toString']) assert.equal(isExportFormat(bad), false, String(bad));
    await assert.rejects(exportRows([], 'pdf' as ExportFormat), TypeError);
  });
});

describe('lists in CSV and XLSX (issue 40): JSON text by default, or joined', () => {
  const rows = [
    { quote: 'a', tags: ['love', 'life'], n: [1, 2.5], mixed: ['x', null, true, ['y'], { k: 1 }], empty: [], note: 'plain' },
    { quote: 'b', tags: ['one'], n: [], mixed: [], empty: [], note: null },
  ];

  it('by default a list is its JSON text; with lists join its items joined by "; ", or the separator given', async () => {
    assert.equal(flattenValue(['love', 'life']), '["love","life"]');
    assert.equal(flattenValue(['love', 'life'], { lists: 'join' }), 'love; life');
    assert.equal(flattenValue(['love', 'life'], { lists: 'join', listSeparator: ' | ' }), 'love | life');
    assert.equal(flattenValue(['x', null, true, ['y'], { k: 1 }], { lists: 'join', listSeparator: ',' }), 'x,,true,["y"],{"k":1}', 'each item as its own cell would be');
    assert.equal(flattenValue([], { lists: 'join' }), '', 'an empty list is an empty text');
    assert.equal(flattenValue({ k: [1, 2] }, { lists: 'join' }), '{"k":[1,2]}', 'an object stays JSON text');
    assert.equal(flattenValue('a; b', { lists: 'join' }), 'a; b', 'text is unchanged');

    const json = Buffer.from((await exportRows(rows, 'csv')).body).toString('utf8');
    assert.deepEqual(parseCsv(json.slice(1))[1], ['a', '["love","life"]', '[1,2.5]', '["x",null,true,["y"],{"k":1}]', '[]', 'plain']);
    const joined = Buffer.from((await exportRows(rows, 'csv', { lists: 'join' })).body).toString('utf8');
    assert.deepEqual(parseCsv(joined.slice(1)).slice(1), [['a', 'love; life', '1; 2.5', 'x; ; true; ["y"]; {"k":1}', '', 'plain'], ['b', 'one', '', '', '', '']]);
    const piped = Buffer.from((await exportRows(rows, 'csv', { lists: 'join', listSeparator: ' | ' })).body).toString('utf8');
    assert.equal(parseCsv(piped.slice(1))[1]![1], 'love | life');
    const comma = Buffer.from((await exportRows(rows, 'csv', { lists: 'join', listSeparator: ',' })).body).toString('utf8');
    assert.ok(comma.includes('"love,life"'), 'a separator that needs quoting is quoted, as any comma');
    assert.equal(parseCsv(comma.slice(1))[1]![1], 'love,life');
  });

  it('a joined list is text like any other: one that a spreadsheet would run as a formula gets the quote in CSV (raw keeps it as scraped)', async () => {
    const hostile = [{ tags: ['=HYPERLINK("http://evil.example")', 'b'] }, { tags: ['-5', '3'] }];
    const safe = Buffer.from((await exportRows(hostile, 'csv', { lists: 'join' })).body).toString('utf8');
    assert.deepEqual(parseCsv(safe.slice(1)).slice(1), [['\'=HYPERLINK("http://evil.example"); b'], ['\'-5; 3']]);
    const asScraped = Buffer.from((await exportRows(hostile, 'csv', { lists: 'join', raw: true })).body).toString('utf8');
    assert.deepEqual(parseCsv(asScraped.slice(1)).slice(1), [['=HYPERLINK("http://evil.example"); b'], ['-5; 3']]);
    // As JSON text (the default) the cell starts with `[`, never a formula.
    const asJson = Buffer.from((await exportRows(hostile, 'csv')).body).toString('utf8');
    assert.equal(parseCsv(asJson.slice(1))[1]![0], '["=HYPERLINK(\\"http://evil.example\\")","b"]');
  });

  it('XLSX joins the same way, as text cells', async () => {
    const sheet = await readXlsx(Buffer.from((await exportRows(rows, 'xlsx', { lists: 'join' })).body));
    assert.deepEqual(sheet.data[1], ['a', 'love; life', '1; 2.5', 'x; ; true; ["y"]; {"k":1}', null, 'plain']);
    const asJson = await readXlsx(Buffer.from((await exportRows(rows, 'xlsx')).body));
    assert.equal(asJson.data[1]![1], '["love","life"]');
  });

  it('JSON keeps lists as lists whatever lists says; bad options are refused by checkCellOptions', async () => {
    assert.deepEqual(await exportRows(rows, 'json', { lists: 'join' }), await exportRows(rows, 'json'));
    assert.deepEqual(checkCellOptions({ lists: 'join', listSeparator: ' / ' }), { lists: 'join', listSeparator: ' / ' });
    assert.deepEqual(checkCellOptions({}), {});
    assert.deepEqual(cellOptionProblems({ lists: 'join', listSeparator: '🏷️🏷️🏷️🏷️🏷️' }), [], 'ten code points (five emoji, each with its variation selector) are ten characters');
    assert.throws(() => checkCellOptions({ lists: 'csv' as never }), /^TypeError: lists must be one of json, join$/);
    assert.throws(() => checkCellOptions({ listSeparator: '|' }), /list_separator goes with lists=join/);
    assert.throws(() => checkCellOptions({ lists: 'json', listSeparator: '|' }), /list_separator goes with lists=join/);
    assert.throws(() => checkCellOptions({ lists: 'join', listSeparator: '' }), /list_separator must be 1 to 10 characters/);
    assert.throws(() => checkCellOptions({ lists: 'join', listSeparator: 'x'.repeat(11) }), /list_separator must be 1 to 10 characters/);
    assert.deepEqual(cellOptionProblems({ lists: 'comma' as never, listSeparator: '|' }), [
      { path: 'lists', message: 'must be one of json, join' }, { path: 'list_separator', message: 'goes with lists=join' },
    ], 'each problem named by its parameter');
  });
});
