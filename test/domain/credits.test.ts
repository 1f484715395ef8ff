import test from 'ava';
import { z } from 'zod';
import { defineOperation } from '../../api/operation.js';
import { allOperations } from '../../api/operations.js';
import { CreditLedgerEntry } from '../../db/entities/CreditLedgerEntry.js';
import {
  availableCredits,
  creditBalance,
  debitCredits,
  debitCreditsBatch,
  grantCredits,
  holdCredits,
  releaseCredits,
  requireCredits,
  withCreditHold,
} from '../../domain/billing/credits.js';
import { AppError } from '../../domain/errors.js';
import { api, call, createUser, listen, closeApi } from '../helpers/api.js';
import { em, workspaceIdOf } from '../helpers/billing.js';
test.after.always(closeApi);

async function freshWorkspace(credits = 0): Promise<string> {
  const u = await createUser();
  const ws = await workspaceIdOf(u.id);
  if (credits) await grantCredits(await em(), ws, credits, { reason: 'setup', source: 'admin' });
  return ws;
}

async function ledgerSum(ws: string): Promise<{ sum: number; rows: number }> {
  const rows = await (await em()).find(CreditLedgerEntry, { workspace: ws });
  return { sum: rows.reduce((s, r) => s + r.amount, 0), rows: rows.length };
}

const code = (err: unknown) => (err instanceof AppError ? `${err.status} ${err.code}` : String(err));

test('grants add and debits subtract ledger rows; the balance is the ledger sum', async (t) => {
  const ws = await freshWorkspace(10);
  const r = await debitCredits(await em(), ws, 3, { reason: 'work' });
  t.true(r.created);
  t.is(r.entry.amount, -3);
  t.is(r.entry.kind, 'debit');
  t.is(r.balance, 7);
  t.is(await creditBalance(await em(), ws), 7);
  t.deepEqual(await ledgerSum(ws), { sum: 7, rows: 2 });
});

test('a repeated idempotency key returns the original debit and writes no second row', async (t) => {
  const ws = await freshWorkspace(10);
  const first = await debitCredits(await em(), ws, 4, { key: 'job-1', reason: 'work' });
  const again = await debitCredits(await em(), ws, 4, { key: 'job-1', reason: 'work' });
  t.false(again.created);
  t.is(again.entry.id, first.entry.id);
  t.is(await creditBalance(await em(), ws), 6);
  t.deepEqual(await ledgerSum(ws), { sum: 6, rows: 2 });
  // Keys are per workspace: another workspace may use the same key.
  const other = await freshWorkspace(5);
  t.true((await debitCredits(await em(), other, 1, { key: 'job-1', reason: 'work' })).created);
  // Grants are idempotent by key too.
  const g1 = await grantCredits(await em(), ws, 5, { key: 'promo', reason: 'promo', source: 'admin' });
  const g2 = await grantCredits(await em(), ws, 5, { key: 'promo', reason: 'promo', source: 'admin' });
  t.is(g1.entry.id, g2.entry.id);
  t.is(await creditBalance(await em(), ws), 11);
});

test('insufficient credits is 402 insufficient_credits and writes nothing', async (t) => {
  const ws = await freshWorkspace(2);
  const err = await t.throwsAsync(debitCredits(await em(), ws, 3, { reason: 'work' }));
  t.is(code(err), '402 insufficient_credits');
  t.deepEqual(await ledgerSum(ws), { sum: 2, rows: 1 });
  t.is(code(await t.throwsAsync(requireCredits(await em(), ws, 3))), '402 insufficient_credits');
  t.is(await requireCredits(await em(), ws, 2), 2);
  const empty = await freshWorkspace();
  t.is(code(await t.throwsAsync(debitCredits(await em(), empty, 1, { reason: 'work' }))), '402 insufficient_credits');
});

test('amounts must be positive integers (400 invalid_amount)', async (t) => {
  const ws = await freshWorkspace(5);
  for (const n of [0, -1, 1.5, Number.NaN])
    t.is(code(await t.throwsAsync(debitCredits(await em(), ws, n, { reason: 'x' }))), '400 invalid_amount');
  t.is(
    code(await t.throwsAsync(grantCredits(await em(), ws, 0, { reason: 'x', source: 'admin' }))),
    '400 invalid_amount',
  );
});

test("the debit runs in the caller's transaction: it rolls back with the work it pays for", async (t) => {
  const ws = await freshWorkspace(5);
  await t.throwsAsync(
    (await em()).transactional(async (tx) => {
      await debitCredits(tx, ws, 2, { key: 'rolled-back', reason: 'work' });
      t.is(await creditBalance(tx, ws), 3, 'visible inside the transaction');
      throw new Error('the work failed');
    }),
    { message: 'the work failed' },
  );
  t.deepEqual(await ledgerSum(ws), { sum: 5, rows: 1 });
  // The key was not consumed, so a retry debits.
  t.true((await debitCredits(await em(), ws, 2, { key: 'rolled-back', reason: 'work' })).created);
  t.is(await creditBalance(await em(), ws), 3);
});

