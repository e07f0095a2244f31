/**
 * Exports made in pieces (lambdas/export/rows-export.ts `exportRowsInPieces`, issue 37): joined, the pieces are the
 * bytes `exportRows` makes, for every format, on rows of every shape the export rules tell apart (nested values,
 * formula-like text, keys only later rows have, quotes and line breaks, non-BMP text, no rows, rows without keys),
 * with pieces far smaller than a row and far larger than the file. XLSX is compared with its zip entries' times
 * zeroed (write-excel-file stamps them when it writes).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EXPORT_FORMATS, exportRows, exportRowsInPieces, type ExportFormat, type ExportOptions } from '../../lambdas/export/rows-export.ts';
import { withoutZipTimes } from '../helpers/zip-times.ts';

const ROWS: Record<string, unknown>[] = [
  { title: 'Plain', price: 12.5, tags: ['a', 'b'], meta: { k: 1, nested: { deep: [1, 2] } }, ok: true, none: null },
  { title: '=HYPERLINK("http://x.example","click")', price: -3, tags: [], ok: false },
  { title: 'quote " comma , line\nbreak\r\nand tab\t', emoji: '😀 𝌆 日本語', price: '+1.5' },
  { late: 'a key only this row has', title: '@SUM(A1)' },
  {},
  { title: '-5', price: Number.NaN },
];

async function joined(rows: Record<string, unknown>[], format: ExportFormat, options: ExportOptions, pieceChars?: number): Promise<{ bytes: Buffer; pieces: number }> {
  const parts: Uint8Array[] = [];
  for await (const piece of exportRowsInPieces(rows, format, options, pieceChars)) parts.push(piece);
  return { bytes: Buffer.concat(parts), pieces: parts.length };
}

const comparable = (format: ExportFormat, bytes: Uint8Array) => (format === 'xlsx' ? withoutZipTimes(bytes) : Buffer.from(bytes));

describe('exports in pieces: the same bytes as exportRows', () => {
  for (const format of EXPORT_FORMATS) {
    for (const [name, rows] of Object.entries({ 'mixed rows': ROWS, 'no rows': [], 'rows without keys': [{}, {}], '3,000 rows': Array.from({ length: 3000 }, (_, i) => ({ ...ROWS[i % ROWS.length], n: i })) })) {
      for (const options of [{}, { raw: true }, { columns: ['price', 'title', 'missing'], sheetName: 'My: sheet' }, { lists: 'join' }, { lists: 'join', listSeparator: ' | ' }, { lists: 'join', listSeparator: ',', raw: true }] as ExportOptions[]) {
        it(`${format}, ${name}, options ${JSON.stringify(options)}`, async () => {
          const whole = (await exportRows(rows, format, options)).body;
          for (const pieceChars of [7, 4096, 10_000_000]) {
            const { bytes, pieces } = await joined(rows, format, options, pieceChars);
            assert.ok(comparable(format, bytes).equals(comparable(format, whole)), `${format} in pieces of ${pieceChars}: ${bytes.length} bytes against ${whole.length}`);
            if (pieceChars === 7 && whole.length > 100) assert.ok(pieces > 3, `made in pieces (${pieces})`);
          }
        });
      }
    }
  }

  it('an unknown format is a TypeError, as exportRows has it', async () => {
    await assert.rejects(joined(ROWS, 'ods' as ExportFormat, {}), TypeError);
  });
});
