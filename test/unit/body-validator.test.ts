/**
 * Validation of request bodies (lambdas/http/middleware.ts `bodyValidator`): a body with any number of problems gets
 * at most MAX_BODY_PROBLEMS listed and a count of the rest, and the work is bounded: unknown fields past the first
 * ten are counted, not collected; an array longer than its maxItems is checked up to one item past it; long field
 * names are cut. Every route's body schema is bounded (arrays with maxItems, no schema for additionalProperties).
 * Config problems (invalid_config) quote at most 300 characters of what they refer to.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bodyProblemsMessage, bodyValidator, MAX_BODY_PROBLEMS } from '../../lambdas/http/middleware.ts';
import { routes } from '../../lambdas/routes.ts';
import { configCreateBody, loginBody, toolBodies } from '../../lambdas/http/schemas.ts';
import { ConfigError, parseConfig } from '../../lambdas/engine/config.ts';

const manyKeys = (n: number, extra: Record<string, unknown> = {}) => ({ ...extra, ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])) });

describe('bodyValidator', () => {
  const seo = bodyValidator(toolBodies['seo-analyzer']);

  it('accepts a valid body', () => {
    assert.deepEqual(seo({ url: 'https://example.com/' }), { ok: true });
  });

  it('50,000 unknown keys: 10 problems listed, the missing url first, all counted; the message stays short', () => {
    const check = seo(manyKeys(50_000));
    assert.equal(check.ok, false);
    if (check.ok) return;
    assert.equal(check.problems.length, MAX_BODY_PROBLEMS);
    assert.deepEqual(check.problems[0], { path: 'url', message: 'is required' });
    assert.deepEqual(check.problems[1], { path: 'k0', message: 'is not a known field' });
    assert.equal(check.total, 50_001);
    const message = bodyProblemsMessage(check.problems, check.total);
    assert.match(message, /^Invalid request body: url is required; k0 is not a known field; .*k8 is not a known field; and 49,991 more problems \(50,001 in all; details list the first 10\)$/);
    assert.ok(message.length < 1000, `${message.length} characters`);
  });

  it('few problems: all listed, no count', () => {
    const check = seo({ url: 5, a: 1 });
    assert.ok(!check.ok);
    assert.deepEqual(check.problems, [{ path: 'url', message: 'must be string' }, { path: 'a', message: 'is not a known field' }]);
    assert.equal(check.total, 2);
    assert.equal(bodyProblemsMessage(check.problems, check.total), 'Invalid request body: url must be string; a is not a known field');
  });

  it('a 200,000-item list where 4 are allowed: the maxItems problem and the first items, not 200,000 problems', () => {
    const check = bodyValidator(toolBodies['dns-whois'])({ url: 'https://example.com/', servers: Array.from({ length: 200_000 }, () => 1) });
    assert.ok(!check.ok);
    assert.ok(check.problems.some((p) => p.path === 'servers' && /more than 4 items/.test(p.message)), JSON.stringify(check.problems));
    assert.ok(check.total <= 6, `${check.total} problems: the items past the 5th are not checked one by one`);
  });

  it('a 500 KB field name is cut to 100 characters in the path', () => {
    const check = seo({ url: 'https://example.com/', ['k'.repeat(500_000)]: 1 });
    assert.ok(!check.ok);
    assert.equal(check.problems[0]!.path.length, 100);
    assert.ok(check.problems[0]!.path.endsWith('…'));
  });

  it('__proto__, constructor and toString are fields like any other', () => {
    const check = seo(JSON.parse('{"url": "https://example.com/", "__proto__": {"x": 1}, "constructor": 1, "toString": 2}'));
    assert.ok(!check.ok);
    assert.deepEqual(check.problems.map((p) => p.path), ['__proto__', 'constructor', 'toString']);
  });

  it('finds the same problems as a full validation when there are few (a config body with several)', () => {
    const check = bodyValidator(configCreateBody)({ name: '', target_url: 'ftp://x', extra: 1 });
    assert.ok(!check.ok);
    assert.deepEqual(check.problems.map((p) => p.path).sort(), ['extra', 'name', 'target_url', 'yaml_content']);
  });

  it('a body that is not an object, or deeply nested under a known field, is one problem', () => {
    for (const body of [[1, 2, 3], 'x', null, 7]) {
      const check = seo(body);
      assert.ok(!check.ok);
      assert.deepEqual(check.problems, [{ path: '(body)', message: 'must be object' }]);
    }
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const check = seo({ url: deep });
    assert.ok(!check.ok);
    assert.deepEqual(check.problems, [{ path: 'url', message: 'must be string' }]);
  });

  it('a schema that allows unknown fields (login) still accepts them, and checks its own', () => {
    const login = bodyValidator(loginBody);
    assert.deepEqual(login(manyKeys(1000, { email: 'a@example.com', password: 'x' })), { ok: true });
    const check = login(manyKeys(1000, { email: 7 }));
    assert.ok(!check.ok);
    assert.deepEqual(check.problems, [{ path: 'password', message: 'is required' }, { path: 'email', message: 'must be string' }]);
  });

  it('refuses a body schema whose failed validation would be unbounded', () => {
    assert.throws(() => bodyValidator({ type: 'object', properties: { a: { type: 'array', items: { type: 'string' } } } }), /maxItems/);
    assert.throws(() => bodyValidator({ type: 'object', additionalProperties: { type: 'string' } }), /additionalProperties/);
  });

  it("every route's body schema is bounded", () => {
    for (const r of routes) if (r.body) assert.doesNotThrow(() => bodyValidator(r.body!), `${r.method} ${r.path}`);
  });
});

describe('config problems (lambdas/engine/config.ts ConfigError)', () => {
  it('quote at most 300 characters of what they refer to, in the message and in each detail', () => {
    for (const yaml of [
      '\u0000'.repeat(65_000),
      `${'x'.repeat(200_000)}: 1\n`,
      `target: { url: "https://example.com/" }\nextract:\n  container: "${'a'.repeat(100_000)}["\n  fields: [{ name: t, selector: "${'b'.repeat(100_000)}[" }]\n`,
    ]) {
      assert.throws(() => parseConfig(yaml), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.ok(err.message.length < 1000, `message of ${err.message.length} characters`);
        for (const d of err.details) assert.ok(d.message.length < 400 && d.path.length < 400, JSON.stringify(d).slice(0, 200));
        assert.ok(JSON.stringify({ error: err.message, details: err.details }).length < 10_000);
        return true;
      });
    }
  });
});