test('50 parallel debits of 1 credit against a balance of 20 succeed exactly 20 times', async (t) => {
  const ws = await freshWorkspace(20);
  const { services } = await api();
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) =>
      services.orm.em.fork().transactional((tx) => debitCredits(tx, ws, 1, { key: `p-${i}`, reason: 'parallel' })),
    ),
  );
  const ok = results.filter((r) => r.status === 'fulfilled').length;
  const refused = results.filter(
    (r) => r.status === 'rejected' && code(r.reason) === '402 insufficient_credits',
  ).length;
  t.is(ok, 20);
  t.is(refused, 30);
  t.is(await creditBalance(await em(), ws), 0);
  t.deepEqual(await ledgerSum(ws), { sum: 0, rows: 21 });
});

test('over HTTP: 50 parallel paid requests against 20 credits succeed exactly 20 times', async (t) => {
  const probe = defineOperation({
    method: 'POST',
    path: '/api/test/paid-work',
    summary: 'test-only: debits one credit in the transaction of its work',
    tag: 'test',
    auth: 'user',
    body: z.object({ key: z.string() }),
    responses: { 200: z.object({ balance: z.number().int() }) },
    handler: ({ em: rem, actor, body }) =>
      rem.transactional(async (tx) => ({
        balance: (await debitCredits(tx, actor.workspaceId, 1, { key: body.key, reason: 'paid work' })).balance,
      })),
  });
  const { services } = await api();
  const { base } = await listen(services, [...allOperations(), probe]);
  const u = await createUser();
  const ws = await workspaceIdOf(u.id);
  await grantCredits(await em(), ws, 20, { reason: 'setup', source: 'admin' });
  const rs = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      call('POST', '/api/test/paid-work', { base, token: u.accessToken, body: { key: `h-${i}` } }),
    ),
  );
  t.is(rs.filter((r) => r.status === 200).length, 20);
  const refused = rs.filter((r) => r.status === 402);
  t.is(refused.length, 30);
  t.is(refused[0].body.error.code, 'insufficient_credits');
  t.deepEqual(await ledgerSum(ws), { sum: 0, rows: 21 });
  // A retried request with a used key is answered from the original debit (no 402, no new row).
  const used = rs.findIndex((r) => r.status === 200);
  const retry = await call('POST', '/api/test/paid-work', { base, token: u.accessToken, body: { key: `h-${used}` } });
  t.is(retry.status, 200);
  t.deepEqual(await ledgerSum(ws), { sum: 0, rows: 21 });
});

test('the ledger refuses rows whose sign contradicts their kind', async (t) => {
  const ws = await freshWorkspace();
  const e = await em();
  await t.throwsAsync(
    e.execute(
      `insert into credit_ledger (id, workspace_id, amount, kind, source, reason, created_at) values (gen_random_uuid(), ?, 5, 'debit', 'usage', 'bad', now())`,
      [ws],
    ),
  );
  t.deepEqual(await ledgerSum(ws), { sum: 0, rows: 0 });
});

test('the balance is an index-only scan of the covering workspace index (no table reads, however long the ledger)', async (t) => {
  const ws = await freshWorkspace(5);
  const e = await em();
  const plan = await e.transactional(async (tx) => {
    // Small test tables would be read sequentially; what matters is which index serves the sum.
    await tx.execute('set local enable_seqscan = off');
    await tx.execute('set local enable_bitmapscan = off');
    return tx.execute<{ 'QUERY PLAN': string }[]>(
      `explain select coalesce(sum(amount), 0) as balance from credit_ledger where workspace_id = ?`,
      [ws],
    );
  });
  const text = plan.map((r) => r['QUERY PLAN']).join('\n');
  t.regex(text, /Index Only Scan using credit_ledger_workspace_id_amount_index/, text);
  t.is(await creditBalance(e, ws), 5);
});

// ---- Holds (docs/plans-and-credits.md, "Holds") ----------------------------------------------

const hold = (key: string, ttlMs = 60_000) => ({ key, reason: 'provider call', ttlMs });

async function holds(ws: string): Promise<{ key: string; amount: number }[]> {
  return (await em()).execute(
    `select idempotency_key as key, amount from credit_holds where workspace_id = ? order by idempotency_key`,
    [ws],
  );
}

