/**
 * What the job list and a job's status say of a run (issue 40, item 7; docs/api.md "Jobs", docs/crawler.md "What
 * pages_scraped counts"), over real HTTP: `pages_scraped` counts listing and detail pages the same way on both
 * engines, and the message says it the same way; a run's warnings are counted in the message and listed in
 * `warnings`, each naming its page once; the list names each job's config (a saved config's name, an inline YAML's
 * `name:`) and counts its warnings. Expected counts come from the fixture site's data (allQuotes()).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.ts';
import { allQuotes } from '../fixtures/site/quotes.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

/** Two listing pages of quotes, each quote's author page as its detail page; Ada Whitmore's link made to 404. */
const detailYaml = (site: string, engine: 'lightweight' | 'heavy', name = 'Quotes and authors') => `version: "2.0"
name: ${name}
target: { url: "${site}/quotes/", engine: ${engine} }
extract:
  container: div.quote
  fields:
    - { name: text, selector: span.text }
    - { name: author_url, selector: "a[href*='/author/']", type: link, transform: ["replace:Ada-Whitmore:Nobody-Known"] }
detail_fields:
  fields:
    - { name: born, selector: span.author-born-date }
pagination: { type: click, selector: li.next a, max_pages: 2 }
`;

describe('job list and status: pages_scraped, warnings, config names', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: ReturnType<typeof client>;
  before(async () => {
    site = await startFixtureSite();
    svc = await startService();
    api = client(svc.url, (await createAccount(svc.dataDir, { plan: 'pro' })).api_key);
  });
  after(async () => {
    await svc?.stop();
    await site?.close();
  });

  it('pages_scraped counts the listing pages and the detail pages read, alike on both engines; failed pages are warnings naming their URL once', async () => {
    const quotes = allQuotes().slice(0, 20);
    const authors = new Set(quotes.map((q) => q.authorSlug));
    const broken = authors.has('Ada-Whitmore') ? 1 : 0;
    assert.equal(broken, 1, 'the first two pages quote Ada Whitmore');
    const detailRead = authors.size - broken;
    const seen: Record<string, { pages: number; message: string; warnings: string[] }> = {};
    for (const engine of ['lightweight', 'heavy'] as const) {
      const r = await api.post('/api/v1/run/', { yaml_content: detailYaml(site.url, engine) });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const { job } = await api.waitForJob(r.body.id, 120_000);
      assert.equal(job.status, 'completed', job.status_message);
      assert.equal(job.pages_scraped, 2 + detailRead, `${engine}: 2 listing pages and ${detailRead} author pages read (the 404 is not counted)`);
      assert.match(job.status_message, new RegExp(`^Completed: 20 rows from ${2 + detailRead} pages: 2 listing, ${detailRead} detail \\(${engine} engine; `));
      assert.match(job.status_message, /; 1 warning \(listed in the job's warnings\)$/);
      assert.equal(job.warning_count, 1);
      const url = `${site.url}/quotes/author/Nobody-Known/`;
      assert.deepEqual(job.warnings, [`detail page ${url}: answered HTTP 404`], 'the URL once, not "URL: URL answered"');
      seen[engine] = { pages: job.pages_scraped, message: job.status_message.replace(/\(\w+ engine;.*$/, ''), warnings: job.warnings };
    }
    assert.deepEqual(seen.lightweight, seen.heavy, 'both engines count and say it alike');

    // Without detail fields the same listing is 2 pages, said as such.
    const plain = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/quotes/", engine: lightweight }\nextract: { container: div.quote, fields: [{ name: text, selector: span.text }] }\npagination: { type: click, selector: li.next a, max_pages: 2 }\n` });
    const { job } = await api.waitForJob(plain.body.id, 60_000);
    assert.equal(job.pages_scraped, 2);
    assert.match(job.status_message, /^Completed: 20 rows from 2 pages \(lightweight engine; /);
    assert.deepEqual([job.warning_count, job.warnings], [0, []]);
  });

  it('the job list names each job\'s config and counts its warnings; the status has config_id and config_name too', async () => {
    const saved = await api.post('/api/v1/configs/', { name: 'Saved quotes', target_url: `${site.url}/quotes/`, yaml_content: detailYaml(site.url, 'lightweight', 'Name inside the YAML') });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    const ofSaved = await api.post('/api/v1/run/', { config_id: saved.body.id });
    const inline = await api.post('/api/v1/run/', { yaml_content: detailYaml(site.url, 'lightweight', 'Inline quotes') });
    const nameless = await api.post('/api/v1/run/', { yaml_content: `target: { url: "${site.url}/quotes/" }\nextract: { container: div.quote, fields: [{ name: text, selector: span.text }] }\n` });
    for (const r of [ofSaved, inline, nameless]) assert.equal((await api.waitForJob(r.body.id, 60_000)).job.status, 'completed');
    const list = (await api.get('/api/v1/jobs/?limit=3')).body.results as Array<Record<string, unknown>>;
    const byId = new Map(list.map((j) => [j.id, j]));
    assert.deepEqual([byId.get(ofSaved.body.id)?.config_id, byId.get(ofSaved.body.id)?.config_name, byId.get(ofSaved.body.id)?.warning_count], [saved.body.id, 'Saved quotes', 1],
      'a saved config\'s name, not its YAML\'s');
    assert.deepEqual([byId.get(inline.body.id)?.config_id, byId.get(inline.body.id)?.config_name], [null, 'Inline quotes'], 'an inline YAML\'s name:');
    assert.deepEqual([byId.get(nameless.body.id)?.config_name, byId.get(nameless.body.id)?.warning_count], [null, 0]);
    assert.equal('warnings' in byId.get(ofSaved.body.id)!, false, 'the list counts warnings, the status lists them');
    const status = (await api.get(`/api/v1/jobs/${ofSaved.body.id}/status/`)).body;
    assert.deepEqual([status.config_id, status.config_name, status.warning_count, status.warnings.length], [saved.body.id, 'Saved quotes', 1, 1]);
    // The config deleted: the job keeps the name it ran under.
    assert.equal((await api.delete(`/api/v1/configs/${saved.body.id}/`)).status, 204);
    assert.equal((await api.get('/api/v1/jobs/?limit=3')).body.results.find((j: { id: string }) => j.id === ofSaved.body.id).config_name, 'Saved quotes');
  });
});
