// Discovery runs: the plan of a run (which signal asks which source what), one page of candidates
// processed in one transaction (dedupe → qualify in a batch → store leads and rejections → count),
// and the reads over what runs produced (funnel, rejections, recent runs).
//
// Idempotency: a page is counted by `update discovery_runs … where pages = <page index>`; a retried
// activity finds the page already counted and changes nothing (its inserts are `on conflict do
// nothing` on (agent, dedupe_key)), so counts never double.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { DiscoveryRun, type IDiscoveryRun, type RunStatus } from '../../db/entities/DiscoveryRun.js';
import { DiscoveredLead } from '../../db/entities/DiscoveredLead.js';
import { RejectedProfile } from '../../db/entities/RejectedProfile.js';
import { AgentSignal } from '../../db/entities/AgentSignal.js';
import { AgentSource } from '../../db/entities/AgentSource.js';
import type { IDiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { App } from '../../db/entities/App.js';
import { normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import type { Candidate, SignalQuery } from '../../lib/sources/types.js';
import type { ModelAdapter } from '../../lib/llm/types.js';
import { qualifyCandidate, type IcpInput } from '../../lib/llm/tasks.js';
import { uuidv7 } from '../../lib/ids.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { AppError } from '../errors.js';
import type { Actor } from '../identity.js';
import { requireAgent, SOURCES_FOR_KIND, type SignalKind, type SourceName } from './agents.js';
import { COMPANY_SIZES, SENIORITIES } from '../../lib/sources/types.js';
import { mapLimit } from '../../lib/concurrency.js';
// The port's inputs, declared with the port (domain/jobs.ts) so that the port imports no slice.
import type { PlannedSignal, RunPlan } from '../jobs.js';
export type { PlannedSignal, RunPlan };

/** Qualification score at or above which a candidate is qualified. */
export const QUALIFY_THRESHOLD = 60;
/** Candidates per source page (one activity per page). */
export const PAGE_SIZE = 200;
/** The funnel's qualification cohort: what runs found in the last this-many days. */
export const FUNNEL_WINDOW_DAYS = 30;

const asStrings = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;

/** The ICP qualification reads: the agent's own when it has one, else its product's. */
export function icpOf(agent: IDiscoveryAgent, app: { icpDescription?: string | null; icpFilters?: unknown }): IcpInput {
  const f = ((agent.icpFilters && typeof agent.icpFilters === 'object' && !Array.isArray(agent.icpFilters)
    ? agent.icpFilters
    : app.icpFilters) ?? {}) as Record<string, unknown>;
  return {
    description: agent.icpDescription ?? app.icpDescription ?? null,
    titles: asStrings(f.titles),
    seniorities: asStrings(f.seniorities),
    industries: asStrings(f.industries),
    countries: asStrings(f.countries),
    company_sizes: asStrings(f.company_sizes),
    keywords: asStrings(f.keywords),
  };
}

/** A signal's `filters` as the sources read them (snake_case in the API; see signalQueryOf). */
export const SignalFiltersInput = z
  .object({
    titles: z.array(z.string().trim().min(1).max(200)).max(50).optional(),
    seniorities: z.array(z.enum(SENIORITIES)).max(SENIORITIES.length).optional(),
    industries: z.array(z.string().trim().min(1).max(200)).max(50).optional(),
    countries: z
      .array(z.string().regex(/^[A-Za-z]{2}$/))
      .max(250)
      .optional(),
    company_sizes: z.array(z.enum(COMPANY_SIZES)).max(COMPANY_SIZES.length).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

/**
 * The query a signal sends to its sources, the same for runs and previews: its keywords, its
 * filters when they are source filters (stored filters are free-form JSON; anything else is ignored,
 * as before), and the agent's require_current_employer.
 */
export function signalQueryOf(
  agent: Pick<IDiscoveryAgent, 'requireCurrentEmployer'>,
  signal: { kind: SignalKind; keywords: string[]; filters?: unknown },
): SignalQuery {
  const f = SignalFiltersInput.safeParse(signal.filters ?? {});
  const { company_sizes, ...rest } = f.success ? f.data : {};
  return {
    kind: signal.kind,
    keywords: signal.keywords.length ? signal.keywords.slice(0, 50) : undefined,
    filters: {
      ...rest,
      ...(company_sizes ? { companySizes: company_sizes } : {}),
      ...(agent.requireCurrentEmployer ? { currentEmployerOnly: true } : {}),
    },
  };
}

/**
 * What a run will do: the agent's enabled signals (or the one launched), each with the enabled
 * sources that serve its kind. 400 `no_enabled_source` when nothing could be searched. `runId`: a
 * scheduled run's id, or a manual launch's launch id (createRun then replaces it with the run's id).
 */
export async function planRun(
  em: EntityManager,
  actor: Actor,
  agentId: string,
  runId: string,
  signalId?: string,
): Promise<RunPlan> {
  const agent = await requireAgent(em, actor, agentId);
  if (agent.status === 'archived')
    throw new AppError(409, 'agent_archived', 'an archived agent does not run; restore it (status paused) first');
  const app = await em.findOneOrFail(App, agent.app.id);
  const signals = await em.find(
    AgentSignal,
    { agent: agent.id, enabled: true, ...(signalId ? { id: signalId } : {}) },
    { orderBy: { position: 'asc', id: 'asc' } },
  );
  if (signalId && signals.length === 0)
    throw new AppError(404, 'not_found', 'signal not found (or disabled) on this agent');
  const enabled = new Set(
    (await em.find(AgentSource, { agent: agent.id, enabled: true })).map((s) => s.source as SourceName),
  );
  const icp = icpOf(agent, app);
  const planned = signals
    .map((s) => ({
      key: s.key,
      kind: s.kind as SignalKind,
      sources: SOURCES_FOR_KIND[s.kind as SignalKind].filter((src) => enabled.has(src)),
      query: signalQueryOf(agent, { kind: s.kind as SignalKind, keywords: s.keywords, filters: s.filters }),
    }))
    .filter((s) => s.sources.length > 0);
  if (planned.length === 0)
    throw new AppError(
      400,
      'no_enabled_source',
      'enable a source that serves this agent’s signals (PUT /api/agents/{agentId}/sources/{source})',
    );
  return {
    runId,
    agentId: agent.id,
    workspaceId: actor.workspaceId,
    appId: agent.app.id,
    signals: planned,
    maxSignals: agent.maxSignals ?? null,
    icp,
    requireCurrentEmployer: agent.requireCurrentEmployer,
  };
}

/**
 * Creates the run row for a launch; a repeated launch id finds the existing one (`created: false`).
 * A manual launch's `plan.runId` is the client's launch id, scoped to the workspace: the run gets an
 * id of its own and `plan.runId` is set to it (so the caller starts that run's workflow); the same
 * launch id for another agent of the workspace is 409 `launch_id_in_use`. Another workspace's launch
 * ids are never seen. A scheduled run's id is its own (the schedule's workflow chose it).
 */
export async function createRun(
  em: EntityManager,
  plan: RunPlan,
  trigger: 'manual' | 'schedule',
): Promise<{ run: IDiscoveryRun; created: boolean }> {
  const launchId = trigger === 'manual' ? plan.runId : null;
  const inserted = await em.getConnection().execute<{ id: string }[]>(
    `insert into discovery_runs (id, workspace_id, app_id, agent_id, launch_id, signal_keys, trigger, status, candidates, qualified, rejected, duplicates, pages, started_at)
       values (?, ?, ?, ?, ?, ?::jsonb, ?, 'running', 0, 0, 0, 0, 0, now()) on conflict do nothing returning id`,
    [
      launchId ? uuidv7() : plan.runId,
      plan.workspaceId,
      plan.appId,
      plan.agentId,
      launchId,
      JSON.stringify(plan.signals.map((s) => s.key)),
      trigger,
    ],
  );
  const run = await em.findOneOrFail(
    DiscoveryRun,
    launchId ? { workspace: plan.workspaceId, launchId } : { id: plan.runId },
    { refresh: true },
  );
  if (run.agent.id !== plan.agentId)
    throw new AppError(409, 'launch_id_in_use', 'this launch id belongs to another agent’s run');
  plan.runId = run.id;
  return { run, created: inserted.length > 0 };
}

/** One person, whichever piece of evidence surfaced them: the normalised profile URL, else email, else the source's id. */
export function dedupeKeyOf(c: Candidate): string {
  const url = normaliseProfileUrl(c.profileUrl);
  if (url) return `profile:${url}`;
  const email = normaliseEmail(c.email);
  if (email) return `email:${email}`;
  return `source:${c.source}:${c.externalId}`;
}

export interface PageInput {
  plan: Pick<RunPlan, 'runId' | 'agentId' | 'workspaceId' | 'appId' | 'icp' | 'requireCurrentEmployer' | 'maxSignals'>;
  signalKey: string;
  /** 0-based index of this page in the run (the idempotency key of its counting). */
  pageIndex: number;
  candidates: Candidate[];
}

export interface RunTotals {
  candidates: number;
  qualified: number;
  rejected: number;
  duplicates: number;
  pages: number;
}

const totalsOf = (r: IDiscoveryRun): RunTotals => ({
  candidates: r.candidates,
  qualified: r.qualified,
  rejected: r.rejected,
  duplicates: r.duplicates,
  pages: r.pages,
});

const clip = (s: string | null | undefined, n: number) => (s == null ? null : s.slice(0, n));

/**
 * The dedupe keys among `keys` that the workspace already has: this agent's discovered leads and
 * rejections, and the workspace's contacts (by normalised email or profile URL).
 */
export async function knownKeys(
  em: EntityManager,
  scope: { agentId: string; workspaceId: string },
  keys: string[],
): Promise<Set<string>> {
  const known = new Set<string>();
  if (!keys.length) return known;
  const emails = keys.filter((k) => k.startsWith('email:')).map((k) => k.slice(6));
  const urls = keys.filter((k) => k.startsWith('profile:')).map((k) => k.slice(8));
  const rows = await em.getConnection().execute<{ k: string }[]>(
    `select dedupe_key as k from discovered_leads where agent_id = ? and dedupe_key in (?)
     union all select dedupe_key from rejected_profiles where agent_id = ? and dedupe_key in (?)
     ${emails.length ? `union all select 'email:' || email_normalised from contacts where workspace_id = ? and email_normalised in (?)` : ''}
     ${urls.length ? `union all select 'profile:' || profile_url_normalised from contacts where workspace_id = ? and profile_url_normalised in (?)` : ''}`,
    [
      scope.agentId,
      keys,
      scope.agentId,
      keys,
      ...(emails.length ? [scope.workspaceId, emails] : []),
      ...(urls.length ? [scope.workspaceId, urls] : []),
    ],
  );
  for (const r of rows) known.add(r.k);
  return known;
}

export interface Judgement {
  score: number;
  qualified: boolean;
  /** `<field>: <detail>` lines. */
  reasons: string[];
  /** The first failed check (the rejection's grouping reason), or `score`. */
  primary: string;
}

/** Qualifies one candidate against the ICP; a former employer fails require_current_employer without a model call. */
export async function judgeCandidate(
  llm: ModelAdapter,
  rules: { icp: IcpInput; requireCurrentEmployer: boolean },
  c: Candidate,
  signal?: AbortSignal,
): Promise<Judgement> {
  if (rules.requireCurrentEmployer && c.currentEmployer === false) {
    return {
      score: 0,
      qualified: false,
      reasons: ['current employer: the company is a former employer'],
      primary: 'former_employer',
    };
  }
  const { value } = await qualifyCandidate(
    llm,
    {
      icp: rules.icp,
      threshold: QUALIFY_THRESHOLD,
      candidate: {
        name: c.fullName,
        title: c.title,
        seniority: c.seniority,
        company: c.company?.name ?? null,
        industry: c.company?.industry ?? null,
        country: c.country,
        company_size: c.company?.size ?? null,
        headline: c.headline,
        text: c.evidence.text,
      },
    },
    signal ? { signal } : {},
  );
  const failed = value.reasons.find((r) => !r.matched);
  return {
    score: value.score,
    qualified: value.verdict === 'qualified',
    reasons: value.reasons.map((r) => `${r.field}: ${r.detail}`),
    primary: failed?.field ?? 'score',
  };
}

/** The discovered-lead columns for a candidate (a run's qualified one, or a promoted rejection). */
export function leadColumnsOf(c: Candidate, dedupeKey: string) {
  return {
    evidenceKey: c.signalKey.slice(0, 64),
    source: c.source,
    externalId: c.externalId.slice(0, 200),
    dedupeKey: dedupeKey.slice(0, 2048),
    profileUrl: clip(c.profileUrl, 2048),
    email: clip(c.email, 320),
    fullName: c.fullName.slice(0, 400),
    firstName: clip(c.firstName, 200),
    lastName: clip(c.lastName, 200),
    title: clip(c.title, 300),
    headline: clip(c.headline, 300),
    company: clip(c.company?.name, 300),
    companyDomain: clip(c.company?.domain, 255),
    country: clip(c.country, 100),
    evidence: c.evidence as unknown as Record<string, unknown>,
  };
}

/**
 * Processes one page of candidates: drops people the workspace already has (contacts, or this
 * agent's discovered leads and rejections), qualifies the rest against the ICP (concurrently; a
 * former employer fails `require_current_employer` without a model call), stores qualified ones as
 * discovered leads (up to what `max_signals` leaves) and the others as rejected profiles, and counts
 * the page — all in one transaction. Returns the run's totals after the page.
 */
export async function processPage(em: EntityManager, llm: ModelAdapter, input: PageInput): Promise<RunTotals> {
  const { plan } = input;
  // Within the page, the first piece of evidence about a person wins.
  const byKey = new Map<string, Candidate>();
  for (const c of input.candidates) {
    const k = dedupeKeyOf(c);
    if (!byKey.has(k)) byKey.set(k, c);
  }
  const keys = [...byKey.keys()];
  const known = await knownKeys(em, plan, keys);
  const fresh = keys.filter((k) => !known.has(k));

  const verdicts = await mapLimit(fresh, 8, async (key) => ({
    key,
    c: byKey.get(key)!,
    ...(await judgeCandidate(llm, plan, byKey.get(key)!)),
  }));

  return em.transactional(async (tx) => {
    const run = await tx.findOneOrFail(DiscoveryRun, { id: plan.runId }, { refresh: true });
    if (run.pages !== input.pageIndex) return totalsOf(run); // already counted (a retried activity)
    const budget = plan.maxSignals == null ? Infinity : Math.max(0, plan.maxSignals - run.qualified);
    const toLeads = verdicts.filter((v) => v.qualified).slice(0, budget === Infinity ? undefined : budget);
    const toRejections = verdicts.filter((v) => !v.qualified);
    const now = new Date();
    // Columns every row of this page shares; a person already stored for the agent is skipped.
    const base = () => ({
      id: uuidv7(),
      workspace: plan.workspaceId,
      app: plan.appId,
      agent: plan.agentId,
      runId: plan.runId,
      signalKey: input.signalKey,
    });
    const qualified = await insertNew(
      tx,
      DiscoveredLead,
      toLeads.map((v) => ({
        ...base(),
        ...leadColumnsOf(v.c, v.key),
        score: v.score,
        reasons: v.reasons,
        status: 'new',
        promoted: false,
        createdAt: now,
        updatedAt: now,
      })),
    );
    const rejected = await insertNew(
      tx,
      RejectedProfile,
      toRejections.map((v) => ({
        ...base(),
        dedupeKey: v.key.slice(0, 2048),
        candidate: v.c as unknown as Record<string, unknown>,
        score: v.score,
        primaryReason: v.primary.slice(0, 100),
        reasons: v.reasons,
        createdAt: now,
      })),
    );
    // Qualified beyond the max_signals budget are neither stored nor counted as evaluated.
    const overBudget = verdicts.filter((v) => v.qualified).length - toLeads.length;
    const evaluated = input.candidates.length - overBudget;
    // tx.execute, not getConnection().execute: the counts commit with the rows they count.
    await tx.execute(
      `update discovery_runs set candidates = candidates + ?, qualified = qualified + ?, rejected = rejected + ?, duplicates = duplicates + ?, pages = pages + 1 where id = ? and pages = ?`,
      [evaluated, qualified, rejected, evaluated - qualified - rejected, plan.runId, input.pageIndex],
      'run',
    );
    return totalsOf(await tx.findOneOrFail(DiscoveryRun, { id: plan.runId }, { refresh: true }));
  });
}

/** Bulk insert that skips people already stored for the agent (unique agent + dedupe key); returns how many were new. */
async function insertNew(
  tx: EntityManager,
  entity: typeof DiscoveredLead | typeof RejectedProfile,
  rows: object[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const res = await tx
    .createQueryBuilder(entity as typeof DiscoveredLead)
    .insert(rows as never)
    .onConflict(['agent', 'dedupe_key'])
    .ignore()
    .execute('run');
  return (res as { affectedRows?: number }).affectedRows ?? 0;
}

/** Marks a run finished (idempotent: a finished run keeps its first outcome). */
export async function finishRun(
  em: EntityManager,
  runId: string,
  status: Exclude<RunStatus, 'running'>,
  error?: string,
): Promise<RunTotals> {
  await em
    .getConnection()
    .execute(
      `update discovery_runs set status = ?, error = ?, finished_at = now() where id = ? and status = 'running'`,
      [status, error?.slice(0, 2000) ?? null, runId],
      'run',
    );
  return totalsOf(await em.findOneOrFail(DiscoveryRun, { id: runId }, { refresh: true }));
}

// ---------------------------------------------------------------------------------------------
// Reads

export async function getRun(em: EntityManager, actor: Actor, runId: string): Promise<IDiscoveryRun> {
  const run = await em.findOne(DiscoveryRun, { id: runId, workspace: actor.workspaceId });
  if (!run) throw new AppError(404, 'not_found', 'run not found');
  return run;
}

/** Latest runs of the effective workspace (products the actor may access), newest first. */
export function recentRuns(em: EntityManager, actor: Actor, page: PageRequest): Promise<IDiscoveryRun[]> {
  const k = keyset(page, 'desc');
  return em.find(
    DiscoveryRun,
    { workspace: actor.workspaceId, ...(actor.allApps ? {} : { app: { $in: actor.appIds } }), ...k.where },
    { ...k.options, populate: ['agent'] },
  );
}

export interface Funnel {
  window_days: number;
  since: string;
  cohort: {
    candidates: number;
    qualified: number;
    rejected: number;
    pending: number;
    duplicates: number;
    runs: number;
  };
  review: { new: number; approved: number; rejected: number };
  current: { discovered_leads: number; list_leads: number; in_campaigns: number };
  by_signal: { signal_key: string; qualified: number; rejected: number }[];
}

/**
 * The agent's funnel. The cohort is what runs started in the last FUNNEL_WINDOW_DAYS evaluated:
 * candidates = qualified + rejected + pending (pending: counted by a run but not yet stored, i.e. a
 * page in flight), with people already known counted apart as duplicates. `current` are today's
 * totals (all time), never mixed with the cohort. Ownership is checked before any aggregate.
 */
export async function funnel(em: EntityManager, actor: Actor, agentId: string, now = new Date()): Promise<Funnel> {
  const agent = await requireAgent(em, actor, agentId);
  try {
    return await funnelOf(em, agent, now);
  } catch (err) {
    // The spec's code for a failed aggregate read (ownership was checked above).
    if (err instanceof AppError) throw err;
    throw new AppError(500, 'db_error', 'failed to fetch discovery results');
  }
}

async function funnelOf(em: EntityManager, agent: IDiscoveryAgent, now: Date): Promise<Funnel> {
  const since = new Date(now.getTime() - FUNNEL_WINDOW_DAYS * 86_400_000);
  const conn = em.getConnection();
  const [runs] = await conn.execute<
    { runs: string; candidates: string; qualified: string; rejected: string; duplicates: string }[]
  >(
    `select count(*) as runs, coalesce(sum(candidates), 0) as candidates, coalesce(sum(qualified), 0) as qualified, coalesce(sum(rejected), 0) as rejected, coalesce(sum(duplicates), 0) as duplicates
     from discovery_runs where agent_id = ? and started_at >= ?`,
    [agent.id, since],
  );
  const review = await conn.execute<{ status: string; n: string }[]>(
    `select status, count(*) as n from discovered_leads where agent_id = ? and created_at >= ? group by status`,
    [agent.id, since],
  );
  const bySignal = await conn.execute<{ signal_key: string; qualified: string; rejected: string }[]>(
    `select signal_key, sum(q) as qualified, sum(r) as rejected from (
       select signal_key, 1 as q, 0 as r from discovered_leads where agent_id = ? and created_at >= ?
       union all select signal_key, 0, 1 from rejected_profiles where agent_id = ? and created_at >= ?) x group by signal_key order by signal_key`,
    [agent.id, since, agent.id, since],
  );
  const [current] = await conn.execute<{ discovered: string; list_leads: string }[]>(
    `select (select count(*) from discovered_leads where agent_id = ?) as discovered,
            (select count(*) from leads where list_id = ?) as list_leads`,
    [agent.id, agent.list?.id ?? null],
  );
  const n = (v: string | number | undefined) => Number(v ?? 0);
  const qualified = n(runs.qualified);
  const rejected = n(runs.rejected);
  const candidates = n(runs.candidates) - n(runs.duplicates);
  const statuses = new Map(review.map((r) => [r.status, n(r.n)]));
  return {
    window_days: FUNNEL_WINDOW_DAYS,
    since: since.toISOString(),
    cohort: {
      candidates,
      qualified,
      rejected,
      pending: Math.max(0, candidates - qualified - rejected),
      duplicates: n(runs.duplicates),
      runs: n(runs.runs),
    },
    review: {
      new: statuses.get('new') ?? 0,
      approved: statuses.get('approved') ?? 0,
      rejected: statuses.get('rejected') ?? 0,
    },
    current: { discovered_leads: n(current.discovered), list_leads: n(current.list_leads), in_campaigns: 0 },
    by_signal: bySignal.map((r) => ({ signal_key: r.signal_key, qualified: n(r.qualified), rejected: n(r.rejected) })),
  };
}

/**
 * Rejections of an agent grouped by their first failed check, most frequent first. Reviewed
 * rejections (a person rejected a discovered lead) count under the reviewer's reason
 * (docs/discovered-leads.md).
 */
export async function rejectionBreakdown(
  em: EntityManager,
  actor: Actor,
  agentId: string,
): Promise<{ total: number; reasons: { reason: string; count: number }[] }> {
  const agent = await requireAgent(em, actor, agentId);
  const rows = await em.getConnection().execute<{ reason: string; n: string }[]>(
    `select reason, count(*) as n from (
           select primary_reason as reason from rejected_profiles where agent_id = ? and promoted_at is null
           union all select coalesce(reject_reason, 'rejected') from discovered_leads where agent_id = ? and status = 'rejected'
         ) x group by reason order by count(*) desc, reason`,
    [agent.id, agent.id],
  );
  const reasons = rows.map((r) => ({ reason: r.reason, count: Number(r.n) }));
  return { total: reasons.reduce((s, r) => s + r.count, 0), reasons };
}

export function listRejectedProfiles(em: EntityManager, agentId: string, page: PageRequest & { reason?: string }) {
  const k = keyset(page);
  return em.find(
    RejectedProfile,
    { agent: agentId, promotedAt: null, ...(page.reason ? { primaryReason: page.reason } : {}), ...k.where },
    k.options,
  );
}
