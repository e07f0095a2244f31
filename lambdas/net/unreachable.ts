/**
 * Why a target could not be reached, in the terms of the tools' 422 `target_unreachable` (docs/tools.md): one
 * reading of Node's, undici's, OpenSSL's and the guard's errors for every tool (the page fetcher's failures, the SSL
 * checker's handshakes, the browser's failed navigations).
 */
import { CodedError, isCodedError } from '../errors.ts';

/** Why a target could not be reached (`details[0].reason` of `target_unreachable`). */
export type UnreachableReason = 'dns' | 'refused' | 'reset' | 'timeout' | 'tls' | 'redirects' | 'too_large' | 'network';

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** Node's or undici's code of an error, looking through `cause`. */
function errorCode(err: unknown): string {
  for (let e = err as { code?: unknown; cause?: unknown; name?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.name === 'TimeoutError') return 'TimeoutError';
    if (typeof e.code === 'string' && e.code !== 'fetch_failed') return e.code;
  }
  return '';
}

/** Chromium's net errors (`net::ERR_…` in a failed navigation's message) by the reason they mean. */
const CHROME_NET_ERRORS: ReadonlyArray<[RegExp, UnreachableReason]> = [
  [/ERR_NAME_NOT_RESOLVED|ERR_NAME_RESOLUTION_FAILED/, 'dns'],
  [/ERR_CONNECTION_REFUSED/, 'refused'],
  [/ERR_CONNECTION_(RESET|CLOSED|ABORTED)|ERR_EMPTY_RESPONSE/, 'reset'],
  [/ERR_TIMED_OUT|ERR_CONNECTION_TIMED_OUT|Navigation timeout/, 'timeout'],
  [/ERR_CERT_|ERR_SSL_|ERR_BAD_SSL/, 'tls'],
  [/ERR_TOO_MANY_REDIRECTS/, 'redirects'],
];

/**
 * The reason of a failed connection or load, from the fetcher's, the guard's or a socket's error.
 * @param o.tcpConnected the TCP connection was made before the failure: a reset then means the server does not
 *   speak TLS (the SSL checker's handshakes), not a network fault.
 */
export function unreachableReason(err: unknown, o: { tcpConnected?: boolean } = {}): UnreachableReason {
  if (isCodedError(err) && err.code === 'dns_failed') return 'dns';
  if (isCodedError(err) && err.code === 'response_too_large') return 'too_large';
  if (/Too many redirects|Bad redirect|ERR_TOO_MANY_REDIRECTS/.test((err as Error)?.message ?? '')) return 'redirects';
  const code = errorCode(err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'dns';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'TimeoutError' || code === 'ETIMEDOUT' || code === 'ABORT_ERR' || /^UND_ERR_.*TIMEOUT$/.test(code)) return 'timeout';
  if (TLS_CODE.test(code) || /certificate|SSL routines|TLS/i.test((err as Error)?.message ?? '')) return 'tls';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') return o.tcpConnected ? 'tls' : 'reset';
  return CHROME_NET_ERRORS.find(([re]) => re.test((err as Error)?.message ?? ''))?.[1] ?? 'network';
}

/** Each reason in words, for the error message. */
const REASON_TEXT: Readonly<Record<UnreachableReason, string>> = {
  dns: 'its host name does not resolve',
  refused: 'the connection was refused',
  reset: 'the connection was closed or reset',
  timeout: 'it did not answer in time',
  tls: 'the TLS handshake failed (certificate, protocol, or no TLS at all)',
  redirects: 'it redirects too many times or to a bad address',
  too_large: 'its answer is larger than the tool reads',
  network: 'a network error',
};

/**
 * The error a tool answers when its target cannot be reached: 422 `target_unreachable` with `details: [{url,
 * reason}]`, or the guard's 400 `target_forbidden` (a redirect hop, or the address a name resolves to) unchanged.
 */
export function unreachableError(url: string, err: unknown, o: { tcpConnected?: boolean } = {}): CodedError {
  if (isCodedError(err) && err.code === 'target_forbidden') return err;
  const reason = unreachableReason(err, o);
  const detail = (err as Error)?.message?.split('\n')[0] ?? String(err);
  return new CodedError('target_unreachable', `${url} could not be reached: ${REASON_TEXT[reason]} (${detail})`, [{ url, reason }]);
}
