// A reviewer's approvals and rejections of a company import's people, given directly or as idempotent client events.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CdmState } from '../../db/entities/CdmImport.js';
import type { CdmMemberStatus } from '../../db/entities/CdmImportMember.js';
import { uuidv7 } from '../../lib/ids.js';
import { assertWritable } from '../demo/demo.js';
import { badRequest, conflict } from '../errors.js';
import type { Actor } from '../identity.js';
import {
  lockJob,
  MAX_DECISIONS,
  requireCdmImport,
  requireCdmImportWithCounts,
  texts,
  uuids,
  type JobWithCounts,
} from './job.js';

export const REVIEWABLE: readonly CdmState[] = ['searching', 'ready_for_review'];
export type Decision = 'approve' | 'reject';
export type DecisionResult = 'approved' | 'rejected' | 'unchanged' | 'not_found' | 'invalid_transition';

// ---------------------------------------------------------------------------------------------
// Decisions (the approval route and the events route share this)

export interface DecisionInput {
  jobId: string;
  kind: 'member' | 'company';
  targetId: string;
  decision: Decision;
}

export interface DecisionOutcome {
  result: DecisionResult;
  /** People whose status this decision changed / left as they were (already so, or added). */
  membersChanged: number;
  membersUnchanged: number;
}

/**
 * Applies decisions in order, with a fixed number of statements: lock the jobs (shared: decisions
 * may run side by side, confirm waits), lock the people concerned, work out each decision in memory
 * (a later decision on the same person wins), write the final statuses in one update.
 */
async function applyDecisions(
  tx: EntityManager,
  actor: Actor,
  decisions: DecisionInput[],
  refused: ReadonlySet<string>,
): Promise<DecisionOutcome[]> {
  if (!decisions.length) return [];
  // Imports the access policy refused the caller (another product's) are not found, like unknown ones.
  const jobIds = [...new Set(decisions.map((d) => d.jobId.toLowerCase()))].filter((id) => !refused.has(id));
  const jobs: { id: string; app_id: string; state: CdmState }[] = await tx.execute(
    `select id, app_id, state from cdm_imports where workspace_id = ? and id = any(${uuids}) order by id for share`,
    [actor.workspaceId, JSON.stringify(jobIds)],
  );
  const jobById = new Map(jobs.map((j) => [j.id, j]));
  const visible = [...jobById.keys()];
  const memberIds = decisions.filter((d) => d.kind === 'member').map((d) => d.targetId);
  const companyIds = decisions.filter((d) => d.kind === 'company').map((d) => d.targetId);
  const members: { id: string; job_id: string; company_id: string; status: CdmMemberStatus }[] = visible.length
    ? await tx.execute(
        `select id, job_id, company_id, status from cdm_import_members
         where job_id = any(${uuids}) and (id = any(${uuids}) or company_id = any(${uuids})) order by id for update`,
        [JSON.stringify(visible), JSON.stringify(memberIds), JSON.stringify(companyIds)],
      )
    : [];
  const companies: { id: string; job_id: string }[] =
    visible.length && companyIds.length
      ? await tx.execute(
          `select id, job_id from cdm_import_companies where job_id = any(${uuids}) and id = any(${uuids})`,
          [JSON.stringify(visible), JSON.stringify(companyIds)],
        )
      : [];
  const memberById = new Map(members.map((m) => [m.id, m]));
  const companyById = new Map(companies.map((c) => [c.id, c]));
  const byCompany = new Map<string, string[]>();
  for (const m of members) byCompany.set(m.company_id, [...(byCompany.get(m.company_id) ?? []), m.id]);
  const status = new Map(members.map((m) => [m.id, m.status]));

  const outcomes = decisions.map((d): DecisionOutcome => {
    const none = (result: DecisionResult): DecisionOutcome => ({ result, membersChanged: 0, membersUnchanged: 0 });
    const job = jobById.get(d.jobId);
    if (!job) return none('not_found');
    const target: CdmMemberStatus = d.decision === 'approve' ? 'approved' : 'rejected';
    const ids =
      d.kind === 'member'
        ? memberById.get(d.targetId)?.job_id === d.jobId
          ? [d.targetId]
          : null
        : companyById.get(d.targetId)?.job_id === d.jobId
          ? (byCompany.get(d.targetId) ?? [])
          : null;
    if (!ids) return none('not_found');
    if (!REVIEWABLE.includes(job.state)) return none('invalid_transition');
    // An added person cannot change any more: for one person that is an impossible transition; a
    // company's added people are simply left as they are.
    if (d.kind === 'member' && status.get(d.targetId) === 'added') return none('invalid_transition');
    let changed = 0;
    for (const mid of ids) {
      const cur = status.get(mid);
      if (cur === 'added' || cur === target) continue;
      status.set(mid, target);
      changed++;
    }
    return { result: changed ? target : 'unchanged', membersChanged: changed, membersUnchanged: ids.length - changed };
  });

  const writes = members
    .filter((m) => status.get(m.id) !== m.status)
    .map((m) => ({ id: m.id, status: status.get(m.id) }));
  if (writes.length) {
    await tx.execute(
      `update cdm_import_members m set status = v.status, decided_at = now(), decided_by = ?, updated_at = now()
       from json_to_recordset(?::json) as v(id uuid, status text) where m.id = v.id`,
      [actor.userId, JSON.stringify(writes)],
    );
  }
  return outcomes;
}

