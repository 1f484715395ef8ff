// Worker process: registers every workflow and activity on the task queue and creates the schedules.
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/config.js';
import { logger, logUnhandledRejections } from '../lib/logger.js';
import { openOrm } from '../db/orm.js';
import { connectTemporal, ensureSearchAttributes } from '../jobs/connection.js';
import { createActivities } from '../activities/index.js';
import { createProviders } from '../lib/providers.js';
import { temporalJobs } from '../jobs/temporal.js';
import { ensureSchedules } from './schedules.js';
import { ensureMailboxSyncs } from '../domain/mailbox/mailbox.js';
import { providerLookups } from '../domain/provider-lookups.js';
import { unipileConnectorOf } from '../lib/connectors/index.js';
import { startWebhookDispatcher } from './webhook-dispatcher.js';
import { startMailboxSessions } from './mailbox-sessions.js';
import { activityInterceptors, metricsSinks, workflowInterceptorModule } from './interceptors.js';
import { startMetricsServer } from '../lib/metrics-server.js';
import { connectRedis } from '../lib/redis.js';

const compiled = import.meta.url.endsWith('.js');
export const workflowsPath = createRequire(import.meta.url).resolve(
  compiled ? '../workflows/index.js' : '../workflows/index.ts',
);
// `npm run build` bundles the workflows once into dist/workflow-bundle.js; a worker started from dist
// loads it instead of running webpack at every start. From source it bundles workflowsPath as before.
// From source, WORKFLOW_BUNDLE_PATH may name a bundle of these same sources: `npm test` makes one per
// run, so the many workers its files start do not each run webpack.
const prebuilt = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));
const given = compiled ? undefined : process.env.WORKFLOW_BUNDLE_PATH;
export const workflowSource =
  compiled && existsSync(prebuilt)
    ? { workflowBundle: { codePath: prebuilt } }
    : given && existsSync(given)
      ? { workflowBundle: { codePath: given } }
      : { workflowsPath };

