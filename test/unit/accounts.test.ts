/** Accounts, keys and passwords in the domain, on a real SQLite file: nothing secret is stored in plain text. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { accountView, authenticate, createAccount, login, setPlan } from '../../lambdas/core/accounts.ts';
import { apiKeyDigest, generateApiKey, verifyPassword } from '../../lambdas/core/crypto.ts';
import type { Services } from '../../lambdas/core/services.ts';
import type { SqliteStore } from '../../lambdas/adapters/local/sqlite-store.ts';
import { testServices } from '../helpers/services.ts';

function services(file: string, secret = 'test secret one'): Services & { store: SqliteStore } {
  return testServices({ file, secret }).svc;
}

const tmpFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sai-acc-')), 'db.sqlite');

describe('accounts', () => {
  it('keys are sai_ + 40 base62 characters, and distinct', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    assert.equal(keys.size, 200);
    for (const k of keys) assert.match(k, /^sai_[A-Za-z0-9]{40}$/);
  });

  it('stores neither the key nor the password in plain text', async () => {
    const file = tmpFile();
    const svc = services(file);
    const { account, apiKey } = await createAccount(svc, { email: 'Ana@Example.com', password: 'pass phrase 123', plan: 'growth', first_name: 'Ana' });
    svc.store.db.exec('PRAGMA wal_checkpoint(FULL)');
    const raw = fs.readFileSync(file).toString('latin1');
    assert.ok(!raw.includes(apiKey), 'the key is not in the database file');
    assert.ok(!raw.includes('pass phrase 123'), 'the password is not in the database file');
    const stored = (await svc.store.getAccount(account.id))!;
    assert.equal(stored.api_key_digest, apiKeyDigest(apiKey));
    assert.match(stored.password_hash, /^scrypt\$32768\$8\$1\$/);
    assert.equal(await verifyPassword('pass phrase 123', stored.password_hash), true);
    assert.equal(await verifyPassword('pass phrase 124', stored.password_hash), false);
    assert.deepEqual((await accountView(svc, stored)).user, { id: account.id, email: 'Ana@Example.com', first_name: 'Ana', last_name: '' });
  });

  it('login returns the same key each time; authenticate resolves it; wrong secrets do not', async () => {
    const svc = services(tmpFile());
    const { account, apiKey } = await createAccount(svc, { email: 'b@example.com', password: 'long enough', plan: 'free' });
    assert.deepEqual(await login(svc, 'B@EXAMPLE.COM', 'long enough', '127.0.0.1'), { api_key: apiKey, email: 'b@example.com', plan: 'free' });
    assert.equal((await authenticate(svc, apiKey))?.id, account.id);
    assert.equal(await authenticate(svc, apiKey.slice(0, -1) + (apiKey.endsWith('a') ? 'b' : 'a')), null);
    assert.equal(await authenticate(svc, 'sai_short'), null);
    await assert.rejects(login(svc, 'b@example.com', 'wrong one', '127.0.0.1'), { code: 'invalid_credentials' });
    await assert.rejects(login(svc, 'nobody@example.com', 'long enough', '127.0.0.1'), { code: 'invalid_credentials' });
  });

  it('a sealed key opens only for its account and secret; after a secret change login issues a new key', async () => {
    const file = tmpFile();
    const one = services(file);
    const a = await createAccount(one, { email: 'c@example.com', password: 'long enough', plan: 'pro' });
    const b = await createAccount(one, { email: 'd@example.com', password: 'long enough', plan: 'pro' });
    const sealedA = (await one.store.getAccount(a.account.id))!.api_key_sealed!;
    const sealer = await one.sealer();
    assert.throws(() => sealer.open(sealedA, b.account.id), 'bound to the account id');
    assert.equal(sealer.open(sealedA, a.account.id), a.apiKey);

    const two = services(file, 'a different secret');
    const r = await login(two, 'c@example.com', 'long enough', '127.0.0.1');
    assert.notEqual(r.api_key, a.apiKey);
    assert.match(r.api_key, /^sai_/);
    assert.equal(await authenticate(two, a.apiKey), null, 'the old key stopped working');
    assert.equal((await authenticate(two, r.api_key))?.id, a.account.id);
    assert.equal((await login(two, 'c@example.com', 'long enough', '127.0.0.1')).api_key, r.api_key, 'and is returned again from now on');
  });

  it('refuses bad emails, short passwords, unknown plans and taken emails', async () => {
    const svc = services(tmpFile());
    await assert.rejects(createAccount(svc, { email: 'not-an-email', password: 'long enough' }), { code: 'invalid_request' });
    await assert.rejects(createAccount(svc, { email: 'e@example.com', password: 'short' }), /too short \(length: 5, minimum: 8\)/);
    await assert.rejects(createAccount(svc, { email: 'e@example.com', password: 'long enough', plan: 'gold' }), /Unknown plan "gold"; plans: free, starter, growth, pro/);
    await createAccount(svc, { email: 'e@example.com', password: 'long enough' });
    await assert.rejects(createAccount(svc, { email: 'E@example.com', password: 'long enough' }), { code: 'email_taken' });
    assert.equal((await setPlan(svc, 'e@example.com', 'growth')).plan, 'growth');
    await assert.rejects(setPlan(svc, 'nobody@example.com', 'growth'), { code: 'not_found' });
  });
});
