/**
 * untilDisconnected (lambdas/engine/browser/host.ts): a tab being opened on a browser that dies fails at once with the
 * error the loader reads as browser_crashed, instead of waiting out puppeteer's 30 s target time-out.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Browser } from 'puppeteer-core';
import { untilDisconnected } from '../../lambdas/engine/browser/host.ts';

/** A browser as untilDisconnected sees it: `connected` and the `disconnected` event. */
function fakeBrowser(): EventEmitter & { connected: boolean } {
  return Object.assign(new EventEmitter(), { connected: true });
}

describe('untilDisconnected', () => {
  it('rejects with "Target closed: browser has disconnected" when the browser disconnects first, and stops listening', async () => {
    const browser = fakeBrowser();
    const opening = untilDisconnected(browser as unknown as Browser, () => new Promise<never>(() => undefined));
    assert.equal(browser.listenerCount('disconnected'), 1);
    browser.connected = false;
    browser.emit('disconnected');
    await assert.rejects(opening, /^Error: Target closed: browser has disconnected$/);
  });

  it('rejects at once on a browser already disconnected, without opening', async () => {
    const browser = fakeBrowser();
    browser.connected = false;
    let opened = false;
    await assert.rejects(untilDisconnected(browser as unknown as Browser, async () => { opened = true; }), /Target closed/);
    assert.equal(opened, false);
  });

  it("gives the opener's result or error otherwise, and removes its listener", async () => {
    const browser = fakeBrowser();
    assert.equal(await untilDisconnected(browser as unknown as Browser, async () => 'page'), 'page');
    await assert.rejects(untilDisconnected(browser as unknown as Browser, async () => { throw new Error('Protocol error: no target'); }), /no target/);
    assert.equal(browser.listenerCount('disconnected'), 0);
  });
});
