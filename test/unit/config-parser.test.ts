/**
 * The local service's config parser (lambdas/adapters/local/config-parser.ts): the same answers as
 * parseConfig, large texts parsed off the calling thread (its event loop turns while they parse), a
 * parse past its time-out refused and the thread replaced.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../lambdas/engine/config.ts';
import { INLINE_MAX_CHARS, ThreadConfigParser } from '../../lambdas/adapters/local/config-parser.ts';
import { isCodedError } from '../../lambdas/errors.ts';

const VALID = `target: { url: "https://quotes.toscrape.com/" }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
`;
/** A valid config longer than INLINE_MAX_CHARS (its comment makes it long). */
const LARGE_VALID = `${VALID}# ${'x'.repeat(INLINE_MAX_CHARS)}\n`;
/** Invalid, long: 60 fields with a bad type each (more problems than a ConfigError lists). */
const LARGE_INVALID = `${VALID}${Array.from({ length: 60 }, (_, i) => `    - { name: f${i}, selector: p, type: bogus }\n`).join('')}`;
/** Near the token cap: tens of milliseconds to parse. */
const SLOW = `${VALID}description: [${'1,'.repeat(20_000)}1]\n`;

/** What parseConfig does with a text: the config, or the coded error as plain data. */
function direct(text: string): unknown {
  try {
    return { config: parseConfig(text) };
  } catch (err) {
    assert.ok(isCodedError(err));
    return { code: err.code, message: err.message, details: err.details };
  }
}

async function viaParser(parser: ThreadConfigParser, text: string): Promise<unknown> {
  try {
    return { config: await parser.parse(text) };
  } catch (err) {
    assert.ok(isCodedError(err), String(err));
    return { code: err.code, message: err.message, details: err.details };
  }
}

describe('ThreadConfigParser', () => {
  const parser = new ThreadConfigParser();
  after(() => parser.close());

  it('answers as parseConfig does, for small and large, valid and invalid texts', async () => {
    assert.ok(LARGE_VALID.length > INLINE_MAX_CHARS && LARGE_INVALID.length > INLINE_MAX_CHARS);
    for (const text of [VALID, 'target: [', LARGE_VALID, LARGE_INVALID, SLOW]) {
      assert.deepEqual(await viaParser(parser, text), direct(text));
    }
  });

  it('a large text is parsed off the calling thread: the event loop turns before the answer', async () => {
    let turned = false;
    setImmediate(() => { turned = true; });
    await parser.parse(SLOW).catch(() => undefined);
    assert.equal(turned, true);
    // A small text is parsed inline: its answer comes before the loop turns.
    turned = false;
    setImmediate(() => { turned = true; });
    await parser.parse(VALID);
    assert.equal(turned, false);
  });

  it('texts sent at once are answered each with its own result', async () => {
    const texts = [LARGE_VALID, LARGE_INVALID, SLOW, LARGE_VALID];
    const answers = await Promise.all(texts.map((t) => viaParser(parser, t)));
    assert.deepEqual(answers, texts.map(direct));
  });

  it('past its time-out a text is refused with invalid_config alone: the texts behind it go on in a new thread', async () => {
    const impatient = new ThreadConfigParser({ timeoutMs: 1 });
    try {
      const slow = impatient.parse(SLOW);
      const next = viaParser(impatient, LARGE_INVALID);
      const last = impatient.parse(LARGE_VALID);
      // The first text was taken with the 1 ms time-out; the ones waiting are taken with this one.
      impatient.timeoutMs = 60_000;
      await assert.rejects(slow, (e: Error & { code?: string }) => e.code === 'invalid_config' && /longer than 1 ms/.test(e.message));
      assert.deepEqual(await next, direct(LARGE_INVALID));
      assert.equal((await last).extract.container, 'div.quote');
    } finally {
      await impatient.close();
    }
  });

  it('more than 32 texts waiting: the rest are refused at once with 503 service_busy', async () => {
    const busy = new ThreadConfigParser();
    try {
      const answers = await Promise.allSettled(Array.from({ length: 40 }, () => busy.parse(LARGE_VALID)));
      const refused = answers.filter((a) => a.status === 'rejected');
      assert.equal(refused.length, 7);
      for (const r of refused) assert.equal(((r as PromiseRejectedResult).reason as { code: string }).code, 'service_busy');
    } finally {
      await busy.close();
    }
  });
});
