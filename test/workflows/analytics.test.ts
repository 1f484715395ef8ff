import test from 'ava';
import { randomUUID } from 'node:crypto';
import { scheduleDefinitions } from '../../workers/schedules.js';
import { analyticsRollup, insightsRefresh } from '../../workflows/analytics.js';
import { api, call, closeApi, createTestApp } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { seedCampaign } from '../helpers/campaigns.js';
import { seedEnrollments } from '../helpers/analytics.js';
import { replayFixture, replayLive } from '../helpers/replay.js';

test.after.always(closeApi);
const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const ago = (h: number) => new Date(Date.now() - h * 3_600_000);

test('analytics-rollup and insights-refresh run as workflows (idempotent reruns); replay', async (t) => {
  const { services } = await api();
  const owner = await createOwner();
  const app = await createTestApp(owner);
  const ws = await workspaceIdOf(owner.id);
  const campaign = await seedCampaign(ws, { appId: app.id, accountIds: [], steps: [{ type: 'email' }] });
  await seedEnrollments(
    ws,
    app.id,
    campaign,
    35,
    Array.from({ length: 35 }, (_, i) => ({ enrollment: i, step: 0, executedAt: ago(2 + i / 10) })),
    ago(10),
  );

  const rollupId = `analytics-rollup:test-${randomUUID()}`;
  const input = { from: ago(24).toISOString(), to: new Date().toISOString(), workspaceId: ws };
  const first = await services.temporal.workflow.execute(analyticsRollup, {
    taskQueue,
    workflowId: rollupId,
    args: [input],
    workflowExecutionTimeout: '2 minutes',
  });
  t.true(first.rows >= 1);
  const again = await services.temporal.workflow.execute(analyticsRollup, {
    taskQueue,
    workflowId: `${rollupId}:again`,
    args: [input],
    workflowExecutionTimeout: '2 minutes',
  });
  t.is(again.rows, first.rows);
  const from = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
  const ov = (
    await call('GET', `/api/analytics/overview?from=${from}&campaign_id=${campaign.id}`, { token: owner.accessToken })
  ).body;
  t.is(ov.totals.sent, 35);

  const refreshId = `insights-refresh:test-${randomUUID()}`;
  const found = await services.temporal.workflow.execute(insightsRefresh, {
    taskQueue,
    workflowId: refreshId,
    args: [{ workspaceId: ws }],
    workflowExecutionTimeout: '2 minutes',
  });
  t.is(found.found, 1);
  t.is((await call('GET', '/api/insights/count', { token: owner.accessToken })).body.open, 1);

  t.true((await replayLive(services.temporal, rollupId)) > 0);
  t.true((await replayLive(services.temporal, refreshId)) > 0);
  await replayFixture(services.temporal, 'analyticsRollup', rollupId);
  await replayFixture(services.temporal, 'insightsRefresh', refreshId);
  t.truthy(await em());
});

test('both run on Temporal Schedules: the rollup every 10 minutes, the refresh every 15', (t) => {
  const defs = scheduleDefinitions(taskQueue, 'x:');
  const rollup = defs.find((d) => d.scheduleId === 'x:schedule:analytics-rollup');
  const refresh = defs.find((d) => d.scheduleId === 'x:schedule:insights-refresh');
  t.is(rollup?.action.type === 'startWorkflow' ? rollup.action.workflowType : null, 'analyticsRollup');
  t.is(rollup?.action.type === 'startWorkflow' ? rollup.action.workflowId : null, 'x:analytics-rollup');
  t.deepEqual(rollup?.spec.intervals, [{ every: '10 minutes' }]);
  t.is(refresh?.action.type === 'startWorkflow' ? refresh.action.workflowType : null, 'insightsRefresh');
  t.deepEqual(refresh?.spec.intervals, [{ every: '15 minutes' }]);
});
