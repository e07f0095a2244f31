/**
 * The web dashboard (clients/dashboard, issue 14) in real Chromium (Debian's /usr/bin/chromium through
 * puppeteer-core) against the real local service and the fixture site: sign in with the first-start
 * credentials and find the same key on the profile; a config with a YAML error shows the line the API
 * reports; a run's progress rises to 100 and its rows appear, paged; each export downloaded through the UI and
 * read back; a generation watched to its end; two tools' results; sign out. Across the whole run: the CSP
 * header on `/`, no CSP violation, no console error, and no horizontal scroll at 375 px on any page.
 * Monitoring (issue 26), as a `pro` account: a config's schedules (one made through the API, one added through the
 * form, paused by a refused firing with the service's clock moved forward, resumed, disabled, deleted); a second
 * run's changes on its job page, paged; the webhooks page showing a new webhook's secret once, then its deliveries.
 *
 * Expected values come from the fixture site's data (allQuotes()) or from the API's own answer to the same
 * request, fetched here, never from the dashboard itself. Each page is screenshotted into a temporary folder
 * (and into docs/screenshots/dashboard-<page>.png with SAI_UPDATE_SCREENSHOTS=1).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import readXlsxFile from 'read-excel-file/node';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { client, createAccount, firstStartCredentials, runAccounts, startService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/until.ts';
import { launchDebianChromium } from '../helpers/chromium.ts';
import { buildDashboard } from '../../scripts/build-dashboard.ts';
import { quotesConfigYaml } from '../fixtures/site/quotes-config.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const STEP_MS = 30_000;
/** The plans file's display names (credits variant, the service's default), e.g. `pro` → "Pro". */
const PLAN_LABELS = Object.fromEntries(Object.entries((JSON.parse(fs.readFileSync(path.join(ROOT, 'lambdas/core/plans.json'), 'utf8')) as { credits: { plans: Record<string, { label: string }> } }).credits.plans).map(([id, p]) => [id, p.label]));
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 800 };
const KEY_ITEM = 'sai.api_key';

/** The monitoring tests' shop (a loopback site of their own): its products change between runs. */
let products: { name: string; price: string; slug: string }[] = [];
function shopPage(): string {
  const items = products.map((p) => `<li class="product"><a href="/p/${p.slug}">${p.name}</a> <span class="price">${p.price}</span></li>`).join('');
  return `<!doctype html><html><head><title>Shop</title></head><body><ul>${items}</ul></body></html>`;
}
/** A long value (over 200 characters): shown clamped to three lines until "Show all". */
const LONG_ABOUT = Array.from({ length: 12 }, (_, i) => `Sentence ${i + 1} of a long description that a row carries whole.`).join(' ');
/** Rows with an http(s) URL (a link), a `javascript:` URL (never a link), a relative path (no link) and a long text. */
const LINK_ITEMS = [
  { title: 'First', web: 'https://example.com/articles/1?ref=sai&x=1', script: 'javascript:alert(document.domain)', path: '/relative/1', about: LONG_ABOUT },
  { title: 'Second', web: 'http://example.org/', script: 'JavaScript:void(0)', path: 'data:text/html,hi', about: 'Short.' },
];
function linksPage(): string {
  const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const items = LINK_ITEMS.map((x) => `<li class="item"><h2>${x.title}</h2><a class="web" href="${esc(x.web)}">web</a><a class="js" href="${esc(x.script)}">js</a><a class="rel" href="${esc(x.path)}">path</a><p class="about">${esc(x.about)}</p></li>`).join('');
  return `<!doctype html><html><head><title>Links</title></head><body><ul>${items}</ul></body></html>`;
}
const linksYaml = (base: string) => `version: "2.0"
name: Links
target: { url: "${base}/links/", engine: lightweight }
extract:
  container: li.item
  fields:
    - { name: title, selector: h2 }
    - { name: web, selector: a.web, type: attribute, attribute: href }
    - { name: script, selector: a.js, type: attribute, attribute: href }
    - { name: path, selector: a.rel, type: attribute, attribute: href }
    - { name: about, selector: p.about }
`;

/** A config of the shop whose rows are matched on their url between runs (`changed` rows have old and new values). */
const shopYaml = (base: string) => `version: "2.0"
name: Shop
target: { url: "${base}/shop/", engine: lightweight }
extract:
  container: li.product
  fields:
    - { name: name, selector: a }
    - { name: price, selector: .price }
    - { name: url, selector: a, type: attribute, attribute: href }
output: { deduplicate_fields: [url] }
`;



