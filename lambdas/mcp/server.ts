/**
 * The MCP server of one request (issue 27; docs/mcp.md): the official SDK's low-level `Server` with the tools of
 * ./tools.ts, answering over its Web-standard Streamable HTTP transport in stateless mode (no session: every POST is
 * answered on its own, so any Lambda instance or the local process can answer it). The SDK speaks the protocol
 * (JSON-RPC, initialization, capabilities, SSE framing, progress notifications); this module only lists and calls
 * tools. `Server`, not `McpServer`: the tools' input schemas are the route table's JSON Schemas, not zod shapes.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isCodedError } from '../errors.ts';
import { bodyProblemsMessage, bodyValidator } from '../http/middleware.ts';
import { logger } from '../logger.ts';
import { mcpTools, toolError } from './tools.ts';
import type { Invoke } from './operations.ts';

/** What the server needs from the HTTP side. */
export interface McpServerOptions {
  invoke: Invoke;
  /** The latest time a tool may stop waiting for a job, ms since the epoch (docs/mcp.md, "Waiting for jobs"). */
  waitUntil: number;
  /** A place among the account's job waits: the function that gives it back, or null when none is left. */
  waitSlot: () => Promise<(() => Promise<void>) | null>;
  /**
   * Counts a call refused for its arguments against the account's bad-request allowance (core/throttles.ts), as the
   * REST routes count a refused body. @throws CodedError `rate_limited` when none is left.
   */
  countRefusal: () => Promise<unknown>;
}

const INSTRUCTIONS = 'scrape-ai: web scraping and website analysis. To scrape a site repeatedly, call generate_config once '
  + '(a URL and what to extract, in words); it saves a YAML config and returns its config_id; then run_config runs it cheaply at any time, '
  + 'and get_results pages through the rows. For one page\'s text, call scrape_page. The analysis tools (seo_analyzer, tech_detector, '
  + 'lead_generation, screenshot, content_extractor, broken_link_checker, dns_whois, ssl_checker) each take a URL. '
  + 'Errors carry the REST API\'s {error, code, details}.';

const byName = new Map(mcpTools.map((t) => [t.listing.name, t]));
/** Each tool's arguments are checked against its input schema first (bounded as the routes' bodies are: middleware.ts). */
const validators = new Map(mcpTools.map((t) => [t.listing.name, bodyValidator(t.listing.inputSchema as Record<string, unknown>)]));

/** A new MCP server for one request. */
export function createMcpServer(o: McpServerOptions): Server {
  const server = new Server({ name: 'scrape-ai', version: '0.1.0' }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: mcpTools.map((t) => t.listing) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}; tools/list names them`);
    const args = request.params.arguments ?? {};
    const check = validators.get(tool.listing.name)!(args);
    if (!check.ok) {
      try {
        await o.countRefusal();
      } catch (err) {
        if (isCodedError(err)) return toolError({ error: err.message, code: err.code, details: err.details });
        throw err;
      }
      return toolError({ error: bodyProblemsMessage(check.problems, check.total), code: 'invalid_request', details: check.problems });
    }
    const token = request.params._meta?.progressToken;
    const progress = async (value: number, message: string) => {
      if (token === undefined) return;
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: value, total: 100, message } })
        .catch((e: unknown) => logger.debug('progress notification not sent', { error: e }));
    };
    return tool.call(args, { invoke: o.invoke, progress, waitUntil: o.waitUntil, waitSlot: o.waitSlot, signal: extra.signal });
  });
  return server;
}

/** The transport's answer: whole, or (streaming hosts, an SSE answer) a stream of its events as they are made. */
export type McpAnswer = { status: number; headers: Record<string, string>; body: string; stream?: undefined }
  | { status: number; headers: Record<string, string>; body?: undefined; stream: ReadableStream<Uint8Array> };

/**
 * Answers one HTTP request to `/mcp` with a new server and a stateless transport, both closed once the answer is done.
 * @param o.parsedBody the body already parsed (lambdas/http/mcp.ts checks it), given to the transport as it is
 * @param o.stream the host writes a streamed body as it comes (the local service): an SSE answer is then handed back
 *   as a stream (progress notifications reach the client while the job runs, with SSE keep-alive comments every
 *   15 s); otherwise, and for any other answer, the body is read whole (API Gateway: progress arrives with the result).
 */
export async function answerMcpRequest(request: Request, o: McpServerOptions & { stream?: boolean; maxBodyBytes: number; parsedBody?: unknown }): Promise<McpAnswer> {
  const server = createMcpServer(o);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, keepAliveMs: o.stream ? 15_000 : 0, maxRequestBodySize: o.maxBodyBytes });
  let closed = false;
  const finish = async () => {
    if (closed) return;
    closed = true;
    await server.close().catch(() => undefined);
  };
  try {
    await server.connect(transport);
    // The body the caller parsed and checked is the one that runs (`undefined`: not JSON, the transport reads it and says so).
    const response = await transport.handleRequest(request, o.parsedBody === undefined ? undefined : { parsedBody: o.parsedBody });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => { headers[name] = value; });
    const body = response.body;
    if (o.stream && body && response.ok && /^text\/event-stream/i.test(response.headers.get('content-type') ?? '')) {
      const reader = body.getReader();
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          controller.close();
          await finish();
        },
        // The client went away: the server closes, which aborts the tool calls still running (their wait for a job).
        async cancel(reason) {
          await reader.cancel(reason).catch(() => undefined);
          await finish();
        },
      });
      return { status: response.status, headers, stream };
    }
    const text = await response.text();
    await finish();
    return { status: response.status, headers, body: text };
  } catch (err) {
    await finish();
    throw err;
  }
}
