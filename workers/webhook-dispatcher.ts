// The outbox dispatcher: turns committed `webhook_events` rows into delivery workflows, exactly once
// in effect (docs/webhooks.md, "Delivery semantics").
//
// - Woken by `NOTIFY webhook_events` (sent by emitEvent, delivered at commit), with a periodic sweep
//   as the fallback for missed notifications, reconnects and rows left by a crash. Passes woken by
//   notifications are at most one per `coalesceMs` (200 ms; the first after a quiet spell runs at
//   once), so that under load each pass finds many rows: what Temporal costs is per workflow, and a
//   batch carries up to `maxBatchEvents` (100) events.
// - Each pass has two steps, each its own transaction, claiming rows with `FOR UPDATE SKIP LOCKED`
//   so several worker processes can run it side by side:
//   1. assign: up to `claimSize` (500) pending rows without a batch id are claimed and their targets
//      counted (matching active subscriptions; none in demo workspaces). No target: marked
//      dispatched, no workflow at all. At most BATCHED_TARGETS_MAX: the rows of one workspace share a
//      new batch id (UUIDv7), `maxBatchEvents` rows at most per batch.
//      More: the row's batch id is its own id, meaning its own workflow `webhook-event:<id>`. This
//      decision is COMMITTED before any workflow starts, so each event belongs to exactly one
//      workflow, even across a crash or a change of its subscriptions.
//   2. dispatch: the pending rows WITH a batch id (this pass's, and any left by a crash) are claimed,
//      each batch's `webhook-batch:<batchId>` or the event's `webhook-event:<id>` is started, and the
//      rows are marked dispatched in the same transaction that holds their locks. A crash between
//      start and commit leaves them pending with their batch id; the next pass starts the same
//      workflow id again and Temporal answers "already started", which counts as success — also
//      when that run has already completed (REJECT_DUPLICATE: a closed workflow id is never run a
//      second time, which would attempt its deliveries again).
//   Dispatch steps run in the background (up to MAX_DISPATCHES at once, each on its own connection;
//   SKIP LOCKED keeps them apart), so the next assignment never waits for a workflow start: on a
//   loaded Temporal server a start takes from milliseconds to seconds.
import pg from 'pg';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Logger } from '../lib/logger.js';
import { uuidv7 } from '../lib/ids.js';
import { listenTo } from '../lib/pg-listen.js';
import { WEBHOOK_EVENTS_CHANNEL } from '../domain/webhooks/events.js';
import { webhookWorkflowIds } from '../lib/workflow-ids.js';
import { jobSearchAttributes } from '../workflows/search-attributes.js';
import { BATCHED_TARGETS_MAX } from '../workflows/webhooks.js';
import type * as workflows from '../workflows/index.js';

export interface DispatcherOptions {
  databaseUrl: string;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  sweepMs?: number;
  /** Rows claimed per step (default 500): with many workspaces, more rows per workspace and so fewer, larger batches. */
  claimSize?: number;
  /** Events per batch at most (default 100). */
  maxBatchEvents?: number;
  /** Minimum time between two passes woken by notifications (the sweep is not delayed). */
  coalesceMs?: number;
  /** Ask for eager workflow start (needs `temporal` over the worker's NativeConnection). */
  eagerStart?: boolean;
}

/** Dispatch steps (workflow starts) in flight at once. */
const MAX_DISPATCHES = 4;

export interface Dispatcher {
  /** Runs a pass now (also used by tests). Resolves when the pass and the starts it led to are done. */
  kick(): Promise<void>;
  stop(): Promise<void>;
}

interface Row {
  id: string;
  workspace_id: string;
  name: string;
  batch_id: string | null;
}

/** One workflow to start for claimed rows: a batch, or one event's own workflow. */
interface Job {
  kind: 'batch' | 'event';
  id: string; // batch id or event id
  workspaceId: string;
  rows: Row[];
}

