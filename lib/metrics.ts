// Prometheus metrics: every definition lives here (docs/metrics.md says which process exports which).
// Labels are bounded enums only — never ids or free text — so that the exposition stays small
// whatever the data: a value outside its enum is counted as `other`.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { safeEqual } from './crypto.js';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** `value` when it is one of `allowed`, else `other`: the guard that keeps a label bounded. */
function bounded<T extends string>(value: string, allowed: readonly T[]): T | 'other' {
  return (allowed as readonly string[]).includes(value) ? (value as T) : 'other';
}

/** Every combination of the labels at 0, so that rate() and ratios see the series from the first scrape. */
function zero<L extends string>(metric: Counter<L>, labels: Record<L, readonly string[]>): void {
  let combos: Record<string, string>[] = [{}];
  for (const [name, values] of Object.entries(labels) as [string, readonly string[]][])
    combos = combos.flatMap((c) => values.map((v) => ({ ...c, [name]: v })));
  for (const c of combos) metric.inc(c as Partial<Record<L, string>>, 0);
}

// ---------------------------------------------------------------------------------------------
// HTTP (the API process). Latency by operation only (the operationId implies the method) with four
// buckets, and a separate count by status class: per operation 7 histogram lines + 4 classes,
// instead of 14 lines × every method and status seen (1.84 MB at 276 operations).

export const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'API request latency by operation (operationId; `unmatched` for unknown routes)',
  labelNames: ['operation'] as const,
  buckets: [0.05, 0.25, 1, 5],
  registers: [registry],
});

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'API requests by operation and status class (2xx, 3xx, 4xx, 5xx)',
  labelNames: ['operation', 'status_class'] as const,
  registers: [registry],
});

export const authLookups = new Counter({
  name: 'auth_credential_lookups_total',
  help: 'Bearer credential resolutions by outcome: hit (cache), miss (one database round trip), failed (401), throttled (429, no database work)',
  labelNames: ['result'] as const,
  registers: [registry],
});

/** The classes a finished request can have (Koa never ends one with a 1xx); anything else is `other`. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export const statusClass = (status: number) => bounded(`${Math.floor(status / 100)}xx`, STATUS_CLASSES);

/** One finished request (api/middleware/access-log.ts). */
export function observeRequest(operation: string, status: number, seconds: number): void {
  httpDuration.observe({ operation }, seconds);
  httpRequests.inc({ operation, status_class: statusClass(status) });
}

// ---------------------------------------------------------------------------------------------
// Sends (the worker: domain/enrollments/executor.ts, at each state change of a send).

export const SEND_CHANNELS = ['email', 'invitation', 'message'] as const;
/** executed: sent; failed: refused for good (connector or data); canceled: the send-time rule stopped the enrollment; held: deferred by it. */
export const SEND_OUTCOMES = ['executed', 'failed', 'canceled', 'held'] as const;

export const sends = new Counter({
  name: 'outreach_sends_total',
  help: 'Campaign sends at the executor by channel and outcome (executed, failed, canceled or held by the send-time rule)',
  labelNames: ['channel', 'outcome'] as const,
  registers: [registry],
});
zero(sends, { channel: SEND_CHANNELS, outcome: SEND_OUTCOMES });

export function countSend(channel: string, outcome: (typeof SEND_OUTCOMES)[number]): void {
  sends.inc({ channel: bounded(channel, SEND_CHANNELS), outcome });
}

// ---------------------------------------------------------------------------------------------
// The governor (domain/governor/governor.ts: requestSlot). `reason` is its RefusalReason enum.

export const governorRefusals = new Counter({
  name: 'outreach_governor_refusals_total',
  help: 'Send slots refused by the governor, by reason (not_connected, throttled, cap_daily, cap_weekly, warmup, outside_hours, gap)',
  labelNames: ['reason'] as const,
  registers: [registry],
});

// ---------------------------------------------------------------------------------------------
// Outbound webhooks (domain/webhooks/webhooks.ts: deliverToSubscription, events of the outbox only).

export const WEBHOOK_OUTCOMES = [
  'success',
  'http_status',
  'timeout',
  'connection_error',
  'blocked_destination',
  'invalid_url',
] as const;

