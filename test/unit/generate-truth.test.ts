/**
 * The generate bench's ground truth and matching rules (bench/generate-truth.ts): the CSV parser that reads the
 * records pages' records.csv, the decoding of those files, the text normalization, and when a record's first value
 * counts as found in a config's rows (contained, elisions as prefix and in-order matches, lost characters written
 * as "?", spaces a row lost, a value that is not there), and value recall (issue 23). The rules on the real records
 * set of the corpus, and the split by site: test/corpus/generate-truth.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeCsvBytes, decodeEntities, foundIn, matchValues, metaCharset, normalizeText,
  parseCsv, recallValues, rowText, valueRecall, type RecordsTruth,
} from '../../bench/generate-truth.ts';

describe('parseCsv', () => {
  it('splits values on commas and records on LF, CRLF and CR, keeping whitespace', () => {
    assert.deepEqual(parseCsv('a,b, c\r\nd,,f\rg\n'), [['a', 'b', ' c'], ['d', '', 'f'], ['g']]);
  });

  it('reads quoted values with commas, doubled quotes and line breaks', () => {
    const text = '1. Design,"by TORI KELLY, live","""Thong Song"", I\'m a bring"\n"two\nlines",x\n';
    assert.deepEqual(parseCsv(text), [
      ['1. Design', 'by TORI KELLY, live', '"Thong Song", I\'m a bring'],
      ['two\nlines', 'x'],
    ]);
  });

  it('counts a quoted value with an empty line inside as one record', () => {
    assert.equal(parseCsv('"a\r\n\r\nb",c\nd,e').length, 2);
  });

  it('skips blank lines, keeps lines of empty values, and ends without a trailing line break', () => {
    assert.deepEqual(parseCsv('\n  \na,b\n\n ,\nlast'), [['a', 'b'], [' ', ''], ['last']]);
  });

  it('keeps a quote inside an unquoted value and text after a closing quote as written', () => {
    assert.deepEqual(parseCsv('5" screen,"a"b,c'), [['5" screen', 'ab', 'c']]);
  });

  it('ends an unterminated quoted value at the end of the text', () => {
    assert.deepEqual(parseCsv('a,"open, never closed\nstill'), [['a', 'open, never closed\nstill']]);
  });
});

describe('decoding', () => {
  it('reads UTF-8 as UTF-8 and other bytes as Windows-1252, even mixed in one file', () => {
    assert.deepEqual(decodeCsvBytes(Buffer.from('caf\u00e9 \u2019', 'utf8')), { text: 'café ’', encoding: 'utf-8' });
    // 0xa0 and 0x92 alone are no UTF-8; E2 80 99 is a UTF-8 "’".
    const mixed = Uint8Array.from([0x43, 0x24, 0xa0, 0x31, 0x20, 0x92, 0x20, 0xe2, 0x80, 0x99]);
    assert.deepEqual(decodeCsvBytes(mixed), { text: 'C$\u00a01 ’ ’', encoding: 'windows-1252' });
  });

  it('finds the charset a page declares', () => {
    assert.equal(metaCharset(Buffer.from('<html><head><meta charset="UTF-8">')), 'utf-8');
    assert.equal(metaCharset(Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=windows-1252" />')), 'windows-1252');
    assert.equal(metaCharset(Buffer.from('<html><head><title>x</title>')), undefined);
  });
});

describe('normalizeText', () => {
  it('decodes entities, applies NFKC, drops invisible characters and double quotes, folds whitespace and case', () => {
    assert.equal(decodeEntities('Tom &amp; Jerry &eacute;t&#233; &#x2019; &lt;b&gt; a < b'), 'Tom & Jerry été ’ <b> a < b');
    assert.equal(normalizeText('  Caf&eacute;\u00a0\u00a0 Ｂar\u200b…\n"Stu"  '), 'café bar... stu');
    assert.equal(normalizeText('Stuart A. "Stu" Adam'), normalizeText('Stuart A.  Stu Adam'));
    assert.equal(normalizeText('“Quoted” NBA', { keepCase: true }), '“Quoted” NBA');
  });

  it('joins a row\'s values with spaces, arrays flattened, nulls skipped', () => {
    assert.equal(rowText({ title: 'A &amp; B', price: 12.5, tags: ['x', 'y'], none: null, ok: true }), 'a & b 12.5 x y true');
  });
});

describe('found', () => {
  const rows = [
    { title: 'No more disguise Feeling exposed Under this mask', by: 'by TORI KELLY' },
    { title: 'Twisted By Design', artist: 'SUM 41' },
    { name: 'Jiří Reinberger', extra: 'New Delhi Metallo-β-Lactamase' },
    { phone: 'AppleiPhone 7 Plus' },
  ];
  const found = (value: string): boolean => matchValues([value], rows).found === 1;

  it('finds a value contained in a row\'s text, across fields, whatever the case and spacing', () => {
    assert.ok(found('twisted  by design'));
    assert.ok(found('Design SUM 41'));
    assert.ok(found('&quot;Twisted&quot; By Design'));
  });

  it('reads a trailing "..." or "…" as a prefix match', () => {
    assert.ok(found('No more disguise Feeling ...'));
    assert.ok(found('No more disguise Feeling…'));
    assert.ok(found('Twisted By Design ...')); // the row's text plus an elision
    assert.ok(!found('No more disguise Feeling hidden ...'));
  });

  it('finds the pieces around an inner elision in order only', () => {
    assert.ok(found('No more disguise … this mask'));
    assert.ok(!found('this mask … No more disguise'));
  });

  it('lets "?" stand for characters the CSV could not hold, not for whole values', () => {
    assert.ok(found('Ji?í Reinberger'));
    assert.ok(found('Metallo-?-Lactamase'));
    assert.ok(!found('Ji?í Reinbergerova'));
    assert.ok(!foundIn('??????', 'any text at all'));
  });

  it('finds a value whose spaces the row lost between two elements', () => {
    assert.ok(found('Apple iPhone 7 Plus'));
    assert.ok(!found('Apple iPhone 8'));
  });

  it('does not find a value that is not there, nor an empty one', () => {
    const m = matchValues(['Hate By Design', 'Twisted By Design', '', '...'], rows);
    assert.deepEqual({ total: m.total, found: m.found, missing: m.missing }, { total: 4, found: 1, missing: ['Hate By Design', '', '...'] });
    assert.equal(m.share, 0.25);
  });
});

describe('value recall', () => {
  const truth = (csv: string): RecordsTruth => ({ folder: 'x--y--z', records: parseCsv(csv).map((values) => ({ values, first: values[0]! })), csvEncoding: 'utf-8', html: new Uint8Array(), charset: undefined });
  const page = '<body><ul><li><b>Hate &amp; Design</b> <i>Albert Einstein</i> 1999 <span>No</span></li><li><b>Twisted</b> <i>Jane Austen</i></li></ul><script>var secret = "Hidden value";</script></body>';
  const values = recallValues(truth('Hate & Design,Albert Einstein,1999,No\nTwisted,Jane Austen,Hidden value,Not on the page\n'), page);

  it('looks for every cell of 3 characters or more that the page text holds, normalized', () => {
    assert.deepEqual(values, ['hate & design', 'albert einstein', '1999', 'twisted', 'jane austen']);
  });

  it('finds a value in one row value, case-insensitively, by its first 40 characters', () => {
    const long = 'a'.repeat(39) + 'b tail that differs';
    const m = valueRecall([...values, long.toLowerCase()], [
      { title: 'HATE & DESIGN', author: 'Albert Einstein, physicist', year: 1999 },
      { title: 'Twisted', tags: ['x', 'Jane Austen'] },
      { text: `${'A'.repeat(39)}B and something else` },
    ]);
    assert.deepEqual(m, { total: 6, found: 6, share: 1 });
  });

  it('does not find a value split over two fields, nor one that is missing', () => {
    const m = valueRecall(['hate & design', 'jane austen'], [{ a: 'Hate &', b: 'Design' }, { a: 'Jane' }]);
    assert.deepEqual(m, { total: 2, found: 0, share: 0 });
  });

  it('is 1 on a page with nothing to look for, and counts nothing found in no rows', () => {
    assert.equal(valueRecall([], []).share, 1);
    assert.equal(valueRecall(['x y z'], []).share, 0);
  });
});