export async function startWebhookDispatcher(opts: DispatcherOptions): Promise<Dispatcher> {
  const sweepMs = opts.sweepMs ?? 5_000;
  const claimSize = opts.claimSize ?? 500;
  const maxBatchEvents = opts.maxBatchEvents ?? 100;
  const coalesceMs = opts.coalesceMs ?? 200;
  const log = opts.logger.child({ component: 'webhook-dispatcher' });
  // A pool rather than bare clients: a connection that breaks is replaced on the next pass. One
  // connection for the assignment step, one per dispatch step in flight.
  const db = new pg.Pool({ connectionString: opts.databaseUrl, max: 1 + MAX_DISPATCHES });
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let lastPass = 0;
  let notifyTimer: NodeJS.Timeout | undefined;
  const dispatches = new Set<Promise<void>>();
  let dispatchAgain = false;

  db.on('error', (err) => log.error({ err: String(err) }, 'dispatcher connection error'));

  async function inTransaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await db.connect();
    let broken: Error | undefined;
    // The pool listens for errors on idle clients only: a checked-out one cut between two queries (a
    // PostgreSQL restart while a workflow start is awaited) would otherwise crash the worker.
    const onError = (err: Error) => (broken = err);
    c.on('error', onError);
    try {
      await c.query('begin');
      const result = await fn(c);
      await c.query('commit');
      return result;
    } catch (err) {
      await c.query('rollback').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      c.off('error', onError);
      c.release(broken);
    }
  }

  /** Step 1: decides the workflow of up to claimSize undecided rows and commits it. Returns how many. */
  async function assign(): Promise<number> {
    return inTransaction(async (c) => {
      const { rows } = await c.query<Row>(
        `select id, workspace_id, name from webhook_events where dispatched_at is null and batch_id is null order by id limit $1 for update skip locked`,
        [claimSize],
      );
      if (!rows.length) return 0;
      const pairs = [...new Map(rows.map((r) => [`${r.workspace_id}:${r.name}`, r])).values()];
      const { rows: counts } = await c.query<{ workspace_id: string; name: string; n: number }>(
        `select x.workspace_id, x.name,
                case when coalesce(w.is_demo, true) then 0
                     else (select count(*) from webhook_subscriptions s where s.workspace_id = x.workspace_id and s.active and s.events @> jsonb_build_array(x.name)) end::int as n
           from unnest($1::uuid[], $2::text[]) as x(workspace_id, name) left join workspaces w on w.id = x.workspace_id`,
        [pairs.map((p) => p.workspace_id), pairs.map((p) => p.name)],
      );
      const targets = new Map(counts.map((r) => [`${r.workspace_id}:${r.name}`, r.n]));
      const none: string[] = [];
      const assigned: { id: string; batch: string }[] = [];
      const batchOf = new Map<string, { id: string; events: number }>(); // workspace → its current batch in this step
      for (const r of rows) {
        const n = targets.get(`${r.workspace_id}:${r.name}`) ?? 0;
        if (n === 0) none.push(r.id);
        else if (n > BATCHED_TARGETS_MAX) assigned.push({ id: r.id, batch: r.id });
        else {
          let batch = batchOf.get(r.workspace_id);
          if (!batch || batch.events === maxBatchEvents)
            batchOf.set(r.workspace_id, (batch = { id: uuidv7(), events: 0 }));
          batch.events++;
          assigned.push({ id: r.id, batch: batch.id });
        }
      }
      if (assigned.length)
        await c.query(
          `update webhook_events e set batch_id = v.batch from unnest($1::uuid[], $2::uuid[]) as v(id, batch) where e.id = v.id`,
          [assigned.map((a) => a.id), assigned.map((a) => a.batch)],
        );
      // No target (e.g. reaction.received, which no subscription may list; demo workspaces): nothing
      // to deliver, so no workflow.
      if (none.length)
        await c.query(`update webhook_events set dispatched_at = now() where id = any($1::uuid[])`, [none]);
      return rows.length;
    });
  }

  async function start(job: Job): Promise<void> {
    try {
      if (job.kind === 'batch')
        await opts.temporal.workflow.start<typeof workflows.deliverWebhookEventBatch>('deliverWebhookEventBatch', {
          taskQueue: opts.taskQueue,
          workflowId: webhookWorkflowIds.batch(job.id),
          args: [{ batchId: job.id, workspaceId: job.workspaceId }],
          typedSearchAttributes: jobSearchAttributes({ kind: 'webhook-batch', workspaceId: job.workspaceId }),
          memo: { events: job.rows.length },
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          requestEagerStart: opts.eagerStart,
        });
      else
        await opts.temporal.workflow.start<typeof workflows.deliverWebhookEvent>('deliverWebhookEvent', {
          taskQueue: opts.taskQueue,
          workflowId: webhookWorkflowIds.event(job.id),
          args: [{ eventId: job.id, workspaceId: job.workspaceId }],
          typedSearchAttributes: jobSearchAttributes({ kind: 'webhook-event', workspaceId: job.workspaceId }),
          memo: { event: job.rows[0].name },
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          requestEagerStart: opts.eagerStart,
        });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  /** Step 2: starts the workflows of decided, undispatched rows and marks them. Returns how many rows. */
  async function dispatch(): Promise<number> {
    return inTransaction(async (c) => {
      const { rows } = await c.query<Row>(
        `select id, workspace_id, name, batch_id from webhook_events where dispatched_at is null and batch_id is not null order by id limit $1 for update skip locked`,
        [claimSize],
      );
      if (!rows.length) return 0;
      const jobs = new Map<string, Job>();
      for (const r of rows) {
        const batch = r.batch_id!;
        const job =
          jobs.get(batch) ??
          jobs
            .set(batch, { kind: batch === r.id ? 'event' : 'batch', id: batch, workspaceId: r.workspace_id, rows: [] })
            .get(batch)!;
        job.rows.push(r);
      }
      const outcomes = await Promise.allSettled([...jobs.values()].map(start));
      const started = [...jobs.values()]
        .filter((_, i) => outcomes[i].status === 'fulfilled')
        .flatMap((j) => j.rows.map((r) => r.id));
      if (started.length)
        await c.query(`update webhook_events set dispatched_at = now() where id = any($1::uuid[])`, [started]);
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      // The others stay pending with their batch id: the next pass starts the same ids again.
      if (failed)
        log.error(
          { err: String(failed.reason), failed: outcomes.filter((o) => o.status === 'rejected').length },
          'could not start webhook workflows; retrying at the next pass',
        );
      return rows.length;
    });
  }

  /** Starts a dispatch step in the background (or, when MAX_DISPATCHES run, one more after them). */
  function launchDispatch(): void {
    if (stopped) return;
    if (dispatches.size >= MAX_DISPATCHES) {
      dispatchAgain = true;
      return;
    }
    const p: Promise<void> = dispatch()
      .then(
        (n) => {
          // A full claim: there may be more decided rows waiting.
          if (n === claimSize) dispatchAgain = true;
        },
        (err) => log.error({ err: String(err) }, 'dispatch step failed; retrying at the next pass'),
      )
      .finally(() => {
        dispatches.delete(p);
        if (dispatchAgain) {
          dispatchAgain = false;
          launchDispatch();
        }
      });
    dispatches.add(p);
  }

  /** Resolves once no dispatch step is in flight. */
  async function dispatchesIdle(): Promise<void> {
    while (dispatches.size) await Promise.all([...dispatches]);
  }

  async function pass(): Promise<void> {
    do {
      again = false;
      try {
        for (;;) {
          if (stopped) return;
          lastPass = Date.now();
          const assigned = await assign();
          // Every pass dispatches, even when it assigned nothing: rows left with a batch id by a crash.
          launchDispatch();
          if (assigned < claimSize) break;
        }
      } catch (err) {
        log.error({ err: String(err) }, 'dispatch pass failed; retrying at the next sweep');
        return;
      }
    } while (again && !stopped);
  }

  function kick(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true; // a notification during a pass: run once more after it
      return running.then(dispatchesIdle);
    }
    running = pass().finally(() => {
      running = undefined;
    });
    return running.then(dispatchesIdle);
  }

  /** A notification: a pass now, or once `coalesceMs` has passed since the last one began. */
  function notified(): void {
    if (stopped || notifyTimer) return;
    const wait = lastPass + coalesceMs - Date.now();
    if (wait <= 0 && !running) return void kick();
    notifyTimer = setTimeout(
      () => {
        notifyTimer = undefined;
        void kick();
      },
      Math.max(0, wait),
    );
  }

  const listener = await listenTo(opts.databaseUrl, WEBHOOK_EVENTS_CHANNEL, notified, log);
  const sweep = setInterval(() => void kick(), sweepMs);
  void kick(); // rows left from before this process started
  log.info({ sweepMs, coalesceMs, claimSize, maxBatchEvents }, 'webhook dispatcher started');

  return {
    kick,
    async stop() {
      stopped = true;
      clearInterval(sweep);
      clearTimeout(notifyTimer);
      await running?.catch(() => {});
      await dispatchesIdle();
      await listener.close();
      await db.end().catch(() => {});
    },
  };
}
