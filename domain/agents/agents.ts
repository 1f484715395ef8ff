// Discovery agents of a product: CRUD, the status machine, signals and sources.
//
// Status machine (400 `invalid_transition` for anything else; setting the current status is a no-op):
//   draft    → active | archived
//   active   → paused | archived
//   paused   → active | archived
//   archived → paused            (restore; it does not resume discovery by itself)
// Activating needs at least one enabled signal.
//
// The agent's Temporal Schedule follows its status and interval: every committed change is followed
// by `syncAgentSchedule` through the Jobs port, from whichever process made it (docs/discovery.md,
// "Schedules").
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { App } from '../../db/entities/App.js';
import { AgentSignal, type IAgentSignal } from '../../db/entities/AgentSignal.js';
import { AgentSource, type IAgentSource } from '../../db/entities/AgentSource.js';
import { DiscoveryAgent, type AgentStatus, type IDiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { LeadList } from '../../db/entities/LeadList.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { isUuid } from '../../lib/ids.js';
import { requireApp } from '../apps/apps.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { countAgents, requireActiveSubscription, requireWithinLimit } from '../billing/plans.js';
import type { AgentScheduleState, Jobs } from '../jobs.js';
import { logger } from '../../lib/logger.js';
import { SOURCE_NAMES, type SignalKind, type SourceName } from '../../lib/sources/types.js';

export const TRANSITIONS: Record<AgentStatus, AgentStatus[]> = {
  draft: ['active', 'archived'],
  active: ['paused', 'archived'],
  paused: ['active', 'archived'],
  archived: ['paused'],
};

// Signal kinds and source names are the sources library's (lib/sources/types.ts).
export { SIGNAL_KINDS, type SignalKind, type SourceName } from '../../lib/sources/types.js';
export const SOURCES = SOURCE_NAMES;

export const MAX_SIGNALS_PER_AGENT = 20;

/** Which sources can serve a signal kind. */
export const SOURCES_FOR_KIND: Record<SignalKind, SourceName[]> = {
  post_keywords: ['newsforum'],
  people_search: ['pronet'],
  job_change: ['pronet'],
  hiring: ['pronet'],
  funding: ['pronet'],
  company_event: ['pronet'],
};

export interface AgentInput {
  name?: string | null;
  status?: AgentStatus | null;
  b2b?: boolean | null;
  icp_description?: string | null;
  icp_filters?: unknown;
  config?: unknown;
  list_id?: string | null;
  max_signals?: number | null;
  require_current_employer?: boolean | null;
}

/** Loads an agent of the actor's workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireAgent(
  em: EntityManager,
  actor: Actor,
  agentId: string,
  opts: { lock?: boolean } = {},
): Promise<IDiscoveryAgent> {
  const agent = await em.findOne(
    DiscoveryAgent,
    { id: agentId, workspace: actor.workspaceId },
    opts.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!agent) throw notFound('agent');
  return agent;
}

async function requireListOfApp(
  em: EntityManager,
  actor: Actor,
  appId: string,
  listId: string,
): Promise<{ id: string }> {
  const list = isUuid(listId)
    ? await em.findOne(LeadList, { id: listId, workspace: actor.workspaceId, app: appId })
    : null;
  if (!list) throw new AppError(400, 'invalid_list_id', 'invalid list ID; the list must belong to the agent app');
  return list;
}

export function listAgents(
  em: EntityManager,
  actor: Actor,
  appId: string,
  page: PageRequest & { status?: AgentStatus },
): Promise<IDiscoveryAgent[]> {
  const k = keyset(page);
  return em.find(
    DiscoveryAgent,
    { workspace: actor.workspaceId, app: appId, ...(page.status ? { status: page.status } : {}), ...k.where },
    k.options,
  );
}

export async function createAgent(
  em: EntityManager,
  actor: Actor,
  appId: string,
  input: AgentInput & { name: string },
): Promise<IDiscoveryAgent> {
  const app = await requireApp(em, actor, appId);
  return em.transactional(async (tx) => {
    // The workspace row lock makes count-then-insert safe against concurrent creates.
    const workspace = await tx.findOneOrFail(Workspace, actor.workspaceId, { lockMode: LockMode.PESSIMISTIC_WRITE });
    await requireWithinLimit(tx, actor, 'agents', await countAgents(tx, actor.workspaceId));
    const list = input.list_id ? await requireListOfApp(tx, actor, app.id, input.list_id) : null;
    const agent = tx.create(DiscoveryAgent, {
      workspace,
      app: tx.getReference(App, app.id),
      name: input.name.trim(),
      status: 'draft',
      b2b: input.b2b ?? true,
      icpDescription: input.icp_description ?? null,
      icpFilters: input.icp_filters ?? null,
      config: input.config ?? null,
      list: list ? tx.getReference(LeadList, list.id) : null,
      maxSignals: input.max_signals ?? null,
      requireCurrentEmployer: input.require_current_employer ?? false,
    });
    await tx.flush();
    return agent;
  });
}

export interface AgentChange {
  field: string;
  from: unknown;
  to: unknown;
}

/**
 * Applies a PUT body to an agent (in memory) and returns what changed. `null` clears the nullable
 * fields (icp_description, icp_filters, config, list_id, max_signals) and leaves the ones that always
 * have a value (name, status, b2b, require_current_employer) unchanged.
 */
async function applyUpdate(
  em: EntityManager,
  actor: Actor,
  agent: IDiscoveryAgent,
  input: AgentInput,
): Promise<AgentChange[]> {
  const changes: AgentChange[] = [];
  const set = <K extends keyof IDiscoveryAgent>(field: string, key: K, value: IDiscoveryAgent[K]) => {
    if (JSON.stringify(agent[key] ?? null) === JSON.stringify(value ?? null)) return;
    changes.push({ field, from: agent[key] ?? null, to: value ?? null });
    agent[key] = value;
  };
  if (input.list_id !== undefined) {
    const list = input.list_id === null ? null : await requireListOfApp(em, actor, agent.app.id, input.list_id);
    if ((agent.list?.id ?? null) !== (list?.id ?? null)) {
      changes.push({ field: 'list_id', from: agent.list?.id ?? null, to: list?.id ?? null });
      agent.list = list ? em.getReference(LeadList, list.id, { wrapped: true }) : null;
    }
  }
  const current = agent.status as AgentStatus;
  if (input.status != null && input.status !== current) {
    if (!TRANSITIONS[current].includes(input.status)) {
      throw new AppError(
        400,
        'invalid_transition',
        `an agent cannot go from ${current} to ${input.status}; allowed: ${TRANSITIONS[current].join(', ') || 'none'}`,
      );
    }
    if (input.status === 'active' && (await em.count(AgentSignal, { agent: agent.id, enabled: true })) === 0) {
      throw new AppError(
        400,
        'invalid_transition',
        'an agent needs at least one enabled signal before it can be activated',
      );
    }
    set('status', 'status', input.status);
  }
  if (input.name != null) set('name', 'name', input.name.trim());
  if (input.b2b != null) set('b2b', 'b2b', input.b2b);
  if (input.require_current_employer != null)
    set('require_current_employer', 'requireCurrentEmployer', input.require_current_employer);
  if (input.icp_description !== undefined) set('icp_description', 'icpDescription', input.icp_description);
  if (input.icp_filters !== undefined) set('icp_filters', 'icpFilters', input.icp_filters ?? null);
  if (input.config !== undefined) set('config', 'config', input.config ?? null);
  if (input.max_signals !== undefined) set('max_signals', 'maxSignals', input.max_signals);
  return changes;
}

export type UpdateResult =
  { simulated: false; agent: IDiscoveryAgent } | { simulated: true; agent: IDiscoveryAgent; changes: AgentChange[] };

/**
 * PUT /api/agents/{id}. Needs an active subscription (403 `subscription_required`). In a Demo
 * workspace the same checks run and the would-be result is returned with `simulated: true`; nothing
 * is written (and no subscription is needed to look).
 */
export async function updateAgent(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  agentId: string,
  input: AgentInput,
): Promise<UpdateResult> {
  if (actor.isDemo) {
    const agent = await requireAgent(em, actor, agentId);
    const changes = await applyUpdate(em, actor, agent, input);
    em.clear(); // discard the in-memory changes: a simulation writes nothing
    return { simulated: true, agent, changes };
  }
  await requireAgent(em, actor, agentId); // 404/403 before the subscription check, so ids do not leak plan state
  await requireActiveSubscription(em, actor).catch((err: unknown) => {
    if (err instanceof AppError) throw err;
    // The spec's code for "the workspace's plan could not be read" (a database failure, not a refusal).
    throw new AppError(503, 'workspace_policy_unavailable', 'could not verify the subscription state; try again');
  });
  const result = await em.transactional(async (tx) => {
    const agent = await requireAgent(tx, actor, agentId, { lock: true });
    await applyUpdate(tx, actor, agent, input);
    await tx.flush();
    return { simulated: false as const, agent };
  });
  await syncAgentSchedule(em, jobs, result.agent.id);
  return result;
}

export async function deleteAgent(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  agentId: string,
): Promise<{ simulated: boolean; agent: IDiscoveryAgent }> {
  const agent = await requireAgent(em, actor, agentId);
  if (actor.isDemo) return { simulated: true, agent };
  await em.nativeDelete(DiscoveryAgent, { id: agent.id, workspace: actor.workspaceId });
  await syncAgentSchedule(em, jobs, agent.id);
  return { simulated: false, agent };
}

export const scheduleStateOf = (agent: IDiscoveryAgent): AgentScheduleState => ({
  workspaceId: agent.workspace.id,
  appId: agent.app.id,
  name: agent.name,
  status: agent.status as AgentStatus,
  config: agent.config ?? null,
});

/**
 * Brings the agent's Schedule in step with the agent as committed now, through the Jobs port, in
 * whichever process calls it (the API, or the worker running an Operator tool or a scheduled run).
 * Call it after the change's commit. The agent is read again under a per-agent advisory lock held
 * across the Temporal call, so syncs of one agent run one after another and the last one applies
 * the latest committed state (an older snapshot can never overwrite a newer one). A failure (after
 * the port's own retries of transient errors) is logged and answered false, never raised: the change
 * is committed, and the Schedule converges on the next read of next-launches, the next scheduled run
 * or the next change.
 */
export async function syncAgentSchedule(em: EntityManager, jobs: Jobs, agentId: string): Promise<boolean> {
  try {
    await em.fork().transactional(async (tx) => {
      await tx.execute(`select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`agent-schedule:${agentId}`]);
      const agent = await tx.findOne(DiscoveryAgent, { id: agentId });
      await jobs.syncAgentSchedule(agentId, agent && scheduleStateOf(agent));
    });
    return true;
  } catch (err) {
    logger.warn({ err: String(err), agent: agentId }, 'agent schedule not updated');
    return false;
  }
}

/** Active agents of the effective workspace, in the products the actor may access (bounded by the plan). */
export async function activeAgents(em: EntityManager, actor: Actor): Promise<IDiscoveryAgent[]> {
  return em.find(
    DiscoveryAgent,
    { workspace: actor.workspaceId, status: 'active', ...(actor.allApps ? {} : { app: { $in: actor.appIds } }) },
    { populate: ['app'], orderBy: { updatedAt: 'desc', id: 'desc' }, limit: 200 },
  );
}

// ---------------------------------------------------------------------------------------------
// Signals

export interface SignalInput {
  key?: string;
  kind: SignalKind;
  name: string;
  keywords?: string[];
  filters?: Record<string, unknown> | null;
  enabled?: boolean;
}

export const slug = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100) || 'signal';

export function listSignals(em: EntityManager, agentId: string): Promise<IAgentSignal[]> {
  return em.find(AgentSignal, { agent: agentId }, { orderBy: { position: 'asc', id: 'asc' } });
}

/**
 * Replaces the agent's signals with the given set. A signal keeps its id and `key` when the new set
 * names the same key (discovered leads keep pointing at it); keys default to a slug of the name.
 */
export async function replaceSignals(
  em: EntityManager,
  actor: Actor,
  agentId: string,
  input: SignalInput[],
): Promise<IAgentSignal[]> {
  const keyed = input.map((s) => ({ ...s, key: s.key ?? slug(s.name) }));
  const seen = new Set<string>();
  for (const [i, s] of keyed.entries()) {
    if (seen.has(s.key))
      throw new AppError(400, 'invalid_signal', `signals[${i}]: the key "${s.key}" is used twice`, [
        { path: `signals.${i}.key`, message: 'duplicate key' },
      ]);
    seen.add(s.key);
    if (s.kind === 'post_keywords' && !s.keywords?.length) {
      throw new AppError(400, 'invalid_signal', `signals[${i}]: a post_keywords signal needs at least one keyword`, [
        { path: `signals.${i}.keywords`, message: 'at least one keyword' },
      ]);
    }
  }
  return em.transactional(async (tx) => {
    const agent = await requireAgent(tx, actor, agentId, { lock: true });
    const existing = new Map((await tx.find(AgentSignal, { agent: agent.id })).map((s) => [s.key, s]));
    for (const [position, s] of keyed.entries()) {
      const row =
        existing.get(s.key) ??
        tx.create(AgentSignal, {
          agent: tx.getReference(DiscoveryAgent, agent.id),
          key: s.key,
          kind: s.kind,
          name: s.name,
        });
      row.kind = s.kind;
      row.name = s.name.trim();
      row.keywords = [...new Set((s.keywords ?? []).map((k) => k.trim()).filter(Boolean))];
      row.filters = s.filters ?? null;
      row.enabled = s.enabled ?? true;
      row.position = position;
      existing.delete(s.key);
    }
    for (const gone of existing.values()) tx.remove(gone);
    if (agent.status === 'active' && !keyed.some((s) => s.enabled ?? true)) {
      throw new AppError(
        400,
        'invalid_transition',
        'an active agent needs at least one enabled signal; pause it first',
      );
    }
    await tx.flush();
    return tx.find(AgentSignal, { agent: agent.id }, { orderBy: { position: 'asc', id: 'asc' } });
  });
}

// ---------------------------------------------------------------------------------------------
// Sources

export interface SourceView {
  source: SourceName;
  enabled: boolean;
  config: Record<string, unknown>;
  updated_at: string | null;
}

/** Every source with the agent's settings (a source never configured is listed disabled). */
export async function listSources(em: EntityManager, agentId: string): Promise<SourceView[]> {
  const rows = new Map((await em.find(AgentSource, { agent: agentId })).map((r) => [r.source, r]));
  return SOURCES.map((source) => {
    const r = rows.get(source);
    return {
      source,
      enabled: r?.enabled ?? false,
      config: r?.config ?? {},
      updated_at: r ? r.updatedAt.toISOString() : null,
    };
  });
}

export async function setSource(
  em: EntityManager,
  actor: Actor,
  agentId: string,
  source: SourceName,
  input: { enabled?: boolean; config?: Record<string, unknown> },
): Promise<IAgentSource> {
  return em.transactional(async (tx) => {
    const agent = await requireAgent(tx, actor, agentId, { lock: true });
    const row =
      (await tx.findOne(AgentSource, { agent: agent.id, source })) ??
      tx.create(AgentSource, { agent: tx.getReference(DiscoveryAgent, agent.id), source, enabled: true, config: {} });
    if (input.enabled !== undefined) row.enabled = input.enabled;
    if (input.config !== undefined) row.config = input.config;
    await tx.flush();
    return row;
  });
}
