/**
 * The ports the network tools may reach (docs/tools.md "DNS server ports", "ssl-checker" → "Ports"): the DNS servers
 * a dns-whois request names are asked on port 53 only, except for private servers the allowlist opens; the SSL
 * checker checks port 443 unless the plan has `ssl_checker_any_port` (pro), whether the port comes from `port` or
 * the URL. The plans file's field is checked when it loads.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OutboundGuard } from '../../lambdas/net/guard.ts';
import { checkDnsServers, DNS_SERVER_PORT } from '../../lambdas/tools/dns-whois.ts';
import { checkSslPortAllowed, sslCheckPort } from '../../lambdas/tools/ssl.ts';
import { loadPlans } from '../../lambdas/core/plans.ts';
import { isCodedError } from '../../lambdas/errors.ts';

const refusedWith = (code: string, path?: string) => (err: unknown) => {
  assert.ok(isCodedError(err), String(err));
  assert.equal(err.code, code, err.message);
  if (path) assert.equal((err.details[0] as { path?: string }).path, path);
  return true;
};

describe('dns-whois servers: port 53', () => {
  const guard = new OutboundGuard({ allow: ['127.0.0.0/8', '8.8.4.0/24'] });

  it('accepts public servers without a port or on port 53', () => {
    assert.equal(DNS_SERVER_PORT, 53);
    assert.deepEqual(checkDnsServers(guard, ['8.8.8.8', '1.1.1.1:53', '[2001:4860:4860::8888]', '[2606:4700:4700::1111]:53']),
      ['8.8.8.8', '1.1.1.1:53', '2001:4860:4860::8888', '[2606:4700:4700::1111]:53']);
  });

  it('refuses a public server on any other port with invalid_request naming the entry, an allowlisted public one too', () => {
    for (const [servers, at] of [[['8.8.8.8:5353'], 'servers[0]'], [['1.1.1.1', '9.9.9.9:853'], 'servers[1]'], [['[2001:4860:4860::8888]:22'], 'servers[0]'], [['8.8.4.4:80'], 'servers[0]']] as const) {
      assert.throws(() => checkDnsServers(guard, servers), refusedWith('invalid_request', at), servers.join(','));
    }
    assert.throws(() => checkDnsServers(guard, ['8.8.8.8:5353']), /port 53 only/);
  });

  it('lets a private server the allowlist opens use any port (local development, tests); a refused one stays refused', () => {
    assert.deepEqual(checkDnsServers(guard, ['127.0.0.1:5353']), ['127.0.0.1:5353']);
    assert.throws(() => checkDnsServers(guard, ['10.0.0.53:53']), refusedWith('target_forbidden'));
    assert.throws(() => checkDnsServers(new OutboundGuard(), ['127.0.0.1:5353']), refusedWith('target_forbidden'));
  });
});

describe('ssl-checker ports by plan', () => {
  const credits = loadPlans('credits');
  const scrapes = loadPlans('scrapes');

  it('the port checked: port, else the URL\'s, else 443', () => {
    assert.equal(sslCheckPort({ url: 'https://example.com/' }), 443);
    assert.equal(sslCheckPort({ url: 'http://example.com/' }), 443);
    assert.equal(sslCheckPort({ url: 'https://example.com:8443/' }), 8443);
    assert.equal(sslCheckPort({ url: 'https://example.com:8443/', port: 443 }), 443);
    assert.equal(sslCheckPort({ url: 'https://example.com/', port: 22 }), 22);
    assert.throws(() => sslCheckPort({ url: 'example.com:8443' }), refusedWith('invalid_url'));
  });

  it('port 443 for every plan; any port for pro only, in both variants', () => {
    assert.deepEqual(Object.values(credits.plans).filter((p) => p.ssl_checker_any_port).map((p) => p.name), ['pro']);
    assert.deepEqual(Object.values(scrapes.plans).filter((p) => p.ssl_checker_any_port).map((p) => p.name), ['pro']);
    for (const catalog of [credits, scrapes]) {
      for (const plan of Object.keys(catalog.plans)) {
        assert.doesNotThrow(() => checkSslPortAllowed(catalog, plan, { url: 'https://example.com/' }), plan);
        assert.doesNotThrow(() => checkSslPortAllowed(catalog, plan, { url: 'https://example.com:443/', port: 443 }), plan);
      }
      assert.doesNotThrow(() => checkSslPortAllowed(catalog, 'pro', { url: 'https://example.com:8443/' }));
      assert.doesNotThrow(() => checkSslPortAllowed(catalog, 'pro', { url: 'https://example.com/', port: 22 }));
    }
  });

  it('refuses another port on the other plans with plan_required naming the plans that have it, whether from port or the URL', () => {
    for (const body of [{ url: 'https://example.com:8443/' }, { url: 'https://example.com/', port: 22 }, { url: 'https://example.com:443/', port: 8443 }]) {
      for (const plan of ['free', 'starter', 'growth']) {
        assert.throws(() => checkSslPortAllowed(credits, plan, body), (err: unknown) => {
          assert.ok(isCodedError(err));
          assert.equal(err.code, 'plan_required');
          assert.deepEqual(err.details, [{ plan, required: 'ssl_checker_any_port', plans_with_it: ['pro'] }]);
          assert.match(err.message, /port 443 only/);
          return true;
        }, `${plan} ${JSON.stringify(body)}`);
      }
    }
    assert.doesNotThrow(() => checkSslPortAllowed(credits, 'no-such-plan', { url: 'https://example.com/', port: 8443 }), 'left to the metering (403 plan_unknown)');
  });

  it('a plans file with a non-boolean ssl_checker_any_port is refused when it loads', () => {
    const raw = JSON.parse(fs.readFileSync(new URL('../../lambdas/core/plans.json', import.meta.url), 'utf8'));
    raw.credits.plans.free.ssl_checker_any_port = 'yes';
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-plans-')), 'plans.json');
    fs.writeFileSync(file, JSON.stringify(raw));
    assert.throws(() => loadPlans('credits', file), /ssl_checker_any_port must be true or false/);
    delete raw.credits.plans.free.ssl_checker_any_port;
    fs.writeFileSync(file, JSON.stringify(raw));
    assert.equal(loadPlans('credits', file).plans.free!.ssl_checker_any_port, undefined, 'absent: 443 only');
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
