/**
 * Exports (lambdas/export/rows-export.ts, docs/exports.md): column order, CSV (RFC 4180, BOM, CRLF), XLSX read
 * back with read-excel-file (an independent reader), JSON, the flattening rule shared by CSV and XLSX.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import readXlsxFile from 'read-excel-file/node';
import { csvField, exportColumns, exportRows, flattenValue, isExportFormat, rowsCsv, sheetName, type ExportFormat } from '../../lambdas/export/rows-export.ts';

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

  it('keeps cells that start with =, +, - or @ as they are (documented: no formula-injection prefix)', () => {
    const text = rowsCsv([{ a: '=1+1', b: '+33 1 23', c: '-5', d: '@x' }]);
    assert.equal(text, '\uFEFFa,b,c,d\r\n=1+1,+33 1 23,-5,@x\r\n');
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
