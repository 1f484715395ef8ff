// Specialist runs: the record of every AI call (kind, input summary, status, timings, tokens, cost,
// result), written around the model adapter call by runSpecialist, and read by the specialist
// routes of a product (list, one run, activity). See docs/llm.md.
import type { EntityManager } from '@mikro-orm/postgresql';
import { SpecialistRun, type ISpecialistRun, type SpecialistRunStatus } from '../../db/entities/SpecialistRun.js';
import { uuidv7, uuidv7Floor } from '../../lib/ids.js';
import { LlmError, type Usage } from '../../lib/llm/types.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { requireApp } from '../apps/apps.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';

export interface SpecialistContext {
  workspaceId: string;
  appId?: string | null;
  agentId?: string | null;
  /** What the call is for: 'keywords', 'qualify', 'icp', 'chat'… (free text, ≤ 100 chars). */
  kind: string;
  /** The adapter's model (ModelAdapter.model). */
  model: string;
}

export const INPUT_SUMMARY_MAX = 500;
/** Results above this many characters of JSON are stored as a truncated preview. */
export const RESULT_MAX_CHARS = 8000;
const ERROR_MESSAGE_MAX = 1000;

/** At most `max` characters (code points, so no surrogate pair is cut), with an ellipsis when cut. */
function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const cps = [...s];
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join('')}…`;
}

export const summarizeInput = (input: string | object): string =>
  clip(
    (typeof input === 'string' ? input : (JSON.stringify(input) ?? '')).replace(/\s+/g, ' ').trim(),
    INPUT_SUMMARY_MAX,
  );

export function summarizeResult(value: unknown): unknown {
  if (value === undefined) return null;
  const json = JSON.stringify(value);
  return json.length <= RESULT_MAX_CHARS
    ? value
    : { truncated: true, chars: json.length, preview: clip(json, RESULT_MAX_CHARS) };
}

function errorOf(err: unknown): { code: string; message: string } {
  if (err instanceof LlmError || err instanceof AppError)
    return { code: err.code, message: clip(err.message, ERROR_MESSAGE_MAX) };
  return { code: 'internal', message: clip(err instanceof Error ? err.message : String(err), ERROR_MESSAGE_MAX) };
}

/**
 * Runs one AI call and records it: a `running` row first (so a call in flight is visible), then
 * `succeeded` with usage and a result summary, or `failed` with the error code and message; the
 * call's own error is rethrown. Each write is its own statement: no transaction is held open while
 * the model answers (which can take a minute), so `em` must not be inside one.
 */
export async function runSpecialist<T>(
  em: EntityManager,
  ctx: SpecialistContext,
  input: string | object,
  fn: () => Promise<{ value: T; usage: Usage }>,
): Promise<{ value: T; usage: Usage; runId: string }> {
  if (em.isInTransaction())
    throw new Error('runSpecialist must not run inside a transaction (it would hold it open during the model call)');
  const startMs = Date.now();
  const id = uuidv7(startMs);
  const startedAt = new Date(startMs);
  await em.insert(SpecialistRun, {
    id,
    workspace: ctx.workspaceId,
    app: ctx.appId ?? null,
    agentId: ctx.agentId ?? null,
    kind: clip(ctx.kind, 100),
    model: clip(ctx.model, 200),
    inputSummary: summarizeInput(input),
    status: 'running',
    startedAt,
    createdAt: startedAt,
  });
  const t0 = performance.now();
  const finish = (fields: Partial<ISpecialistRun>) =>
    em.nativeUpdate(
      SpecialistRun,
      { id },
      { finishedAt: new Date(), durationMs: Math.round(performance.now() - t0), ...fields },
    );
  let out: { value: T; usage: Usage };
  try {
    out = await fn();
  } catch (err) {
    const e = errorOf(err);
    // The call's error is what the caller needs; a failure to record it must not replace it.
    await finish({ status: 'failed', errorCode: e.code, errorMessage: e.message }).catch(() => undefined);
    throw err;
  }
  await finish({
    status: 'succeeded',
    inputTokens: out.usage.inputTokens,
    outputTokens: out.usage.outputTokens,
    costMicros: out.usage.costMicros,
    result: summarizeResult(out.value),
  });
  return { ...out, runId: id };
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface RunFilter {
  appId?: string;
  agentId?: string;
  kind?: string;
  status?: SpecialistRunStatus;
}

/**
 * Newest first. With `appId`, the runs of that product (404 if it is not the actor's, 403 if the
 * member was not given it); without, the workspace's runs within the products the actor may see.
 */
export async function listSpecialistRuns(
  em: EntityManager,
  actor: Actor,
  filter: RunFilter,
  page: PageRequest,
): Promise<ISpecialistRun[]> {
  const where: Record<string, unknown> = { workspace: actor.workspaceId };
  if (filter.appId) {
    await requireApp(em, actor, filter.appId);
    where.app = filter.appId;
  } else if (!actor.allApps) where.app = { $in: actor.appIds };
  if (filter.agentId) where.agentId = filter.agentId;
  if (filter.kind) where.kind = filter.kind;
  if (filter.status) where.status = filter.status;
  const k = keyset(page, 'desc');
  return em.find(SpecialistRun, { ...where, ...k.where }, k.options);
}

/** One run of a product; another workspace's or product's run is 404 `not_found`. */
export async function getSpecialistRun(
  em: EntityManager,
  actor: Actor,
  appId: string,
  runId: string,
): Promise<ISpecialistRun> {
  await requireApp(em, actor, appId);
  const run = await em.findOne(SpecialistRun, { id: runId, app: appId, workspace: actor.workspaceId });
  if (!run) throw notFound('specialist run');
  return run;
}

export interface ActivityCounts {
  runs: number;
  succeeded: number;
  failed: number;
  running: number;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
}
export interface SpecialistActivity {
  app_id: string;
  days: number;
  /** Start of the first UTC day of the window and the moment it was computed. */
  from: string;
  to: string;
  totals: ActivityCounts;
  by_kind: (ActivityCounts & { kind: string })[];
  /** Every UTC day of the window, oldest first, zeros included. */
  by_day: (ActivityCounts & { day: string })[];
}

export const ACTIVITY_MAX_DAYS = 90;
const DAY_MS = 24 * 3600 * 1000;
const zero = (): ActivityCounts => ({
  runs: 0,
  succeeded: 0,
  failed: 0,
  running: 0,
  input_tokens: 0,
  output_tokens: 0,
  cost_micros: 0,
});
const addInto = (a: ActivityCounts, b: ActivityCounts) => {
  for (const k of Object.keys(a) as (keyof ActivityCounts)[]) a[k] += b[k];
};
/** The smallest UUIDv7 of a moment: the window is an id range on the (app, id) index. */
/** Counts, tokens and cost of a product's runs per kind and per UTC day over the last `days` days (today included). */
export async function specialistActivity(
  em: EntityManager,
  actor: Actor,
  appId: string,
  opts: { days?: number; now?: Date } = {},
): Promise<SpecialistActivity> {
  await requireApp(em, actor, appId);
  const days = Math.min(Math.max(Math.trunc(opts.days ?? 30), 1), ACTIVITY_MAX_DAYS);
  const now = opts.now ?? new Date();
  const fromMs = Math.floor(now.getTime() / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
  const rows = await em.execute<
    {
      kind: string;
      day: string;
      runs: string;
      succeeded: string;
      failed: string;
      running: string;
      input_tokens: string;
      output_tokens: string;
      cost_micros: string;
    }[]
  >(
    `select kind, to_char(started_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as runs,
            count(*) filter (where status = 'succeeded') as succeeded, count(*) filter (where status = 'failed') as failed,
            count(*) filter (where status = 'running') as running, coalesce(sum(input_tokens), 0) as input_tokens,
            coalesce(sum(output_tokens), 0) as output_tokens, coalesce(sum(cost_micros), 0) as cost_micros
       from specialist_runs
      where app_id = ? and workspace_id = ? and id >= ? and started_at <= ?
      group by 1, 2`,
    [appId, actor.workspaceId, uuidv7Floor(fromMs), now],
  );
  const totals = zero();
  const byKind = new Map<string, ActivityCounts>();
  const byDay = new Map<string, ActivityCounts>();
  for (let i = 0; i < days; i++) byDay.set(new Date(fromMs + i * DAY_MS).toISOString().slice(0, 10), zero());
  for (const r of rows) {
    const c: ActivityCounts = {
      runs: Number(r.runs),
      succeeded: Number(r.succeeded),
      failed: Number(r.failed),
      running: Number(r.running),
      input_tokens: Number(r.input_tokens),
      output_tokens: Number(r.output_tokens),
      cost_micros: Number(r.cost_micros),
    };
    addInto(totals, c);
    if (!byKind.has(r.kind)) byKind.set(r.kind, zero());
    addInto(byKind.get(r.kind)!, c);
    const d = byDay.get(r.day);
    if (d) addInto(d, c);
  }
  return {
    app_id: appId,
    days,
    from: new Date(fromMs).toISOString(),
    to: now.toISOString(),
    totals,
    by_kind: [...byKind]
      .sort((a, b) => b[1].runs - a[1].runs || a[0].localeCompare(b[0]))
      .map(([kind, c]) => ({ kind, ...c })),
    by_day: [...byDay].map(([day, c]) => ({ day, ...c })),
  };
}