test('a hold counts against what can be spent, not against the balance; its debit consumes it, a release gives it back', async (t) => {
  const ws = await freshWorkspace(5);
  t.is(await holdCredits(await em(), ws, 2, hold('call-1')), 'held');
  t.is(await creditBalance(await em(), ws), 5, 'the balance is the ledger');
  t.is(await availableCredits(await em(), ws), 3);
  // Another debit or hold sees only what is not held.
  t.is(
    code(await t.throwsAsync(debitCredits(await em(), ws, 4, { reason: 'other work' }))),
    '402 insufficient_credits',
  );
  const err = await t.throwsAsync(requireCredits(await em(), ws, 4));
  t.like((err as AppError).details as Record<string, unknown>, { balance: 5, held: 2, required: 4 });
  t.is(code(await t.throwsAsync(holdCredits(await em(), ws, 4, hold('call-2')))), '402 insufficient_credits');
  // Holding the same key again renews it (no second hold).
  t.is(await holdCredits(await em(), ws, 2, hold('call-1')), 'held');
  t.deepEqual(await holds(ws), [{ key: 'call-1', amount: 2 }]);
  // The debit with the hold's key consumes it.
  await debitCredits(await em(), ws, 2, { key: 'call-1', reason: 'provider call' });
  t.deepEqual(await holds(ws), []);
  t.is(await creditBalance(await em(), ws), 3);
  t.is(await availableCredits(await em(), ws), 3);
  // A key already debited holds nothing (`paid`).
  t.is(await holdCredits(await em(), ws, 2, hold('call-1')), 'paid');
  t.deepEqual(await holds(ws), []);
  // A release gives the credits back.
  await holdCredits(await em(), ws, 3, hold('call-3'));
  t.is(await availableCredits(await em(), ws), 0);
  await releaseCredits(await em(), ws, 'call-3');
  t.is(await availableCredits(await em(), ws), 3);
  t.deepEqual(await ledgerSum(ws), { sum: 3, rows: 2 });
});

test('a hold whose process died stops counting at its expiry, and the next hold clears it', async (t) => {
  const ws = await freshWorkspace(2);
  await holdCredits(await em(), ws, 2, hold('crashed'));
  t.is(code(await t.throwsAsync(holdCredits(await em(), ws, 1, hold('next')))), '402 insufficient_credits');
  // Its expiry passes (as if the process that took it died): it counts for nothing.
  await (
    await em()
  ).execute(
    `update credit_holds set expires_at = now() - interval '1 second' where workspace_id = ? and idempotency_key = 'crashed'`,
    [ws],
  );
  t.is(await availableCredits(await em(), ws), 2);
  t.is(await holdCredits(await em(), ws, 1, hold('next')), 'held');
  t.deepEqual(await holds(ws), [{ key: 'next', amount: 1 }], 'the lapsed hold was deleted');
  // The crashed work's debit, should it still come, is an ordinary debit against what is available.
  t.true((await debitCredits(await em(), ws, 1, { key: 'crashed', reason: 'late' })).created);
  t.is(
    code(await t.throwsAsync(debitCredits(await em(), ws, 1, { key: 'late-2', reason: 'late' }))),
    '402 insufficient_credits',
  );
});

test('50 parallel holds of 1 credit against 3: exactly 3 are held, and the balance minus the holds never goes below zero', async (t) => {
  const ws = await freshWorkspace(3);
  const { services } = await api();
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) => holdCredits(services.orm.em.fork(), ws, 1, hold(`h-${i}`))),
  );
  t.is(results.filter((r) => r.status === 'fulfilled').length, 3);
  t.is(results.filter((r) => r.status === 'rejected' && code(r.reason) === '402 insufficient_credits').length, 47);
  t.is(await availableCredits(await em(), ws), 0);
  // A batch debit sees the holds too, and consumes those it pays for.
  const held = (await holds(ws)).map((h) => h.key);
  t.is(
    code(await t.throwsAsync(debitCreditsBatch(await em(), ws, [{ key: 'other', amount: 1 }], 'batch'))),
    '402 insufficient_credits',
  );
  const r = await debitCreditsBatch(
    await em(),
    ws,
    held.map((key) => ({ key, amount: 1 })),
    'batch',
  );
  t.is(r.charged, 3);
  t.deepEqual(await holds(ws), []);
  t.is(await creditBalance(await em(), ws), 0);
});

test('withCreditHold: 402 before the work runs; a failed or free outcome releases the hold; a debit consumes it', async (t) => {
  const ws = await freshWorkspace(1);
  let ran = 0;
  const work = async () => {
    ran++;
    t.is(await availableCredits(await em(), ws), 0, 'held while the work runs');
  };
  await t.throwsAsync(
    withCreditHold(await em(), ws, 1, hold('w-1'), () => work().then(() => Promise.reject(new Error('provider down')))),
    { message: 'provider down' },
  );
  t.is(await availableCredits(await em(), ws), 1, 'released after a failure');
  await withCreditHold(await em(), ws, 1, hold('w-2'), work); // no debit: nothing charged
  t.is(await availableCredits(await em(), ws), 1, 'released after work that charged nothing');
  await withCreditHold(await em(), ws, 1, hold('w-3'), async () => {
    await work();
    await debitCredits(await em(), ws, 1, { key: 'w-3', reason: 'paid' });
  });
  t.is(await creditBalance(await em(), ws), 0);
  t.deepEqual(await holds(ws), []);
  const before = ran;
  t.is(code(await t.throwsAsync(withCreditHold(await em(), ws, 1, hold('w-4'), work))), '402 insufficient_credits');
  t.is(ran, before, 'the work never ran');
});