describe('web dashboard in Chromium', { timeout: 240_000 }, () => {
  let site: FixtureSite;
  let svc: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cred: ReturnType<typeof firstStartCredentials>;
  let api: ReturnType<typeof client>;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sai-dashboard-'));
  const shotsDir = path.join(work, 'screenshots');
  const downloads = path.join(work, 'downloads');
  const consoleErrors: string[] = [];
  const cspViolations: string[] = [];
  const shots: string[] = [];
  let configId = '';
  let jobId = '';
  /** The schedules tests move the service's clock forward by writing an offset (ms) here (SAI_CLOCK_FILE). */
  const clockFile = path.join(work, 'clock-offset');
  let shop: http.Server | undefined;
  let shopUrl = '';
  let pro: Awaited<ReturnType<typeof createAccount>>;
  let proApi: ReturnType<typeof client>;
  let shopConfigId = '';

  /** The page's visible text. */
  const text = () => page.evaluate(() => document.body.innerText);
  /** Goes to a hash route and waits for its heading. */
  const go = async (hash: string, heading: string | RegExp) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.waitForFunction((src: string, flags: string) => new RegExp(src, flags).test(document.querySelector('main h1')?.textContent ?? ''), { timeout: STEP_MS }, typeof heading === 'string' ? `^${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$` : heading.source, typeof heading === 'string' ? '' : heading.flags);
  };
  /** Sets a text field's value as typing would (one input event). */
  const fill = async (selector: string, value: string) => {
    await page.$eval(selector, (el, v) => {
      const input = el as HTMLInputElement | HTMLTextAreaElement;
      input.value = v;
      input.dispatchEvent(new Event('input', { bubbles: true }));
    }, value);
  };
  /** Clicks the button (or link) whose accessible text is `label`. */
  const clickText = async (label: string) => {
    const handle = await page.waitForFunction((l: string) => {
      const named = (el: Element) => (el.getAttribute('aria-label') ?? el.textContent ?? '').trim() === l;
      return Array.from(document.querySelectorAll('button:not([disabled])')).find(named) ?? Array.from(document.querySelectorAll('a')).find(named);
    }, { timeout: STEP_MS }, label);
    await (handle as unknown as import('puppeteer-core').ElementHandle<Element>).click();
  };
  /** Screenshot of the page as it is (desktop width), then the same page at 375 px: no horizontal scroll. */
  const shoot = async (name: string) => {
    const file = path.join(shotsDir, `dashboard-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    const png = fs.readFileSync(file);
    assert.ok(png.length > 1000, `${name}: screenshot of ${png.length} bytes`);
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${name}: not a PNG`);
    shots.push(file);
  };
  /**
   * Screenshot of the page as it is (desktop width); then the same page at 375 px must have no horizontal
   * scroll (screenshotted too when `phone`).
   */
  const capture = async (name: string, phone = false) => {
    // Every form control has a label (a <label> or aria-label) and every button a name.
    const unlabelled = await page.evaluate(() => [
      ...Array.from(document.querySelectorAll('input, select, textarea')).filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label')).map((el) => el.outerHTML.slice(0, 80)),
      ...Array.from(document.querySelectorAll('button')).filter((b) => !(b.getAttribute('aria-label') ?? b.textContent ?? '').trim()).map((b) => b.outerHTML.slice(0, 80)),
    ]);
    assert.deepEqual(unlabelled, [], `${name}: controls without a label`);
    assert.ok(await page.$('header') && await page.$('main'), `${name}: landmarks`);
    await shoot(name);
    await page.setViewport(PHONE);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `${name}: the page is ${width} px wide at ${PHONE.width} px`);
    if (phone) await shoot(`${name}-phone`);
    await page.setViewport(DESKTOP);
  };

  before(async () => {
    // `npm test` builds the dashboard first; a run of this file alone builds it when it never was.
    if (!fs.existsSync(path.join(ROOT, 'clients/dashboard/dist/index.html'))) await buildDashboard();
    fs.mkdirSync(shotsDir);
    fs.mkdirSync(downloads);
    site = await startFixtureSite();
    svc = await startService({ SAI_CLOCK_FILE: clockFile });
    cred = firstStartCredentials(svc);
    api = client(svc.url, cred.apiKey);
    browser = await launchDebianChromium(path.join(work, 'profile'));
    context = await browser.createBrowserContext({ downloadBehavior: { policy: 'allow', downloadPath: downloads } });
    page = await context.newPage();
    page.setDefaultTimeout(STEP_MS);
    await page.setViewport(DESKTOP);
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      const where = m.location().url ?? '';
      // The API's deliberate 4xx answers (a config with an error, a revoked key) are logged by Chromium as
      // failed resources; they are the behaviour under test, not errors of the page.
      if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()) && new URL(where, svc.url).pathname.startsWith('/api/v1/')) return;
      consoleErrors.push(`${m.text()} (${where})`);
    });
    page.on('pageerror', (err) => consoleErrors.push(`page error: ${(err as Error).message}`));
    await page.exposeFunction('__saiCspViolation', (s: string) => { cspViolations.push(s); });
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as unknown as { __saiCspViolation(s: string): void }).__saiCspViolation(`${e.violatedDirective} blocked ${e.blockedURI}`);
      });
    });
  });

  after(async () => {
    await browser?.close();
    await svc?.stop();
    await site?.close();
    if (shop) await new Promise((r) => shop!.close(r));
    if (process.env.SAI_UPDATE_SCREENSHOTS === '1') {
      const dest = path.join(ROOT, 'docs/screenshots');
      fs.mkdirSync(dest, { recursive: true });
      for (const f of shots) fs.copyFileSync(f, path.join(dest, path.basename(f)));
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('serves / with the CSP; signs in with the first-start credentials; the profile shows the same key, masked until revealed', async () => {
    const res = await page.goto(`${svc.url}/`, { waitUntil: 'load' });
    assert.equal(res?.status(), 200);
    const csp = res!.headers()['content-security-policy'] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    await page.waitForSelector('#signin-email');
    await capture('signin');

    // A wrong password: the API's message in the alert, still signed out.
    await page.type('#signin-email', cred.email);
    await page.type('#signin-password', 'not the password');
    await page.click('[data-testid=signin-form] button[type=submit]');
    const wrong = await api.post('/api/v1/auth/login/', { email: cred.email, password: 'not the password' });
    assert.equal(wrong.status, 401);
    await page.waitForFunction((msg: string) => document.querySelector('[role=alert]')?.textContent === msg, {}, wrong.body.error);
    assert.equal(await page.evaluate((k) => sessionStorage.getItem(k), KEY_ITEM), null);

    // The keyboard alone: Tab to the email field, type, Tab, type the password, Enter.
    await fill('#signin-email', '');
    await fill('#signin-password', '');
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    for (let i = 0; i < 5 && (await page.evaluate(() => document.activeElement?.id)) !== 'signin-email'; i++) await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'signin-email');
    await page.keyboard.type(cred.email);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'signin-password');
    await page.keyboard.type(cred.password);
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid=api-key]');
    await page.waitForFunction(() => document.querySelector('[data-testid=email]')?.textContent !== '');
    assert.equal(await page.evaluate((k) => sessionStorage.getItem(k), KEY_ITEM), cred.apiKey);
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), KEY_ITEM), null);
    assert.equal(await page.evaluate(() => document.cookie), '');

    // Masked by default: the key is nowhere in the page's text or markup.
    assert.ok(!(await text()).includes(cred.apiKey));
    assert.ok(!(await page.content()).includes(cred.apiKey));
    const masked = await page.$eval('[data-testid=api-key]', (el) => el.textContent ?? '');
    assert.ok(masked.startsWith('sai_') && masked.endsWith(cred.apiKey.slice(-4)) && masked.includes('•'), masked);

    const me = (await api.get('/api/v1/me/')).body;
    assert.equal(await page.$eval('[data-testid=email]', (el) => el.textContent), me.user.email);
    // The plan as the plans file names it ("Pro"), not its id ("pro").
    assert.equal(await page.$eval('[data-testid=plan]', (el) => el.textContent), PLAN_LABELS[me.subscription.plan]);
    assert.notEqual(PLAN_LABELS[me.subscription.plan], me.subscription.plan);
    assert.equal(await page.$eval('[data-testid=plan]', (el) => el.getAttribute('data-plan')), me.subscription.plan);
    const quota = await page.$eval('[data-testid=quota]', (el) => (el as HTMLElement).innerText);
    if (me.subscription.credits_remaining !== undefined) assert.match(quota, new RegExp(`Credits left\\s+${me.subscription.credits_remaining}\\b`));
    else assert.match(quota, new RegExp(`Scrapes left this month\\s+${me.subscription.monthly_scrapes_remaining}\\b`));
    assert.match(quota, /Resets\s+.+00:00 UTC/);
    await capture('profile', true);

    // Copy puts the whole key on the clipboard.
    await context.overridePermissions(svc.url, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
    await clickText('Copy');
    await page.waitForFunction(() => /copied/.test(document.body.innerText));
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), cred.apiKey);

    await clickText('Reveal');
    await page.waitForFunction((k: string) => document.querySelector('[data-testid=api-key]')?.textContent === k, {}, cred.apiKey);
    assert.equal(await page.$eval('[data-testid=api-key]', (el) => el.textContent), cred.apiKey);
    await clickText('Hide');
    await page.waitForFunction((k: string) => document.querySelector('[data-testid=api-key]')?.textContent !== k, {}, cred.apiKey);
  });

  it('a config with a YAML error shows the line the API reports; fixed, created, listed; edited with PUT and reloaded', async () => {
    const url = `${site.url}/slow/300/quotes/`;
    const good = quotesConfigYaml(url, 5);
    // Line 5 misspells a key of `target`: the API reports an unknown key there.
    const bad = good.replace('\n  engine: lightweight', '\n  engin: lightweight');
    assert.equal(bad.split('\n')[4], '  engin: lightweight');
    const expected = await api.post('/api/v1/configs/validate/', { yaml_content: bad });
    assert.equal(expected.status, 400);
    assert.equal(expected.body.code, 'invalid_config');
    const first = expected.body.details[0] as { line: number; column: number; message: string };
    assert.equal(first.line, 5, JSON.stringify(expected.body));

    await go('#/configs/new', 'New config');
    await fill('#config-name', 'Quotes (dashboard test)');
    await fill('#config-url', url);
    await fill('#config-yaml', bad);
    // The debounced check after typing stops lists the API's errors, each with its line and column.
    await page.waitForSelector('[data-testid=yaml-errors] li');
    const listed = await page.$$eval('[data-testid=yaml-errors] li', (lis) => lis.map((li) => li.textContent ?? ''));
    assert.deepEqual(listed, expected.body.details.map((d: { line: number; column: number; message: string }) => `line ${d.line}, column ${d.column}: ${d.message}`));
    const marked = await page.$$eval('[data-testid=gutter] .gutter-error', (els) => els.map((e) => Number(e.textContent!.replace(/\D/g, ''))));
    assert.deepEqual(marked, [...new Set(expected.body.details.map((d: { line: number }) => d.line))]);
    // Activating an error puts the caret on its line and column.
    await page.click('[data-testid=yaml-errors] li button');
    const caret = await page.$eval('#config-yaml', (el) => {
      const t = el as HTMLTextAreaElement;
      const before = t.value.slice(0, t.selectionStart);
      return { focused: document.activeElement === t, line: before.split('\n').length, column: before.length - before.lastIndexOf('\n') };
    });
    assert.deepEqual(caret, { focused: true, line: first.line, column: first.column });

    // Create anyway: the API's error text in the alert, nothing created.
    await clickText('Create');
    await page.waitForFunction((msg: string) => document.querySelector('[role=alert]')?.textContent === msg, {}, expected.body.error);
    await capture('config-error');
    assert.equal((await api.get('/api/v1/configs/')).body.count, 0);

    await fill('#config-yaml', good);
    await page.waitForFunction(() => !document.querySelector('[data-testid=yaml-errors]'));
    await clickText('Create');
    await page.waitForFunction(() => /^#\/configs\/[0-9a-f-]{36}$/.test(location.hash));
    configId = await page.evaluate(() => location.hash.split('/')[2]!);
    await page.waitForFunction((y: string) => (document.querySelector('#config-yaml') as HTMLTextAreaElement | null)?.value === y, {}, good);

    await go('#/configs', 'Configs');
    await page.waitForSelector(`[data-config-id="${configId}"]`);
    assert.match(await page.$eval(`[data-config-id="${configId}"]`, (el) => el.textContent ?? ''), /Quotes \(dashboard test\)/);
    await capture('configs');

    // Edit: the YAML's name changes; Save is a PUT; a reload shows the saved text.
    await page.click(`[data-config-id="${configId}"] a`);
    await page.waitForFunction((y: string) => (document.querySelector('#config-yaml') as HTMLTextAreaElement | null)?.value === y, {}, good);
    const edited = good.replace('name: Quotes\n', 'name: Quotes edited\n');
    assert.notEqual(edited, good);
    await fill('#config-yaml', edited);
    await clickText('Save');
    await page.waitForFunction(() => /Saved/.test(document.querySelector('.status')?.textContent ?? ''));
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction((y: string) => (document.querySelector('#config-yaml') as HTMLTextAreaElement | null)?.value === y, {}, edited);
    assert.equal((await api.get(`/api/v1/configs/${configId}/`)).body.yaml_content, edited);
    await capture('config-editor');
  });

  it('runs the config against the fixture site: progress rises to 100, the rows appear in field order and page by 25', async () => {
    await go('#/configs', 'Configs');
    await clickText('Run Quotes (dashboard test)');
    await page.waitForFunction(() => /^#\/jobs\/[0-9a-f-]{36}$/.test(location.hash));
    jobId = await page.evaluate(() => location.hash.split('/')[2]!);

    // Sample the progress bar the page shows until the job is completed.
    const seen: number[] = [];
    await until('the job page to show completed', async () => {
      const s = await page.evaluate(() => ({
        value: (document.querySelector('[data-testid=job] progress') as HTMLProgressElement | null)?.value,
        status: document.querySelector('[data-testid=job-status]')?.textContent ?? '',
      }));
      if (s.value !== undefined && seen.at(-1) !== s.value) seen.push(s.value);
      assert.notEqual(s.status, 'failed', await text());
      return s.status === 'completed' ? true : undefined;
    });
    assert.equal(seen.at(-1), 100, `progress seen: ${seen}`);
    assert.ok(seen.length >= 2 && seen[0]! < 100, `progress seen: ${seen}`);
    if (process.env.SAI_DASHBOARD_DEBUG) console.log(`progress values the page showed: ${seen.join(', ')}`);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! >= seen[i - 1]!, `progress went down: ${seen}`);
    const job = (await api.get(`/api/v1/jobs/${jobId}/status/`)).body;
    assert.equal(await page.$eval('[data-testid=status-message]', (el) => el.textContent), job.status_message);

    // A run of a saved config links to that config's page, named by the config's name.
    await page.waitForFunction((id: string) => {
      const a = document.querySelector('[data-testid=job-config] a');
      return a?.getAttribute('href') === `#/configs/${id}` && a.textContent === 'Quotes (dashboard test)';
    }, {}, configId);

    const quotes = allQuotes();
    await page.waitForSelector('[data-testid=rows] tbody tr');
    const header = await page.$$eval('[data-testid=rows] thead th', (ths) => ths.map((th) => th.textContent));
    assert.deepEqual(header, ['#', 'text', 'author']);
    // Each cell's value (a long one is clamped, with a "Show all" button beside it: its whole text is still there).
    const readRows = () => page.$$eval('[data-testid=rows] tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => (td.querySelector('.cell-value') ?? td).textContent ?? '')));
    const firstPage = await readRows();
    assert.deepEqual(firstPage, quotes.slice(0, 25).map((q, i) => [String(i + 1), q.text, q.author]));
    // Quotes of 200 characters or more are the clamped ones, each with its button.
    const clamped = await page.$$eval('[data-testid=rows] tbody tr', (trs) => trs.flatMap((tr, i) => (tr.querySelector('.clamped') ? [i] : [])));
    assert.deepEqual(clamped, quotes.slice(0, 25).flatMap((q, i) => (q.text.length >= 200 ? [i] : [])));
    assert.ok(clamped.length > 0, 'no quote of the first page is long');
    assert.equal(await page.$eval('[data-testid=rows-range]', (el) => el.textContent), 'Rows 1–25 of 50');
    await capture('job', true);
    await clickText('Next');
    await page.waitForFunction(() => document.querySelector('[data-testid=rows-range]')?.textContent === 'Rows 26–50 of 50');
    assert.deepEqual(await readRows(), quotes.slice(25, 50).map((q, i) => [String(i + 26), q.text, q.author]));
    await clickText('Previous');
    await page.waitForFunction(() => document.querySelector('[data-testid=rows-range]')?.textContent === 'Rows 1–25 of 50');

    await go('#/jobs', 'Jobs');
    await page.waitForSelector('[data-testid=jobs] tbody tr');
    const listed = await page.$$eval('[data-testid=jobs] tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).innerText));
    assert.equal(listed.length, (await api.get('/api/v1/jobs/')).body.count);
    assert.match(listed[0]!, new RegExp(`^Quotes \\(dashboard test\\)\\s+${new URL(site.url).host.replace(/\./g, '\\.')}\\s+job ${jobId.slice(0, 8)}\\s+completed\\s+run`));
    await capture('jobs');
  });

  it('downloads JSON, CSV and XLSX through the page and reads each back', async () => {
    await go(`#/jobs/${jobId}`, `Job ${jobId.slice(0, 8)}`);
    await page.waitForSelector('[data-testid=rows] tbody tr');
    const rows = ((await api.get(`/api/v1/jobs/${jobId}/results/`)).body as { data: Record<string, unknown>[] }[])[0]!.data;
    assert.equal(rows.length, 50);
    const quotes = allQuotes().slice(0, 50);
    const fetched: Record<string, Buffer> = {};
    for (const ext of ['json', 'csv', 'xlsx']) {
      await page.click(`button[data-format=${ext}]`);
      const name = await until(`the ${ext} download`, () => fs.readdirSync(downloads).find((f) => f.endsWith(`.${ext}`)));
      assert.match(name, new RegExp(`^quotes-edited-\\d{4}-\\d{2}-\\d{2}\\.${ext}$`));
      fetched[ext] = fs.readFileSync(path.join(downloads, name));
    }
    assert.deepEqual(JSON.parse(fetched.json!.toString('utf8')), rows);
    assert.deepEqual(JSON.parse(fetched.json!.toString('utf8')), quotes.map((q) => ({ text: q.text, author: q.author })));
    const csv = fetched.csv!;
    assert.deepEqual([...csv.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    const lines = csv.subarray(3).toString('utf8').split('\r\n').filter(Boolean);
    assert.equal(lines[0], 'text,author');
    assert.equal(lines.length, 51);
    const sheets = await readXlsxFile(fetched.xlsx!, { trim: false });
    assert.deepEqual(sheets[0]!.data, [['text', 'author'], ...quotes.map((q) => [q.text, q.author])]);
  });

  it('generates a config from a URL and a prompt and watches its states to the end', async () => {
    await go('#/generate', 'Generate a config');
    await fill('#gen-url', `${site.url}/quotes/`);
    await fill('#gen-prompt', 'Every quote with its author');
    await clickText('Generate');
    await page.waitForSelector('[data-testid=generate-job]');
    await page.waitForFunction(() => /completed|failed/.test(document.querySelector('.states [aria-current=step]')?.textContent ?? ''), { timeout: 60_000 });
    const genId = await page.$eval('[data-testid=generate-job] h2 a', (a) => a.getAttribute('href')!.split('/')[2]!);
    const job = (await api.get('/api/v1/jobs/')).body.results.find((j: { id: string }) => j.id.startsWith(genId));
    assert.ok(job, `generate job ${genId} not listed`);
    const status = (await api.get(`/api/v1/jobs/${job.id}/status/`)).body;
    assert.equal(await page.$eval('.states [aria-current=step]', (el) => el.textContent), status.status);
    assert.equal(await page.$eval('[data-testid=generate-job] progress', (el) => (el as HTMLProgressElement).value), status.progress);
    assert.equal(status.status, 'completed', status.status_message);
    assert.equal(await page.$eval('[data-testid=generate-job] .status', (el) => el.textContent), status.status_message);
    await capture('generate');
    // The job's rows are a trial, and the page says so; its button runs the saved config for all of them (issue 40).
    const trial = await page.$eval('[data-testid=generate-trial]', (el) => el.textContent ?? '');
    assert.match(trial, new RegExp(`The ${status.results.row_count} rows of this job are a trial of the first pages only`));
    await clickText('Run it for all the rows');
    await page.waitForFunction(() => /^See all \d+ rows$/.test(document.querySelector('[data-testid=generate-run] a.button')?.textContent?.trim() ?? ''), { timeout: 60_000 });
    assert.equal(await page.$eval('[data-testid=generate-run] a.button', (a) => a.textContent!.trim()), `See all ${allQuotes().length} rows`);
    {
      await clickText('Open the generated config');
      await page.waitForFunction((y: string) => (document.querySelector('#config-yaml') as HTMLTextAreaElement | null)?.value === y, {}, status.yaml_config.yaml_content);
    }

    // Delete the generated config from the list: a confirm step first, then the row and the config are gone.
    const generated = (await api.get(`/api/v1/configs/${status.yaml_config.id}/`)).body as { id: string; name: string };
    await go('#/configs', 'Configs');
    await page.waitForSelector(`[data-config-id="${generated.id}"]`);
    await clickText(`Delete ${generated.name}`);
    assert.equal((await api.get(`/api/v1/configs/${generated.id}/`)).status, 200, 'deleted before the confirm step');
    await clickText(`Confirm: delete ${generated.name}`);
    await page.waitForFunction((id: string) => !document.querySelector(`[data-config-id="${id}"]`), {}, generated.id);
    assert.equal((await api.get(`/api/v1/configs/${generated.id}/`)).status, 404);
    assert.ok(await page.$(`[data-config-id="${configId}"]`), 'the other config is still listed');
  });

  it('generate with "Run it for all the rows" sends run: true and follows the run job it names to all the rows', async () => {
    await go('#/generate', 'Generate a config');
    await fill('#gen-url', `${site.url}/quotes/`);
    await fill('#gen-prompt', 'Every quote and its author, all pages');
    await page.click('#gen-run');
    await clickText('Generate');
    await page.waitForFunction(() => /^See all \d+ rows$/.test(document.querySelector('[data-testid=generate-run] a.button')?.textContent?.trim() ?? ''), { timeout: 90_000 });
    const genId = await page.$eval('[data-testid=generate-job] h2 a', (a) => a.getAttribute('href')!.split('/')[2]!);
    const listed = (await api.get('/api/v1/jobs/')).body.results.find((j: { id: string }) => j.id.startsWith(genId));
    assert.ok(listed?.run_job_id, `the generate job names its run: ${JSON.stringify(listed)}`);
    assert.equal(await page.$('[data-testid=generate-trial]'), null, 'no trial notice when the run was asked for');
    await capture('generate-run');
    await clickText(`See all ${allQuotes().length} rows`);
    await page.waitForFunction((id: string) => location.hash === `#/jobs/${id}`, {}, listed.run_job_id);
    await page.waitForFunction((n: number) => document.querySelector('[data-testid=rows-range]')?.textContent?.endsWith(`of ${n}`), {}, allQuotes().length);
  });

  it('generate with "Other pages of the same template" sends its lines as example_urls, which the generator tries; a forbidden one shows the API\'s refusal', async () => {
    await go('#/generate', 'Generate a config');
    const url = `${site.url}/quotes/`;
    await fill('#gen-url', url);
    await fill('#gen-prompt', 'Quotes and their authors on this page');
    // Pages 3 and 4 (not the next page, 2, which the generator reads anyway: 3 other pages in all, 1 without them),
    // with blanks around and a blank line between: each line trimmed, blank ones left out.
    await fill('#gen-examples', ` ${site.url}/quotes/page/3/\n\n${site.url}/quotes/page/4/ \n`);
    await clickText('Generate');
    await page.waitForSelector('[data-testid=generate-job]');
    await page.waitForFunction(() => /completed|failed/.test(document.querySelector('.states [aria-current=step]')?.textContent ?? ''), { timeout: 60_000 });
    const genId = await page.$eval('[data-testid=generate-job] h2 a', (a) => a.getAttribute('href')!.split('/')[2]!);
    const job = (await api.get('/api/v1/jobs/')).body.results.find((j: { id: string }) => j.id.startsWith(genId));
    assert.ok(job, `generate job ${genId} not listed`);
    const status = (await api.get(`/api/v1/jobs/${job.id}/status/`)).body;
    assert.equal(status.status, 'completed', status.status_message);
    assert.match(status.status_message, /tried on 3 other page\(s\) of the template: \d+ row\(s\), \d+ row\(s\), \d+ row\(s\)/);
    assert.equal(await page.$eval('[data-testid=generate-job] .status', (el) => el.textContent), status.status_message);

    const examples = [`${site.url}/quotes/page/3/`, 'http://169.254.169.254/latest/'];
    const refused = await api.post('/api/v1/generate/', { url, prompt: 'quotes', example_urls: examples });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'target_forbidden');
    assert.match(refused.body.error, /^example_urls\[1\]: /);
    await fill('#gen-prompt', 'quotes');
    await fill('#gen-examples', examples.join('\n'));
    await clickText('Generate');
    await page.waitForFunction((msg: string) => document.querySelector('[data-testid=generate-form] [data-testid=error]')?.textContent === msg, {}, refused.body.error);
    assert.equal(await page.$('[data-testid=generate-job]'), null, 'no job started');
  });

  it('the jobs list names each job\'s config and target host and counts its warnings; a job folds its warnings; a wide row table scrolls sideways keeping its first columns', async () => {
    // Ten fields of each quote (a wide table), its author page as detail page; Ada Whitmore's link made to 404 (a warning).
    const wide = `version: "2.0"
name: Wide quotes
target: { url: "${site.url}/quotes/", engine: lightweight }
extract:
  container: div.quote
  fields:
    - { name: author, selector: small.author }
    - { name: author_url, selector: "a[href*='/author/']", type: link, transform: ["replace:Ada-Whitmore:Nobody-Known"] }
${Array.from({ length: 8 }, (_, i) => `    - { name: text_${i + 1}, selector: span.text }`).join('\n')}
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
`;
    const started = await api.post('/api/v1/run/', { yaml_content: wide });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const { job } = await api.waitForJob(started.body.id, 60_000);
    assert.equal(job.status, 'completed', job.status_message);
    assert.equal(job.warnings.length, 1, JSON.stringify(job.warnings));
    await go('#/jobs', 'Jobs');
    const row = `a[href="#/jobs/${job.id}"][aria-label]`;
    await page.waitForSelector(row);
    const cells = await page.$eval(row, (a) => {
      const tr = a.closest('tr')!;
      return { name: a.textContent, host: tr.querySelector('[data-testid=job-host]')!.textContent, warnings: tr.querySelector('[data-testid=warning-count]')?.textContent };
    });
    assert.deepEqual(cells, { name: 'Wide quotes', host: new URL(site.url).host, warnings: '1 warning' });
    const saved = await page.$eval(`a[href="#/jobs/${jobId}"][aria-label]`, (a) => a.textContent);
    assert.equal(saved, (await api.get(`/api/v1/configs/${configId}/`)).body.name, 'a run of a saved config is named by the config');
    await capture('jobs-warnings');

    await page.click(row);
    await page.waitForSelector('[data-testid=rows]');
    const warned = await page.$eval('[data-testid=warnings]', (d) => ({ open: (d as HTMLDetailsElement).open, summary: d.querySelector('summary')!.textContent }));
    assert.deepEqual(warned, { open: false, summary: '1 warning' }, 'folded, with its count');
    await page.click('[data-testid=warnings] summary');
    const item = await page.$eval('[data-testid=warnings] li', (li) => (li.getBoundingClientRect().height > 0 ? li.textContent : null));
    const url = `${site.url}/quotes/author/Nobody-Known/`;
    assert.equal(item, `detail page ${url}: answered HTTP 404`);
    assert.equal(item!.split(url).length - 1, 1, 'the URL once');
    assert.equal(await page.$eval('[data-testid=status-message]', (el) => el.textContent!.split('Nobody-Known').length - 1), 1, 'nor twice in the message');

    // The table is wider than its box: the box scrolls, the row number and the first field stay where they were.
    const box = await page.$eval('[data-testid=rows]', (t) => { const b = t.closest('.table-box')!; return { scroll: b.scrollWidth, client: b.clientWidth }; });
    assert.ok(box.scroll > box.client + 200, `the rows are wider than their box: ${JSON.stringify(box)}`);
    const where = () => page.$eval('[data-testid=rows] tbody tr', (tr) => Array.from(tr.children).map((td) => Math.round(td.getBoundingClientRect().left)));
    const before = await where();
    await page.$eval('[data-testid=rows]', (t) => { const b = t.closest('.table-box')!; b.scrollLeft = b.scrollWidth; });
    const after = await where();
    assert.deepEqual(after.slice(0, 2), before.slice(0, 2), 'the row number and the author stay in view');
    assert.ok(after.at(-1)! < before.at(-1)! - 200, `the other columns moved: ${before.at(-1)} -> ${after.at(-1)}`);
    assert.equal(await page.$eval('[data-testid=rows] tbody tr td.sticky-1', (td) => td.textContent), job.results.data[0].author);
    await capture('job-wide');
  });

  it('the jobs list refreshes itself while a job runs, until it ends', async () => {
    await go('#/profile', 'Profile');
    const started = await api.post('/api/v1/run/', { yaml_content: quotesConfigYaml(`${site.url}/slow/300/quotes/`, 5) });
    assert.equal(started.status, 202);
    await go('#/jobs', 'Jobs');
    const row = `a[href="#/jobs/${started.body.id}"]`;
    const statusOf = () => page.$eval(row, (a) => a.closest('tr')!.querySelector('.badge')!.textContent);
    await page.waitForSelector(row);
    const first = await statusOf();
    assert.ok(first === 'pending' || first === 'running', `listed as ${first}`);
    await page.waitForFunction((sel: string) => document.querySelector(sel)?.closest('tr')?.querySelector('.badge')?.textContent === 'completed', {}, row);
    assert.equal((await api.get(`/api/v1/jobs/${started.body.id}/status/`)).body.status, 'completed');
  });

  it('runs the content extractor, SEO analyzer, broken-link checker and screenshot tools through their forms and shows their results', async () => {
    const quote = allQuotes()[0]!;
    const articleUrl = `${site.url}/quotes/author/${quote.authorSlug}/`;
    await go('#/tools', 'Tools');
    await capture('tools');
    await page.click('a[href="#/tools/content-extractor"]');
    await page.waitForSelector('#tool-url');
    await fill('#tool-url', articleUrl);
    await clickText('Run');
    await page.waitForSelector('[data-testid=article-title]');
    const content = (await api.post('/api/v1/tools/content-extractor/', { url: articleUrl })).body;
    assert.equal(await page.$eval('[data-testid=article-title]', (el) => el.textContent), content.title ?? '(no title)');
    assert.ok((await page.$eval('.article-text', (el) => el.textContent ?? '')).startsWith(content.text.slice(0, 200)));
    assert.ok(await page.$('details.raw'));
    await capture('tool-content-extractor');

    const seoUrl = `${site.url}/quotes/`;
    await go('#/tools/seo-analyzer', 'SEO analyzer');
    await fill('#tool-url', seoUrl);
    await clickText('Run');
    await page.waitForSelector('[data-testid=seo-score]');
    const seo = (await api.post('/api/v1/tools/seo-analyzer/', { url: seoUrl })).body as { score: number; audits: { id: string; passed: boolean; applicable: boolean }[] };
    assert.equal(await page.$eval('[data-testid=seo-score] .score-value', (el) => el.textContent), String(seo.score));
    const failedIds = seo.audits.filter((a) => a.applicable && !a.passed).map((a) => a.id);
    const shownIds = await page.$$eval('[data-testid=failed-audits] li code', (els) => els.map((e) => e.textContent));
    assert.deepEqual(shownIds, failedIds);
    await capture('tool-seo-analyzer');

    const linksUrl = `${site.url}/quotes/`;
    await go('#/tools/broken-link-checker', 'Broken link checker');
    await fill('#tool-url', linksUrl);
    await fill('#tool-max_links', '15');
    await clickText('Run');
    await page.waitForSelector('[data-testid=links] tbody tr');
    const links = (await api.post('/api/v1/tools/broken-link-checker/', { url: linksUrl, max_links: 15 })).body as { links: { url: string; state: string }[] };
    const shown = await page.$$eval('[data-testid=links] tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(shown, links.links.map((l) => l.url));
    await page.select('#link-state', 'ok');
    const okCount = links.links.filter((l) => l.state === 'ok').length;
    await page.waitForFunction((n: number) => document.querySelectorAll('[data-testid=links] tbody tr').length === n, {}, okCount);
    await capture('tool-broken-link-checker');

    // The screenshot tool answers image bytes: shown from a blob: URL, which the CSP's img-src allows.
    await go('#/tools/screenshot', 'Screenshot');
    await fill('#tool-url', `${site.url}/quotes/`);
    await fill('#tool-width', '800');
    await fill('#tool-height', '600');
    await clickText('Run');
    await page.waitForFunction(() => {
      const img = document.querySelector('[data-testid=screenshot]') as HTMLImageElement | null;
      return img !== null && img.complete && img.naturalWidth > 0;
    }, { timeout: 60_000 });
    const img = await page.$eval('[data-testid=screenshot]', (el) => ({ src: (el as HTMLImageElement).src, w: (el as HTMLImageElement).naturalWidth, h: (el as HTMLImageElement).naturalHeight }));
    assert.match(img.src, /^blob:/);
    assert.deepEqual([img.w, img.h], [800, 600]);
    // Download saves the image shown: a PNG named after the page's host and today's date.
    await clickText('Download PNG');
    const host = new URL(site.url).host.replace(/:/g, '-');
    const shotName = await until('the screenshot download', () => fs.readdirSync(downloads).find((f) => f.startsWith('screenshot-') && f.endsWith('.png')));
    assert.match(shotName, new RegExp(`^screenshot-${host.replace(/\./g, '\\.')}-\\d{4}-\\d{2}-\\d{2}\\.png$`));
    const png = await until('the whole screenshot file', () => {
      const b = fs.readFileSync(path.join(downloads, shotName));
      return b.length >= 24 ? b : undefined;
    });
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [800, 600], 'the IHDR size of the image shown');
    await capture('tool-screenshot');
  });

  it('shows the errors a tool result carries above the result: the DNS/WHOIS tool on a name outside the public DNS', async () => {
    // `.invalid` is under no top-level domain of the public DNS: the tool answers 200 with `error` (NOT_PUBLIC)
    // and `whois.error`, without a query, and the records part alone would only say "No records.".
    const url = 'https://does-not-exist.invalid/';
    const answer = await api.post('/api/v1/tools/dns-whois/', { url });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const { error, whois } = answer.body as { error: { code: string; message: string } | null; whois: { error: { code: string; message: string } | null } };
    assert.ok(error, 'the answer carries an error');
    await go('#/tools/dns-whois', 'DNS and WHOIS');
    await fill('#tool-url', url);
    await clickText('Run');
    await page.waitForSelector('[data-testid=tool-result] [data-testid=result-errors]');
    const alert = await page.$eval('[data-testid=result-errors]', (el) => ({ role: el.getAttribute('role'), text: (el as HTMLElement).innerText }));
    assert.equal(alert.role, 'alert');
    assert.ok(alert.text.includes(error.code) && alert.text.includes(error.message), alert.text);
    if (whois.error) assert.ok(alert.text.includes(whois.error.message), `whois.error not shown: ${alert.text}`);
    // Above the records part, which still renders.
    const order = await page.$eval('[data-testid=tool-result]', (el) => {
      const t = (el as HTMLElement).innerText;
      return [t.indexOf('The answer carries'), t.indexOf('No records.'), t.indexOf('Registration')];
    });
    assert.ok(order[0]! >= 0 && order[0]! < order[1]! && order[1]! < order[2]!, `order ${order}`);
    // No heading stands empty (issue 40): the Addresses heading says there are none, and why.
    assert.equal(await page.$eval('[data-testid=no-addresses]', (el) => el.textContent), 'No addresses: the name was not looked up.');
    const emptyHeadings = await page.$eval('[data-testid=tool-result]', (el) => Array.from(el.querySelectorAll('h3')).filter((h) => {
      const next = h.nextElementSibling;
      return !next || /^H\d$/.test(next.tagName) || !(next as HTMLElement).innerText.trim();
    }).map((h) => h.textContent));
    assert.deepEqual(emptyHeadings, [], 'every heading is followed by content');
    // The page's own error region stays empty: the request succeeded.
    assert.equal(await page.$eval('form [data-testid=error]', (el) => el.textContent), '');
    await capture('tool-dns-whois-error');
  });

  it('signs out: the key leaves sessionStorage, the sign-in form shows, Back shows no data; a revoked key returns to sign in', async () => {
    await go(`#/jobs/${jobId}`, `Job ${jobId.slice(0, 8)}`);
    await page.waitForSelector('[data-testid=rows] tbody tr');
    await clickText('Sign out');
    await page.waitForSelector('#signin-email');
    assert.equal(await page.evaluate((k) => sessionStorage.getItem(k), KEY_ITEM), null);
    assert.match(await text(), /You have signed out/);
    await page.goBack();
    await page.waitForFunction(() => location.hash !== '' );
    await page.waitForSelector('#signin-email');
    const after = await text();
    assert.ok(!after.includes(allQuotes()[0]!.text), 'a quote is still on the page');
    assert.ok(!after.includes(cred.apiKey));
    assert.equal(await page.$('[data-testid=rows]'), null);

    // A key the service does not know: the first call answers 401 and the page returns to the sign-in form.
    await page.evaluate((k) => sessionStorage.setItem(k, 'sai_not_a_real_key_000000000000'), KEY_ITEM);
    await page.evaluate(() => { location.hash = '#/profile'; });
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => /Signed out:/.test(document.body.innerText));
    assert.equal(await page.evaluate((k) => sessionStorage.getItem(k), KEY_ITEM), null);
    assert.ok(await page.$('#signin-email'));
  });

  it('a config page lists its schedules with their next run; the form adds one (the browser\'s time zone), which pauses on a refused firing, resumes, disables and is deleted', async () => {
    // A pro account of its own, signed in through the form (the previous test ended signed out).
    pro = await createAccount(svc.dataDir, { plan: 'pro' });
    proApi = client(svc.url, pro.api_key);
    shop = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(req.url === '/links/' ? linksPage() : shopPage());
    });
    await new Promise<void>((r) => shop!.listen(0, '127.0.0.1', r));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    await page.emulateTimezone('Asia/Tokyo');
    await page.waitForSelector('#signin-email');
    await fill('#signin-email', pro.email);
    await fill('#signin-password', pro.password);
    await page.click('[data-testid=signin-form] button[type=submit]');
    await page.waitForFunction(() => document.querySelector('[data-testid=plan]')?.textContent === 'Pro');

    const config = await proApi.post('/api/v1/configs/', { name: 'Shop (monitoring)', target_url: `${shopUrl}/shop/`, yaml_content: shopYaml(shopUrl) });
    assert.equal(config.status, 201, JSON.stringify(config.body));
    shopConfigId = config.body.id;
    // Through the API: daily at HH:30 in Paris, HH about 12 hours from now (no moving of the clock below reaches it).
    const hour = (new Date().getUTCHours() + 12) % 24;
    const first = await proApi.post('/api/v1/schedules/', { config_id: shopConfigId, cron: `30 ${hour} * * *`, timezone: 'Europe/Paris' });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.ok(first.body.next_run_at);

    await go(`#/configs/${shopConfigId}`, 'Edit Shop (monitoring)');
    const row = (id: string) => `[data-schedule-id="${id}"]`;
    const readRow = (id: string) => page.$eval(row(id), (tr) => {
      const cell = (t: string) => tr.querySelector(`[data-testid=${t}]`);
      const time = cell('schedule-next')!.querySelector('time');
      return {
        cron: cell('schedule-cron')!.textContent, timezone: cell('schedule-timezone')!.textContent, next: time?.getAttribute('datetime') ?? null, title: time?.getAttribute('title') ?? null,
        nextText: cell('schedule-next')!.textContent, state: cell('schedule-state')!.querySelector('.badge')!.textContent, paused: cell('schedule-paused')?.textContent ?? null,
        fired: cell('schedule-fired')!.textContent, skipped: cell('schedule-skipped')!.textContent,
      };
    });
    await page.waitForSelector(row(first.body.id));
    const shown = await readRow(first.body.id);
    const local = await page.evaluate((iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }), first.body.next_run_at);
    assert.deepEqual(shown, { cron: `30 ${hour} * * *`, timezone: 'Europe/Paris', next: first.body.next_run_at, title: first.body.next_run_at, nextText: local, state: 'enabled', paused: null, fired: '0', skipped: '0' });

    // The form: the time zone is the browser's; a bad rule and zone show the API's message, and the fields its
    // details name are marked invalid.
    assert.equal(await page.$eval('#schedule-timezone', (el) => (el as HTMLInputElement).value), 'Asia/Tokyo');
    const bad = await proApi.post('/api/v1/schedules/', { config_id: shopConfigId, cron: 'every day', timezone: 'Mars/Olympus', enabled: true });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_request');
    assert.deepEqual((bad.body.details as { path: string }[]).map((d) => d.path).sort(), ['cron', 'timezone'], JSON.stringify(bad.body));
    await fill('#schedule-cron', 'every day');
    await fill('#schedule-timezone', 'Mars/Olympus');
    await clickText('Add schedule');
    await page.waitForFunction((msg: string) => document.querySelector('[data-testid=schedule-form] [data-testid=error]')?.firstChild?.textContent === msg, {}, bad.body.error);
    // Details the message already says are not listed again.
    const newDetails = (bad.body.details as { path: string; message: string }[]).map((d) => `${d.path}: ${d.message}`).filter((d) => !bad.body.error.includes(d));
    assert.deepEqual(await page.$$eval('[data-testid=schedule-form] [data-testid=error-details] li', (lis) => lis.map((li) => li.textContent)), newDetails);
    assert.deepEqual(await page.$$eval('#schedule-cron, #schedule-timezone', (els) => els.map((el) => el.getAttribute('aria-invalid'))), ['true', 'true']);
    assert.equal((await proApi.get('/api/v1/schedules/')).body.schedules.length, 1);
    await capture('config-schedule-error');

    // Added through the form: at a minute about half an hour away, every hour.
    const minute = (new Date().getUTCMinutes() + 30) % 60;
    const cron = `${minute} * * * *`;
    await fill('#schedule-cron', cron);
    await fill('#schedule-timezone', 'Asia/Tokyo');
    await clickText('Add schedule');
    await page.waitForFunction(() => /Added the schedule/.test(document.querySelector('[data-testid=schedules] .status')?.textContent ?? ''));
    assert.equal(await page.$('#schedule-cron[aria-invalid]'), null);
    const listed = (await proApi.get('/api/v1/schedules/')).body.schedules as { id: string; cron: string; timezone: string; enabled: boolean; next_run_at: string; paused: unknown }[];
    assert.equal(listed.length, 2);
    const added = listed.find((x) => x.id !== first.body.id)!;
    assert.deepEqual([added.cron, added.timezone, added.enabled], [cron, 'Asia/Tokyo', true]);
    await page.waitForSelector(row(added.id));
    assert.deepEqual(await readRow(added.id), { ...(await readRow(added.id)), cron, timezone: 'Asia/Tokyo', next: added.next_run_at, state: 'enabled', paused: null, fired: '0', skipped: '0' });

    // Its firing is refused (the account moved to a plan without server execution, the clock moved to the slot):
    // the schedule pauses, and the page shows why.
    assert.equal((await runAccounts(svc.dataDir, ['set-plan', '--email', pro.email, '--plan', 'free'])).code, 0);
    fs.writeFileSync(clockFile, String(Date.parse(added.next_run_at) + 1000 - Date.now()));
    const paused = await until('the schedule to pause', async () => {
      const s = (await proApi.get(`/api/v1/schedules/${added.id}/`)).body;
      return s.paused ? s : undefined;
    });
    assert.equal(paused.paused.code, 'plan_required');
    await clickText('Refresh the schedules');
    await page.waitForFunction((sel: string) => document.querySelector(`${sel} [data-testid=schedule-state] .badge`)?.textContent === 'paused', {}, row(added.id));
    const pausedRow = await readRow(added.id);
    assert.equal(pausedRow.next, null);
    assert.ok(pausedRow.paused!.includes(paused.paused.message) && pausedRow.paused!.includes('plan_required'), pausedRow.paused!);
    await capture('config-schedules', true);

    // Resume while still on the free plan: the API's refusal in the alert; back on pro, it resumes.
    const refused = await proApi.put(`/api/v1/schedules/${added.id}/`, { enabled: true });
    assert.equal(refused.status, 403);
    await clickText(`Resume the schedule ${cron}`);
    await page.waitForFunction((msg: string) => document.querySelector('[data-testid=schedules] > [data-testid=error]')?.textContent === msg, {}, refused.body.error);
    assert.equal((await runAccounts(svc.dataDir, ['set-plan', '--email', pro.email, '--plan', 'pro'])).code, 0);
    await clickText(`Resume the schedule ${cron}`);
    await page.waitForFunction((sel: string) => document.querySelector(`${sel} [data-testid=schedule-state] .badge`)?.textContent === 'enabled', {}, row(added.id));
    const resumed = (await proApi.get(`/api/v1/schedules/${added.id}/`)).body;
    assert.deepEqual([resumed.enabled, resumed.paused], [true, null]);
    assert.equal((await readRow(added.id)).next, resumed.next_run_at);

    await clickText(`Disable the schedule ${cron}`);
    await page.waitForFunction((sel: string) => document.querySelector(`${sel} [data-testid=schedule-state] .badge`)?.textContent === 'disabled', {}, row(added.id));
    assert.equal((await proApi.get(`/api/v1/schedules/${added.id}/`)).body.enabled, false);
    await clickText(`Delete the schedule ${cron}`);
    assert.equal((await proApi.get(`/api/v1/schedules/${added.id}/`)).status, 200, 'deleted before the confirm step');
    await clickText(`Confirm: delete the schedule ${cron}`);
    await page.waitForFunction((sel: string) => !document.querySelector(sel), {}, row(added.id));
    assert.equal((await proApi.get(`/api/v1/schedules/${added.id}/`)).status, 404);
    assert.ok(await page.$(row(first.body.id)), 'the other schedule is still listed');
    await page.emulateTimezone(undefined);
  });

  it('a second run of a saved config shows its changes since the first: counts, the compared job, the changed rows, paged', async () => {
    const item = (i: number) => ({ name: `Item ${i}`, price: `$${i}`, slug: `i${i}` });
    products = [item(1), item(2), item(3)];
    const run1 = await proApi.post('/api/v1/run/', { config_id: shopConfigId });
    assert.equal(run1.status, 202, JSON.stringify(run1.body));
    assert.equal((await proApi.waitForJob(run1.body.id)).job.status, 'completed');
    // Item 1 gone, item 2's price changed, items 4-31 new: 28 added, 1 removed, 1 changed.
    products = [{ ...item(2), price: '$2.50' }, item(3), ...Array.from({ length: 28 }, (_, i) => item(i + 4))];

    await go(`#/configs/${shopConfigId}`, 'Edit Shop (monitoring)');
    await clickText('Run');
    await page.waitForFunction((old: string) => /^#\/jobs\/[0-9a-f-]{36}$/.test(location.hash) && !location.hash.includes(old), {}, run1.body.id);
    const run2 = await page.evaluate(() => location.hash.split('/')[2]!);
    await page.waitForSelector('[data-testid=changes-table] tbody tr', { timeout: 60_000 });
    const status = (await proApi.get(`/api/v1/jobs/${run2}/status/`)).body;
    assert.deepEqual(status.changes, { added: 28, removed: 1, changed: 1, compared_with: run1.body.id });
    const counts = await page.$$eval('[data-testid=changes-counts] dd', (dds) => dds.map((dd) => dd.textContent));
    assert.deepEqual(counts, ['28', '1', '1']);
    assert.equal(await page.$eval('[data-testid=changes-compared] a', (a) => a.getAttribute('href')), `#/jobs/${run1.body.id}`);
    assert.match(await page.$eval('[data-testid=changes-compared]', (el) => el.textContent ?? ''), /matched on url/);

    /** The table as text: change kind, row (or key) fields, changed fields. */
    const readChanges = () => page.$$eval('[data-testid=changes-table] tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => (td as HTMLElement).innerText.replace(/\s+/g, ' ').trim())));
    type Change = { change: string; row: Record<string, string>; key?: Record<string, string>; fields?: Record<string, { old: string; new: string }> };
    const expectRows = (entries: Change[], from: number) => entries.map((c, i) => [
      String(from + i + 1), c.change,
      Object.entries(c.change === 'changed' ? c.key! : c.row).map(([k, v]) => `${k}: ${v}`).join(' '),
      c.fields ? Object.entries(c.fields).map(([k, v]) => `${k}: ${v.old} → ${v.new}`).join(' ') : '—',
    ]);
    const page1 = (await proApi.get(`/api/v1/jobs/${run2}/changes/?offset=0&limit=25`)).body;
    assert.equal(page1.total, 30);
    assert.deepEqual(await readChanges(), expectRows(page1.results, 0));
    assert.equal(await page.$eval('[data-testid=changes-range]', (el) => el.textContent), 'Changes 1–25 of 30');
    await capture('job-changes');
    await clickText('Next changes');
    await page.waitForFunction(() => document.querySelector('[data-testid=changes-range]')?.textContent === 'Changes 26–30 of 30');
    const page2 = (await proApi.get(`/api/v1/jobs/${run2}/changes/?offset=25&limit=25`)).body;
    assert.deepEqual(await readChanges(), expectRows(page2.results, 25));
    assert.deepEqual((await readChanges()).at(-1), ['30', 'changed', 'url: /p/i2', 'price: $2 → $2.50']);
    // One kind only.
    await page.select('#changes-kind', 'removed');
    await page.waitForFunction(() => document.querySelector('[data-testid=changes-range]')?.textContent === 'Changes 1–1 of 1');
    assert.deepEqual(await readChanges(), [['1', 'removed', 'name: Item 1 price: $1 url: /p/i1', '—']]);

    // The compared job is the first run: nothing to compare with.
    await page.click('[data-testid=changes-compared] a');
    await page.waitForFunction((id: string) => location.hash === `#/jobs/${id}`, {}, run1.body.id);
    await page.waitForFunction(() => document.querySelector('[data-testid=changes-compared]')?.textContent === 'First run: nothing to compare with.');
    assert.deepEqual(await page.$$eval('[data-testid=changes-counts] dd', (dds) => dds.map((dd) => dd.textContent)), ['0', '0', '0']);
    assert.equal(await page.$('[data-testid=changes-table]'), null);
  });

  it('the webhooks page creates a webhook and shows its secret once, then lists it without the secret, with its deliveries (none, then one)', async () => {
    await clickText('Webhooks');
    await page.waitForFunction(() => document.querySelector('main h1')?.textContent === 'Webhooks');
    await page.waitForFunction(() => /No webhooks yet/.test(document.body.innerText));

    // A private address: the API's refusal, nothing created.
    const forbiddenUrl = 'http://169.254.169.254/hook';
    const forbidden = await proApi.post('/api/v1/webhooks/', { url: forbiddenUrl, events: ['job.completed', 'job.failed'] });
    assert.equal(forbidden.status, 400, JSON.stringify(forbidden.body));
    assert.equal(forbidden.body.code, 'target_forbidden');
    await fill('#webhook-url', forbiddenUrl);
    await clickText('Add webhook');
    await page.waitForFunction((msg: string) => document.querySelector('[data-testid=error]')?.firstChild?.textContent === msg, {}, forbidden.body.error);
    assert.equal(await page.$eval('#webhook-url', (el) => el.getAttribute('aria-invalid')), 'true');
    assert.deepEqual((await proApi.get('/api/v1/webhooks/')).body, { webhooks: [] });

    // The shop answers 200 to anything: a receiver that accepts every message.
    const hookUrl = `${shopUrl}/hook`;
    await fill('#webhook-url', hookUrl);
    await page.click('input[type=checkbox][value="job.changed"]');
    await clickText('Add webhook');
    await page.waitForSelector('[data-testid=webhook-secret]');
    const secret = await page.$eval('[data-testid=webhook-secret]', (el) => el.textContent ?? '');
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
    assert.match(await page.$eval('[data-testid=secret-warning]', (el) => el.textContent ?? ''), /shown only this once/);
    const listed = (await proApi.get('/api/v1/webhooks/')).body.webhooks as { id: string; url: string; events: string[]; secret?: string }[];
    assert.equal(listed.length, 1);
    const hook = listed[0]!;
    assert.deepEqual([hook.url, hook.events, hook.secret], [hookUrl, ['job.completed', 'job.failed', 'job.changed'], undefined]);
    await clickText('Copy secret');
    await page.waitForFunction(() => /Secret copied/.test(document.body.innerText));
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await page.waitForSelector(`[data-webhook-id="${hook.id}"] [data-testid=no-deliveries]`);
    await capture('webhook-created');

    // Dismissed, or the page reloaded: the secret is nowhere on it; the webhook stays listed with its deliveries (none).
    await clickText('I have stored the secret');
    await page.waitForFunction(() => !document.querySelector('[data-testid=webhook-secret]'));
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector(`[data-webhook-id="${hook.id}"] [data-testid=no-deliveries]`);
    assert.ok(!(await page.content()).includes(secret));
    assert.equal(await page.$eval(`[data-webhook-id="${hook.id}"] [data-testid=webhook-url]`, (el) => el.textContent), hookUrl);
    assert.equal(await page.$eval(`[data-webhook-id="${hook.id}"] [data-testid=webhook-events]`, (el) => el.textContent), 'job.completed, job.failed, job.changed');
    assert.deepEqual((await proApi.get(`/api/v1/webhooks/${hook.id}/deliveries/`)).body, { deliveries: [] });

    // A run ends: its job.completed message's delivery is listed after a refresh, as the API lists it.
    const run = await proApi.post('/api/v1/run/', { config_id: shopConfigId });
    assert.equal(run.status, 202);
    await proApi.waitForJob(run.body.id);
    const delivery = await until('the delivery', async () => ((await proApi.get(`/api/v1/webhooks/${hook.id}/deliveries/`)).body.deliveries as Record<string, unknown>[])[0]);
    assert.deepEqual([delivery.event, delivery.job_id, delivery.attempt, delivery.status_code, delivery.outcome], ['job.completed', run.body.id, 1, 200, 'delivered']);
    await clickText('Refresh');
    const cells = await page.waitForFunction((id: string) => {
      const tr = document.querySelector(`[data-delivery-id="${id}"]`);
      return tr && Array.from(tr.querySelectorAll('td')).map((td) => (td as HTMLElement).innerText.trim());
    }, {}, delivery.id as string).then((h) => h.jsonValue() as Promise<string[]>);
    const when = await page.evaluate((iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }), delivery.attempted_at as string);
    assert.deepEqual(cells, [when, 'job.completed', run.body.id.slice(0, 8), '1', '200', `${delivery.duration_ms} ms`, 'delivered', '']);
    await capture('webhooks', true);

    await clickText(`Delete the webhook ${hookUrl}`);
    await clickText(`Confirm: delete the webhook ${hookUrl}`);
    await page.waitForFunction(() => /No webhooks yet/.test(document.body.innerText));
    assert.deepEqual((await proApi.get('/api/v1/webhooks/')).body, { webhooks: [] });
  });

  it('rows: http(s) URLs are links opening in a new tab, javascript: and other values are not; a long value is clamped and "Show all" (keyboard) shows it; the job links to its config', async () => {
    const created = await proApi.post('/api/v1/configs/', { name: 'Links (rows)', target_url: `${shopUrl}/links/`, yaml_content: linksYaml(shopUrl) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const linksConfigId = created.body.id as string;
    const run = await proApi.post('/api/v1/run/', { config_id: linksConfigId });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal((await proApi.waitForJob(run.body.id)).job.status, 'completed');
    const rows = ((await proApi.get(`/api/v1/jobs/${run.body.id}/results/`)).body as { data: Record<string, string>[] }[])[0]!.data;
    assert.deepEqual(rows, LINK_ITEMS.map((x) => ({ title: x.title, web: x.web, script: x.script, path: x.path, about: x.about })));

    await go(`#/jobs/${run.body.id}`, `Job ${run.body.id.slice(0, 8)}`);
    await page.waitForSelector('[data-testid=rows] tbody tr');
    assert.deepEqual(await page.$$eval('[data-testid=rows] thead th', (ths) => ths.map((th) => th.textContent)), ['#', 'title', 'web', 'script', 'path', 'about']);
    /** Per row and column: the value's text, and its link's href, target and rel when it is one. */
    const cells = await page.$$eval('[data-testid=rows] tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).slice(1).map((td) => {
      const a = td.querySelector('a');
      return { text: td.querySelector('.cell-value')!.textContent, link: a && { href: a.getAttribute('href'), target: a.getAttribute('target'), rel: a.getAttribute('rel') } };
    })));
    const newTab = (href: string) => ({ href, target: '_blank', rel: 'noopener noreferrer' });
    assert.deepEqual(cells, LINK_ITEMS.map((x) => [
      { text: x.title, link: null },
      { text: x.web, link: newTab(x.web) },
      { text: x.script, link: null },
      { text: x.path, link: null },
      { text: x.about, link: null },
    ]));
    assert.equal(await page.$('main a[href^="javascript:" i], main a[href^="data:" i]'), null, 'no link of another scheme');

    // The long value: clamped to three lines (its text overflows the box), with a button that shows it all.
    const about = '[data-testid=rows] tbody tr:first-child td:last-child';
    const box = () => page.$eval(`${about} [data-testid=clamped-value]`, (el) => ({ clamped: el.classList.contains('clamped'), overflows: el.scrollHeight > el.clientHeight + 1, lines: Math.round(el.clientHeight / parseFloat(getComputedStyle(el).lineHeight)) }));
    const toggle = `${about} button`;
    const button = () => page.$eval(toggle, (b) => ({ text: b.textContent, expanded: b.getAttribute('aria-expanded'), name: b.getAttribute('aria-label'), controls: document.getElementById(b.getAttribute('aria-controls') ?? '') !== null }));
    assert.deepEqual(await box(), { clamped: true, overflows: true, lines: 3 });
    assert.deepEqual(await button(), { text: 'Show all', expanded: 'false', name: 'Show all of about of row 1', controls: true });
    assert.equal(await page.$('[data-testid=rows] tbody tr:nth-child(2) td:last-child button'), null, 'a short value has no button');
    await capture('job-links');
    // With the keyboard: focus the button, Enter shows the whole value, Space clamps it again.
    await page.focus(toggle);
    await page.keyboard.press('Enter');
    await page.waitForFunction((sel: string) => document.querySelector(sel)?.getAttribute('aria-expanded') === 'true', {}, toggle);
    assert.deepEqual({ ...(await box()), lines: 0 }, { clamped: false, overflows: false, lines: 0 });
    assert.equal((await button()).text, 'Show less');
    assert.ok((await box()).lines > 3);
    await page.keyboard.press('Space');
    await page.waitForFunction((sel: string) => document.querySelector(sel)?.getAttribute('aria-expanded') === 'false', {}, toggle);
    assert.equal((await box()).clamped, true);

    // The job names its config with a link to the config's page; once the config is deleted, its id without a link.
    assert.equal(await page.$eval('[data-testid=job-config] a', (a) => a.getAttribute('href')), `#/configs/${linksConfigId}`);
    assert.equal(await page.$eval('[data-testid=job-config] a', (a) => a.textContent), 'Links (rows)');
    await page.click('[data-testid=job-config] a');
    await page.waitForFunction(() => document.querySelector('main h1')?.textContent === 'Edit Links (rows)');
    assert.equal((await proApi.delete(`/api/v1/configs/${linksConfigId}/`)).status, 204);
    await go(`#/jobs/${run.body.id}`, `Job ${run.body.id.slice(0, 8)}`);
    await page.waitForFunction((id: string) => document.querySelector('[data-testid=job-config]')?.textContent === `config ${id.slice(0, 8)} (deleted since)`, {}, linksConfigId);
    assert.equal(await page.$('[data-testid=job-config] a'), null);
  });

  it('logged no console error and no CSP violation across the run', () => {
    assert.deepEqual(cspViolations, []);
    assert.deepEqual(consoleErrors, []);
  });
});
