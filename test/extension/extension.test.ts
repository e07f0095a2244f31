/**
 * The browser extension (clients/extension, issue 15) in real Chromium: Debian's /usr/bin/chromium (the
 * headless shell of @sparticuz/chromium cannot load extensions) with the built extension loaded unpacked,
 * driven through puppeteer-core, against the fixture site, pages served here, and the real local service.
 * The popup is opened as a user opens it, with the toolbar action on the page (puppeteer's
 * triggerExtensionAction), which is also what grants the extension the `activeTab` access it runs with.
 *
 * Shown here: sign-in with email and password and with the key; sync round-trips a config (the service's
 * copy equals the edit; an edit on the service comes back; the list and the YAML are there offline);
 * the editor's errors name the line and column the service names; Quick Test gives the first 20 items of the
 * page and loads nothing else; a full run with pagination gives the rows the service's run of the same
 * config gives; detail pages in a background tab; stop keeps the rows read; each export downloaded from the
 * popup and read back (JSON, CSV with its BOM, XLSX with read-excel-file); suggest finds the records of the
 * fixture books listings; a popup screenshot (docs/screenshots/extension-popup.png with SAI_UPDATE_SCREENSHOTS=1); the
 * icons in the manifest, each PNG of its size.
 *
 * Expected values come from the fixture's data (allQuotes(), AUTHOR_RECORDS), from the pages read here
 * with cheerio, or from the service's answer to the same request; never from the extension itself.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Extension, Page, WebWorker } from 'puppeteer-core';
import readXlsxFile from 'read-excel-file/node';
import { load } from 'cheerio';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { quotesConfigYaml, tablefulConfigYaml } from '../fixtures/site/quotes-config.ts';
import { client, firstStartCredentials, startService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/until.ts';
import { launchDebianChromium } from '../helpers/chromium.ts';
import { serveInline, nameKey, type InlineServer } from '../engine/helpers.ts';
import { bookshopPage } from '../fixtures/site/books.ts';
import { AUTHOR_RECORDS } from '../fixtures/site/quotes-data.ts';
import { SEARCH_ACTIONS_YAML, searchActionsExpected } from '../fixtures/site/search-actions.ts';
import { ICON_SIZES, iconPng } from '../../scripts/extension-icons.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DIST = path.join(ROOT, 'clients/extension/dist/chrome-mv3');
const STEP_MS = 30_000;

type Row = Record<string, unknown>;


/** 50 products on one page (more than a Quick Test's 20), with a next link to a second page. */
function productsPage(first: number, count: number, next: string | null): string {
  const items = Array.from({ length: count }, (_, i) => {
    const n = first + i;
    return `<li class="product"><h2><a href="/product/${n}">Product ${n}</a></h2><span class="price">£${(n * 1.25).toFixed(2)}</span></li>`;
  }).join('\n');
  return `<!doctype html><html><head><title>Products</title></head><body><ul class="products">${items}</ul>${next ? `<a class="next" href="${next}">next</a>` : ''}</body></html>`;
}

const PRODUCTS_YAML = (url: string) => `version: "2.0"
name: Products
target:
  url: ${url}
extract:
  container: li.product
  type: list
  fields:
    - { name: title, selector: h2 a }
    - { name: url, selector: h2 a, type: link }
    - { name: price, selector: .price, transform: [strip_currency, to_number] }
pagination:
  type: click
  selector: a.next
  max_pages: 5
`;

