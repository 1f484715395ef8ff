// The outbox dispatcher: turns each committed `webhook_events` row into the workflow
// `webhook-event:<eventId>`, exactly once in effect.
//
// - Woken by `NOTIFY webhook_events` (sent by emitEvent, delivered at commit), with a periodic sweep
//   as the fallback for missed notifications, reconnects and rows left by a crash.
// - Claims rows with `FOR UPDATE SKIP LOCKED`, so several worker processes can run it side by side.
// - Starts the workflow, then marks the row dispatched in the same transaction that holds the lock.
//   A crash between start and commit leaves the row pending; the next pass starts it again and
//   Temporal answers "already started", which counts as success: no event is lost or doubled.
import pg from 'pg';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Logger } from '../lib/logger.js';
import { WEBHOOK_EVENTS_CHANNEL } from '../domain/webhook-events.js';
import { webhookWorkflowIds } from '../workflows/ids.js';
import { jobSearchAttributes } from '../workflows/search-attributes.js';

export interface DispatcherOptions {
  databaseUrl: string;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
  sweepMs?: number;
  batchSize?: number;
  /** Ask for eager workflow start (needs `temporal` over the worker's NativeConnection). */
  eagerStart?: boolean;
}

export interface Dispatcher {
  /** Runs a pass now (also used by tests). Resolves when the pass is done. */
  kick(): Promise<void>;
  stop(): Promise<void>;
}

export async function startWebhookDispatcher(opts: DispatcherOptions): Promise<Dispatcher> {
  const sweepMs = opts.sweepMs ?? 5_000;
  const batchSize = opts.batchSize ?? 100;
  const log = opts.logger.child({ component: 'webhook-dispatcher' });
  // A pool (of one) rather than a bare client: a connection that breaks is replaced on the next pass.
  const db = new pg.Pool({ connectionString: opts.databaseUrl, max: 1 });
  let listener: pg.Client | undefined;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;

  db.on('error', (err) => log.error({ err: String(err) }, 'dispatcher connection error'));

  async function startWorkflow(row: { id: string; workspace_id: string; name: string }): Promise<void> {
    try {
      await opts.temporal.workflow.start('deliverWebhookEvent', {
        taskQueue: opts.taskQueue,
        workflowId: webhookWorkflowIds.event(row.id),
        args: [{ eventId: row.id, workspaceId: row.workspace_id }],
        typedSearchAttributes: jobSearchAttributes({ kind: 'webhook-event', workspaceId: row.workspace_id }),
        memo: { event: row.name },
        requestEagerStart: opts.eagerStart,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  /** Claims and dispatches one batch; returns how many rows it handled. */
  async function batch(): Promise<number> {
    const c = await db.connect();
    let broken: Error | undefined;
    try {
      await c.query('begin');
      const { rows } = await c.query<{ id: string; workspace_id: string; name: string }>(
        `select id, workspace_id, name from webhook_events where dispatched_at is null order by id limit $1 for update skip locked`,
        [batchSize],
      );
      if (rows.length) {
        await Promise.all(rows.map(startWorkflow));
        await c.query(`update webhook_events set dispatched_at = now() where id = any($1::uuid[])`, [rows.map((r) => r.id)]);
      }
      await c.query('commit');
      return rows.length;
    } catch (err) {
      await c.query('rollback').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      c.release(broken);
    }
  }

  async function pass(): Promise<void> {
    do {
      again = false;
      try {
        while (!stopped && (await batch()) === batchSize);
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
      return running;
    }
    running = pass().finally(() => {
      running = undefined;
    });
    return running;
  }

  async function listen(): Promise<void> {
    if (stopped) return;
    const c = new pg.Client({ connectionString: opts.databaseUrl });
    const retry = () => {
      c.end().catch(() => {});
      if (listener === c) listener = undefined;
      if (!stopped) setTimeout(() => void listen().catch(retry), 1_000);
    };
    c.on('notification', () => void kick());
    c.on('error', (err) => {
      log.warn({ err: String(err) }, 'LISTEN connection lost; reconnecting (the sweep covers the gap)');
      retry();
    });
    await c.connect();
    await c.query(`listen ${WEBHOOK_EVENTS_CHANNEL}`);
    listener = c;
  }

  await listen();
  const sweep = setInterval(() => void kick(), sweepMs);
  void kick(); // rows left from before this process started
  log.info({ sweepMs }, 'webhook dispatcher started');

  return {
    kick,
    async stop() {
      stopped = true;
      clearInterval(sweep);
      await running?.catch(() => {});
      await listener?.end().catch(() => {});
      await db.end().catch(() => {});
    },
  };
}
