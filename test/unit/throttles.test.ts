/**
 * Throttles on refused calls (lambdas/core/throttles.ts) with a controlled clock: failed logins per email
 * and per client address, bad requests per account, fixed 15-minute windows and Retry-After.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount, login } from '../../lambdas/core/accounts.ts';
import { isBadRequestStatus, releaseBadRequestSlot, reserveBadRequestSlot, THROTTLE_WINDOW_MS } from '../../lambdas/core/throttles.ts';
import type { CodedError } from '../../lambdas/errors.ts';
import { testServices } from '../helpers/services.ts';

const PASSWORD = 'a long enough secret';

/** Asserts a 429 rate_limited refusal with its Retry-After and reason; returns Retry-After in seconds. */
async function assertThrottled(p: Promise<unknown>, reason: string): Promise<number> {
  let retryAfter = NaN;
  await assert.rejects(p, (e: CodedError) => {
    assert.equal(e.code, 'rate_limited');
    assert.equal((e.details[0] as { reason: string }).reason, reason);
    retryAfter = Number(e.headers?.['Retry-After']);
    assert.equal((e.details[0] as { retry_after_seconds: number }).retry_after_seconds, retryAfter);
    return true;
  });
  return retryAfter;
}

describe('failed-login throttle', () => {
  it('10 failures for an email refuse its next login, the right password included, until the window ends', async () => {
    const t = testServices({ now: '2026-11-22T14:05:00.000Z' });
    await createAccount(t.svc, { email: 'ana@example.com', password: PASSWORD });
    for (let i = 0; i < 10; i++) await assert.rejects(login(t.svc, 'ana@example.com', `wrong ${i}`, '10.0.0.1'), { code: 'invalid_credentials' });
    // The window runs from 14:00 to 14:15: 10 minutes left.
    assert.equal(await assertThrottled(login(t.svc, 'ana@example.com', PASSWORD, '10.0.0.2'), 'failed_logins'), 600);
    assert.equal(await assertThrottled(login(t.svc, 'ANA@example.com ', PASSWORD, '10.0.0.3'), 'failed_logins'), 600, 'the same email in another spelling');
    t.setNow('2026-11-22T14:15:00.000Z');
    assert.equal((await login(t.svc, 'ana@example.com', PASSWORD, '10.0.0.1')).email, 'ana@example.com');
  });

  it('a correct login resets the email count', async () => {
    const t = testServices();
    await createAccount(t.svc, { email: 'bo@example.com', password: PASSWORD });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 9; i++) await assert.rejects(login(t.svc, 'bo@example.com', 'wrong', '10.0.0.1'), { code: 'invalid_credentials' });
      await login(t.svc, 'bo@example.com', PASSWORD, '10.0.0.1');
    }
  });

  it('an email that has no account is throttled the same (the answer does not tell which emails exist)', async () => {
    const t = testServices();
    for (let i = 0; i < 10; i++) await assert.rejects(login(t.svc, 'nobody@example.com', 'x', '10.0.0.1'), { code: 'invalid_credentials' });
    await assertThrottled(login(t.svc, 'nobody@example.com', 'x', '10.0.0.9'), 'failed_logins');
  });

  it('100 failures from one address refuse its logins for any email; other addresses go on', async () => {
    const t = testServices();
    await createAccount(t.svc, { email: 'cy@example.com', password: PASSWORD });
    for (let i = 0; i < 100; i++) await assert.rejects(login(t.svc, `guess${i}@example.com`, 'x', '192.0.2.7'), { code: 'invalid_credentials' });
    await assertThrottled(login(t.svc, 'cy@example.com', PASSWORD, '192.0.2.7'), 'failed_logins');
    assert.equal((await login(t.svc, 'cy@example.com', PASSWORD, '192.0.2.8')).email, 'cy@example.com');
    // A correct login does not reset the address's count.
    await assertThrottled(login(t.svc, 'cy@example.com', PASSWORD, '192.0.2.7'), 'failed_logins');
  });

  it('limits of 0 turn the throttles off', async () => {
    const t = testServices({ overrides: { throttles: { badRequestsPerWindow: 0, failedLoginsPerEmail: 0, failedLoginsPerAddress: 0 } } });
    await createAccount(t.svc, { email: 'di@example.com', password: PASSWORD });
    for (let i = 0; i < 30; i++) await assert.rejects(login(t.svc, 'di@example.com', 'wrong', '10.0.0.1'), { code: 'invalid_credentials' });
    await login(t.svc, 'di@example.com', PASSWORD, '10.0.0.1');
  });
});

describe('bad-request throttle', () => {
  it('counts 400, 403 and 413 answers only', () => {
    assert.deepEqual([200, 201, 202, 400, 401, 403, 404, 409, 413, 429, 500].filter(isBadRequestStatus), [400, 403, 413]);
  });

  it('past the limit an account is refused until the window ends; other accounts are not', async () => {
    const t = testServices({ now: '2026-11-22T14:14:50.000Z', overrides: { throttles: { badRequestsPerWindow: 3, failedLoginsPerEmail: 10, failedLoginsPerAddress: 100 } } });
    const { account: a } = await createAccount(t.svc, { email: 'a@example.com', password: PASSWORD });
    const { account: b } = await createAccount(t.svc, { email: 'b@example.com', password: PASSWORD });
    for (let i = 0; i < 3; i++) assert.equal(await reserveBadRequestSlot(t.svc, a), true);
    assert.equal(await assertThrottled(reserveBadRequestSlot(t.svc, a), 'bad_requests'), 10);
    await reserveBadRequestSlot(t.svc, b);
    // A slot given back (the call was not refused) is free again.
    await releaseBadRequestSlot(t.svc, a);
    await reserveBadRequestSlot(t.svc, a);
    t.advance(10_000);
    await reserveBadRequestSlot(t.svc, a);
    assert.equal(THROTTLE_WINDOW_MS, 15 * 60_000);
  });

  it('calls sent at once cannot all pass: the slots are taken before the work', async () => {
    const t = testServices({ overrides: { throttles: { badRequestsPerWindow: 5, failedLoginsPerEmail: 10, failedLoginsPerAddress: 1000 } } });
    const { account } = await createAccount(t.svc, { email: 'c@example.com', password: PASSWORD });
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => reserveBadRequestSlot(t.svc, account)));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 5);
    const logins = await Promise.allSettled(Array.from({ length: 40 }, () => login(t.svc, 'c@example.com', 'wrong', '10.0.0.1')));
    const codes = logins.map((o) => (o.status === 'rejected' ? (o.reason as CodedError).code : 'ok'));
    assert.equal(codes.filter((c) => c === 'invalid_credentials').length, 10, 'ten passwords were checked');
    assert.equal(codes.filter((c) => c === 'rate_limited').length, 30);
  });
});
