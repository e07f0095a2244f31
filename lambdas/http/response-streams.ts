/**
 * Answers whose body is written as it is made (the MCP endpoint's SSE stream: progress notifications while a job
 * runs, then the result). A host that can stream says so once ({@link enableResponseStreams}: the local service);
 * API Gateway's REST integration cannot, so on Lambda a handler reads its stream whole into the proxy result's body.
 * The stream travels beside the proxy result, in a WeakMap, so the result stays a plain proxy result.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';

let enabled = false;
const streams = new WeakMap<APIGatewayProxyResult, ReadableStream<Uint8Array>>();

/** Called by a host that writes streamed bodies (lambdas/adapters/local/http-server.ts), before it serves. */
export function enableResponseStreams(): void {
  enabled = true;
}

/** Whether this process's host writes streamed bodies as they come. */
export function responseStreamsEnabled(): boolean {
  return enabled;
}

/** A proxy result (status, headers, `body: ''`) whose body is `stream`, for a host that streams. */
export function streamedResult(result: APIGatewayProxyResult, stream: ReadableStream<Uint8Array>): APIGatewayProxyResult {
  streams.set(result, stream);
  return result;
}

/** The stream of a result made by {@link streamedResult}, if any. */
export function resultStream(result: APIGatewayProxyResult): ReadableStream<Uint8Array> | undefined {
  return streams.get(result);
}
