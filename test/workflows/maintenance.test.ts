import test from 'ava';
import { randomUUID } from 'node:crypto';
import { Session } from '../../db/entities/Session.js';
import { RefreshToken } from '../../db/entities/RefreshToken.js';
import { User } from '../../db/entities/User.js';
import { sha256Hex } from '../../lib/crypto.js';
import { scheduleIds } from '../../workflows/ids.js';
import { ensureSchedules, scheduleDefinitions } from '../../workers/schedules.js';
import { purgeExpiredAuth } from '../../workflows/maintenance.js';
import { api, createUser, closeApi } from '../helpers/api.js';
test.after.always(closeApi);
import { replayFixture, replayLive } from '../helpers/replay.js';

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
  const staleToken = em.create(RefreshToken, { session: live, tokenHash: sha256Hex(randomUUID()), expiresAt: daysAgo(2) });
  const freshToken = em.create(RefreshToken, { session: live, tokenHash: sha256Hex(randomUUID()), expiresAt: daysAgo(-10) });
  await em.flush();

  const workflowId = `maintenance:purge-expired-auth:test-${randomUUID()}`;
  const result = await services.temporal.workflow.execute(purgeExpiredAuth, { taskQueue, workflowId, workflowExecutionTimeout: '1 minute' });
  t.true(result.sessions >= 2);
  t.true(result.refreshTokens >= 1);

  const check = services.orm.em.fork();
  t.is(await check.count(Session, { id: { $in: [expired.id, revoked.id] } }), 0);
  t.is(await check.count(Session, { id: live.id }), 1);
  t.is(await check.count(RefreshToken, { id: staleToken.id }), 0);
  t.is(await check.count(RefreshToken, { id: freshToken.id }), 1);
  // The user's own sign-up session is live and untouched.
  t.is((await (await api()).services.orm.em.fork().count(Session, { user: u.id })), 2);

  t.true((await replayLive(services.temporal, workflowId)) > 0);
  await replayFixture(services.temporal, 'purgeExpiredAuth', workflowId);
});

test('the purge runs on a Temporal Schedule, created idempotently', async (t) => {
  const { services } = await api();
  const prefix = `test-${randomUUID()}:`;
  await ensureSchedules(services.temporal, taskQueue, prefix);
  await ensureSchedules(services.temporal, taskQueue, prefix); // second call updates, does not fail
  const handle = services.temporal.schedule.getHandle(prefix + scheduleIds.purgeExpiredAuth);
  // Every schedule ensureSchedules created under the throwaway prefix goes away again.
  t.teardown(() => Promise.all(scheduleDefinitions(taskQueue, prefix).map((d) => services.temporal.schedule.getHandle(d.scheduleId).delete())));
  const d = await handle.describe();
  t.is(d.action.type, 'startWorkflow');
  if (d.action.type === 'startWorkflow') t.is(d.action.workflowType, 'purgeExpiredAuth');
  t.is(d.spec.intervals?.[0]?.every, 3_600_000);
});
