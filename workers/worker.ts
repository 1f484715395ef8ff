// Worker process: registers every workflow and activity on the task queue and creates the schedules.
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createRequire } from 'node:module';
import { loadConfig } from '../lib/config.js';
import { logger } from '../lib/logger.js';
import { openOrm } from '../lib/db.js';
import { connectTemporal, ensureSearchAttributes } from '../lib/temporal.js';
import { createActivities } from '../activities/index.js';
import { ensureSchedules } from './schedules.js';
import { startWebhookDispatcher } from './webhook-dispatcher.js';

export const workflowsPath = createRequire(import.meta.url).resolve('../workflows/index.ts');

export async function createWorker() {
  const config = loadConfig();
  // The SDK's own logs (bundling, state changes) at warning level unless LOG_LEVEL asks for more.
  const sdkLevel = ['debug', 'trace'].includes(config.logLevel) ? 'DEBUG' : config.logLevel === 'info' ? 'INFO' : 'WARN';
  try {
    Runtime.install({ logger: new DefaultLogger(sdkLevel) });
  } catch {
    // already installed in this process (e.g. a second worker in a benchmark)
  }
  const orm = await openOrm(config.databaseUrl);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    workflowsPath,
    // Webhook fan-out runs many short I/O-bound activities at once (one per subscription).
    maxConcurrentActivityTaskExecutions: Number(process.env.WORKER_MAX_ACTIVITIES ?? 300),
    activities: createActivities({ orm, config, logger }),
  });
  const client = await connectTemporal(config);
  await ensureSearchAttributes(client.connection, config.temporal.namespace, (msg) => logger.warn(msg));
  // Test runs use their own task queue and must not repoint the real schedules at it.
  if (process.env.TEMPORAL_SCHEDULES !== 'off') await ensureSchedules(client, config.temporal.taskQueue);
  // The outbox dispatcher of outbound webhook events runs beside the worker (see webhook-dispatcher.ts).
  const dispatcher = await startWebhookDispatcher({ databaseUrl: config.databaseUrl, temporal: client, taskQueue: config.temporal.taskQueue, logger });
  return {
    worker,
    dispatcher,
    async close() {
      await dispatcher.stop();
      await client.connection.close();
      await connection.close();
      await orm.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { worker, close } = await createWorker();
  logger.info({ taskQueue: loadConfig().temporal.taskQueue }, 'worker polling');
  await worker.run(); // returns after SIGINT/SIGTERM, once in-flight tasks finish
  await close();
}
