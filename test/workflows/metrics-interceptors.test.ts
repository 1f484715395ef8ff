// The worker's interceptors and sink (workers/interceptors.ts, workflows/metrics-interceptors.ts) on
// a worker of this test's own (its own task queue and workflows), registered as workers/worker.ts does.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { ApplicationFailure } from '@temporalio/common';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { activityFailures, workflowFailures } from '../../lib/metrics.js';
import { activityInterceptors, metricsSinks, workflowInterceptorModule } from '../../workers/interceptors.js';

const value = async (metric: typeof activityFailures | typeof workflowFailures, labels: Record<string, string>) =>
  (await metric.get()).values.find((v) =>
    Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x),
  )?.value ?? 0;

test('a failed activity attempt counts by activity type, a failed execution by workflow type; a success neither', async (t) => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') }); // the failures below are on purpose
  } catch {
    // installed already in this process
  }
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const taskQueue = `metrics-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: createRequire(import.meta.url).resolve('../fixtures/metrics-workflows.ts'),
    activities: {
      async metricsFixtureActivity(fail: boolean) {
        if (fail) throw ApplicationFailure.retryable('fails on purpose', 'fixture');
        return 'ok';
      },
    },
    interceptors: { activity: [activityInterceptors], workflowModules: [workflowInterceptorModule] },
    sinks: metricsSinks,
  });
  const client = new Client({ connection: await Connection.connect({ address }) });
  t.teardown(() => client.connection.close());

  const activity = { activity: 'metricsFixtureActivity' };
  const workflow = { workflow: 'metricsFixtureWorkflow' };
  await worker.runUntil(async () => {
    const ok = await client.workflow.execute('metricsFixtureWorkflow', {
      taskQueue,
      workflowId: `ok-${taskQueue}`,
      args: [false],
    });
    t.is(ok, 'ok');
    t.is(await value(activityFailures, activity), 0);
    t.is(await value(workflowFailures, workflow), 0);
    await t.throwsAsync(
      client.workflow.execute('metricsFixtureWorkflow', { taskQueue, workflowId: `fail-${taskQueue}`, args: [true] }),
      { instanceOf: WorkflowFailedError },
    );
  });
  await connection.close();
  t.is(await value(activityFailures, activity), 2); // both attempts
  t.is(await value(workflowFailures, workflow), 1);
});
