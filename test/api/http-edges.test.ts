/**
 * The HTTP edges of the local service, over raw sockets where fetch cannot send the request: whatever
 * arrives, the answer is a status below 500 with the `{error, code, details}` body. Requests node:http
 * refuses before any handler (unknown methods, oversized headers, a bad `Expect`, CONNECT, malformed
 * requests), request targets that are no path, query parameters named after Object.prototype members on
 * every route, and the access log's redaction of credential-like query values. A request without Host, a declared
 * or chunked body over 1 MiB (413 at once, the connection closed without reading the rest), access-log lines of
 * concurrent requests with their own request id and function name, a client that goes away logged as aborted.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { routes } from '../../lambdas/routes.ts';
import { ERROR_CODES } from '../../lambdas/errors.ts';
import { client, createAccount, startService, type TestService } from '../helpers/service.ts';

/** A parsed raw HTTP answer. */
interface RawAnswer { status: number; headers: Record<string, string>; body: any; raw: string }

/** Sends bytes on a new connection and reads the answer until the server closes it or 5 s pass. */
function rawRequest(baseUrl: string, request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      raw += d;
      const head = raw.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(raw.slice(0, head));
      if (head !== -1 && length && Buffer.byteLength(raw.slice(head + 4)) >= Number(length[1])) socket.end();
      if (head !== -1 && !length && raw.endsWith('\r\n0\r\n\r\n')) socket.end();
    });
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer in 5 s; got ${JSON.stringify(raw)}`)));
    socket.on('error', reject);
    socket.on('close', () => {
      const head = raw.indexOf('\r\n\r\n');
      const lines = raw.slice(0, head).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      let text = raw.slice(head + 4);
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
        let decoded = '';
        for (let at = 0; at < text.length;) {
          const eol = text.indexOf('\r\n', at);
          const size = parseInt(text.slice(at, eol), 16);
          if (!size) break;
          decoded += text.slice(eol + 2, eol + 2 + size);
          at = eol + 2 + size + 2;
        }
        text = decoded;
      }
      let body: any = text;
      try { body = JSON.parse(text); } catch { /* left as text */ }
      resolve({ status: Number(lines[0]?.split(' ')[1]), headers, body, raw });
    });
  });
}

/** A chunked body's data (RFC 9112 7.1). */
function dechunk(text: string): string {
  let out = '';
  for (let at = 0; at < text.length;) {
    const eol = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!size) break;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
  return out;
}

/** The access-log lines (`"message":"request"`) of a service's output, parsed. */
function accessLines(output: string): Array<Record<string, any>> {
  return output.split('\n').filter((l) => l.startsWith('{') && l.includes('"message":"request"')).map((l) => JSON.parse(l) as Record<string, any>);
}

function assertShaped(a: { status: number; body: any }, status: number, code: string, what: string): void {
  assert.equal(a.status, status, `${what}: ${JSON.stringify(a.body)}`);
  assert.equal(a.body?.code, code, what);
  assert.equal(typeof a.body.error, 'string', what);
  assert.ok(Array.isArray(a.body.details), what);
}

describe('HTTP edges', () => {
  let svc: TestService;
  let key: string;

  before(async () => {
    svc = await startService({ SAI_ACCESS_LOG: '1' });
    key = (await createAccount(svc.dataDir, { plan: 'pro' })).api_key;
  });
  after(async () => { await svc?.stop(); });

  it('refused before any handler, still with the error body: unknown method, headers over 16 KiB, bad Expect, CONNECT, malformed requests', async () => {
    assertShaped(await rawRequest(svc.url, 'FROB /api/v1/me/ HTTP/1.1\r\nHost: x\r\n\r\n'), 501, 'method_not_implemented', 'unknown method');
    assertShaped(await rawRequest(svc.url, `GET /api/v1/me/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`), 431, 'headers_too_large', 'big header');
    assertShaped(await rawRequest(svc.url, 'GET /api/v1/me/ HTTP/1.1\r\nHost: x\r\nExpect: the-unexpected\r\n\r\n'), 417, 'expectation_failed', 'Expect');
    assertShaped(await rawRequest(svc.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 501, 'method_not_implemented', 'CONNECT');
    assertShaped(await rawRequest(svc.url, 'GARBAGE\r\n\r\n'), 501, 'method_not_implemented', 'a lone word is read as an unknown method');
    assertShaped(await rawRequest(svc.url, 'GET /api/v1/me/ HTTX/1.1\r\nHost: x\r\n\r\n'), 400, 'bad_http_request', 'a malformed request line');
    assertShaped(await rawRequest(svc.url, 'POST /api/v1/run/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'), 400, 'bad_http_request', 'Content-Length with chunked');
    assertShaped(await rawRequest(svc.url, 'GET /api/v1/me/ HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'), 400, 'bad_http_request', 'a header name with a space');
  });

  it('request targets that are no path: 404 with the body, never 500', async () => {
    for (const target of ['//', '//api/v1/me/', '*', 'example.com:80', '/%', '/api/v1/jobs/%E0%A4%A/status/', `/${'a/'.repeat(3000)}`]) {
      const a = await rawRequest(svc.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
      assert.ok(a.status < 500, `${target}: ${a.raw.slice(0, 300)}`);
      assert.ok(Object.hasOwn(ERROR_CODES, a.body?.code), `${target}: ${a.raw.slice(0, 300)}`);
    }
    assertShaped(await rawRequest(svc.url, `GET //api/v1/me/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`), 404, 'not_found', '//api/v1/me/ is not /api/v1/me/');
  });

  it('query parameters named after Object.prototype members, on every route, with and without a key', async () => {
    const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__', 'isPrototypeOf'];
    const query = names.flatMap((n) => [`${n}=1`, `${n}`, `${n}=2`]).join('&');
    for (const route of routes) {
      const path = route.path.replace('{id}', '00000000-0000-4000-8000-000000000000');
      for (const withKey of [true, false]) {
        const r = await client(svc.url, withKey ? key : undefined).call(route.method, `${path}?${query}`, route.method === 'POST' ? {} : undefined);
        assert.ok(r.status < 500, `${route.method} ${path} ${withKey ? 'with' : 'without'} a key: ${r.status} ${JSON.stringify(r.body)}`);
        if (r.status >= 400) assert.ok(Object.hasOwn(ERROR_CODES, r.body?.code), `${route.method} ${path}: ${JSON.stringify(r.body)}`);
      }
    }
    const jobs = await client(svc.url, key).get(`/api/v1/jobs/?${query}&limit=5`);
    assert.equal(jobs.status, 200, JSON.stringify(jobs.body));
  });

  it('the access log redacts credential-like query values and keeps the rest', async () => {
    const secret = 'sai_SHOULDNOTBELOGGED0123456789abcdefghijklmn';
    await client(svc.url, key).get(`/api/v1/me/?api_key=${secret}&token=${secret}x&Password=${secret}y&page=7`);
    await client(svc.url, key).get(`/api/v1/me/?x-api-key=a${secret}&q=${secret}`);
    await client(svc.url, key).get(`/api/v1/jobs/${secret}/status/`);
    await new Promise((r) => setTimeout(r, 200));
    const log = svc.output();
    assert.ok(!log.includes('SHOULDNOTBELOGGED'), 'no credential value in the log');
    assert.match(log, /api_key=\[redacted\]&token=\[redacted\]&Password=\[redacted\]&page=7/);
    assert.match(log, /x-api-key=\[redacted\]&q=sai_\[redacted\]/);
    assert.match(log, /\/api\/v1\/jobs\/sai_\[redacted\]\/status\//);
  });

  it('a request without Host or with two gets 400 bad_http_request with the error body (HTTP/1.1); HTTP/1.0 needs none', async () => {
    const noHost = await rawRequest(svc.url, 'GET /api/v1/me/ HTTP/1.1\r\nConnection: close\r\n\r\n');
    assertShaped(noHost, 400, 'bad_http_request', 'no Host');
    assert.match(noHost.body.error, /Host/);
    assert.equal(noHost.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(noHost.headers.connection, 'close');
    assertShaped(await rawRequest(svc.url, `GET http://x/api/v1/me/ HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`), 400, 'bad_http_request', 'absolute-form, no Host');
    const twoHosts = await rawRequest(svc.url, `GET /api/v1/me/ HTTP/1.1\r\nHost: a\r\nHOST: b\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
    assertShaped(twoHosts, 400, 'bad_http_request', 'two Host headers');
    assert.match(twoHosts.body.error, /2 Host headers/);
    const emptyHost = await rawRequest(svc.url, `GET /api/v1/me/ HTTP/1.1\r\nHost:\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
    assert.equal(emptyHost.status, 200, 'an empty Host is allowed (RFC 9112 3.2)');
    const http10 = await rawRequest(svc.url, `GET /api/v1/me/ HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    assert.equal(http10.status, 200, http10.raw.slice(0, 300));
  });

  it('a declared body over 1 MiB: 413 with the error body at once, and the connection closed without reading the body', async () => {
    const { hostname, port } = new URL(svc.url);
    const declared = 10 * 1024 ** 3;
    const outcome = await new Promise<{ raw: string; sent: number; ms: number }>((resolve, reject) => {
      const t0 = performance.now();
      let sent = 0;
      let raw = '';
      const socket = net.connect(Number(port), hostname, () => {
        socket.write(`POST /api/v1/configs/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (!socket.destroyed && socket.writable && sent < declared) {
            sent += chunk.length;
            if (!socket.write(chunk)) return;
          }
        };
        socket.on('drain', pump);
        pump();
      });
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => { raw += d; });
      socket.on('error', () => { /* EPIPE / ECONNRESET once the server closes: expected */ });
      socket.on('close', () => resolve({ raw, sent, ms: performance.now() - t0 }));
      setTimeout(() => { socket.destroy(); reject(new Error(`still open after 20 s; sent ${sent} bytes; got ${JSON.stringify(raw.slice(0, 200))}`)); }, 20_000).unref();
    });
    const [head, body] = [outcome.raw.slice(0, outcome.raw.indexOf('\r\n\r\n')), outcome.raw.slice(outcome.raw.indexOf('\r\n\r\n') + 4)];
    assert.match(head, /^HTTP\/1\.1 413 /, outcome.raw.slice(0, 300));
    assert.match(head, /\r\nconnection: close\r\n/i);
    const parsed = JSON.parse(/transfer-encoding: chunked/i.test(head) ? dechunk(body) : body);
    assert.equal(parsed.code, 'payload_too_large');
    assert.ok(Array.isArray(parsed.details));
    assert.ok(outcome.sent < 256 * 1024 * 1024, `the client got to send ${outcome.sent} bytes of the declared ${declared} before the close`);
  });

  it('a chunked body over 1 MiB: 413 and the connection closed, the rest not read', async () => {
    const { hostname, port } = new URL(svc.url);
    const outcome = await new Promise<{ raw: string; sent: number }>((resolve, reject) => {
      let sent = 0;
      let raw = '';
      const socket = net.connect(Number(port), hostname, () => {
        socket.write(`POST /api/v1/configs/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
        const data = Buffer.alloc(64 * 1024, 0x20);
        const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
        const pump = () => {
          while (!socket.destroyed && socket.writable && sent < 8 * 1024 ** 3) {
            sent += data.length;
            if (!socket.write(chunk)) return;
          }
        };
        socket.on('drain', pump);
        pump();
      });
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => { raw += d; });
      socket.on('error', () => { /* expected once the server closes */ });
      socket.on('close', () => resolve({ raw, sent }));
      setTimeout(() => { socket.destroy(); reject(new Error(`still open after 20 s; sent ${sent} bytes; got ${JSON.stringify(raw.slice(0, 200))}`)); }, 20_000).unref();
    });
    assert.match(outcome.raw, /^HTTP\/1\.1 413 /, outcome.raw.slice(0, 300));
    assert.match(outcome.raw, /\r\nconnection: close\r\n/i);
    assert.match(outcome.raw, /"code":"payload_too_large"/);
    assert.ok(outcome.sent < 256 * 1024 * 1024, `the client got to send ${outcome.sent} bytes before the close`);
  });

  it("access-log lines of requests served at once each carry their own request's id and function name", async () => {
    // Validation of a config over 2 KiB waits for the config parser's thread: a real wait, during which the other
    // requests' handlers run and add their own Lambda context.
    const yaml = `target: { url: "https://example.com/" }\nextract:\n  container: li\n  fields:\n${Array.from({ length: 60 }, (_, i) => `    - { name: f${i}, selector: "span.c${i}" }\n`).join('')}`;
    assert.ok(yaml.length > 2048);
    const kinds = [
      { path: '/api/v1/configs/validate/', fn: 'http/configs-validate.ts', method: 'POST', body: JSON.stringify({ yaml_content: yaml }) },
      { path: '/api/v1/me/', fn: 'http/me.ts', method: 'GET' },
      { path: '/api/v1/configs/', fn: 'http/configs-list.ts', method: 'GET' },
    ];
    const sent = await Promise.all(Array.from({ length: 90 }, async (_, i) => {
      const k = kinds[i % kinds.length]!;
      const path = `${k.path}?probe=scope-${i}`;
      const res = await fetch(svc.url + path, { method: k.method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(k.body ? { body: k.body } : {}) });
      await res.arrayBuffer();
      assert.equal(res.status, 200, path);
      return { path, requestId: res.headers.get('x-request-id')!, fn: k.fn };
    }));
    await new Promise((r) => setTimeout(r, 300));
    const lines = accessLines(svc.output());
    const wrong: string[] = [];
    for (const s of sent) {
      const line = lines.find((l) => l.path === s.path);
      assert.ok(line, `an access-log line for ${s.path}`);
      assert.equal(line.requestId, s.requestId, s.path);
      assert.equal(line.status, 200);
      if (line.function_request_id !== s.requestId || line.function_name !== s.fn) wrong.push(`${s.path}: ${line.function_name} ${line.function_request_id} (request ${s.requestId})`);
    }
    assert.deepEqual(wrong, [], `${wrong.length} of ${sent.length} lines name another request`);
  });

  it('a client that goes away mid-body is logged as aborted, never as a 500, and no failure is logged', async () => {
    const { hostname, port } = new URL(svc.url);
    const marker = `abort-${Date.now()}`;
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(port), hostname, () => {
        socket.write(`POST /api/v1/configs/?probe=${marker} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`);
        setTimeout(() => { socket.destroy(); resolve(); }, 200);
      });
      socket.on('error', () => resolve());
    });
    let line: Record<string, any> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      await new Promise((r) => setTimeout(r, 100));
      line = accessLines(svc.output()).find((l) => String(l.path).includes(marker));
    }
    assert.ok(line, 'an access-log line for the aborted request');
    assert.equal(line.aborted, true, JSON.stringify(line));
    assert.notEqual(line.status, 500, JSON.stringify(line));
    const failures = svc.output().split('\n').filter((l) => l.includes('"request failed"') && l.includes(line!.requestId));
    assert.deepEqual(failures, [], 'no "request failed" error for a client that went away');
    // And the service is fine: the next request on a new connection is answered.
    assert.equal((await client(svc.url, key).get('/api/v1/me/')).status, 200);
  });
});
