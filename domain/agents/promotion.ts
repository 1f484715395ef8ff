// Promotion of rejected profiles to discovered leads: one at a time (REST, Operator) or in bulk (the
// `promote-profiles:<agentId>:<operationId>` workflow pages through a selection with promoteBatch).
//
// A bulk operation first *selects* its rows: it writes its id into `promote_operation_id` of every
// not-yet-promoted rejection it names (the latest operation that selected a row wins). The workflow
// then promotes the rows carrying its id, in id order, a batch per activity. Promoting a selected
// row by hand clears the mark (the person, not the operation, promoted it), so the rows carrying an
// operation's id are exactly what it promoted or has still to promote — which is what promote-status
// reads once the workflow is done. See docs/discovery.md, "Preview and promotion".
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DiscoveredLead, type IDiscoveredLead } from '../../db/entities/DiscoveredLead.js';
import { RejectedProfile, type IRejectedProfile } from '../../db/entities/RejectedProfile.js';
import { User } from '../../db/entities/User.js';
import { uuidv7 } from '../../lib/ids.js';
import type { Candidate } from '../../lib/sources/types.js';
import { leadColumnsOf } from './discovery.js';
import { notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { JobStatus, Jobs } from '../jobs.js';
import { requireAgent } from './agents.js';

/** Rows per bulk-promotion activity. */
export const PROMOTE_BATCH = 200;
/** Largest explicit id list a bulk promotion takes. */
export const MAX_PROMOTE_IDS = 1000;

/** How a promoted lead names who promoted it ("promoted by <name or email>"). */
export async function promoterLabel(em: EntityManager, userId: string): Promise<string> {
  const u = await em.findOne(User, userId);
  return (u?.name?.trim() || u?.email || userId).slice(0, 200);
}

/**
 * Inserts the discovered lead for a rejection (status `new`, `promoted: true`, its score and reasons
 * plus "promoted by …") and returns its id. A lead of the same person already there is reused.
 */
async function insertLeads(tx: EntityManager, rows: IRejectedProfile[], by: string): Promise<Map<string, string>> {
  const now = new Date();
  await tx
    .createQueryBuilder(DiscoveredLead)
    .insert(
      rows.map((r) => ({
        id: uuidv7(),
        workspace: r.workspace.id,
        app: r.app.id,
        agent: r.agent.id,
        runId: r.runId ?? null,
        signalKey: r.signalKey,
        ...leadColumnsOf(r.candidate as unknown as Candidate, r.dedupeKey),
        score: r.score,
        reasons: [...r.reasons, `promoted by ${by}`],
        status: 'new',
        promoted: true,
        createdAt: now,
        updatedAt: now,
      })),
    )
    .onConflict(['agent', 'dedupe_key'])
    .ignore()
    .execute('run');
  // Through the EntityManager, so the read runs in this transaction (it sees the rows just inserted).
  const leads = await tx.find(DiscoveredLead, {
    agent: rows[0].agent.id,
    dedupeKey: { $in: rows.map((r) => r.dedupeKey) },
  });
  const byKey = new Map(leads.map((l) => [l.dedupeKey, l.id]));
  return new Map(rows.map((r) => [r.id, byKey.get(r.dedupeKey)!]));
}

/**
 * Promotes one rejected profile of the agent, in one transaction (lead + rejection marked). A
 * profile already promoted returns its lead (`created: false`). Another agent's id is 404.
 */
export async function promoteOne(
  em: EntityManager,
  actor: Actor,
  agentId: string,
  rawId: string,
): Promise<{ lead: IDiscoveredLead; created: boolean }> {
  const agent = await requireAgent(em, actor, agentId);
  const by = await promoterLabel(em, actor.userId);
  return em.transactional(async (tx) => {
    const row = await tx.findOne(
      RejectedProfile,
      { id: rawId, agent: agent.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!row) throw notFound('rejected profile');
    const existing = row.promotedLeadId ? await tx.findOne(DiscoveredLead, row.promotedLeadId) : null;
    if (existing) return { lead: existing, created: false };
    const leadId = (await insertLeads(tx, [row], by)).get(row.id)!;
    row.promotedAt = new Date();
    row.promotedLeadId = leadId;
    row.promoteOperationId = null; // promoted by a person: no longer part of a bulk operation
    await tx.flush();
    return { lead: await tx.findOneOrFail(DiscoveredLead, leadId), created: true };
  });
}

export type PromotionSelection = { ids: string[] } | { reason: string };

/**
 * Selects the rows of a bulk operation (marks them with its id). Returns `total` — the agent's
 * rejections the selection names (for ids: those of this agent, promoted or not; for a reason: the
 * not-yet-promoted ones) — and `skipped`: those already promoted, which the operation leaves alone.
 * Re-running it for the same operation selects the same rows.
 */
export async function selectForPromotion(
  em: EntityManager,
  agentId: string,
  operationId: string,
  selection: PromotionSelection,
): Promise<{ total: number; skipped: number }> {
  const conn = em.getConnection();
  if ('ids' in selection) {
    const ids = [...new Set(selection.ids)];
    if (!ids.length) return { total: 0, skipped: 0 };
    const [r] = await conn.execute<{ total: string; marked: string }[]>(
      `with sel as (select id, promoted_at from rejected_profiles where agent_id = ? and id in (?)),
            marked as (update rejected_profiles r set promote_operation_id = ? from sel where r.id = sel.id and sel.promoted_at is null returning r.id)
       select (select count(*) from sel) as total, (select count(*) from marked) as marked`,
      [agentId, ids, operationId],
    );
    return { total: Number(r.total), skipped: Number(r.total) - Number(r.marked) };
  }
  const [r] = await conn.execute<{ marked: string }[]>(
    `with marked as (update rejected_profiles set promote_operation_id = ? where agent_id = ? and promoted_at is null and primary_reason = ? returning id)
     select count(*) as marked from marked`,
    [operationId, agentId, selection.reason],
  );
  return { total: Number(r.marked), skipped: 0 };
}

export interface BatchInput {
  agentId: string;
  operationId: string;
  /** Who started the operation, for the lead's "promoted by" reason. */
  by: string;
  /** The last row id of the previous batch. */
  after: string | null;
  limit: number;
}

export interface BatchOutcome {
  /** Rows of this batch now promoted by the operation (a retried batch counts its own earlier work again, once). */
  promoted: number;
  /** Rows read: fewer than `limit` means the selection is exhausted. */
  count: number;
  last: string | null;
}

/**
 * Promotes the next batch of an operation's rows (after `after`, in id order) in one transaction.
 * Idempotent: a row the operation already promoted (a retried activity) is counted, not promoted
 * again; rows promoted by hand meanwhile no longer carry the operation's id and are not read.
 */
export async function promoteBatch(em: EntityManager, input: BatchInput): Promise<BatchOutcome> {
  return em.transactional(async (tx) => {
    const rows = await tx.find(
      RejectedProfile,
      {
        agent: input.agentId,
        promoteOperationId: input.operationId,
        ...(input.after ? { id: { $gt: input.after } } : {}),
      },
      { orderBy: { id: 'asc' }, limit: input.limit, lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const todo = rows.filter((r) => !r.promotedAt);
    if (todo.length) {
      const leads = await insertLeads(tx, todo, input.by);
      const now = new Date();
      for (const r of todo) {
        r.promotedAt = now;
        r.promotedLeadId = leads.get(r.id)!;
      }
      await tx.flush();
    }
    return { promoted: rows.length, count: rows.length, last: rows.at(-1)?.id ?? null };
  });
}

/** One rejected profile of the agent (promoted or not): 404 for another agent's or workspace's. */
export async function requireRejectedProfile(
  em: EntityManager,
  actor: Actor,
  agentId: string,
  rawId: string,
): Promise<IRejectedProfile> {
  const agent = await requireAgent(em, actor, agentId);
  const row = await em.findOne(RejectedProfile, { id: rawId, agent: agent.id });
  if (!row) throw notFound('rejected profile');
  return row;
}

/** What the rows say about an operation: how many it selected (still carrying its id) and how many of those are promoted. */
export async function operationRowCounts(
  em: EntityManager,
  agentId: string,
  operationId: string,
): Promise<{ selected: number; promoted: number }> {
  const [r] = await em
    .getConnection()
    .execute<{ selected: string; promoted: string }[]>(
      `select count(*) as selected, count(promoted_at) as promoted from rejected_profiles where agent_id = ? and promote_operation_id = ?`,
      [agentId, operationId],
    );
  return { selected: Number(r.selected), promoted: Number(r.promoted) };
}

export interface PromotionState {
  exists: boolean;
  status: JobStatus;
  /** The total its start recorded (memo); null when Temporal no longer has it. */
  total: number | null;
  /** Live figures from its `progress` query while it runs; null when no worker answers. */
  progress: { total: number; promoted: number; skipped: number } | null;
}

/** The bulk promotion's workflow as Temporal knows it (`exists: false` when it does not), with its progress while it runs. */
export async function promotionState(jobs: Jobs, agentId: string, operationId: string): Promise<PromotionState> {
  const key = { agentId, operationId };
  const d = await jobs.describe('promote-profiles', key);
  const progress = d.status === 'running' ? await jobs.query('promote-profiles', key, 'progress') : null;
  return {
    exists: d.exists,
    status: d.status,
    total: typeof d.memo.total === 'number' ? d.memo.total : null,
    progress,
  };
}