export async function createWorker() {
  const config = loadConfig();
  // The SDK's own logs (bundling, state changes) at warning level unless LOG_LEVEL asks for more.
  const sdkLevel = ['debug', 'trace'].includes(config.logLevel)
    ? 'DEBUG'
    : config.logLevel === 'info'
      ? 'INFO'
      : 'WARN';
  try {
    Runtime.install({ logger: new DefaultLogger(sdkLevel) });
  } catch {
    // already installed in this process (e.g. a second worker in a benchmark)
  }
  const orm = await openOrm(config.databaseUrl);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // Also the Jobs the Operator's tools start workflows through (Operator tasks run them in activities).
  const client = await connectTemporal(config);
  // The process's providers, each made on first use by the activities that need it (lib/providers.ts).
  const providers = createProviders(config, orm, providerLookups(orm, config));
  // A client over the worker's own connection: its starts may be eager (the first workflow task comes
  // back in the start response to this worker instead of a round trip through the task queue).
  const ownClient = new Client({ connection, namespace: config.temporal.namespace });
  const jobs = temporalJobs(client, config.temporal.taskQueue, {
    eagerClient: ownClient,
    kickCoalesceMs: config.inboxKickCoalesceMs,
  });
  // The Operator's stream publisher; activities get it, never connect one of their own.
  const redis = connectRedis(config.redisUrl);
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    ...workflowSource,
    // Webhook fan-out runs many short I/O-bound activities at once (one per subscription).
    maxConcurrentActivityTaskExecutions: config.worker.maxActivities,
    // Each webhook event is a short workflow: with the default 2 non-sticky / 10 activity pollers,
    // new workflows and activities queued for seconds at 20 events/s (each poll round trip costs
    // ~100 ms on the dev server). More polls keep the slots filled.
    maxConcurrentWorkflowTaskPolls: 20,
    // An enrollment's workflow task stays open while its local activities wait on Postgres (I/O, not
    // CPU): 100 slots instead of the default 40 took bench:campaigns from 53 to 72 actions/s.
    maxConcurrentWorkflowTaskExecutions: config.worker.maxWorkflowTasks,
    maxConcurrentLocalActivityExecutions: config.worker.maxLocalActivities,
    nonStickyToStickyPollRatio: 0.5,
    maxConcurrentActivityTaskPolls: 20,
    activities: createActivities({ orm, config, logger, jobs, redis, providers }),
    // Failed activities and workflows by type (lib/metrics.ts). A prebuilt bundle carries the
    // workflow module itself (scripts/build.ts); the SDK ignores workflowModules beside one.
    interceptors: {
      activity: [activityInterceptors],
      ...('workflowsPath' in workflowSource ? { workflowModules: [workflowInterceptorModule] } : {}),
    },
    sinks: metricsSinks,
  });
  await ensureSearchAttributes(client.connection, config.temporal.namespace, (msg) => logger.warn(msg));
  // Test runs use their own task queue and must not repoint the real schedules at it.
  const sandboxConnector = config.connector.provider !== 'unipile';
  if (config.worker.schedules) await ensureSchedules(client, config.temporal.taskQueue, '', { sandboxConnector });
  // Unipile's webhooks (messages, new relations, account statuses) to our /hooks/connector, created
  // when missing (idempotent); in the background: a failure is logged, the worker runs on, and the
  // next start tries again (docs/providers.md "Unipile").
  if (config.connector.provider === 'unipile') {
    const unipile = unipileConnectorOf(providers.connector);
    if (unipile)
      unipile
        .ensureWebhooks()
        .then((r) =>
          logger.info(
            { request_url: r.requestUrl, created: r.created.length, existing: r.existing.length },
            'Unipile webhooks ensured',
          ),
        )
        .catch((err: unknown) => logger.warn({ err: String(err) }, 'Unipile webhooks not ensured at start-up'));
  }
  // Every connected mailbox is followed (docs/email.md "Receiving"); in the background, and only by the
  // main worker (a test's extra worker on its own queue must not take the syncs there).
  if (config.worker.schedules)
    ensureMailboxSyncs(orm.em.fork(), jobs).catch((err) =>
      logger.warn({ err: String(err) }, 'mailbox syncs not ensured at start-up'),
    );
  // The outbox dispatcher of outbound webhook events runs beside the worker (see webhook-dispatcher.ts).
  // WEBHOOK_DISPATCHER=off runs a worker without it (e.g. a second worker on its own task queue in a test,
  // which must not claim events that the main worker's queue should run). It starts eagerly (ownClient).
  const dispatcher = !config.worker.webhookDispatcher
    ? undefined
    : await startWebhookDispatcher({
        databaseUrl: config.databaseUrl,
        temporal: ownClient,
        taskQueue: config.temporal.taskQueue,
        logger,
        eagerStart: true,
        // Latency against Temporal load: a shorter pass interval delivers sooner in smaller batches.
        coalesceMs: config.worker.webhookDispatchCoalesceMs,
      });
  // The mailbox-session service follows this worker's share of the connected mailboxes, each in one
  // IDLE session (see mailbox-sessions.ts); MAILBOX_SESSIONS=off runs a worker without it.
  const ms = config.worker.mailboxSessions;
  const mailboxSessions = !ms.enabled
    ? undefined
    : await startMailboxSessions({
        orm,
        databaseUrl: config.databaseUrl,
        fleet: config.temporal.taskQueue,
        unassigned: ms.unassigned,
        refusalGraceMs: ms.refusalGraceMs,
        jobs,
        mailbox: providers.mailbox,
        logger,
        maxSessions: ms.max,
        tickMs: ms.tickMs,
        gate: { concurrency: ms.loginConcurrency, perSecond: ms.loginsPerSecond },
      });
  return {
    worker,
    dispatcher,
    mailboxSessions,
    async close() {
      await mailboxSessions?.stop();
      await dispatcher?.stop();
      await client.connection.close();
      await connection.close();
      await providers.close();
      redis.disconnect();
      await orm.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  logUnhandledRejections(); // a dependency outage must not end the process (docs/deploy.md)
  const { worker, close } = await createWorker();
  const config = loadConfig();
  // Only the process serves /metrics (a worker made in a test or a benchmark does not). A port in use
  // costs the metrics, not the worker's work: logged as an error, and the worker runs on.
  const metrics =
    config.worker.metricsPort === 0
      ? undefined
      : await startMetricsServer({ host: config.worker.metricsHost, port: config.worker.metricsPort, config }).catch(
          (err: unknown) => {
            logger.error(
              { err: String(err), port: config.worker.metricsPort },
              'worker metrics not served (WORKER_METRICS_PORT)',
            );
            return undefined;
          },
        );
  logger.info(
    { taskQueue: config.temporal.taskQueue, workflows: workflowSource, metrics: metrics && `${metrics.url}/metrics` },
    'worker polling',
  );
  await worker.run(); // returns after SIGINT/SIGTERM, once in-flight tasks finish
  await metrics?.close();
  await close();
}
