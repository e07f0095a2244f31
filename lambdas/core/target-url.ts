/**
 * The target URL of a request (POST /generate/, the tools): what every endpoint that takes `url` accepts.
 */
import { CodedError } from '../errors.ts';

/**
 * An absolute http(s) URL from a request body.
 * @throws CodedError `invalid_url` (400) for anything else.
 */
export function parseTargetUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new CodedError('invalid_url', `url must be an absolute http or https URL; got "${raw}"`, [{ url: raw }]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CodedError('invalid_url', `url must be an http or https URL; got "${raw}"`, [{ url: raw }]);
  if (!url.hostname) throw new CodedError('invalid_url', `url has no host; got "${raw}"`, [{ url: raw }]);
  return url;
}
