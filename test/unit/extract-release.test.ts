/**
 * releaseDocument (lambdas/engine/extract.ts): a document read with loadHtml() and then let go dies young, where one
 * not let go is promoted to the old generation by the next scavenge (cheerio's load() makes a class per document that
 * the scavenger keeps alive, and with it the tree). A child process with `--expose-gc` loads 100 pages of 400 items,
 * one minor GC after each 20 (test/fixtures/young-trees.ts); the bytes its scavenges promoted are read from V8's
 * `--trace-gc-nvp` lines, which a major GC in between does not change. Also: the reads
 * before the release are unaffected, and the page reader's rows are whole after it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadHtml, releaseDocument } from '../../lambdas/engine/extract.ts';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { PageReading } from '../../lambdas/engine/crawl/page-reader.ts';

const CHILD = fileURLToPath(new URL('../fixtures/young-trees.ts', import.meta.url));

/** Pages read and bytes promoted by the scavenges (V8's `--trace-gc-nvp` lines, `gc=s … promoted=N`). */
function growth(mode: 'keep' | 'release'): { read: number; promotedBytes: number } {
  const out = execFileSync(process.execPath, ['--expose-gc', '--trace-gc-nvp', CHILD, mode], { encoding: 'utf8', timeout: 60_000 });
  const lines = out.trim().split('\n');
  const { read } = JSON.parse(lines.find((l) => l.startsWith('{"read"'))!) as { read: number };
  let promotedBytes = 0;
  for (const line of lines) if (/ gc=s /.test(line)) promotedBytes += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
  return { read, promotedBytes };
}

describe('releaseDocument', () => {
  it('trees let go die young: scavenges promote a tenth of what they promote of trees kept', () => {
    const kept = growth('keep');
    const released = growth('release');
    assert.equal(kept.read, 40_000);
    assert.equal(released.read, 40_000);
    assert.ok(kept.promotedBytes > 20e6, `without the release the trees are promoted (${kept.promotedBytes} bytes)`);
    assert.ok(released.promotedBytes < kept.promotedBytes / 10 && released.promotedBytes < 8e6, `released: ${released.promotedBytes} bytes promoted, against ${kept.promotedBytes} kept`);
  });

  it('empties the document; values read before are whole', () => {
    const $ = loadHtml('<ul><li>a</li><li>b</li></ul>');
    const texts = $('li').map((_, el) => $(el).text()).get();
    releaseDocument($);
    assert.deepEqual(texts, ['a', 'b']);
    assert.equal($('li').length, 0);
    releaseDocument($);
  });

  it('the page reader gives whole rows and the control after letting its tree go', () => {
    const reading = new PageReading(parseConfig(`target: { url: "https://shop.example/" }
extract:
  container: li
  fields:
    - { name: name, selector: a }
    - { name: link, selector: a, type: link }
pagination: { type: click, selector: a.next }
detail_fields:
  fields:
    - { name: heading, selector: h1 }
`));
    const read = reading.listing('<ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul><a class="next" href="/page/2">next</a>', 'https://shop.example/');
    assert.deepEqual(read, { rows: [{ name: 'A', link: 'https://shop.example/a' }, { name: 'B', link: 'https://shop.example/b' }], base: 'https://shop.example/', control: { kind: 'link', url: 'https://shop.example/page/2' } });
    assert.deepEqual(reading.detail('<h1>Item A</h1>', 'https://shop.example/a'), { heading: 'Item A' });
  });
});
