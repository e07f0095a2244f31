/**
 * A stand-in for the Anthropic Messages API on 127.0.0.1, for tests of the Claude agent
 * (lambdas/generator/agent.ts) through the real `@anthropic-ai/sdk` (its `baseURL` pointed here).
 *
 * It speaks `POST /v1/messages` as the real API does: a JSON request with `model`, `max_tokens`,
 * `messages` (and `system`, `tools`, …); a `message` object with `content` blocks of `text` and
 * `tool_use`, a `stop_reason` (`tool_use`, `end_turn`, …) and `usage`; errors as
 * `{"type": "error", "error": {"type", "message"}}` with the real statuses and types (429 with
 * `retry-after`, 529 `overloaded_error`, 401 `authentication_error`, …). It answers from a script, one
 * step per request in order: a canned answer, or a function of the request received. It refuses what the
 * real API refuses and an agent could get wrong (no API key, a `tool_use` left without its `tool_result`)
 * with 400 `invalid_request_error`, and records every request, so a test can assert what was sent.
 *
 * **Example usage:**
 * ```ts
 * const stub = await startAnthropicStub([
 *   reply([toolUse('load_page', { url: 'https://example.com/' })]),
 *   httpError(429, { retryAfter: 0.01 }),
 *   (req) => reply([text(`you sent ${req.body.messages.length} messages`)], { stopReason: 'end_turn' }),
 * ]);
 * const client = new Anthropic({ apiKey: 'test', baseURL: stub.url });
 * …
 * assert.equal(stub.requests.length, 3);
 * await stub.close();
 * ```
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A content block of a scripted answer (the API's `text` and `tool_use` blocks). */
type StubBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** Token counts of a scripted answer (the API's `usage`). */
interface StubUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** A scripted 200 answer: a `message` object. */
interface StubMessage {
  kind: 'message';
  content: StubBlock[];
  /** @default 'tool_use' when a block is a tool_use, else 'end_turn' */
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal';
  usage: StubUsage;
  /** Milliseconds to wait before answering (to trip a client's time-out). @default 0 */
  delayMs: number;
}

/** A scripted error answer. */
interface StubError {
  kind: 'error';
  /** HTTP status: 400, 401, 403, 404, 429, 500, 529, … */
  status: number;
  /** The error's `type`. @default the API's type for the status (`rate_limit_error` for 429, …) */
  type: string;
  message: string;
  /** Extra response headers (`retry-after` is set from {@link httpError}'s `retryAfter`). */
  headers: Record<string, string>;
  /** Milliseconds to wait before answering. @default 0 */
  delayMs: number;
}

/** One step of a script: what the stub answers to one request. */
type StubReply = StubMessage | StubError;

/** A request the stub received, as sent. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages`. */
  path: string;
  /** Header names in lower case. */
  headers: http.IncomingHttpHeaders;
  /** The body as text. */
  raw: string;
  /** The body parsed as JSON (`undefined` when it is not JSON). */
  body: MessagesRequest;
  /** Which step of the script answered it (0-based; -1: refused before the script). */
  step: number;
}

/** The parts of a Messages API request the tests read (the rest is there too, untyped). */
interface MessagesRequest {
  model: string;
  max_tokens: number;
  system?: string | Array<{ type: 'text'; text: string }>;
  tools?: Array<{ name: string; description?: string; input_schema: Record<string, unknown> }>;
  messages: Array<{ role: 'user' | 'assistant'; content: string | Array<Record<string, unknown> & { type: string }> }>;
  [key: string]: unknown;
}

/** A step of the script: a reply, or a function of the request that returns one. */
export type ScriptStep = StubReply | ((request: ReceivedRequest) => StubReply | Promise<StubReply>);

