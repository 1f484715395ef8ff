// Notification retention (docs/notifications.md, "Retention"): the `purgeNotifications` workflow deletes
// read notifications past 90 days and any past 365, batch after batch, through the indexes that keep it
// cheap; unread counts and lists follow; it runs on a Schedule and replays.
// Serial: each run purges every workspace's old rows, including another test's.
import test from 'ava';
import { purgeNotificationsSchedule } from '../../workflows/notifications.js';
import { randomUUID } from 'node:crypto';
import { MAX_RETENTION_DAYS, READ_RETENTION_DAYS } from '../../domain/notifications/notifications.js';
import { uuidv7 } from '../../lib/ids.js';
import { purgeNotifications } from '../../workflows/notifications.js';
import { ensureSchedules, scheduleDefinitions } from '../../workers/schedules.js';
import { api, call, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { em, workspaceIdOf } from '../helpers/billing.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { retryTransient } from '../../jobs/connection.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const DAY = 86_400_000;

/** Notifications of `u` written `daysAgo` days ago (ids minted then), read or not; their ids. */
async function seed(u: TestUser, daysAgo: number, read: boolean, count = 1): Promise<string[]> {
  const at = Date.now() - daysAgo * DAY;
  const ids = Array.from({ length: count }, () => uuidv7(at));
  await (
    await em()
  ).execute(
    `insert into notifications (id, workspace_id, user_id, kind, title, body, data, created_at, read_at)
     select x.id, ?, ?, 'account.disconnected', ?, '', '{}', ?, ? from unnest(?::uuid[]) as x(id)`,
    [
      await workspaceIdOf(u.id),
      u.id,
      `${daysAgo} days, ${read ? 'read' : 'unread'}`,
      new Date(at),
      read ? new Date(at + 3_600_000) : null,
      `{${ids.join(',')}}`,
    ],
  );
  return ids;
}

const run = async (input: { batch?: number } = {}) => {
  const workflowId = `maintenance:purge-notifications:test-${randomUUID()}`;
  const result = await (
    await api()
  ).services.temporal.workflow.execute(purgeNotifications, {
    taskQueue,
    workflowId,
    args: [input],
    workflowExecutionTimeout: '5 minutes',
  });
  return { workflowId, result };
};

test.serial(
  'read notifications past 90 days and any past 365 are deleted, the rest kept; unread counts and lists follow; replays',
  async (t) => {
    const u = await createUser();
    const auth = { token: u.accessToken };
    const deleted = [
      ...(await seed(u, READ_RETENTION_DAYS + 10, true)),
      ...(await seed(u, MAX_RETENTION_DAYS + 5, true)),
      ...(await seed(u, MAX_RETENTION_DAYS + 5, false)),
    ];
    const kept = [
      ...(await seed(u, READ_RETENTION_DAYS - 10, true)),
      ...(await seed(u, MAX_RETENTION_DAYS - 10, false)), // unread: kept until the year is over
      ...(await seed(u, 0, true)),
      ...(await seed(u, 0, false)),
    ];
    const unread = async () => (await call('GET', '/api/me/notifications/unread-count', auth)).body.unread;
    t.is(await unread(), 3);

    const { workflowId, result } = await run();
    t.true(result.read >= 1 && result.expired >= 2, JSON.stringify(result));
    const left = (
      await (await em()).execute<{ id: string }[]>(`select id from notifications where user_id = ?`, [u.id])
    ).map((r) => r.id);
    t.deepEqual(left.sort(), [...kept].sort());
    t.false(deleted.some((id) => left.includes(id)));

    // The count is of the rows that remain: the year-old unread one is gone from it and from the list.
    t.is(await unread(), 2);
    const listed = (await call('GET', '/api/me/notifications?unread=true', auth)).body.items;
    t.is(listed.length, 2);
    t.deepEqual(
      (await call('GET', '/api/me/notifications', auth)).body.items.map((n: { id: string }) => n.id).sort(),
      [...kept].sort(),
    );
    // A purged notification is gone for its reader too.
    t.is((await call('POST', `/api/me/notifications/${deleted[0]}/read`, auth)).status, 404);
    t.deepEqual((await call('POST', '/api/me/notifications/read-all', auth)).body, { marked: 2, unread: 0 });

    await replayLive((await api()).services.temporal, workflowId);
    await replayFixture((await api()).services.temporal, 'purgeNotifications', workflowId);
  },
);

test.serial('a backlog larger than one batch is deleted batch after batch in one run', async (t) => {
  const u = await createUser();
  // Batches of 2 rather than 5,000: bulk rows would bloat the shared test database's indexes (and turn
  // the planner away from them in other tests). Several full batches and a short one of each rule.
  await seed(u, MAX_RETENTION_DAYS + 30, false, 7);
  await seed(u, READ_RETENTION_DAYS + 30, true, 6);
  const keep = await seed(u, READ_RETENTION_DAYS + 30, false, 3);
  const { workflowId, result } = await run({ batch: 2 });
  t.true(result.expired >= 7 && result.read >= 6, JSON.stringify(result));
  // All batches in one activity run (no retry, no second activity).
  const history = await (await api()).services.temporal.workflow.getHandle(workflowId).fetchHistory();
  t.is(history.events?.filter((e) => e.activityTaskScheduledEventAttributes).length, 1);
  const left = (
    await (await em()).execute<{ id: string }[]>(`select id from notifications where user_id = ?`, [u.id])
  ).map((r) => r.id);
  t.deepEqual(left.sort(), keep.sort());
});

test.serial('each batch walks an index: the partial index of read rows, or the primary key', async (t) => {
  const plan = async (sql: string) =>
    JSON.stringify(
      await (
        await em()
      ).transactional(async (tx) => {
        // The test database is small, where a sequential scan is cheapest; with it off, the planner
        // shows the path it takes on a real table.
        await tx.execute('set local enable_seqscan = off');
        return tx.execute(`explain (format json) ${sql}`, [uuidv7(0), uuidv7(Date.now() - READ_RETENTION_DAYS * DAY)]);
      }),
    );
  t.regex(
    await plan(`select id from notifications where id > ? and id < ? and read_at is not null order by id limit 5000`),
    /"Index Name":"notifications_read_index"/,
  );
  t.regex(
    await plan(`select id from notifications where id > ? and id < ? order by id limit 5000`),
    /"Index Name":"notifications_pkey"/,
  );
});

test.serial('the purge runs daily on a Temporal Schedule', async (t) => {
  const { services } = await api();
  const prefix = `test-${randomUUID()}:`;
  await ensureSchedules(services.temporal, taskQueue, prefix);
  t.teardown(() =>
    Promise.all(
      scheduleDefinitions(taskQueue, prefix).map((d) => services.temporal.schedule.getHandle(d.scheduleId).delete()),
    ),
  );
  const d = await retryTransient(() =>
    services.temporal.schedule.getHandle(prefix + purgeNotificationsSchedule.id).describe(),
  );
  t.is(d.action.type, 'startWorkflow');
  if (d.action.type === 'startWorkflow') t.is(d.action.workflowType, 'purgeNotifications');
  t.like(d.spec.calendars?.[0], { hour: [{ start: 3, end: 3, step: 1 }], minute: [{ start: 47, end: 47, step: 1 }] });
});