export const webhookDeliveries = new Counter({
  name: 'outreach_webhook_deliveries_total',
  help: 'Outbound webhook delivery attempts by outcome (success, or the error class)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
zero(webhookDeliveries, { outcome: WEBHOOK_OUTCOMES });

export const webhookDeliveryDuration = new Histogram({
  name: 'outreach_webhook_delivery_duration_seconds',
  help: 'Outbound webhook delivery attempt latency (request to response or error)',
  buckets: [0.1, 0.5, 1, 2.5, 10],
  registers: [registry],
});

/** One recorded delivery attempt of an outbox event (a test delivery from the API is not counted). */
export function countWebhookDelivery(r: { success: boolean; errorClass: string | null; durationMs: number }): void {
  webhookDeliveries.inc({ outcome: r.success ? 'success' : bounded(r.errorClass ?? '', WEBHOOK_OUTCOMES) });
  webhookDeliveryDuration.observe(r.durationMs / 1000);
}

// ---------------------------------------------------------------------------------------------
// Mailbox sessions (the worker: workers/mailbox-sessions.ts, docs/deploy.md "Mailbox sessions").

export const MAILBOX_SESSION_STATES = ['following', 'connecting', 'waiting'] as const;

export const mailboxSessions = new Gauge({
  name: 'outreach_mailbox_sessions',
  help: 'Mailboxes this worker holds, by state: following (IDLE or polling), connecting (queued or in a handshake), waiting (backoff after a failure)',
  labelNames: ['state'] as const,
  registers: [registry],
});
for (const state of MAILBOX_SESSION_STATES) mailboxSessions.set({ state }, 0);

export const MAILBOX_LOGIN_OUTCOMES = ['ok', 'failed'] as const;

export const mailboxLogins = new Counter({
  name: 'outreach_mailbox_logins_total',
  help: 'IMAP logins of mailbox sessions by outcome (a steady fleet makes almost none: sessions stay open)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
zero(mailboxLogins, { outcome: MAILBOX_LOGIN_OUTCOMES });

export const mailboxReconnects = new Counter({
  name: 'outreach_mailbox_reconnects_total',
  help: 'Mailbox sessions lost (connection closed, server error) and scheduled to reconnect after a backoff',
  registers: [registry],
});

export const mailboxLeaseChanges = new Counter({
  name: 'outreach_mailbox_lease_changes_total',
  help: 'Mailboxes this worker claimed (claimed) or let go (released: rebalanced, disconnected; lost: claimed by another)',
  labelNames: ['change'] as const,
  registers: [registry],
});
zero(mailboxLeaseChanges, { change: ['claimed', 'released', 'lost'] });

export const mailboxStoreLag = new Histogram({
  name: 'outreach_mailbox_store_lag_seconds',
  help: 'From a message reaching the mailbox (its IMAP internal date) to its being stored by its session',
  buckets: [0.5, 1, 2, 5, 30, 300],
  registers: [registry],
});

// ---------------------------------------------------------------------------------------------
// Temporal (the worker: workers/interceptors.ts). Types are the registered workflow and activity
// names: a fixed set of the code, not of the data.

export const activityFailures = new Counter({
  name: 'outreach_activity_failures_total',
  help: 'Failed activity attempts (each retry counts) by activity type; cancellations excluded',
  labelNames: ['activity'] as const,
  registers: [registry],
});

export const workflowFailures = new Counter({
  name: 'outreach_workflow_failures_total',
  help: 'Workflow executions that ended failed, by workflow type',
  labelNames: ['workflow'] as const,
  registers: [registry],
});

// ---------------------------------------------------------------------------------------------
// List imports (the worker: domain/lists/import-run.ts per committed chunk, imports.ts at the end).

export const IMPORT_ROW_OUTCOMES = ['created', 'updated', 'duplicate', 'invalid'] as const;
export const IMPORT_OUTCOMES = ['completed', 'failed', 'canceled'] as const;

export const importRows = new Counter({
  name: 'outreach_import_rows_total',
  help: 'List import rows committed, by outcome (created, updated, duplicate, invalid)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
zero(importRows, { outcome: IMPORT_ROW_OUTCOMES });

export const importDuration = new Histogram({
  name: 'outreach_import_duration_seconds',
  help: 'List import duration from start to its final state, by outcome',
  labelNames: ['outcome'] as const,
  buckets: [1, 10, 60, 300, 1800],
  registers: [registry],
});

export function countImportRows(counts: Record<(typeof IMPORT_ROW_OUTCOMES)[number], number>): void {
  for (const outcome of IMPORT_ROW_OUTCOMES) if (counts[outcome]) importRows.inc({ outcome }, counts[outcome]);
}

export function observeImport(outcome: string, seconds: number): void {
  importDuration.observe({ outcome: bounded(outcome, IMPORT_OUTCOMES) }, seconds);
}

// ---------------------------------------------------------------------------------------------
// The Operator (domain/operator/turns.ts). `tool` is a name of the tool registry or `unknown` (a
// name the model made up is never a label).

export const operatorTurns = new Counter({
  name: 'outreach_operator_turns_total',
  help: 'Operator turns finished, by outcome (completed, failed)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
zero(operatorTurns, { outcome: ['completed', 'failed'] });

export const operatorToolCalls = new Counter({
  name: 'outreach_operator_tool_calls_total',
  help: 'Operator tool calls run, by tool (registry name, or unknown) and outcome (ok, error)',
  labelNames: ['tool', 'outcome'] as const,
  registers: [registry],
});

// ---------------------------------------------------------------------------------------------
// Credits (domain/billing/credits.ts, once the paying transaction commits).

export const creditsDebited = new Counter({
  name: 'outreach_credits_debited_total',
  help: 'Credits debited from workspaces (committed ledger debits)',
  registers: [registry],
});

// ---------------------------------------------------------------------------------------------
// Gauges read from PostgreSQL when /metrics is scraped (the API process): one cheap query each,
// at most once per DB_GAUGES_TTL_MS whatever the number of scrapers, bounded by a statement timeout.

export const outboxLag = new Gauge({
  name: 'outreach_outbox_lag_seconds',
  help: 'Age of the oldest webhook event not yet dispatched (0 when none)',
  registers: [registry],
});

export const ENROLLMENT_STATUSES = [
  'active',
  'paused',
  'completed',
  'replied',
  'stopped',
  'removed',
  'failed',
] as const;

export const enrollments = new Gauge({
  name: 'outreach_enrollments',
  help: 'Enrollments by status',
  labelNames: ['status'] as const,
  registers: [registry],
});

export const DB_GAUGES_TTL_MS = 10_000;
/** A query against PostgreSQL (the caller's connection), returning rows. */
export type Query = (sql: string) => Promise<Record<string, unknown>[]>;
let dbGaugesAt = 0;

/**
 * Refreshes the database gauges unless they were read within DB_GAUGES_TTL_MS. The oldest pending
 * event is found through the partial index `webhook_events_pending_idx` (ids are UUIDv7, so id order
 * is time order); the enrollment counts are one grouped count, which the caller bounds with a
 * statement timeout (a large table costs one scan per TTL, not per scraper).
 */
export async function refreshDatabaseGauges(query: Query, now = Date.now()): Promise<void> {
  if (now - dbGaugesAt < DB_GAUGES_TTL_MS) return;
  dbGaugesAt = now;
  try {
    await readDatabaseGauges(query);
  } catch (err) {
    dbGaugesAt = 0; // the next scrape tries again
    throw err;
  }
}

async function readDatabaseGauges(query: Query): Promise<void> {
  const [oldest] = (await query(
    `select extract(epoch from now() - created_at) as age from webhook_events where dispatched_at is null order by id limit 1`,
  )) as {
    age: number | string | null;
  }[];
  outboxLag.set(Math.max(0, Number(oldest?.age ?? 0)));
  const rows = (await query(`select status, count(*) as n from enrollments group by status`)) as {
    status: string;
    n: number | string;
  }[];
  const counts = new Map<string, number>(ENROLLMENT_STATUSES.map((s) => [s, 0]));
  for (const r of rows) {
    const s = bounded(r.status, ENROLLMENT_STATUSES);
    counts.set(s, (counts.get(s) ?? 0) + Number(r.n));
  }
  for (const [status, n] of counts) enrollments.set({ status }, n);
}

/** Forgets when the database gauges were read (tests). */
export function resetDatabaseGaugesClock(): void {
  dbGaugesAt = 0;
}

// ---------------------------------------------------------------------------------------------
// Who may read /metrics (the API's GET /metrics and the worker's metrics server).

/**
 * With METRICS_TOKEN set: only a request bearing it. Without one: open in development and tests
 * (`npm start`, `npm test`), closed in production (NODE_ENV=production), where the token is required.
 * Returns null when allowed, else the reason for the 401.
 */
export function metricsAccess(
  config: { production: boolean; metricsToken: string | null },
  authorization: string | undefined,
): string | null {
  const token = config.metricsToken;
  if (!token) return config.production ? 'metrics are closed in production until METRICS_TOKEN is set' : null;
  return safeEqual(authorization ?? '', `Bearer ${token}`) ? null : 'metrics token required';
}