export interface ApprovalInput {
  decision: Decision;
  memberIds?: string[];
  companyIds?: string[];
}

export interface ApprovalOutcome {
  job: JobWithCounts;
  results: ({ kind: 'member' | 'company'; id: string } & DecisionOutcome)[];
}

/**
 * Approves or rejects people, by id and/or by company (every person found there who is not added
 * yet). 409 `invalid_transition` unless the job is searching or ready_for_review; per item:
 * approved | rejected | unchanged | not_found | invalid_transition (an added person).
 */
export async function decideCdmImport(
  em: EntityManager,
  actor: Actor,
  id: string,
  input: ApprovalInput,
): Promise<ApprovalOutcome> {
  assertWritable(actor);
  const memberIds = [...new Set(input.memberIds ?? [])];
  const companyIds = [...new Set(input.companyIds ?? [])];
  if (!memberIds.length && !companyIds.length) throw badRequest('invalid_body', 'give member_ids and/or company_ids');
  if (memberIds.length + companyIds.length > MAX_DECISIONS)
    throw badRequest('invalid_body', `at most ${MAX_DECISIONS} ids per request`);
  const job = await requireCdmImport(em, actor, id);
  const items = [
    ...memberIds.map((m) => ({ kind: 'member' as const, id: m })),
    ...companyIds.map((c) => ({ kind: 'company' as const, id: c })),
  ];
  const outcomes = await em.fork().transactional(async (tx) => {
    const locked = (await lockJob(tx, job.id, 'share'))!;
    if (!REVIEWABLE.includes(locked.state))
      throw conflict(
        'invalid_transition',
        `decisions are taken while an import is searching or ready_for_review; this one is ${locked.state}`,
      );
    return applyDecisions(
      tx,
      actor,
      items.map((i) => ({ jobId: job.id, kind: i.kind, targetId: i.id, decision: input.decision })),
      new Set(), // the import is the path's, checked by the router
    );
  });
  return {
    job: await requireCdmImportWithCounts(em.fork(), actor, id),
    results: items.map((i, n) => ({ ...i, ...outcomes[n] })),
  };
}

