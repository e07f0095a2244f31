/**
 * The Claude agent of the config generator (lambdas/generator/agent.ts) through the real @anthropic-ai/sdk
 * against a local stub of the Messages API (test/helpers/anthropic-stub.ts) with scripted answers, and a
 * scripted stand-in for the generator's tools whose runConfig validates with the real parseConfig and finds
 * rows only for the right container. Covered: the tool loop and what it sends (model, tools, the heuristic
 * start, tool results as bounded JSON, never a page); recovery from a refused submission; Anthropic's
 * errors after the SDK's retries (429 once, then again and again; 401; 529; 400; time-outs); the round,
 * token and no-submission ends; abort.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../lambdas/engine/config.ts';
import { CodedError } from '../../lambdas/errors.ts';
import { AgentError, DEFAULT_MODEL, MAX_TOOL_RESULT_CHARS, runAgent, type AgentOptions } from '../../lambdas/generator/agent.ts';
import type { GenerateRequest } from '../../lambdas/generator/generator.ts';
import type { ConfigTrial, GeneratorTools, PageOutline, SelectorTest } from '../../lambdas/generator/tools.ts';
import { httpError, reply, startAnthropicStub, text, toolUse, type AnthropicStub, type ReceivedRequest, type ScriptStep } from '../helpers/anthropic-stub.ts';

const URL_ = 'https://books.example/';
const REQUEST: GenerateRequest = { url: URL_, prompt: 'book titles and prices from every page' };
const MODEL = 'claude-test-model';

const GOOD_YAML = `version: "2.0"
name: Books
target:
  url: ${URL_}
extract:
  container: article.product_pod
  fields:
    - { name: title, selector: h3 a, type: attribute, attribute: title }
    - { name: price, selector: p.price_color, transform: [strip_currency, to_number] }
pagination: { type: click, selector: li.next a, max_pages: 3 }
`;

/** The heuristic start: valid, but its container is the navigation, so its trial finds no books. */
const START = {
  yaml: GOOD_YAML.replace('article.product_pod', 'ul.nav-list li'),
  summary: 'found 2 repeated blocks; the largest (ul.nav-list li) has 50 items',
};

/** A YAML syntax error (an unclosed flow sequence). */
const BROKEN_YAML = `version: "2.0"
target: { url: ${URL_} }
extract:
  container: article.product_pod
  fields: [ { name: title, selector: h3 a }
`;

/** Valid YAML, not a valid config: a misspelt key. */
const TYPO_YAML = GOOD_YAML.replace('container:', 'contianer:');

/** Selector counts on the fake page; `within` counts are per item. */
const COUNTS: Record<string, number> = {
  'article.product_pod': 20,
  'article.product_pod h3 a': 20,
  'article.product_pod p.price_color': 20,
  'ul.nav-list li': 50,
  'li.next a': 1,
};

/** The scripted tools, with what they were asked. */
interface FakeTools extends GeneratorTools {
  calls: string[];
}

function fakeTools(overrides: Partial<GeneratorTools> = {}, outline = 'body\n  ul.nav-list > li ×50 "Travel"\n  ol.row > li > article.product_pod ×20\n    h3 > a[title] "A Light in the …"\n    p.price_color "£51.77"\n  ul.pager > li.next > a "next"'): FakeTools {
  const calls: string[] = [];
  const tools: FakeTools = {
    calls,
    async loadPage(url, { render }): Promise<PageOutline> {
      calls.push(`loadPage ${url} ${render}`);
      return {
        url, status: 200, rendered: render, title: 'All products | Books',
        outline,
        candidates: [
          { selector: 'ul.nav-list li', count: 50, sample: 'Travel', score: 0.4 },
          { selector: 'article.product_pod', count: 20, sample: 'A Light in the Attic £51.77 In stock', score: 0.9 },
        ],
        pagination: ['li.next a'],
      };
    },
    async testSelector(selector, options = {}): Promise<SelectorTest> {
      calls.push(`testSelector ${selector}${options.within ? ` within ${options.within}` : ''}${options.attribute ? ` @${options.attribute}` : ''}`);
      const key = options.within ? `${options.within} ${selector}` : selector;
      const count = COUNTS[key] ?? 0;
      return { selector, count, samples: count ? ['A Light in the Attic', 'Tipping the Velvet'].slice(0, count) : [] };
    },
    async listRequests() {
      calls.push('listRequests');
      return [];
    },
    async runConfig(yaml): Promise<ConfigTrial> {
      calls.push('runConfig');
      let config;
      try {
        config = parseConfig(yaml);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        return { ok: false, problems: err.details, rowCount: 0, rows: [], pagesScraped: 0, warnings: [] };
      }
      if (config.extract.container !== 'article.product_pod') {
        return { ok: false, rowCount: 0, rows: [], pagesScraped: 1, warnings: [`no item matched extract.container (${config.extract.container})`] };
      }
      const rows = Array.from({ length: 5 }, (_, i) => Object.fromEntries(config.extract.fields.map((f) => [f.name, f.name === 'price' ? 10 + i : `${f.name} ${i + 1}`])));
      return { ok: true, rowCount: 60, rows, pagesScraped: 3, warnings: [] };
    },
    ...overrides,
  };
  return tools;
}

