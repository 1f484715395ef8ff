import test from 'ava';
import { purgeExpiredAuthSchedule } from '../../workflows/maintenance.js';
import { randomUUID } from 'node:crypto';
import { Session } from '../../db/entities/Session.js';
import { RefreshToken } from '../../db/entities/RefreshToken.js';
import { User } from '../../db/entities/User.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ensureSchedules, scheduleDefinitions } from '../../workers/schedules.js';
import { purgeExpiredAuth, purgeWebhookHistory } from '../../workflows/maintenance.js';
import { loadConfig } from '../../lib/config.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { uuidv7 } from '../../lib/ids.js';
import pg from 'pg';
import { api, createUser, closeApi } from '../helpers/api.js';
test.after.always(closeApi);
import { replayFixture, replayLive } from '../helpers/replay.js';
import { retryTransient } from '../../jobs/connection.js';

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000);

test('purgeExpiredAuth deletes long-expired and long-revoked sessions and expired refresh tokens, keeps live ones; replays', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const em = services.orm.em.fork();
  const user = em.getReference(User, u.id);
  const expired = em.create(Session, { user, expiresAt: daysAgo(3) });
  const revoked = em.create(Session, { user, expiresAt: daysAgo(-10), revokedAt: daysAgo(2) });
  const live = em.create(Session, { user, expiresAt: daysAgo(-10) });
  const staleToken = em.create(RefreshToken, {
    session: live,
    tokenHash: sha256Hex(randomUUID()),
    expiresAt: daysAgo(2),
  });
  const freshToken = em.create(RefreshToken, {
    session: live,
    tokenHash: sha256Hex(randomUUID()),
    expiresAt: daysAgo(-10),
  });
  await em.flush();

  const workflowId = `maintenance:purge-expired-auth:test-${randomUUID()}`;
  const result = await services.temporal.workflow.execute(purgeExpiredAuth, {
    taskQueue,
    workflowId,
    workflowExecutionTimeout: '1 minute',
  });
  t.true(result.sessions >= 2);
  t.true(result.refreshTokens >= 1);

  const check = services.orm.em.fork();
  t.is(await check.count(Session, { id: { $in: [expired.id, revoked.id] } }), 0);
  t.is(await check.count(Session, { id: live.id }), 1);
  t.is(await check.count(RefreshToken, { id: staleToken.id }), 0);
  t.is(await check.count(RefreshToken, { id: freshToken.id }), 1);
  // The user's own sign-up session is live and untouched.
  t.is(await (await api()).services.orm.em.fork().count(Session, { user: u.id }), 2);

  t.true((await replayLive(services.temporal, workflowId)) > 0);
  await replayFixture(services.temporal, 'purgeExpiredAuth', workflowId);
});

test('the purge runs on a Temporal Schedule, created idempotently', async (t) => {
  const { services } = await api();
  const prefix = `test-${randomUUID()}:`;
  await ensureSchedules(services.temporal, taskQueue, prefix);
  await ensureSchedules(services.temporal, taskQueue, prefix); // second call updates, does not fail
  const handle = services.temporal.schedule.getHandle(prefix + purgeExpiredAuthSchedule.id);
  // Every schedule ensureSchedules created under the throwaway prefix goes away again.
  t.teardown(() =>
    Promise.all(
      scheduleDefinitions(taskQueue, prefix).map((d) => services.temporal.schedule.getHandle(d.scheduleId).delete()),
    ),
  );
  const d = await retryTransient(() => handle.describe()); // a loaded dev server times a describe out now and then
  t.is(d.action.type, 'startWorkflow');
  if (d.action.type === 'startWorkflow') t.is(d.action.workflowType, 'purgeExpiredAuth');
  t.is(d.spec.intervals?.[0]?.every, 3_600_000);
});

