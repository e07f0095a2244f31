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
  const service = new StreamableHTTPClientTransport(new URL('/mcp', o.baseUrl), { requestInit: { headers: { authorization: `Bearer ${o.apiKey}` } } });

  // Requests forwarded and not answered yet: when stdin ends, their answers are still written before the bridge stops.
  const pending = new Set<string | number>();
  let drained: (() => void) | null = null;
  const settle = (id: string | number) => {
    pending.delete(id);
    if (pending.size === 0) drained?.();
  };
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
    if ('id' in message && 'method' in message) pending.add(message.id);
    service.send(message).catch((err: unknown) => {
      const status = typeof (err as { code?: unknown }).code === 'number' ? `HTTP ${(err as { code: number }).code}: ` : '';
      const text = status + (err instanceof Error ? err.message : String(err));
      log(text);
      // A request gets its answer, so that the agent does not wait for one that will never come.
      if ('id' in message && 'method' in message) {
        void agent.send({ jsonrpc: '2.0', id: message.id, error: { code: SERVICE_UNREACHABLE, message: `scrape-ai at ${o.baseUrl}: ${text}` } }).finally(() => settle(message.id));
      }
    });
  };
  service.onmessage = (message: JSONRPCMessage) => {
    // The protocol version the service agreed to goes on every later request (MCP-Protocol-Version), as the SDK's
    // own client does after initialization.
    const result = 'result' in message ? (message.result as { protocolVersion?: unknown }) : null;
    if (result && typeof result.protocolVersion === 'string') service.setProtocolVersion(result.protocolVersion);
    const id = 'id' in message && !('method' in message) ? message.id : undefined;
    void agent.send(message).finally(() => { if (id !== undefined) settle(id); });
  };
  service.onerror = (err: Error) => log(err.message);
  agent.onerror = (err: Error) => log(err.message);

  await service.start();
  await agent.start();
  await closed;
  await service.close();
  await agent.close();
}