describe('browser extension in Chromium', { timeout: 300_000 }, () => {
  let site: FixtureSite;
  let pages: InlineServer;
  let svc: TestService;
  let browser: Browser;
  let extension: Extension;
  let worker: WebWorker;
  let cred: ReturnType<typeof firstStartCredentials>;
  let api: ReturnType<typeof client>;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-extension-'));
  const downloads = path.join(work, 'downloads');
  const shotsDir = path.join(work, 'screenshots');
  const consoleErrors: string[] = [];

  /** A tab showing `url`, in front. */
  const openTab = async (url: string): Promise<Page> => {
    const page = await browser.newPage();
    page.setDefaultTimeout(STEP_MS);
    await page.goto(url, { waitUntil: 'load' });
    await page.bringToFront();
    return page;
  };

  /** Opens the popup on `page` with the toolbar action, as a click on the extension's button does. */
  const openPopup = async (page: Page): Promise<Page> => {
    await page.bringToFront();
    await page.triggerExtensionAction(extension);
    const target = await browser.waitForTarget((t) => t.url().endsWith('/popup.html'), { timeout: STEP_MS });
    const popup = (await target.asPage())!;
    popup.setDefaultTimeout(STEP_MS);
    popup.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`popup: ${m.text()}`); });
    await popup.waitForSelector('.popup-head');
    // The popup has read its state (account, configs, the last run) once the view buttons are there.
    await popup.waitForSelector('.popup[data-ready="true"]');
    return popup;
  };

  const view = async (popup: Page, name: 'run' | 'configs' | 'account') => {
    await popup.click(`[data-view="${name}"]`);
    await popup.waitForSelector(`[data-view="${name}"][aria-current="page"]`);
  };

  /** Sets a field's value as typing would. */
  const fill = (popup: Page, selector: string, value: string) => popup.$eval(selector, (el, v) => {
    const input = el as HTMLInputElement | HTMLTextAreaElement;
    const proto = input instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(input, v);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);

  const notice = (popup: Page) => popup.waitForSelector('[data-testid="notice"]').then((h) => h!.evaluate((e) => e.textContent ?? ''));

  /**
   * Clicks a button that starts a run (Quick Test, Run, Suggest's table aside) and waits for that run to end, not
   * for the last run the popup showed when it opened: the run section's `data-started` must change.
   * @returns the ended run's status.
   */
  const startAndEnd = async (popup: Page, button: 'quick-test' | 'run', onStarted?: () => Promise<void>) => {
    const before = await popup.$eval('[data-testid="run-state"]', (e) => e.getAttribute('data-started')).catch(() => null);
    await popup.click(`[data-testid="${button}"]`);
    await popup.waitForFunction((b) => {
      const e = document.querySelector('[data-testid="run-state"]');
      return e && e.getAttribute('data-started') !== b;
    }, {}, before);
    if (onStarted) await onStarted();
    const h = await popup.waitForSelector('[data-testid="run-state"]:not([data-status="running"])', { timeout: 60_000 });
    const status = await h!.evaluate((e) => e.getAttribute('data-status'));
    if (status === 'failed') process.stdout.write(`# run failed: ${await h!.evaluate((e) => e.textContent)}\n`);
    return status;
  };

  /** The last ended run as the service worker keeps it (chrome.storage.local). */
  const lastRun = () => worker.evaluate(`chrome.storage.local.get('lastRun').then((s) => s.lastRun)`) as Promise<{ status: string; rows: Row[]; mode: string; warnings: string[]; configName: string; error?: { code: string; message: string } }>;

  /** Rows shown in the popup's table, as text per column. */
  const shownRows = (popup: Page) => popup.$$eval('[data-testid="rows"] tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).slice(1).map((td) => td.textContent ?? '')));

  /** Puts a YAML text into the popup's editor (Configs view). */
  const editYaml = async (popup: Page, yaml: string) => {
    await view(popup, 'configs');
    await fill(popup, '#yaml', yaml);
  };

  /** Signs the popup in with the API key (Account view). */
  const signInWithKey = async (popup: Page) => {
    await view(popup, 'account');
    if (await popup.$('[data-testid="account"]')) return;
    await fill(popup, '#base', svc.url);
    await fill(popup, '#key', cred.apiKey);
    await popup.click('[data-testid="sign-in"] button[type="submit"]');
    await popup.waitForSelector('[data-testid="account"]');
  };

  /** Runs a config on the service (POST /run) and returns its rows. */
  const serviceRows = async (yaml: string): Promise<Row[]> => {
    const started = await api.post('/api/v1/run/', { yaml_content: yaml });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const id = (started.body as { id: string }).id;
    await until('the service run to end', async () => {
      const s = await api.get(`/api/v1/jobs/${id}/status/`);
      const status = (s.body as { status: string }).status;
      return status === 'completed' || status === 'failed' ? status : undefined;
    }, 60_000);
    const results = await api.get(`/api/v1/jobs/${id}/results/`);
    return (results.body as Array<{ data: Row[] }>)[0]!.data;
  };

  before(async () => {
    // `npm test` builds the extension first (npm run build:extension); a run of this file alone builds it when it never was.
    if (!fs.existsSync(path.join(DIST, 'manifest.json'))) {
      execFileSync(path.join(ROOT, 'node_modules/.bin/wxt'), ['build', 'clients/extension'], { cwd: ROOT, stdio: 'ignore' });
    }
    fs.mkdirSync(downloads);
    fs.mkdirSync(shotsDir);
    site = await startFixtureSite();
    pages = await serveInline({
      '/products/': productsPage(1, 50, '/products/2/'),
      '/products/2/': productsPage(51, 50, null),
      '/books/': bookshopPage('/books/')!,
      '/books/catalogue/': bookshopPage('/books/catalogue/page-2.html')!,
    });
    svc = await startService();
    cred = firstStartCredentials(svc);
    api = client(svc.url, cred.apiKey);
    browser = await launchDebianChromium(path.join(work, 'profile'), { pipe: true, enableExtensions: [DIST] });
    const session = await browser.target().createCDPSession();
    await session.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });
    const swTarget = await browser.waitForTarget((t) => t.type() === 'service_worker' && /^chrome-extension:\/\/[a-p]{32}\/background\.js$/.test(t.url()));
    worker = (await swTarget.worker())!;
    const id = new URL(swTarget.url()).host;
    extension = await until('the extension in the browser\'s list', async () => (await browser.extensions()).get(id));
    assert.equal(extension.name, 'scrape-ai');
  });

  after(async () => {
    await browser?.close();
    await svc?.stop();
    await pages?.close();
    await site?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('builds a Manifest V3 extension with narrow permissions, and a zip for the store', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(DIST, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.manifest_version, 3);
    assert.deepEqual(manifest.permissions, ['activeTab', 'scripting', 'storage']);
    assert.deepEqual(manifest.host_permissions, ['http://127.0.0.1/*'], 'the service URL only (SAI_SERVICE_URL at build time)');
    assert.deepEqual(manifest.content_scripts, undefined, 'no content script on every page');
    const js = fs.readdirSync(DIST, { recursive: true }).filter((f) => String(f).endsWith('.js')).map((f) => fs.readFileSync(path.join(DIST, String(f)), 'utf8')).join('\n');
    // No call of the global eval (a method call `x.eval(` is not one, nor a method of that name: re2js's
    // `eval(t,n){…}`), and no Function constructor.
    const evalCalls = [...js.matchAll(/(?<![.\w$])eval\(([^()]*)\)(\s*\{)?/g)].filter((m) => !m[2]);
    assert.deepEqual(evalCalls.map((m) => m[0]), [], 'no eval in the bundles (MV3 CSP)');
    assert.ok(!/\bnew Function\(/.test(js), 'no new Function in the bundles (MV3 CSP)');
    const zips = fs.readdirSync(path.dirname(DIST)).filter((f) => f.endsWith('.zip'));
    if (process.env.npm_lifecycle_event === 'test') assert.equal(zips.length, 1, 'npm test built the store zip');
  });

  it('has its icons in the sizes Chrome and the Chrome Web Store ask for (16, 32, 48, 128 px PNG), listed in the manifest', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(DIST, 'manifest.json'), 'utf8')) as { icons?: Record<string, string>; action?: { default_icon?: Record<string, string> } };
    const expected = Object.fromEntries(ICON_SIZES.map((size) => [String(size), `icon/${size}.png`]));
    assert.deepEqual(manifest.icons, expected);
    assert.deepEqual(manifest.action?.default_icon, { 16: 'icon/16.png', 32: 'icon/32.png' });
    for (const size of ICON_SIZES) {
      const png = fs.readFileSync(path.join(DIST, `icon/${size}.png`));
      assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${size}: a PNG`);
      // The first chunk is IHDR: width, height, bit depth 8, colour type 6 (RGBA: the corners are transparent).
      assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
      assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20), png[24], png[25]], [size, size, 8, 6], `${size}: its IHDR`);
      // The committed file is what scripts/extension-icons.ts draws.
      assert.ok(png.equals(iconPng(size)), `clients/extension/public/icon/${size}.png is not the output of scripts/extension-icons.ts: run it again`);
    }
    const zip = fs.readdirSync(path.dirname(DIST)).find((f) => f.endsWith('.zip'));
    if (zip) {
      const names = fs.readFileSync(path.join(path.dirname(DIST), zip)).toString('latin1');
      for (const size of ICON_SIZES) assert.ok(names.includes(`icon/${size}.png`), `the store zip has icon/${size}.png`);
    }
  });

  it('signs in with email and password, signs out, and signs in with the API key', async () => {
    const tab = await openTab(`${site.url}/quotes/`);
    const popup = await openPopup(tab);
    assert.equal(await popup.$eval('[data-testid="who"]', (e) => e.textContent), 'not signed in');
    await view(popup, 'account');
    await fill(popup, '#base', svc.url);
    await fill(popup, '#email', cred.email);
    await fill(popup, '#password', 'wrong password');
    await popup.click('[data-testid="sign-in"] button[type="submit"]');
    assert.match(await notice(popup), /invalid|incorrect|wrong/i);
    await fill(popup, '#password', cred.password);
    await popup.click('[data-testid="sign-in"] button[type="submit"]');
    await popup.waitForSelector('[data-testid="account"], [data-testid="notice"]:not(:empty)');
    await popup.waitForSelector('[data-testid="account"]', { timeout: 2000 }).catch(async () => assert.fail(`no sign-in: ${await notice(popup)}`));
    assert.match(await popup.$eval('[data-testid="account"]', (e) => e.textContent ?? ''), new RegExp(`Signed in as ${cred.email.replace('.', '\\.')}`));
    const stored = await worker.evaluate(`chrome.storage.local.get('account').then((s) => s.account)`) as { apiKey: string };
    assert.equal(stored.apiKey, cred.apiKey, 'the login answer\'s key is the account\'s key');
    assert.ok(!JSON.stringify(await worker.evaluate(`chrome.storage.local.get(null)`)).includes(cred.password), 'the password is not kept');
    await popup.click('[data-testid="sign-out"]');
    await popup.waitForSelector('[data-testid="sign-in"]');
    await signInWithKey(popup);
    assert.equal(await popup.$eval('[data-testid="who"]', (e) => e.textContent), cred.email);
    await popup.close();
    await tab.close();
  });

  it('sync round-trips a config: the list, the edit saved with PUT, a change made on the service, offline', async () => {
    const yaml = quotesConfigYaml(`${site.url}/quotes/`, 3, 'Quotes (extension sync)');
    const created = await api.post('/api/v1/configs/', { name: 'Quotes (extension sync)', target_url: `${site.url}/quotes/`, yaml_content: yaml });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = (created.body as { id: string }).id;
    const tab = await openTab(`${site.url}/quotes/`);
    let popup = await openPopup(tab);
    await signInWithKey(popup);
    await view(popup, 'configs');
    await popup.click('[data-testid="sync"]');
    assert.match(await notice(popup), /Synced \d+ config/);
    const names = await popup.$$eval('[data-testid="config-list"] li button', (bs) => bs.map((b) => b.textContent));
    assert.ok(names.includes('Quotes (extension sync)'), `synced list: ${names.join(', ')}`);
    await popup.evaluate(() => Array.from(document.querySelectorAll<HTMLButtonElement>('[data-testid="config-list"] li button')).find((b) => b.textContent === 'Quotes (extension sync)')!.click());
    await popup.waitForFunction((y) => (document.querySelector('#yaml') as HTMLTextAreaElement).value === y, {}, yaml);

    // An error: the editor names the line and column the service names for the same text.
    const broken = yaml.replace('  type: list\n', '  type: list\n  colour: blue\n');
    await fill(popup, '#yaml', broken);
    const shown = await popup.waitForSelector('[data-testid="yaml-errors"] li').then((h) => h!.evaluate((e) => e.textContent ?? ''));
    const fromService = await api.post('/api/v1/configs/validate/', { yaml_content: broken });
    assert.equal(fromService.status, 400);
    const detail = (fromService.body as { details: Array<{ line: number; column: number }> }).details[0]!;
    assert.match(shown, new RegExp(`^line ${detail.line}, column ${detail.column}: `), `popup: ${shown}`);
    await popup.click('[data-testid="save"]');
    assert.match(await notice(popup), /errors/);
    assert.equal(((await api.get(`/api/v1/configs/${id}/`)).body as { yaml_content: string }).yaml_content, yaml, 'nothing saved');

    // A valid edit, saved: the service's copy is the edit.
    const edited = yaml.replace('max_pages: 3', 'max_pages: 2');
    await fill(popup, '#yaml', edited);
    await popup.waitForFunction(() => document.querySelector('[data-testid="yaml-errors"]') === null);
    await popup.click('[data-testid="save"]');
    assert.match(await notice(popup), /Saved "Quotes \(extension sync\)"/);
    assert.equal(((await api.get(`/api/v1/configs/${id}/`)).body as { yaml_content: string }).yaml_content, edited);

    // A change made on the service comes back with the next sync.
    const remote = edited.replace('max_pages: 2', 'max_pages: 4');
    assert.equal((await api.put(`/api/v1/configs/${id}/`, { yaml_content: remote })).status, 200);
    await popup.click('[data-testid="sync"]');
    await popup.waitForFunction(() => /Synced/.test(document.querySelector('[data-testid="notice"]')?.textContent ?? ''));
    await popup.evaluate(() => Array.from(document.querySelectorAll<HTMLButtonElement>('[data-testid="config-list"] li button')).find((b) => b.textContent === 'Quotes (extension sync)')!.click());
    await popup.waitForFunction((y) => (document.querySelector('#yaml') as HTMLTextAreaElement).value === y, {}, remote);

    // Offline: the popup opened again shows the last synced list and YAML; a sync says it failed and keeps them.
    await popup.close();
    popup = await openPopup(tab);
    await popup.setOfflineMode(true);
    await popup.reload();
    await popup.waitForSelector('.popup[data-ready="true"]');
    await view(popup, 'configs');
    await popup.waitForSelector('[data-testid="config-list"] li');
    assert.match(await popup.$eval('[data-testid="synced-at"]', (e) => e.textContent ?? ''), /^Last synced /);
    await popup.evaluate(() => Array.from(document.querySelectorAll<HTMLButtonElement>('[data-testid="config-list"] li button')).find((b) => b.textContent === 'Quotes (extension sync)')!.click());
    await popup.waitForFunction((y) => (document.querySelector('#yaml') as HTMLTextAreaElement).value === y, {}, remote);
    await popup.click('[data-testid="sync"]');
    assert.match(await notice(popup), /fetch|network|reach|failed/i);
    assert.ok((await popup.$$('[data-testid="config-list"] li')).length >= 1, 'the list is kept');
    await popup.setOfflineMode(false);
    await popup.close();
    await tab.close();
  });

  it('Quick Test reads the current page only: the first 20 of its 50 items, nothing else loaded', async () => {
    const tab = await openTab(`${pages.url}/products/`);
    pages.hits.clear();
    const popup = await openPopup(tab);
    await editYaml(popup, PRODUCTS_YAML(`${pages.url}/products/`));
    await view(popup, 'run');
    const started = performance.now();
    assert.equal(await startAndEnd(popup, 'quick-test'), 'completed');
    const ms = Math.round(performance.now() - started);
    const $ = load(productsPage(1, 50, null));
    const expected = $('li.product').toArray().slice(0, 20).map((li) => [$(li).find('h2 a').text(), `${pages.url}${$(li).find('h2 a').attr('href')}`, String(Number($(li).find('.price').text().replace('£', '')))]);
    assert.deepEqual(await shownRows(popup), expected, 'the popup\'s table: the first 20 items');
    assert.match(await popup.$eval('[data-testid="row-count"]', (e) => e.textContent ?? ''), /^20 row\(s\)/);
    const run = await lastRun();
    assert.equal(run.mode, 'quick');
    assert.equal(run.rows.length, 20);
    const loaded = [...pages.hits.keys()].filter((p) => p !== '/favicon.ico');
    assert.deepEqual(loaded, [], 'no page loaded: not page 2, not a reload of the page');
    assert.equal(tab.url(), `${pages.url}/products/`);
    process.stdout.write(`# Quick Test: ${ms} ms from the click to the table (20 rows)\n`);
    await popup.close();
    await tab.close();
  });

  it('on a site without a host permission, the toolbar click (activeTab) is what lets it read the page', async () => {
    // `localhost` is not the service's host (127.0.0.1): only activeTab can open this page to the extension.
    const url = `${pages.url.replace('127.0.0.1', 'localhost')}/products/`;
    const tab = await openTab(url);
    const readByWorker = () => worker.evaluate(`chrome.tabs.query({ active: true, lastFocusedWindow: true }).then(([t]) =>
      chrome.scripting.executeScript({ target: { tabId: t.id }, func: () => document.title }).then(() => 'read', (e) => String(e)))`) as Promise<string>;
    assert.match(await readByWorker(), /Cannot access|permission/i, 'before the click the extension cannot read the page');
    const popup = await openPopup(tab);
    assert.equal(await readByWorker(), 'read', 'the click granted the current tab');
    await view(popup, 'configs');
    await popup.click('[data-testid="new"]');
    await editYaml(popup, PRODUCTS_YAML(url));
    await view(popup, 'run');
    assert.equal(await startAndEnd(popup, 'quick-test'), 'completed');
    assert.equal((await lastRun()).rows.length, 20);
    await popup.close();
    await tab.close();
  });

  it('a full run pages through in the tab and equals the service\'s run of the same config; each export reads back', async () => {
    const yaml = quotesConfigYaml(`${site.url}/quotes/`, 3, 'Quotes');
    const tab = await openTab(`${site.url}/quotes/`);
    const popup = await openPopup(tab);
    await editYaml(popup, yaml);
    await view(popup, 'run');
    const progress: number[] = [];
    let watch: NodeJS.Timeout | undefined;
    const status = await startAndEnd(popup, 'run', async () => {
      watch = setInterval(() => { void popup.$eval('progress', (p) => (p as HTMLProgressElement).value).then((v) => progress.push(v), () => undefined); }, 25);
    });
    clearInterval(watch);
    assert.equal(status, 'completed', await popup.$eval('[data-testid="run-message"]', (e) => e.textContent ?? ''));
    const run = await lastRun();
    const expected = allQuotes().slice(0, 30).map((q) => ({ text: q.text, author: q.author }));
    assert.deepEqual(run.rows, expected, 'every row of the 3 pages');
    assert.deepEqual(run.rows, await serviceRows(yaml), 'the service\'s run of the same config gives the same rows');
    assert.equal(tab.url(), `${site.url}/quotes/page/3/`, 'the tab paged through to page 3');
    assert.deepEqual(progress, [...progress].sort((a, b) => a - b), 'progress never goes down');
    assert.match(await popup.$eval('[data-testid="row-count"]', (e) => e.textContent ?? ''), /^30 row\(s\)/);

    const today = new Date();
    const stamp = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    const fileOf = async (ext: string) => {
      await popup.click(`[data-testid="export-${ext}"]`);
      const name = `quotes-${stamp}.${ext}`;
      await until(`the ${ext} download`, () => (fs.existsSync(path.join(downloads, name)) ? true : undefined));
      return fs.readFileSync(path.join(downloads, name));
    };
    const json = await fileOf('json');
    assert.equal(json.toString('utf8'), JSON.stringify(expected, null, 2), 'JSON: a pretty-printed array');
    const csv = await fileOf('csv');
    assert.deepEqual([...csv.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'CSV: UTF-8 byte-order mark');
    const lines = csv.subarray(3).toString('utf8').split('\r\n');
    assert.equal(lines[0], 'text,author');
    assert.equal(lines.length, 32, 'header, 30 rows, and the final CRLF');
    const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
    assert.equal(lines[1], `${csvField(expected[0]!.text)},${csvField(expected[0]!.author)}`);
    const xlsx = await fileOf('xlsx');
    const sheets = await readXlsxFile(xlsx);
    assert.deepEqual(sheets[0]!.data, [['text', 'author'], ...expected.map((r) => [r.text, r.author])]);
    await popup.close();
    await tab.close();
  });

  it('CSV and XLSX exports write lists as JSON text by default, or joined with the separator chosen (issue 40)', async () => {
    const yaml = `version: "2.0"\nname: Tagged quotes\ntarget: { url: "${site.url}/quotes/" }\nextract:\n  container: div.quote\n  fields:\n    - { name: author, selector: small.author }\n    - { name: tags, selector: a.tag, multiple: true }\n`;
    const tab = await openTab(`${site.url}/quotes/`);
    const popup = await openPopup(tab);
    await editYaml(popup, yaml);
    await view(popup, 'run');
    assert.equal(await startAndEnd(popup, 'quick-test'), 'completed');
    const expected = allQuotes().slice(0, 10);
    /**
     * The file a click on an export button downloads. A second export has the same name, which Chrome may write over
     * instead of numbering, so the earlier ones are removed first and the file that appears is the new one.
     */
    const fileOf = async (ext: 'csv' | 'xlsx') => {
      for (const f of fs.readdirSync(downloads)) if (f.startsWith('tagged-quotes-')) fs.rmSync(path.join(downloads, f));
      const before = new Set(fs.readdirSync(downloads));
      await popup.click(`[data-testid="export-${ext}"]`);
      const file = await until(`the ${ext} download`, () => fs.readdirSync(downloads).find((f) => !before.has(f) && f.startsWith('tagged-quotes-') && f.endsWith(`.${ext}`)));
      return fs.readFileSync(path.join(downloads, file));
    };
    const tagsColumn = (csv: Buffer) => csv.subarray(3).toString('utf8').split('\r\n').filter(Boolean).slice(1).map((line) => line.slice(line.indexOf(',') + 1));
    const quoted = (v: string) => (/[",]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
    assert.equal(await popup.$eval('[data-testid="lists"]', (s) => (s as HTMLSelectElement).value), 'json', 'JSON text by default');
    assert.deepEqual(tagsColumn(await fileOf('csv')), expected.map((q) => quoted(JSON.stringify(q.tags))));
    await popup.select('[data-testid="lists"]', 'join');
    assert.equal(await popup.$eval('[data-testid="list-separator"]', (i) => (i as HTMLInputElement).value), '; ', 'joined with "; " unless told otherwise');
    assert.deepEqual(tagsColumn(await fileOf('csv')), expected.map((q) => quoted(q.tags.join('; '))));
    await popup.$eval('[data-testid="list-separator"]', (i) => { (i as HTMLInputElement).value = ' | '; i.dispatchEvent(new Event('input', { bubbles: true })); });
    const sheets = await readXlsxFile(await fileOf('xlsx'), { trim: false });
    assert.deepEqual(sheets[0]!.data, [['author', 'tags'], ...expected.map((q) => [q.author, q.tags.join(' | ')])]);
    await popup.close();
    await tab.close();
  });

  /** Runs `yaml` from the popup on a tab showing `url`; returns the ended run as the service worker keeps it. */
  const runFromPopup = async (url: string, yaml: string, mode: 'quick-test' | 'run' = 'run') => {
    const tab = await openTab(url);
    const popup = await openPopup(tab);
    await view(popup, 'configs');
    await popup.click('[data-testid="new"]');
    await editYaml(popup, yaml);
    await view(popup, 'run');
    const status = await startAndEnd(popup, mode);
    const message = await popup.$eval('[data-testid="run-message"]', (e) => e.textContent ?? '');
    // A failed run is shown, not kept: the last good run's rows stay there for export.
    const run = status === 'failed' ? null : await lastRun();
    await popup.close();
    await tab.close();
    return { status, run: run!, message };
  };

  const SCRIPTED_FIELDS = `extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author, selector: small.author }
    - { name: tags, selector: a.tag, multiple: true }
`;

  it('url pagination navigates the tab through the pattern\'s pages, as the service does', async () => {
    const yaml = `version: "2.0"\nname: Quotes by URL\ntarget: { url: "${site.url}/quotes/" }\n${SCRIPTED_FIELDS}pagination: { type: url, url_pattern: "/quotes/page/{page}/", max_pages: 3 }\n`;
    const { status, run } = await runFromPopup(`${site.url}/quotes/`, yaml);
    assert.equal(status, 'completed');
    assert.deepEqual(run.rows, allQuotes().slice(0, 30).map((q) => ({ text: q.text, author: q.author, tags: q.tags })));
    assert.deepEqual(run.rows, await serviceRows(yaml));
  });

  it('an API config (target.api, a POST with a JSON body) is fetched from the tab\'s page, paged, and equals the service\'s run', async () => {
    const url = `${site.url}/js/search-post/?q=life`;
    const yaml = `version: "2.0"\nname: Search API\ntarget:\n  url: "${url}"\n  api: { url: /api/search, method: POST, body: { query: life, page: "{page}", per_page: 4 } }\nextract:\n  records: results\n  fields:\n    - { name: text, path: text }\n    - { name: author, path: author }\npagination: { type: page, max_pages: 3, total_path: total }\n`;
    const { status, run, message } = await runFromPopup(url, yaml);
    assert.equal(status, 'completed', message);
    const life = allQuotes().filter((q) => q.text.toLowerCase().includes('life') || q.tags.includes('life'));
    assert.ok(life.length > 8, 'the fixture has more than 3 pages of 4');
    assert.deepEqual(run.rows, life.slice(0, 12).map((q) => ({ text: q.text, author: q.author })), '3 answers of 4 records');
    assert.deepEqual(run.rows, await serviceRows(yaml), 'the service gives the same rows');
  });

  it('records over two table rows (following_siblings, /tableful/): Quick Test gives the service\'s 10 rows', async () => {
    const url = `${site.url}/tableful/`;
    // Quick Test drops the pagination: the page in the tab only, as the service reads it without pagination.
    const { status, run, message } = await runFromPopup(url, tablefulConfigYaml(url, { maxPages: 3 }), 'quick-test');
    assert.equal(status, 'completed', message);
    assert.equal(run.mode, 'quick');
    assert.deepEqual(run.rows, allQuotes().slice(0, 10).map((q) => ({ quote: q.text, author: q.author, tags: q.tags })), '10 items: quote row and tags row each');
    assert.deepEqual(run.rows, await serviceRows(tablefulConfigYaml(url, { pagination: 'none' })), 'the service\'s lightweight engine gives the same rows');
  });

  it('a load-more button is clicked in the page until max_pages, as the service\'s browser engine does', async () => {
    const yaml = `version: "2.0"\nname: Load more\ntarget: { url: "${site.url}/js/load-more/", engine: heavy, browser: { wait_selector: div.quote } }\n${SCRIPTED_FIELDS}pagination: { type: click, selector: button.load-more, max_pages: 4 }\n`;
    const { status, run } = await runFromPopup(`${site.url}/js/load-more/`, yaml);
    assert.equal(status, 'completed');
    assert.deepEqual(run.rows.map((r) => r.text), allQuotes().slice(0, 40).map((q) => q.text), 'the first page and 3 clicks, each quote once');
    assert.deepEqual(run.rows, await serviceRows(yaml), 'the service\'s browser engine gives the same rows');
  });

  it('infinite scroll: the page is scrolled and its new items read', async () => {
    const yaml = `version: "2.0"\nname: Scroll\ntarget: { url: "${site.url}/js/scroll/", engine: heavy, browser: { wait_selector: div.quote } }\n${SCRIPTED_FIELDS}pagination: { type: scroll_infinite, max_pages: 3, wait_after: 2000 }\n`;
    const { status, run } = await runFromPopup(`${site.url}/js/scroll/`, yaml);
    assert.equal(status, 'completed');
    assert.deepEqual(run.rows.map((r) => r.text), allQuotes().slice(0, 30).map((q) => q.text));
  });

  it('actions (type, select, hover, click, scroll, keyboard, script) run in the page before it is read', async () => {
    const yaml = `version: "2.0"\nname: Search\ntarget: { url: "${site.url}/js/search/", engine: heavy }\n${SCRIPTED_FIELDS}${SEARCH_ACTIONS_YAML}`;
    const { status, run } = await runFromPopup(`${site.url}/js/search/`, yaml, 'quick-test');
    assert.equal(status, 'completed');
    const expected = searchActionsExpected();
    assert.ok(expected.length > 0);
    assert.deepEqual(run.rows.map((r) => r.text), expected.slice(0, 20).map((q) => q.text));
  });

  it('an action whose element is missing fails the run with action_failed, naming the action', async () => {
    const yaml = `version: "2.0"\nname: Missing\ntarget: { url: "${site.url}/quotes/" }\n${SCRIPTED_FIELDS}actions:\n  - { type: click, selector: "#no-such-button" }\n`;
    const { status, message } = await runFromPopup(`${site.url}/quotes/`, yaml, 'quick-test');
    assert.equal(status, 'failed');
    assert.match(message, /^action_failed: actions\[0\] \(click "#no-such-button"\): no element matches the selector "#no-such-button"/);
  });

  it('opens detail pages in a background tab, one at a time, and closes it', async () => {
    const yaml = `version: "2.0"
name: Quotes with authors
target: { url: "${site.url}/quotes/" }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
    - { name: about, selector: 'a[href*="/author/"]', type: link }
detail_fields:
  fields:
    - { name: born, selector: .author-born-date }
`;
    const tab = await openTab(`${site.url}/quotes/`);
    const popup = await openPopup(tab);
    await editYaml(popup, yaml);
    await view(popup, 'run');
    const tabsBefore = (await browser.pages()).length;
    let most = tabsBefore;
    const watch = setInterval(() => { void browser.pages().then((p) => { most = Math.max(most, p.length); }, () => undefined); }, 20);
    assert.equal(await startAndEnd(popup, 'run'), 'completed');
    clearInterval(watch);
    const run = await lastRun();
    const born = new Map<string, string>();
    for (const a of AUTHOR_RECORDS) born.set(nameKey(a.name), a.born_at);
    assert.equal(run.rows.length, 10);
    run.rows.forEach((r, i) => {
      assert.equal(r.author, allQuotes()[i]!.author);
      assert.ok(r.born && born.get(nameKey(String(r.author)))?.includes(String(r.born).trim().slice(0, 8)), `born of ${String(r.author)}: ${String(r.born)}`);
    });
    assert.equal(most - tabsBefore, 1, 'one background tab at a time');
    await until('the background tab to close', async () => ((await browser.pages()).length === tabsBefore ? true : undefined));
    assert.equal(tab.url(), `${site.url}/quotes/`, 'the current tab stays on the listing');
    await popup.close();
    await tab.close();
  });

  it('Stop ends a run after the page being read, keeping its rows', async () => {
    const yaml = quotesConfigYaml(`${site.url}/quotes/`, 10, 'Quotes (stopped)').replace('max_pages: 10', 'max_pages: 10\n  wait_after: 700');
    const tab = await openTab(`${site.url}/quotes/`);
    const popup = await openPopup(tab);
    await editYaml(popup, yaml);
    await view(popup, 'run');
    const status = await startAndEnd(popup, 'run', async () => {
      await popup.waitForSelector('[data-testid="stop"]');
      await popup.waitForFunction(() => Number((document.querySelector('progress') as HTMLProgressElement).value) > 0);
      await popup.click('[data-testid="stop"]');
    });
    assert.equal(status, 'stopped');
    const run = await lastRun();
    assert.ok(run.rows.length >= 10 && run.rows.length < 100, `rows read before the stop: ${run.rows.length}`);
    assert.equal(run.rows.length % 10, 0, 'whole pages');
    assert.deepEqual(run.rows, allQuotes().slice(0, run.rows.length).map((q) => ({ text: q.text, author: q.author })));
    assert.match(run.warnings.join('\n'), /stopped by the user after \d+ page/);
    await popup.close();
    await tab.close();
  });

  for (const [name, route] of [['home', '/books/'], ['listing', '/books/catalogue/']] as const) {
    it(`suggest finds the 20 records of the books ${name} page, and Quick Test of the suggestion gives them`, async () => {
      const html = bookshopPage(name === 'home' ? '/books/' : '/books/catalogue/page-2.html')!;
      const $ = load(html);
      const titles = $('article.product_pod h3 a').toArray().map((a) => $(a).attr('title')!);
      assert.equal(titles.length, 20);
      const tab = await openTab(`${pages.url}${route}`);
      const popup = await openPopup(tab);
      await popup.click('[data-testid="suggest"]');
      await popup.waitForFunction(() => /^Suggested: /.test(document.querySelector('[data-testid="run-message"]')?.textContent ?? ''));
      const suggested = await popup.$eval('#pick', (s) => (s as HTMLSelectElement).selectedOptions[0]?.textContent ?? '');
      assert.match(suggested, /Records on 127\.0\.0\.1 \(editor\)/);
      const table = await shownRows(popup);
      assert.equal(table.length, 20);
      const column = table[0]!.findIndex((_, c) => titles.every((t, i) => table[i]![c]!.startsWith(t.slice(0, 20).replace(/\.\.\.$/, ''))));
      assert.ok(column >= 0, `a column holds the titles: ${JSON.stringify(table[0])}`);
      assert.equal(await startAndEnd(popup, 'quick-test'), 'completed');
      assert.deepEqual(await shownRows(popup), table, 'Quick Test of the suggested config: the same rows');
      await popup.close();
      await tab.close();
    });
  }

  it('takes the popup screenshot for the README, and no popup logged an error', async () => {
    const tab = await openTab(`${site.url}/quotes/`);
    const popup = await openPopup(tab);
    await view(popup, 'configs');
    await popup.click('[data-testid="new"]');
    await editYaml(popup, quotesConfigYaml(`${site.url}/quotes/`, 3, 'Quotes'));
    await view(popup, 'run');
    assert.equal(await startAndEnd(popup, 'quick-test'), 'completed');
    const file = path.join(shotsDir, 'extension-popup.png');
    assert.equal(await popup.$eval('#pick', (s) => (s as HTMLSelectElement).selectedOptions[0]?.textContent ?? ''), 'Quotes (editor)', 'the picker names the YAML in the editor');
    await popup.screenshot({ path: file });
    const png = fs.readFileSync(file);
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    if (process.env.SAI_UPDATE_SCREENSHOTS === '1') fs.copyFileSync(file, path.join(ROOT, 'docs/screenshots/extension-popup.png'));
    await popup.close();
    await tab.close();
    const unexpected = consoleErrors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d|ERR_INTERNET_DISCONNECTED|Failed to fetch/.test(e));
    assert.deepEqual(unexpected, []);
  });
});
