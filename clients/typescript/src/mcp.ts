/**
 * `sai mcp` (issue 27; docs/mcp.md): the service's MCP server for desktop agents, over stdio. The tools live in the
 * service (`POST /mcp`); this process is a bridge between two of the official SDK's transports, the stdio server
 * transport (the agent's side) and the Streamable HTTP client transport (the service's side, with the user's key),
 * forwarding each JSON-RPC message as it is. No tool is defined twice.
 *
 * `@modelcontextprotocol/sdk` is an optional peer dependency of this package: the library does not need it, and
 * `sai mcp` names it when it is missing.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** What the bridge needs. */
export interface McpBridgeOptions {
  /** The service's address, e.g. `http://127.0.0.1:8787`; the endpoint is `<baseUrl>/mcp`. */
  baseUrl: string;
  /** `sai_…`. */
  apiKey: string;
  /** Where the bridge's own problems go (never stdout: it carries the protocol). Default: stderr. */
  log?: (line: string) => void;
}

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
function requestIds(body: unknown): Array<string | number> {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed])
      .filter((m): m is { id: string | number } => typeof m === 'object' && m !== null && 'method' in m && 'id' in m)
      .map((m) => m.id);
  } catch {
    return [];
  }
}

/**
 * How long after a POST's answer ends a request it carried may still be answered, ms: the SDK parses the last events
 * after the body has ended; a loaded machine's event loop may lag.
 */
const ORPHAN_CHECK_MS = 2_000;

/** JSON-RPC's code for a server error, used for a request the service could not be asked (its HTTP status in the message). */
const SERVICE_UNREACHABLE = -32000;

/**
 * Serves MCP on this process's stdin/stdout until stdin ends.
 * @throws Error naming `@modelcontextprotocol/sdk` when it is not installed.
 */
export async function serveMcpOverStdio(o: McpBridgeOptions): Promise<void> {
  const log = o.log ?? ((line: string) => process.stderr.write(`sai mcp: ${line}\n`));
  let sdk: [typeof import('@modelcontextprotocol/sdk/server/stdio.js'), typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js')];
  try {
    sdk = await Promise.all([import('@modelcontextprotocol/sdk/server/stdio.js'), import('@modelcontextprotocol/sdk/client/streamableHttp.js')]);
  } catch {
    throw new Error('sai mcp needs the MCP SDK: npm install @modelcontextprotocol/sdk (beside @scrape-ai/client)');
  }
  const [{ StdioServerTransport }, { StreamableHTTPClientTransport }] = sdk;
  const agent = new StdioServerTransport();

  // Requests forwarded and not answered yet: when stdin ends, their answers are still written before the bridge stops.
  const pending = new Set<string | number>();
  // Requests the service has answered (the answer may still be on its way to the agent).
  const answered = new Set<string | number>();
  // The POST carrying each request, to cut it when the agent cancels the request.
  const posts = new Map<string | number, AbortController>();
  let drained: (() => void) | null = null;
  const settle = (id: string | number) => {
    pending.delete(id);
    answered.delete(id);
    posts.delete(id);
    if (pending.size === 0) drained?.();
  };
  const fail = (id: string | number, text: string) => {
    if (!pending.has(id) || answered.has(id)) return;
    answered.add(id);
    void agent.send({ jsonrpc: '2.0', id, error: { code: SERVICE_UNREACHABLE, message: `scrape-ai at ${o.baseUrl}: ${text}` } }).finally(() => settle(id));
  };

  /**
   * The service transport's fetch: each POST can be cut when its request is cancelled, and when a POST's answer ends
   * without the answer to a request it carried (the service went away mid-stream: the SDK only reports the lost
   * stream), that request is answered with an error rather than never.
   */
  const bridgeFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const ids = requestIds(init?.body);
    if (ids.length === 0) return fetch(url, init);
    const cut = new AbortController();
    for (const id of ids) posts.set(id, cut);
    const signal = init?.signal ? AbortSignal.any([init.signal, cut.signal]) : cut.signal;
    const res = await fetch(url, { ...init, signal });
    if (!res.body) return res;
    // After the body ends, the SDK still parses its last events: the check waits a moment for their answers.
    const check = (why: string) => setTimeout(() => { for (const id of ids) fail(id, why); }, ORPHAN_CHECK_MS).unref();
    const watched = res.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
      flush: () => { check('the service ended its answer without a result'); },
    }));
    return new Response(watched, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const service = new StreamableHTTPClientTransport(new URL(`${o.baseUrl.replace(/\/+$/, '')}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${o.apiKey}` } },
    fetch: bridgeFetch,
  });

  // The agent is gone when stdin ends (the stdio transport itself does not watch for that) or the transport closes.
  const closed = new Promise<void>((resolve) => {
    agent.onclose = () => resolve();
    const ended = () => {
      if (pending.size === 0) resolve();
      else drained = resolve;
    };
    process.stdin.once('end', ended);
    process.stdin.once('close', ended);
  });
  agent.onmessage = (message: JSONRPCMessage) => {
    const isRequest = 'id' in message && 'method' in message;
    if (isRequest) pending.add(message.id);
    // A cancelled request: its POST is cut (the local service then stops the tool's wait), and no answer is due.
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined && pending.has(id)) {
        posts.get(id)?.abort();
        settle(id);
      }
    }
    service.send(message).catch((err: unknown) => {
      const status = typeof (err as { code?: unknown }).code === 'number' ? `HTTP ${(err as { code: number }).code}: ` : '';
      const text = status + (err instanceof Error ? err.message : String(err));
      log(text);
      // A request gets its answer, so that the agent does not wait for one that will never come.
      if (isRequest) fail(message.id, text);
    });
  };
  service.onmessage = (message: JSONRPCMessage) => {
    // The protocol version the service agreed to goes on every later request (MCP-Protocol-Version), as the SDK's
    // own client does after initialization.
    const result = 'result' in message ? (message.result as { protocolVersion?: unknown }) : null;
    if (result && typeof result.protocolVersion === 'string') service.setProtocolVersion(result.protocolVersion);
    const id = 'id' in message && !('method' in message) ? message.id : undefined;
    if (id !== undefined) {
      if (!pending.has(id) || answered.has(id)) return; // cancelled, or already answered with an error
      answered.add(id);
    }
    void agent.send(message).finally(() => { if (id !== undefined) settle(id); });
  };
  // Once stopping, the transport's own aborts (its GET stream, its POSTs) are not problems to report.
  let stopping = false;
  service.onerror = (err: Error) => { if (!stopping) log(err.message); };
  agent.onerror = (err: Error) => log(err.message);

  await service.start();
  await agent.start();
  await closed;
  stopping = true;
  await service.close();
  await agent.close();
}
