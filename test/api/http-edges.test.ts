/**
 * The HTTP edges of the local service, over raw sockets where fetch cannot send the request: whatever
 * arrives, the answer is a status below 500 with the `{error, code, details}` body. Requests node:http
 * refuses before any handler (unknown methods, oversized headers, a bad `Expect`, CONNECT, malformed
 * requests), request targets that are no path, query parameters named after Object.prototype members on
 * every route, and the access log's redaction of credential-like query values.
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
});
