/**
 * The one reading of unreachable targets (lambdas/net/unreachable.ts) that every tool's 422 `target_unreachable`
 * comes from: Node's socket errors, undici's wrapped ones, the fetcher's FetchError with its cause, the guard's
 * codes, Chromium's net errors, OpenSSL's; the guard's refusal passes through unchanged.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CodedError } from '../../lambdas/errors.ts';
import { FetchError } from '../../lambdas/net/fetch.ts';
import { TargetForbiddenError } from '../../lambdas/net/guard.ts';
import { unreachableError, unreachableReason } from '../../lambdas/net/unreachable.ts';

const sys = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('unreachable targets', () => {
  it('reads the reason from Node, undici, the fetcher, the guard, Chromium and OpenSSL', () => {
    const cases: Array<[unknown, string]> = [
      [new CodedError('dns_failed', 'nowhere.test does not resolve to any address', [{ host: 'nowhere.test' }]), 'dns'],
      [sys('ENOTFOUND'), 'dns'],
      [sys('EAI_AGAIN'), 'dns'],
      [sys('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'), 'refused'],
      [new FetchError('fetch_failed', 'Could not fetch http://x/', 'http://x/', undefined, sys('ECONNREFUSED')), 'refused'],
      [new FetchError('fetch_failed', 'Could not fetch http://x/', 'http://x/', undefined, Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })), 'reset'],
      [sys('ECONNRESET'), 'reset'],
      [new FetchError('fetch_failed', 'x', 'http://x/', undefined, new DOMException('exceeded its timeout', 'TimeoutError')), 'timeout'],
      [sys('UND_ERR_HEADERS_TIMEOUT'), 'timeout'],
      [sys('ETIMEDOUT'), 'timeout'],
      [sys('CERT_HAS_EXPIRED', 'certificate has expired'), 'tls'],
      [sys('ERR_SSL_WRONG_VERSION_NUMBER'), 'tls'],
      [sys('DEPTH_ZERO_SELF_SIGNED_CERT'), 'tls'],
      [new FetchError('fetch_failed', 'Too many redirects (more than 10) starting at http://x/', 'http://x/'), 'redirects'],
      [new FetchError('response_too_large', 'Response of http://x/ is 9 bytes, limit 5 bytes', 'http://x/'), 'too_large'],
      [new CodedError('target_failed', 'net::ERR_NAME_NOT_RESOLVED at http://x/'), 'dns'],
      [new CodedError('target_failed', 'net::ERR_CONNECTION_REFUSED at http://x/'), 'refused'],
      [new CodedError('target_failed', 'net::ERR_CERT_AUTHORITY_INVALID at https://x/'), 'tls'],
      [new CodedError('target_failed', 'Navigation timeout of 17000 ms exceeded'), 'timeout'],
      [new CodedError('target_failed', 'net::ERR_TOO_MANY_REDIRECTS at http://x/'), 'redirects'],
      [new Error('something odd'), 'network'],
    ];
    for (const [err, reason] of cases) assert.equal(unreachableReason(err), reason, (err as Error).message);
  });

  it('a reset after the TCP connection was made means the server does not speak TLS', () => {
    assert.equal(unreachableReason(sys('ECONNRESET'), { tcpConnected: true }), 'tls');
    assert.equal(unreachableReason(sys('ECONNRESET'), { tcpConnected: false }), 'reset');
  });

  it('builds the 422 answer with the URL and the reason; the guard\'s refusal passes unchanged', () => {
    const e = unreachableError('http://127.0.0.1:9/', sys('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'));
    assert.equal(e.code, 'target_unreachable');
    assert.deepEqual(e.details, [{ url: 'http://127.0.0.1:9/', reason: 'refused' }]);
    assert.match(e.message, /^http:\/\/127\.0\.0\.1:9\/ could not be reached: the connection was refused \(connect ECONNREFUSED/);
    const forbidden = new TargetForbiddenError('Refused 10.0.0.1: a private address', 'http://10.0.0.1/');
    assert.equal(unreachableError('http://10.0.0.1/', forbidden), forbidden);
  });
});