export const EVENT_TYPES = ['member.approved', 'member.rejected', 'company.approved', 'company.rejected'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface ReviewEvent {
  id: string;
  jobId: string;
  type: EventType;
  targetId: string;
  occurredAt?: string;
}

export interface EventOutcome extends DecisionOutcome {
  id: string;
  jobId: string;
  /** Set when the id was seen before (earlier, or earlier in this batch): what it did then. */
  duplicate: { result: DecisionResult; membersChanged: number; recordedAt: Date } | null;
}

/** Results that refuse an event: it changed nothing and does not keep its id (a later event may use it). */
const REFUSED: ReadonlySet<DecisionResult> = new Set(['not_found', 'invalid_transition']);

/**
 * Records the reviewer's decisions, each under the client's id, scoped to the workspace: an id seen
 * before (in an earlier request, or earlier in this one) is ignored and answered with what it did the
 * first time. The new ones are claimed first (insert … on conflict do nothing), so two requests racing
 * with the same id apply it once; then they are applied in order and their results stored. A refused
 * event (`not_found`: an import or target the caller cannot see; `invalid_transition`) takes nothing:
 * its claim is dropped, so the id stays free — nobody can use up an id by sending it where it fails.
 */
/** `hidden`: the imports the access policy refused the caller (their events are `not_found`). */
export async function recordCdmEvents(
  em: EntityManager,
  actor: Actor,
  events: ReviewEvent[],
  hidden: ReadonlySet<string>,
): Promise<EventOutcome[]> {
  assertWritable(actor);
  if (events.length < 1 || events.length > MAX_DECISIONS)
    throw badRequest('invalid_body', `give 1 to ${MAX_DECISIONS} events`);
  const first = new Map<string, number>();
  events.forEach((e, i) => {
    if (!first.has(e.id)) first.set(e.id, i);
  });
  const firsts = events.filter((e, i) => first.get(e.id) === i);
  return em.fork().transactional(async (tx) => {
    const claimed: { client_id: string }[] = await tx.execute(
      `insert into cdm_import_events (id, workspace_id, client_id, job_id, type, target_id, occurred_at, result, members_changed, user_id, created_at)
       select v.id, ?, v.client_id, v.job_id, v.type, v.target_id, v.occurred_at, 'pending', 0, ?, now()
       from json_to_recordset(?::json) as v(id uuid, client_id text, job_id uuid, type text, target_id uuid, occurred_at text)
       on conflict (workspace_id, client_id) do nothing returning client_id`,
      [
        actor.workspaceId,
        actor.userId,
        JSON.stringify(
          firsts.map((e) => ({
            id: uuidv7(),
            client_id: e.id,
            job_id: e.jobId,
            type: e.type,
            target_id: e.targetId,
            occurred_at: e.occurredAt ?? null,
          })),
        ),
      ],
    );
    const mine = new Set(claimed.map((c) => c.client_id));
    const fresh = firsts.filter((e) => mine.has(e.id));
    const outcomes = await applyDecisions(
      tx,
      actor,
      fresh.map((e) => {
        const [kind, verb] = e.type.split('.') as ['member' | 'company', 'approved' | 'rejected'];
        return { jobId: e.jobId, kind, targetId: e.targetId, decision: verb === 'approved' ? 'approve' : 'reject' };
      }),
      hidden,
    );
    const now = new Date();
    const done = new Map<string, { result: DecisionResult; membersChanged: number; recordedAt: Date }>();
    fresh.forEach((e, i) =>
      done.set(e.id, { result: outcomes[i].result, membersChanged: outcomes[i].membersChanged, recordedAt: now }),
    );
    const refused = fresh.filter((e) => REFUSED.has(done.get(e.id)!.result)).map((e) => e.id);
    const kept = fresh.filter((e) => !REFUSED.has(done.get(e.id)!.result));
    if (refused.length) {
      await tx.execute(`delete from cdm_import_events where workspace_id = ? and client_id = any(${texts})`, [
        actor.workspaceId,
        JSON.stringify(refused),
      ]);
    }
    if (kept.length) {
      await tx.execute(
        `update cdm_import_events e set result = v.result, members_changed = v.changed from json_to_recordset(?::json) as v(client_id text, result text, changed int)
         where e.workspace_id = ? and e.client_id = v.client_id`,
        [
          JSON.stringify(
            kept.map((e) => ({
              client_id: e.id,
              result: done.get(e.id)!.result,
              changed: done.get(e.id)!.membersChanged,
            })),
          ),
          actor.workspaceId,
        ],
      );
    }
    // Ids recorded before this request: what they did then.
    const earlier = firsts.filter((e) => !mine.has(e.id)).map((e) => e.id);
    if (earlier.length) {
      const stored: {
        client_id: string;
        result: DecisionResult;
        members_changed: number;
        created_at: Date | string;
      }[] = await tx.execute(
        `select client_id, result, members_changed, created_at from cdm_import_events where workspace_id = ? and client_id = any(${texts})`,
        [actor.workspaceId, JSON.stringify(earlier)],
      );
      for (const s of stored)
        done.set(s.client_id, {
          result: s.result,
          membersChanged: s.members_changed,
          recordedAt: new Date(s.created_at),
        });
    }
    return events.map((e, i): EventOutcome => {
      if (first.get(e.id) === i && mine.has(e.id)) {
        const o = outcomes[fresh.indexOf(e)];
        return { id: e.id, jobId: e.jobId, ...o, duplicate: null };
      }
      return {
        id: e.id,
        jobId: e.jobId,
        result: 'unchanged',
        membersChanged: 0,
        membersUnchanged: 0,
        duplicate: done.get(e.id)!,
      };
    });
  });
}
