// Entry point of `npm run bench -- <name> [options]`: runs bench/<name>.ts, whose main(args) returns the exit code.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR } from './paths.ts';

const BENCHES: Record<string, string> = {
  engine:
    'our engine vs Scrapy, Crawlee CheerioCrawler and a minimal undici + cheerio loop on a local listing site ' +
    '(options: --concurrency N (8), --runs N (1), --only a,b, --regenerate, --timeout S)',
  polls:
    'status-poll latency while a 1,050-page job runs: the local service (jobs in worker threads) vs the same crawl ' +
    'on the HTTP thread (options: --polls-idle N (300), --concurrency N (8))',
  browser:
    'heavy runs vs Crawlee PuppeteerCrawler and a minimal puppeteer-core loop on a script-rendered local site, ' +
    'same Chromium, process-tree memory (options: --concurrency N (4), --runs N (1), --only a,b, --regenerate, --timeout S)',
  parse:
    'HTML parsing on the corpus pages: htmlparser2 vs parse5 vs our parseHtml (fast path + parse5 fallback), ms per page ' +
    'by page group (options: --rounds N (21), --min-ms N (100), --only listing,detail,records,articles,structured,links)',
  api:
    'API under load on the local service: wrk on GET status while 4 jobs run, POST /run/ to completed, hostile YAML bodies vs ' +
    'GET /me/ of another account (options: --only status,run,bodies, --wrk-seconds N (10), --connections N (64), --rate 16k, --runs N (50), --bodies-seconds N (10), --bodies-connections N (3))',
  faults:
    "another account's GET /me/ while the fault matrix (every hostile behaviour against every feature that loads a page) runs, " +
    'vs the same service idle; target p99 < 50 ms (options: --runs N (3), --idle-seconds N (10))',
  fairness:
    "issue 37's figures, each vs the same service without the hostile load in the same run: another account's GET /me/ p99 during 6 exports " +
    "of a 60,000-row job, its webhook delivery p99 while 10 webhooks of one account hang, its tool call p99 during one account's flood of " +
    'tool calls and jobs; a 5,000-row Markdown table vs the GFM plugin (options: --only exports,webhooks,tools,markdown)',
  generate: "the no-LLM config generator on the 100 records pages and the fixture site's variants: each produced config's run vs the truth (rows within 10%, 80% of first values found), accuracy, generation time (options: --only a,b, --prompt TEXT, --no-browser, --concurrency N (2), --timeout S (60))",
  leads: 'the lead-generation tool on a labelled set of contact pages: precision and recall of emails, phones and social links (target 0.95 each)',
  content: "the content extractor vs plain Readability: the 91 human-labelled scrapinghub pages (evaluate.py's shingle F1, develop and test sides) and the 130 Readability test pages (token F1 against expected.html, metadata agreement) (options: --corpus all|readability|scrapinghub, --only a,b, --rounds N (3), --show KEY)",
  links: 'the broken-link checker vs linkinator on the two corpus link pages served on loopback (404s, redirects, refused ports, slow, 429, HEAD 405): links/s and per-link verdicts (options: --concurrency N (32), --runs N (1), --only archwiki,elvis)',
  quicktest: "the extension's Quick Test, click to rows, vs a minimal in-page DOM read (Instant Data Scraper's way) on five shapes of page, target 1 s (options: --runs N (15), --only products,books,alibaba,newegg,archwiki)",
  changes: 'rows added, removed and changed between two runs (compareRows, issue 26) on generated 10,000- and 100,000-row result sets, keyed on url and on all values, vs JSON.stringify with a Map/Set difference: median ms and agreement (options: --rounds N (7), --sizes 10000,100000, --only flat,nested)',
  monitoring: 'schedules and webhooks (issue 26) on the local service: 1,000 schedules due in the same minute fired vs the same jobs started by POST /run/ (target: within the minute); GET status p99 while webhook deliveries to a receiver answering in 2 s are under way vs idle (target: within 20%) (options: --only schedules,webhooks, --schedules N (1000), --poll-seconds N (20), --rounds N (2))',
  'api-source': "issue 38: the generated config that reads a page's JSON API (lightweight engine) vs the generated config that reads the rendered page (browser engine), same rows, on the fixture site's feed, POST search, cursor and paged API pages; target 10x (options: --runs N (3), --only feed,search,cursor,quotes)",
  site: 'only generate the local listing site into .bench/site (options: --force)',
};

function usage(): void {
  console.log('usage: npm run bench -- <name> [options]\n');
  for (const [name, what] of Object.entries(BENCHES)) console.log(`  ${name.padEnd(8)} ${what}`);
}

const [name, ...args] = process.argv.slice(2);
// Without a name, as with --help: the list, and success (it is what was asked for).
if (!name || name === '-h' || name === '--help' || name === 'help') {
  usage();
  process.exit(0);
}
if (!Object.hasOwn(BENCHES, name) || !existsSync(join(BENCH_DIR, `${name}.ts`))) {
  console.error(`unknown benchmark: ${name}\n`);
  usage();
  process.exit(2);
}
const mod = (await import(pathToFileURL(join(BENCH_DIR, `${name}.ts`)).href)) as {
  main(args: string[]): Promise<number>;
};
try {
  process.exitCode = await mod.main(args);
} catch (err) {
  // The message is enough for expected failures (a missing package, a wrong row); BENCH_DEBUG=1 adds the stack.
  const detail = err instanceof Error ? (process.env.BENCH_DEBUG ? (err.stack ?? err.message) : err.message) : String(err);
  console.error(`bench ${name} failed: ${detail}`);
  process.exitCode = 1;
}
