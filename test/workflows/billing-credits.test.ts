import test from 'ava';
import { grantMonthlyCreditsSchedule } from '../../workflows/billing.js';
import { randomUUID } from 'node:crypto';
import { creditBalance } from '../../domain/billing/credits.js';
import { creditPeriod } from '../../domain/billing/plans.js';
import { scheduleDefinitions, ensureSchedules } from '../../workers/schedules.js';
import { grantMonthlyCredits } from '../../workflows/billing.js';
import { api, createUser, closeApi } from '../helpers/api.js';
import { em, setUserPlan, workspaceIdOf } from '../helpers/billing.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { retryTransient } from '../../jobs/connection.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;

test('grantMonthlyCredits grants each workspace its effective plan’s credits once per month; replays', async (t) => {
  const { services } = await api();
  const [free, starter, lapsed] = await Promise.all([createUser(), createUser(), createUser()]);
  await setUserPlan(starter.id, 'starter'); // grants this month's 1000 already
  await setUserPlan(lapsed.id, 'pro', { status: 'canceled', currentPeriodEnd: new Date(Date.now() - 1000) });
  const ids = await Promise.all([free, starter, lapsed].map((u) => workspaceIdOf(u.id)));
  const balances = async () => Promise.all(ids.map(async (id) => creditBalance(await em(), id)));

  const run = (input: { period?: string; workspaceIds: string[] }) =>
    services.temporal.workflow.execute(grantMonthlyCredits, {
      taskQueue,
      workflowId: `credits:grant-monthly:test-${randomUUID()}`,
      args: [input],
      workflowExecutionTimeout: '1 minute',
    });

  const workflowId = `credits:grant-monthly:test-${randomUUID()}`;
  const first = await services.temporal.workflow.execute(grantMonthlyCredits, {
    taskQueue,
    workflowId,
    args: [{ workspaceIds: ids }],
    workflowExecutionTimeout: '1 minute',
  });
  t.deepEqual(first, { period: creditPeriod(new Date()), workspaces: 3, granted: 2 });
  t.deepEqual(await balances(), [50, 1000, 50], 'free 50; starter already had its month; a lapsed pro is free');

  t.like(await run({ workspaceIds: ids }), { granted: 0 }, 'a re-run grants nothing twice');
  t.deepEqual(await balances(), [50, 1000, 50]);

  t.like(await run({ period: '2099-01', workspaceIds: ids }), { period: '2099-01', granted: 3 });
  t.deepEqual(await balances(), [100, 2000, 100]);

  t.true((await replayLive(services.temporal, workflowId)) > 0);
  await replayFixture(services.temporal, 'grantMonthlyCredits', workflowId);
});

test('the monthly grant runs on a Temporal Schedule on the 1st, created idempotently', async (t) => {
  const { services } = await api();
  const prefix = `test-${randomUUID()}:`;
  t.teardown(() =>
    Promise.all(
      scheduleDefinitions(taskQueue, prefix).map((d) => services.temporal.schedule.getHandle(d.scheduleId).delete()),
    ),
  );
  await ensureSchedules(services.temporal, taskQueue, prefix);
  await ensureSchedules(services.temporal, taskQueue, prefix);
  const d = await retryTransient(() =>
    services.temporal.schedule.getHandle(prefix + grantMonthlyCreditsSchedule.id).describe(),
  );
  t.is(d.action.type, 'startWorkflow');
  if (d.action.type === 'startWorkflow') t.is(d.action.workflowType, 'grantMonthlyCredits');
  t.is(d.spec.calendars?.[0]?.dayOfMonth?.[0]?.start, 1);
});