test('purgeWebhookHistory deletes deliveries and dispatched events past retention, keeps recent and undispatched ones; replays', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const em = services.orm.em.fork();
  const ws = await em.findOneOrFail(Workspace, { owner: u.id });
  const conn = em.getConnection();
  const old = Date.now() - (loadConfig().webhookHistoryDays + 2) * 86_400_000;
  const ids = {
    oldDispatched: uuidv7(old),
    oldPending: uuidv7(old),
    recent: uuidv7(),
    oldDelivery: uuidv7(old),
    recentDelivery: uuidv7(),
  };
  const event = (id: string, dispatched: boolean) =>
    conn.execute(
      `insert into webhook_events (id, workspace_id, name, body, created_at, dispatched_at) values (?, ?, 'lead.approved', '{}', now(), ${dispatched ? 'now()' : 'null'})`,
      [id, ws.id],
    );
  await event(ids.oldDispatched, true);
  await event(ids.recent, true);
  // Hold an undispatched row, so the test worker's dispatcher (FOR UPDATE SKIP LOCKED) leaves it
  // undispatched while the purge runs. The dispatcher may claim a row before the lock is taken;
  // then that one is simply an old dispatched row, and another is tried.
  const locker = new pg.Client({ connectionString: services.config.databaseUrl });
  await locker.connect();
  for (let attempt = 0; ; attempt++) {
    await event(ids.oldPending, false);
    await locker.query('begin');
    const held = await locker.query(
      'select id from webhook_events where id = $1 and dispatched_at is null for update',
      [ids.oldPending],
    );
    if (held.rowCount === 1) break;
    await locker.query('rollback');
    if (attempt > 10) throw new Error('could not hold an undispatched row');
    ids.oldPending = uuidv7(old);
  }
  const delivery = (id: string) =>
    conn.execute(
      `insert into webhook_deliveries (id, subscription_id, workspace_id, event_id, event_name, success, duration_ms, created_at) values (?, ?, ?, ?, 'lead.approved', true, 5, now())`,
      [id, uuidv7(), ws.id, uuidv7()],
    );
  await delivery(ids.oldDelivery);
  await delivery(ids.recentDelivery);
  t.teardown(async () => {
    await locker.query('rollback').catch(() => {});
    await locker.end();
    await conn.execute(`delete from webhook_events where id in (?, ?)`, [ids.oldPending, ids.recent]);
    await conn.execute(`delete from webhook_deliveries where id = ?`, [ids.recentDelivery]);
  });

  // Secrets a rotation replaced: one whose overlap has ended (dropped), one still in its overlap (kept).
  const subscription = (expiresAt: Date) =>
    conn.execute<{ id: string }[]>(
      `insert into webhook_subscriptions (id, workspace_id, url, events, active, secret_encrypted, secret_last4, previous_secret_encrypted, previous_secret_expires_at, created_at, updated_at)
       values (?, ?, 'https://hooks.example.com/', '["lead.approved"]', true, 'sealed', 'abcd', 'sealed-previous', ?, now(), now()) returning id`,
      [uuidv7(), ws.id, expiresAt],
    );
  const [[ended], [running]] = [await subscription(daysAgo(0.001)), await subscription(daysAgo(-1))];

  const workflowId = `maintenance:purge-webhook-history:test-${randomUUID()}`;
  const result = await services.temporal.workflow.execute(purgeWebhookHistory, {
    taskQueue,
    workflowId,
    workflowExecutionTimeout: '1 minute',
  });
  t.true(result.events >= 1 && result.deliveries >= 1);
  const deliveriesLeft = (
    await conn.execute(`select id from webhook_deliveries where id in (?, ?)`, [ids.oldDelivery, ids.recentDelivery])
  ).map((r: any) => r.id);
  t.deepEqual(deliveriesLeft, [ids.recentDelivery]);
  const left = (
    await conn.execute(`select id from webhook_events where id in (?, ?, ?)`, [
      ids.oldDispatched,
      ids.oldPending,
      ids.recent,
    ])
  )
    .map((r: any) => r.id)
    .sort();
  t.deepEqual(left, [ids.oldPending, ids.recent].sort());
  t.true((result.previousSecrets ?? 0) >= 1);
  const secrets = await conn.execute(
    `select id, previous_secret_encrypted is not null as kept from webhook_subscriptions where id in (?, ?) order by id`,
    [ended.id, running.id],
  );
  t.deepEqual(
    secrets.map((r: any) => [r.id, r.kept]),
    [
      [ended.id, false],
      [running.id, true],
    ],
  );

  await replayLive(services.temporal, workflowId);
  await replayFixture(services.temporal, 'purgeWebhookHistory', workflowId);
});
