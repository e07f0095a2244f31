/**
 * The pace per host (lambdas/engine/crawl/pace.ts) on a fake clock, and robots.txt's reading (crawl/robots.ts):
 * AutoThrottle's rule, the slow-down on 429/503 and the recovery after it, Crawl-delay as a floor, Retry-After
 * holding the host; robots.txt fetched once per origin, the rule named, answers that mean "no rules", the caps.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HostPace, SLOW_DOWN_MIN_MS } from '../../lambdas/engine/crawl/pace.ts';
import { boundRobotsText, ROBOTS_LIMITS, RobotsRules, type RobotsAnswer } from '../../lambdas/engine/crawl/robots.ts';

const O = 'https://shop.example';

describe('HostPace', () => {
  it('fixed: the gap is the delay, or the Crawl-delay when larger', () => {
    const fixed = new HostPace({ mode: 'fixed', delayMs: 300, maxDelayMs: 30_000, targetConcurrency: 4 }, { floor: (o) => (o === O ? 1000 : undefined) });
    assert.equal(fixed.gapOf(O), 1000);
    assert.equal(fixed.gapOf('https://other.example'), 300);
    fixed.observe(O, { status: 429, latencyMs: 10 });
    assert.equal(fixed.gapOf(O), 1000, 'fixed does not adapt');
  });

  it('auto: moves halfway to latency / target concurrency; slows down on 429 and 503, then speeds up again', () => {
    let now = 0;
    const pace = new HostPace({ mode: 'auto', delayMs: 0, maxDelayMs: 30_000, targetConcurrency: 2 }, { now: () => now });
    pace.observe(O, { status: 200, latencyMs: 400 });
    assert.equal(pace.gapOf(O), 200, 'max(400/2, (0+200)/2)');
    pace.observe(O, { status: 429, latencyMs: 5 });
    assert.equal(pace.gapOf(O), SLOW_DOWN_MIN_MS);
    pace.observe(O, { status: 503, latencyMs: 5 });
    assert.equal(pace.gapOf(O), 2 * SLOW_DOWN_MIN_MS, 'doubles');
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      pace.observe(O, { status: 200, latencyMs: 20 });
      seen.push(pace.gapOf(O));
    }
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! < seen[i - 1]!, `speeds up: ${seen.join(', ')}`);
    assert.ok(seen.at(-1)! < 30, seen.join(', '));
    assert.equal(pace.slowdowns, 2);
    now += 1;
  });

  it('auto: an error page\'s short latency does not speed the host up; max_delay caps the slow-down', () => {
    const pace = new HostPace({ mode: 'auto', delayMs: 0, maxDelayMs: 1500, targetConcurrency: 1 });
    pace.observe(O, { status: 200, latencyMs: 800 });
    const before = pace.gapOf(O);
    pace.observe(O, { status: 404, latencyMs: 1 });
    assert.equal(pace.gapOf(O), before);
    for (let i = 0; i < 5; i++) pace.observe(O, { status: 429, latencyMs: 1 });
    assert.equal(pace.gapOf(O), 1500);
  });

  it('acquire books consecutive slots, and a Retry-After holds the host', async () => {
    const pace = new HostPace({ mode: 'fixed', delayMs: 40, maxDelayMs: 30_000, targetConcurrency: 1 });
    const t0 = Date.now();
    await Promise.all([pace.acquire(O), pace.acquire(O), pace.acquire(O)]);
    assert.ok(Date.now() - t0 >= 78, 'three slots 40 ms apart');
    pace.observe(O, { status: 429, latencyMs: 1, retryAfterMs: 150 });
    const t1 = Date.now();
    await pace.acquire(O);
    assert.ok(Date.now() - t1 >= 145);
    const aborted = new AbortController();
    aborted.abort(new Error('stop'));
    await assert.rejects(pace.acquire(O, aborted.signal), /stop/);
  });
});

describe('RobotsRules', () => {
  const answering = (answers: Record<string, RobotsAnswer>) => {
    const asked: string[] = [];
    const rules = new RobotsRules({
      fetch: async (url) => { asked.push(url); return answers[url] ?? { status: 404, text: '' }; },
      warn: (m) => warnings.push(m),
    });
    const warnings: string[] = [];
    return { rules, asked, warnings };
  };

  it('fetches each origin once, names the rule and its line, reads Crawl-delay for scrape-ai', async () => {
    const { rules, asked } = answering({ [`${O}/robots.txt`]: { status: 200, text: 'User-agent: *\nDisallow: /\n\nUser-agent: scrape-ai\nDisallow: /private/ # staff\nCrawl-delay: 2.5\n' } });
    const [a, b, c] = await Promise.all([rules.check(`${O}/private/1`), rules.check(`${O}/shop/`), rules.check(`${O}/private/2?x=1`)]);
    assert.deepEqual(a, { url: `${O}/private/1`, robotsUrl: `${O}/robots.txt`, line: 5, rule: 'Disallow: /private/' });
    assert.equal(b, null, 'the scrape-ai group wins over *');
    assert.equal(c?.line, 5);
    assert.deepEqual(asked, [`${O}/robots.txt`]);
    assert.equal(rules.crawlDelayMs(O), 2500);
  });

  it('4xx means no rules; 5xx and failures mean no rules with a warning', async () => {
    const { rules, warnings } = answering({
      'https://a.example/robots.txt': { status: 403, text: 'Disallow: /' },
      'https://b.example/robots.txt': { status: 503, text: 'User-agent: *\nDisallow: /' },
      'https://c.example/robots.txt': { error: new Error('connect ECONNREFUSED') },
    });
    for (const h of ['a', 'b', 'c']) assert.equal(await rules.check(`https://${h}.example/x`), null);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /robots\.txt of https:\/\/b\.example answered HTTP 503; the run went on as if it had none/);
    assert.match(warnings[1]!, /could not be read \(connect ECONNREFUSED\)/);
  });

  it('a file past the rule caps is cut at a line, with a warning', async () => {
    const many = `User-agent: *\n${Array.from({ length: ROBOTS_LIMITS.maxRules + 10 }, (_, i) => `Disallow: /p${i}/`).join('\n')}\n`;
    const cut = boundRobotsText(many);
    assert.equal(cut.cut, true);
    assert.equal(cut.text.split('\n').filter((l) => l.startsWith('Disallow')).length, ROBOTS_LIMITS.maxRules);
    const { rules, warnings } = answering({ [`${O}/robots.txt`]: { status: 200, text: many } });
    assert.ok(await rules.check(`${O}/p5/`));
    assert.equal(await rules.check(`${O}/p${ROBOTS_LIMITS.maxRules + 5}/`), null, 'rules past the cap are not read');
    assert.match(warnings[0]!, /more than 2000 rules/);
  });

  it('a long URL is matched on its first 2,048 characters, in bounded time', async () => {
    const pattern = `/${'*a'.repeat(500)}`;
    const { rules } = answering({ [`${O}/robots.txt`]: { status: 200, text: `User-agent: *\n${Array.from({ length: 60 }, () => `Disallow: ${pattern}`).join('\n')}\n` } });
    const t = Date.now();
    await rules.check(`${O}/${'b'.repeat(200_000)}`);
    assert.ok(Date.now() - t < 5_000);
  });
});
