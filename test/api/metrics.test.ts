// GET /metrics on the API: the guard (METRICS_TOKEN; closed in production without one) and the
// gauges read from PostgreSQL at scrape time.
import test from 'ava';
import { api, call, closeApi, listen } from '../helpers/api.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { creditsDebited, governorRefusals, resetDatabaseGaugesClock } from '../../lib/metrics.js';
import { debitCredits, debitCreditsBatch } from '../../domain/billing/credits.js';
import { requestSlot } from '../../domain/governor/governor.js';
import { createUser } from '../helpers/api.js';
import { em, grant, workspaceIdOf } from '../helpers/billing.js';
test.after.always(closeApi);

const withConfig = async (over: { production: boolean; metricsToken: string | null }) => {
  const { services } = await api();
  return (await listen({ ...services, config: { ...services.config, ...over } })).base;
};

test('development and tests without METRICS_TOKEN: open, with the database gauges', async (t) => {
  resetDatabaseGaugesClock();
  const r = await call('GET', '/metrics');
  t.is(r.status, 200);
  t.regex(r.text, /^outreach_outbox_lag_seconds \d+(\.\d+)?(e[-+]?\d+)?$/m);
  for (const status of ['active', 'completed', 'failed'])
    t.regex(r.text, new RegExp(`^outreach_enrollments\\{status="${status}"\\} \\d+$`, 'm'));
});

test('production without METRICS_TOKEN: 401, saying why', async (t) => {
  const base = await withConfig({ production: true, metricsToken: null });
  const r = await call('GET', '/metrics', { base });
  t.is(r.status, 401);
  t.is(r.body.error.code, 'unauthorized');
  t.regex(r.body.error.message, /METRICS_TOKEN/);
  t.is((await call('GET', '/metrics', { base, headers: { authorization: 'Bearer guess' } })).status, 401);
});

test('with METRICS_TOKEN: 401 without it or with a wrong one, 200 with it', async (t) => {
  for (const production of [true, false]) {
    const base = await withConfig({ production, metricsToken: 'scrape-token-0123456789' });
    t.is((await call('GET', '/metrics', { base })).status, 401);
    t.is(
      (await call('GET', '/metrics', { base, headers: { authorization: 'Bearer scrape-token-012345678' } })).status,
      401,
    );
    t.is((await call('GET', '/metrics', { base, token: 'wrong' })).status, 401);
    const ok = await call('GET', '/metrics', { base, headers: { authorization: 'Bearer scrape-token-0123456789' } });
    t.is(ok.status, 200);
    t.regex(ok.text, /^# TYPE http_request_duration_seconds histogram$/m);
  }
});

// In this process (the API's, in tests): the same code records them in a worker.
const counted = async () => (await creditsDebited.get()).values[0]?.value ?? 0;

test.serial(
  'credits debited count once their transaction commits: never on rollback, never twice for a key',
  async (t) => {
    const u = await createUser();
    await grant(u.id, 50);
    const ws = await workspaceIdOf(u.id);
    const e = (await em()) as EntityManager;
    const start = await counted();
    await debitCredits(e, ws, 3, { reason: 'metrics test', key: `m1-${ws}` });
    t.is(await counted(), start + 3);
    await debitCredits(e, ws, 3, { reason: 'metrics test', key: `m1-${ws}` }); // the same key: the first debit
    t.is(await counted(), start + 3);
    await t.throwsAsync(
      e.transactional(async (tx) => {
        await debitCredits(tx, ws, 4, { reason: 'metrics test', key: `m2-${ws}` });
        throw new Error('the work failed');
      }),
      { message: 'the work failed' },
    );
    await new Promise((r) => setImmediate(r));
    t.is(await counted(), start + 3);
    await e.transactional(async (tx) => {
      await tx.transactional(async (inner) =>
        debitCreditsBatch(
          inner,
          ws,
          [
            { key: `m3-${ws}`, amount: 2 },
            { key: `m4-${ws}`, amount: 1 },
          ],
          'metrics test',
        ),
      );
      t.is(await counted(), start + 3, 'not before the outer transaction commits');
    });
    await new Promise((r) => setImmediate(r));
    t.is(await counted(), start + 6);
  },
);

test('a governor refusal counts by its reason', async (t) => {
  const u = await createUser();
  const a = await call('POST', '/api/platform-accounts', {
    token: u.accessToken,
    body: { channel: 'network', display_name: 'Not connected', time_zone: 'Europe/Paris' },
  });
  t.is(a.status, 201, a.text);
  const before = (await governorRefusals.get()).values.find((v) => v.labels.reason === 'not_connected')?.value ?? 0;
  const answer = await requestSlot((await em()) as EntityManager, a.body.id, 'message');
  t.like(answer, { granted: false, reason: 'not_connected' });
  t.is((await governorRefusals.get()).values.find((v) => v.labels.reason === 'not_connected')?.value, before + 1);
});