/** A running stub. */
export interface AnthropicStub {
  /** The base URL for the SDK's `baseURL`, e.g. `http://127.0.0.1:41234` (no trailing slash, no `/v1`). */
  readonly url: string;
  /** Every request received, in order, including refused and retried ones. */
  readonly requests: ReceivedRequest[];
  /** Steps of the script not used yet. */
  remaining(): number;
  /** Appends steps to the script. */
  push(...steps: ScriptStep[]): void;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

let nextId = 1;
/** A fresh id in the API's form (`toolu_…`, `msg_…`, `req_…`). */
function id(prefix: string): string {
  return `${prefix}_stub${String(nextId++).padStart(6, '0')}`;
}

/** A `text` block. */
export function text(value: string): StubBlock {
  return { type: 'text', text: value };
}

/** A `tool_use` block; the id is made up when not given. */
export function toolUse(name: string, input: Record<string, unknown>, toolUseId?: string): StubBlock {
  return { type: 'tool_use', id: toolUseId ?? id('toolu'), name, input };
}

/**
 * A 200 answer with these content blocks.
 * @param options.stopReason default `tool_use` when a block is a tool_use, else `end_turn`.
 * @param options.usage default 100 input and 50 output tokens.
 */
export function reply(content: StubBlock[], options: { stopReason?: StubMessage['stopReason']; usage?: Partial<StubUsage>; delayMs?: number } = {}): StubMessage {
  return {
    kind: 'message',
    content,
    stopReason: options.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    usage: { input_tokens: 100, output_tokens: 50, ...options.usage },
    delayMs: options.delayMs ?? 0,
  };
}

/**
 * An error answer.
 * @param options.retryAfter seconds for the `retry-after` header (may be fractional, which the SDK honours:
 *   `0.01` keeps retries fast in tests). Default for 429 and 529: `0`, which the SDK treats as absent
 *   (it then backs off about 0.5 s, 1 s).
 * @param options.headers more response headers, e.g. `{'x-should-retry': 'false'}`.
 */
export function httpError(status: number, options: { type?: string; message?: string; retryAfter?: number; headers?: Record<string, string>; delayMs?: number } = {}): StubError {
  const headers: Record<string, string> = { ...options.headers };
  const retryAfter = options.retryAfter ?? (status === 429 || status === 529 ? 0 : undefined);
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  const type = options.type ?? ERROR_TYPES[status] ?? 'api_error';
  return { kind: 'error', status, type, message: options.message ?? `stub: ${type}`, headers, delayMs: options.delayMs ?? 0 };
}

/** Why a request is one the real API would refuse with 400, or null. */
function invalidRequest(req: ReceivedRequest): string | null {
  if (req.headers['x-api-key'] === undefined && req.headers['authorization'] === undefined) return 'missing x-api-key header';
  if (!req.headers['anthropic-version']) return 'missing anthropic-version header';
  const body = req.body as Partial<MessagesRequest> | undefined;
  if (!body || typeof body !== 'object') return 'the body is not JSON';
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) return 'max_tokens: must be a positive integer';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  if (body.messages[0]!.role !== 'user') return 'messages: the first message must use the "user" role';
  // Every tool_use must be answered by a tool_result in the next message, before anything else in it.
  for (let i = 0; i < body.messages.length; i++) {
    const m = body.messages[i]!;
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    const ids = m.content.filter((b) => b.type === 'tool_use').map((b) => b['id'] as string);
    if (!ids.length) continue;
    const next = body.messages[i + 1];
    if (!next) return `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${ids.join(', ')}`;
    const blocks = typeof next.content === 'string' ? [] : next.content;
    const leading = blocks.slice(0, ids.length);
    const answered = leading.filter((b) => b.type === 'tool_result').map((b) => b['tool_use_id'] as string);
    const missing = ids.filter((x) => !answered.includes(x));
    if (missing.length) return `messages.${i + 1}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(', ')}`;
  }
  return null;
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req'), 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendError(res: http.ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  send(res, status, { type: 'error', error: { type, message }, request_id: id('req') }, headers);
}

/**
 * Starts the stub on 127.0.0.1 on a free port.
 * @param script the answers, consumed one per `POST /v1/messages` that passes the checks. A request after
 *   the last step gets a 500 with `x-should-retry: false` (the SDK does not retry it), so a test that sends
 *   more than it scripted fails instead of hanging.
 */
export async function startAnthropicStub(script: ScriptStep[] = []): Promise<AnthropicStub> {
  const steps = [...script];
  const requests: ReceivedRequest[] = [];
  let used = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: MessagesRequest;
        try {
          body = JSON.parse(raw) as MessagesRequest;
        } catch {
          body = undefined as unknown as MessagesRequest;
        }
        const received: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body, step: -1 };
        requests.push(received);
        if (req.method !== 'POST' || !received.path.startsWith('/v1/messages')) {
          sendError(res, 404, 'not_found_error', `stub: no route ${req.method} ${received.path}`);
          return;
        }
        const invalid = invalidRequest(received);
        if (invalid) {
          sendError(res, 400, 'invalid_request_error', invalid);
          return;
        }
        const step = steps.shift();
        if (!step) {
          sendError(res, 500, 'api_error', `stub: the script has no answer left for request ${requests.length}`, { 'x-should-retry': 'false' });
          return;
        }
        received.step = used++;
        const answer = typeof step === 'function' ? await step(received) : step;
        if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
        if (res.destroyed) return; // the client gave up (its time-out)
        if (answer.kind === 'error') {
          sendError(res, answer.status, answer.type, answer.message, answer.headers);
          return;
        }
        send(res, 200, {
          id: id('msg'),
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: answer.content,
          stop_reason: answer.stopReason,
          stop_sequence: null,
          usage: {
            input_tokens: answer.usage.input_tokens,
            output_tokens: answer.usage.output_tokens,
            cache_creation_input_tokens: answer.usage.cache_creation_input_tokens ?? 0,
            cache_read_input_tokens: answer.usage.cache_read_input_tokens ?? 0,
            service_tier: 'standard',
          },
        });
      })().catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, 'api_error', `stub: ${(err as Error).message}`, { 'x-should-retry': 'false' });
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    remaining: () => steps.length,
    push: (...more) => { steps.push(...more); },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