/** Runs the agent against a fresh stub with this script; closes the stub afterwards. */
async function withStub<T>(script: ScriptStep[], fn: (stub: AnthropicStub) => Promise<T>): Promise<T> {
  const stub = await startAnthropicStub(script);
  try {
    return await fn(stub);
  } finally {
    await stub.close();
  }
}

function options(stub: AnthropicStub, more: Partial<AgentOptions> = {}): AgentOptions {
  return { apiKey: 'sk-ant-test', model: MODEL, baseURL: stub.url, ...more };
}

/** The tool_result blocks of a request's last message. */
function toolResults(req: ReceivedRequest): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = req.body.messages.at(-1)!;
  assert.equal(last.role, 'user');
  assert.ok(Array.isArray(last.content), 'the last message carries blocks');
  return (last.content as Array<{ type: string }>).filter((b) => b.type === 'tool_result') as never;
}

/** The AgentError `promise` rejects with (fails the test otherwise). */
async function agentError(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AgentError, `expected an AgentError, got ${String(err)}`);
    return err;
  }
  assert.fail('the agent succeeded');
}

// Each case has its own stub and tools: they run at once (the SDK's back-off makes a few take a second or two).
describe('runAgent', { concurrency: true }, () => {
  it('loads the page, tests selectors, submits a config that runs, and reports what it did', async () => {
    const tools = fakeTools();
    const progress: string[] = [];
    await withStub([
      reply([text('Loading the page.'), toolUse('load_page', { url: URL_, render: false }, 'toolu_load')]),
      reply([
        toolUse('test_selector', { selector: 'article.product_pod' }, 'toolu_c'),
        toolUse('test_selector', { selector: 'h3 a', within: 'article.product_pod', attribute: 'title' }, 'toolu_t'),
      ], { usage: { input_tokens: 1000, output_tokens: 200, cache_read_input_tokens: 500 } }),
      reply([toolUse('submit_config', { yaml: GOOD_YAML }, 'toolu_submit')]),
    ], async (stub) => {
      const result = await runAgent(REQUEST, START, tools, options(stub, { onProgress: (m) => progress.push(m) }));
      assert.equal(result.yaml, GOOD_YAML);
      assert.equal(result.trial.ok, true);
      assert.equal(result.trial.rowCount, 60);
      assert.equal(result.rounds, 3);
      assert.deepEqual(result.usage, { inputTokens: 100 + 1500 + 100, outputTokens: 50 + 200 + 50 });
      assert.ok(result.notes.some((n) => /round 3: config accepted: 60 rows/.test(n)), result.notes.join('\n'));
      assert.deepEqual(tools.calls, [
        `loadPage ${URL_} false`,
        'testSelector article.product_pod',
        'testSelector h3 a within article.product_pod @title',
        'runConfig',
      ]);
      assert.ok(progress.includes('round 2: testing selector h3 a within article.product_pod'), progress.join('\n'));
      assert.ok(progress.includes(`round 1: loading ${URL_}`), progress.join('\n'));
      assert.ok(progress.every((m) => /^round \d+: /.test(m)));

      assert.equal(stub.requests.length, 3);
      // Round 2 carries the page as an outline in JSON, round 3 both selector tests, in order.
      const [load] = toolResults(stub.requests[1]!);
      assert.equal(load!.tool_use_id, 'toolu_load');
      const page = JSON.parse(load!.content) as PageOutline;
      assert.equal(page.title, 'All products | Books');
      assert.equal(page.candidates[1]!.selector, 'article.product_pod');
      assert.match(page.outline, /article\.product_pod ×20/);
      const tests = toolResults(stub.requests[2]!);
      assert.deepEqual(tests.map((t) => t.tool_use_id), ['toolu_c', 'toolu_t']);
      assert.equal((JSON.parse(tests[0]!.content) as SelectorTest).count, 20);
      // The assistant's turns go back as they came.
      const history = stub.requests[2]!.body.messages;
      assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user']);
      assert.deepEqual((history[1]!.content as Array<{ type: string }>).map((b) => b.type), ['text', 'tool_use']);
      for (const req of stub.requests) {
        assert.doesNotMatch(req.raw, /<html|<!doctype|<body/i, 'no raw page is sent');
      }
    });
  });

  it('sends the model from the options, the five tools, the system prompt and the heuristic start', async () => {
    await withStub([reply([toolUse('submit_config', { yaml: GOOD_YAML })])], async (stub) => {
      await runAgent(REQUEST, START, fakeTools(), options(stub));
      const req = stub.requests[0]!;
      assert.equal(req.path, '/v1/messages');
      // This SDK sends the key as a bearer token; x-api-key is the older form.
      assert.ok(req.headers['authorization'] === 'Bearer sk-ant-test' || req.headers['x-api-key'] === 'sk-ant-test', 'the API key from the options');
      assert.equal(req.body.model, MODEL);
      assert.ok(req.body.max_tokens > 0 && req.body.max_tokens <= 16_000);
      assert.deepEqual(req.body.tools!.map((t) => t.name).sort(), ['list_requests', 'load_page', 'run_config', 'submit_config', 'test_selector']);
      for (const tool of req.body.tools!) {
        assert.equal(tool.input_schema['type'], 'object');
        assert.ok(tool.description && tool.description.length > 20);
      }
      const loadPage = req.body.tools!.find((t) => t.name === 'load_page')!;
      assert.deepEqual(Object.keys(loadPage.input_schema['properties'] as object).sort(), ['render', 'url']);
      const testSelector = req.body.tools!.find((t) => t.name === 'test_selector')!;
      assert.deepEqual(Object.keys(testSelector.input_schema['properties'] as object).sort(), ['attribute', 'selector', 'within']);
      const system = typeof req.body.system === 'string' ? req.body.system : req.body.system!.map((b) => b.text).join('\n');
      for (const word of ['container', 'fields', 'transform', 'strip_currency', 'pagination', 'url_pattern', 'detail_fields', 'categories', 'test_selector', 'submit_config', 'api:', 'records', 'cursor_path', 'list_requests']) {
        assert.ok(system.includes(word), `the system prompt mentions ${word}`);
      }
      const first = req.body.messages[0]!;
      assert.equal(first.role, 'user');
      const content = typeof first.content === 'string' ? first.content : JSON.stringify(first.content);
      assert.ok(content.includes(URL_));
      assert.ok(content.includes(REQUEST.prompt));
      assert.ok(content.includes(START.yaml.trim()), 'the starting config');
      assert.ok(content.includes(START.summary), 'what the heuristic found');
    });
  });

  it('names the user\'s example URLs in its first message, as other pages of the template to check the container on', async () => {
    const examples = [`${URL_}?page=2`, `${URL_}?q=other`];
    await withStub([reply([toolUse('submit_config', { yaml: GOOD_YAML })])], async (stub) => {
      await runAgent({ ...REQUEST, exampleUrls: examples }, START, fakeTools(), options(stub));
      const content = String(stub.requests[0]!.body.messages[0]!.content);
      for (const u of examples) assert.ok(content.includes(`- ${u}`), content);
      assert.match(content, /furniture; the records are what changes/);
    });
    await withStub([reply([toolUse('submit_config', { yaml: GOOD_YAML })])], async (stub) => {
      await runAgent(REQUEST, START, fakeTools(), options(stub));
      assert.doesNotMatch(String(stub.requests[0]!.body.messages[0]!.content), /example_urls/, 'no examples: no such lines');
    });
  });

  it('uses the default model without one, and says so when there is no heuristic start', async () => {
    await withStub([reply([toolUse('submit_config', { yaml: GOOD_YAML })])], async (stub) => {
      await runAgent(REQUEST, null, fakeTools(), { apiKey: 'k', baseURL: stub.url });
      assert.equal(stub.requests[0]!.body.model, DEFAULT_MODEL);
      assert.match(DEFAULT_MODEL, /^claude-sonnet-/);
      assert.match(String(stub.requests[0]!.body.messages[0]!.content), /no starting config/);
    });
  });

  it('sends the problems of a refused submission back and accepts the fixed one', async () => {
    const tools = fakeTools();
    await withStub([
      reply([toolUse('submit_config', { yaml: BROKEN_YAML }, 'toolu_1')]),
      reply([toolUse('submit_config', { yaml: TYPO_YAML }, 'toolu_2')]),
      reply([toolUse('submit_config', { yaml: START.yaml }, 'toolu_3')]),
      reply([toolUse('submit_config', { yaml: GOOD_YAML }, 'toolu_4')]),
    ], async (stub) => {
      const result = await runAgent(REQUEST, START, tools, options(stub));
      assert.equal(result.yaml, GOOD_YAML);
      assert.equal(result.rounds, 4);

      const [syntax] = toolResults(stub.requests[1]!);
      assert.equal(syntax!.tool_use_id, 'toolu_1');
      assert.equal(syntax!.is_error, true);
      const first = JSON.parse(syntax!.content) as { accepted: boolean; refused: string; trial: ConfigTrial };
      assert.equal(first.accepted, false);
      assert.equal(first.trial.ok, false);
      assert.ok(first.trial.problems!.length >= 1);
      assert.ok(first.trial.problems![0]!.line, 'a YAML error has its line');

      const typo = JSON.parse(toolResults(stub.requests[2]!)[0]!.content) as { refused: string; trial: ConfigTrial };
      assert.ok(typo.trial.problems!.some((p) => p.path === 'extract.contianer' && /unknown key/.test(p.message)), typo.refused);

      const empty = JSON.parse(toolResults(stub.requests[3]!)[0]!.content) as { refused: string; trial: ConfigTrial };
      assert.match(empty.refused, /0 rows/);
      assert.match(empty.trial.warnings[0]!, /ul\.nav-list li/);

      assert.equal(result.notes.filter((n) => /submitted config refused/.test(n)).length, 3, result.notes.join('\n'));
      assert.equal(tools.calls.filter((c) => c === 'runConfig').length, 4);
    });
  });

  it('gives a failing tool\'s error to Claude, and keeps long tool results short and JSON', async () => {
    const huge = 'div.wrapper\n'.repeat(20_000);
    let loads = 0;
    const tools = fakeTools({
      async loadPage(url, { render }) {
        if (loads++ === 0) throw new CodedError('target_forbidden', `The target ${url} is refused by the outbound guard`, [{ url }]);
        return fakeTools({}, huge).loadPage(url, { render });
      },
      async listRequests() {
        return Array.from({ length: 100 }, (_, i) => ({ url: `${URL_}api/items?page=${i}`, method: 'GET', status: 200, sample: `{"items":[${'{"title":"x"},'.repeat(150)}` }));
      },
    });
    await withStub([
      reply([toolUse('load_page', { url: 'http://10.0.0.1/' })]),
      reply([toolUse('load_page', { url: URL_, render: true })]),
      reply([toolUse('load_page', {}), toolUse('no_such_tool', {}), toolUse('list_requests', {})]),
      reply([toolUse('submit_config', { yaml: GOOD_YAML })]),
    ], async (stub) => {
      await runAgent(REQUEST, null, tools, options(stub));
      const refused = toolResults(stub.requests[1]!)[0]!;
      assert.equal(refused.is_error, true);
      assert.deepEqual(JSON.parse(refused.content).error.code, 'target_forbidden');

      const page = toolResults(stub.requests[2]!)[0]!;
      assert.ok(!page.is_error);
      assert.ok(page.content.length <= MAX_TOOL_RESULT_CHARS, `tool result of ${page.content.length} characters`);
      const outline = (JSON.parse(page.content) as PageOutline).outline;
      assert.match(outline, /^div\.wrapper\n/);
      assert.match(outline, /more characters\)$/, 'says that the outline was cut');
      assert.ok(stub.requests[2]!.raw.length < 40_000, 'the request stays small though the outline is 240,000 characters');

      const [missing, unknown, requests] = toolResults(stub.requests[3]!);
      assert.ok(requests!.content.length <= MAX_TOOL_RESULT_CHARS, `tool result of ${requests!.content.length} characters`);
      const listed = JSON.parse(requests!.content) as unknown[];
      assert.equal(listed.length, 21, 'twenty requests and a note of how many more');
      assert.equal(listed[20], '… 80 more');
      assert.equal(missing!.is_error, true);
      assert.match(missing!.content, /needs \\"url\\"/);
      assert.equal(unknown!.is_error, true);
      assert.match(unknown!.content, /no tool \\"no_such_tool\\"/);
    });
  });

  it('recovers from one 429: the SDK waits as retry-after asks and tries again', async () => {
    await withStub([
      httpError(429, { retryAfter: 1, message: 'Number of requests has exceeded your rate limit' }),
      reply([toolUse('submit_config', { yaml: GOOD_YAML })]),
    ], async (stub) => {
      const t0 = Date.now();
      const result = await runAgent(REQUEST, START, fakeTools(), options(stub));
      const elapsed = Date.now() - t0;
      assert.equal(result.rounds, 1);
      assert.equal(stub.requests.length, 2, 'the same request twice');
      assert.equal(stub.requests[1]!.raw, stub.requests[0]!.raw);
      assert.ok(elapsed >= 950, `waited ${elapsed} ms for retry-after: 1`);
    });
  });

  it('fails with rate_limited when Anthropic answers 429 on every try', async () => {
    await withStub([
      httpError(429, { retryAfter: 0.01 }),
      httpError(429, { retryAfter: 0.01 }),
      httpError(429, { retryAfter: 0.01, message: 'Number of request tokens has exceeded your per-minute rate limit' }),
    ], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub)));
      assert.equal(err.reason, 'rate_limited');
      assert.equal(err.status, 429);
      assert.equal(stub.requests.length, 3);
      assert.match(err.message, /Anthropic answered 429 \(rate limit\) three times for claude-test-model/);
      assert.match(err.message, /per-minute rate limit/);
      assert.match(err.message, /try again later/);
      assert.equal(err.rounds, 1);
    });
  });

  it('fails with auth on 401 without retrying', async () => {
    await withStub([httpError(401, { message: 'invalid x-api-key' })], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub)));
      assert.equal(err.reason, 'auth');
      assert.equal(err.status, 401);
      assert.equal(stub.requests.length, 1);
      assert.match(err.message, /refused the API key \(401 authentication_error\): invalid x-api-key; check ANTHROPIC_API_KEY/);
    });
  });

  it('fails with auth on 403', async () => {
    await withStub([httpError(403)], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub)));
      assert.equal(err.reason, 'auth');
      assert.match(err.message, /may use claude-test-model/);
    });
  });

  it('fails with overloaded when Anthropic answers 529 on every try', async () => {
    await withStub([httpError(529, { retryAfter: 0.01 }), httpError(529, { retryAfter: 0.01 }), httpError(529, { retryAfter: 0.01 })], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub)));
      assert.equal(err.reason, 'overloaded');
      assert.equal(stub.requests.length, 3);
      assert.match(err.message, /529 \(overloaded\) three times/);
    });
  });

  it('fails with api_error on other errors (a 400, a 500 not retried)', async () => {
    await withStub([httpError(400, { message: 'messages: text content blocks must be non-empty' })], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub)));
      assert.equal(err.reason, 'api_error');
      assert.equal(err.status, 400);
      assert.match(err.message, /Anthropic answered 400 \(invalid_request_error\) for claude-test-model: messages: text content blocks/);
    });
    await withStub([httpError(500, { headers: { 'x-should-retry': 'false' } })], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub)));
      assert.equal(err.reason, 'api_error');
      assert.equal(err.status, 500);
    });
  });

  it('fails with timeout when Anthropic does not answer in time, or cannot be reached', async () => {
    const slow = () => reply([toolUse('submit_config', { yaml: GOOD_YAML })], { delayMs: 2000 });
    await withStub([slow(), slow(), slow()], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub, { requestTimeoutMs: 100 })));
      assert.equal(err.reason, 'timeout');
      assert.equal(stub.requests.length, 3, 'the SDK retries a time-out');
      assert.match(err.message, /did not answer within 0\.1 s, three times/);
    });
    const closed = await startAnthropicStub();
    const url = closed.url;
    await closed.close();
    const err = await agentError(runAgent(REQUEST, START, fakeTools(), { apiKey: 'k', baseURL: url }));
    assert.equal(err.reason, 'timeout');
    assert.match(err.message, new RegExp(`Could not reach Anthropic at ${url.replace(/\./g, '\\.')}.*, three times`));
  });

  it('stops at the round limit', async () => {
    const probe = () => reply([toolUse('test_selector', { selector: 'div.result' })]);
    await withStub([probe(), probe(), probe(), probe()], async (stub) => {
      const progress: string[] = [];
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub, { maxRounds: 3, onProgress: (m) => progress.push(m) })));
      assert.equal(err.reason, 'rounds');
      assert.equal(err.rounds, 3);
      assert.equal(stub.requests.length, 3);
      assert.match(err.message, /used its 3 rounds without a config that validates and finds rows; it submitted none/);
      assert.ok(progress.includes('round 3: testing selector div.result'));
      // The last round is announced.
      assert.match(JSON.stringify(stub.requests[2]!.body.messages.at(-1)), /One round is left/);
      assert.doesNotMatch(JSON.stringify(stub.requests[1]!.body.messages.at(-1)), /One round is left/);
    });
  });

  it('stops when the token budget is spent', async () => {
    const probe = () => reply([toolUse('test_selector', { selector: 'article.product_pod' })], { usage: { input_tokens: 500, output_tokens: 100 } });
    await withStub([probe(), probe(), probe()], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub, { maxTokens: 1000 })));
      assert.equal(err.reason, 'budget');
      assert.equal(stub.requests.length, 2);
      assert.deepEqual(err.usage, { inputTokens: 1000, outputTokens: 200 });
      assert.match(err.message, /spent 1200 tokens .* its budget is 1000/);
      // An answer may use no more than what is left of the budget.
      assert.equal(stub.requests[0]!.body.max_tokens, 1000);
      assert.equal(stub.requests[1]!.body.max_tokens, 400);
    });
  });

  it('fails with no_config when Claude ends its turn without submitting', async () => {
    await withStub([
      reply([toolUse('submit_config', { yaml: TYPO_YAML })]),
      reply([text('Here is the config:\n```yaml\nversion: "2.0"\n```')], { stopReason: 'end_turn' }),
    ], async (stub) => {
      const err = await agentError(runAgent(REQUEST, START, fakeTools(), options(stub)));
      assert.equal(err.reason, 'no_config');
      assert.equal(err.rounds, 2);
      assert.match(err.message, /claude-test-model ended its turn in round 2 without submitting a config/);
      assert.match(err.message, /the last submission was refused: invalid config: extract/);
      assert.match(err.message, /it said: "Here is the config/);
    });
  });

  it('asks again when an answer was cut off before its tool call', async () => {
    await withStub([
      reply([text('Let me think about the page structure in detail…')], { stopReason: 'max_tokens' }),
      reply([toolUse('submit_config', { yaml: GOOD_YAML })]),
    ], async (stub) => {
      const result = await runAgent(REQUEST, START, fakeTools(), options(stub));
      assert.equal(result.rounds, 2);
      const history = stub.requests[1]!.body.messages;
      assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'user']);
      assert.match(String(history[2]!.content), /output limit/);
    });
  });

  it('rejects with the signal\'s reason when aborted', async () => {
    await withStub([reply([toolUse('submit_config', { yaml: GOOD_YAML })], { delayMs: 2000 })], async (stub) => {
      const controller = new AbortController();
      const reason = new Error('job cancelled');
      setTimeout(() => controller.abort(reason), 100);
      await assert.rejects(runAgent(REQUEST, START, fakeTools(), options(stub, { signal: controller.signal })), (err) => err === reason);
    });
  });
});
