// Review of discovered leads (docs/discovered-leads.md): list/counts/read, and the status machine
//   new → approved | rejected;  rejected → approved | new (restore);  approved is terminal
// Approving creates or reuses the workspace contact (dedupe on normalised email, then normalised
// profile URL, as domain/lists/lists.ts does) and adds it to the list once. Single and batch approvals run
// the same set-based function: a fixed number of SQL statements per batch, whatever its size.
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { keysetSql, type PageRequest } from '../../lib/pagination.js';
import { requireAgent } from '../agents/agents.js';
import { requireApp } from '../apps/apps.js';
import { upsertContacts } from '../contacts/upsert.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { likeEscape } from '../../lib/sql.js';

export const DISCOVERED_LEAD_STATUSES = ['new', 'approved', 'rejected'] as const;
export type DiscoveredLeadStatus = (typeof DISCOVERED_LEAD_STATUSES)[number];
/** The documented maximum of ids per batch operation (400 above it). */
export const MAX_BATCH = 500;
export const MAX_REASON = 200;

/** Allowed transitions (the docs' table); a repeat of the current status is idempotent. */
export const TRANSITIONS: Record<DiscoveredLeadStatus, DiscoveredLeadStatus[]> = {
  new: ['approved', 'rejected'],
  rejected: ['approved', 'new'],
  approved: [],
};

export type BatchResult =
  'approved' | 'already_approved' | 'rejected' | 'already_rejected' | 'not_found' | 'invalid_transition';

export interface DiscoveredLeadRow {
  id: string;
  workspace_id: string;
  app_id: string;
  agent_id: string;
  run_id: string | null;
  signal_key: string;
  source: string;
  external_id: string;
  profile_url: string | null;
  email: string | null;
  full_name: string;
  first_name: string | null;
  last_name: string | null;
  title: string | null;
  headline: string | null;
  phone: string | null;
  company: string | null;
  company_domain: string | null;
  country: string | null;
  evidence: Record<string, unknown>;
  score: number;
  reasons: string[];
  status: DiscoveredLeadStatus;
  promoted: boolean;
  approved_lead_id: string | null;
  approved_list_id: string | null;
  reviewed_at: Date | null;
  reviewed_by: string | null;
  reject_reason: string | null;
  enriched_fields: string[];
  enriched_at: Date | null;
  network_provider_id: string | null;
  enrichment_promoted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `d.id, d.workspace_id, d.app_id, d.agent_id, d.run_id, d.signal_key, d.source, d.external_id, d.profile_url, d.email,
  d.full_name, d.first_name, d.last_name, d.title, d.headline, d.phone, d.company, d.company_domain, d.country, d.evidence, d.score, d.reasons, d.status,
  d.promoted, d.approved_lead_id, d.approved_list_id, d.reviewed_at, d.reviewed_by, d.reject_reason,
  d.enriched_fields, d.enriched_at, d.network_provider_id, d.enrichment_promoted_at, d.created_at, d.updated_at`;

const asDate = (v: Date | string | null): Date | null => (v === null ? null : v instanceof Date ? v : new Date(v));
const norm = (r: DiscoveredLeadRow): DiscoveredLeadRow => ({
  ...r,
  evidence: typeof r.evidence === 'string' ? JSON.parse(r.evidence) : r.evidence,
  reasons: typeof r.reasons === 'string' ? JSON.parse(r.reasons) : r.reasons,
  enriched_fields: typeof r.enriched_fields === 'string' ? JSON.parse(r.enriched_fields) : r.enriched_fields,
  reviewed_at: asDate(r.reviewed_at),
  enriched_at: asDate(r.enriched_at),
  enrichment_promoted_at: asDate(r.enrichment_promoted_at),
  created_at: asDate(r.created_at)!,
  updated_at: asDate(r.updated_at)!,
});

/** A JSON array parameter as a uuid[] expression (the query builder would expand a JS array into a list). */
const uuidArray = 'array(select x::uuid from json_array_elements_text(?::json) x)';

/** `%`, `_` and `\` match literally in the search text (ILIKE's default escape is `\`). */

export interface DiscoveredLeadFilters {
  app_id?: string;
  agent_id?: string;
  status?: DiscoveredLeadStatus;
  signal_key?: string;
  q?: string;
}

/** The WHERE clause both the list and the counts use, so that they agree. Checks app/agent ownership (404/403). */
async function filterSql(
  em: EntityManager,
  actor: Actor,
  f: DiscoveredLeadFilters,
): Promise<{ sql: string; params: unknown[] }> {
  const parts = ['d.workspace_id = ?'];
  const params: unknown[] = [actor.workspaceId];
  if (f.app_id) {
    parts.push('d.app_id = ?');
    params.push((await requireApp(em, actor, f.app_id)).id);
  } else if (!actor.allApps) {
    parts.push(`d.app_id = any(${uuidArray})`);
    params.push(JSON.stringify(actor.appIds));
  }
  if (f.agent_id) {
    parts.push('d.agent_id = ?');
    params.push((await requireAgent(em, actor, f.agent_id)).id);
  }
  if (f.status) {
    parts.push('d.status = ?');
    params.push(f.status);
  }
  if (f.signal_key) {
    parts.push('d.signal_key = ?');
    params.push(f.signal_key);
  }
  if (f.q) {
    const like = `%${likeEscape(f.q)}%`;
    parts.push('(d.full_name ilike ? or d.title ilike ? or d.company ilike ?)');
    params.push(like, like, like);
  }
  return { sql: parts.join(' and '), params };
}

/** One page (`limit + 1` rows), newest first (UUIDv7 ids sort by creation); the cursor is the last id seen. */
export async function listDiscoveredLeads(
  em: EntityManager,
  actor: Actor,
  f: DiscoveredLeadFilters,
  page: PageRequest,
): Promise<DiscoveredLeadRow[]> {
  const w = await filterSql(em, actor, f);
  const k = keysetSql(page, 'd.id', 'desc');
  const rows: DiscoveredLeadRow[] = await em.execute(
    `select ${COLUMNS} from discovered_leads d where ${w.sql}${k.sql}`,
    [...w.params, ...k.params],
  );
  return rows.map(norm);
}

export interface Counts {
  total: number;
  by_status: Record<DiscoveredLeadStatus, number>;
  by_agent: { agent_id: string; total: number; by_status: Record<DiscoveredLeadStatus, number> }[];
}

const zeroes = (): Record<DiscoveredLeadStatus, number> => ({ new: 0, approved: 0, rejected: 0 });

/** Counts per status and per agent: one query grouped by (status, agent_id) over the list's filters. */
export async function countDiscoveredLeads(em: EntityManager, actor: Actor, f: DiscoveredLeadFilters): Promise<Counts> {
  const w = await filterSql(em, actor, f);
  const rows: { status: DiscoveredLeadStatus; agent_id: string; n: string }[] = await em.execute(
    `select d.status, d.agent_id, count(*) as n from discovered_leads d where ${w.sql} group by d.status, d.agent_id order by d.agent_id`,
    w.params,
  );
  const out: Counts = { total: 0, by_status: zeroes(), by_agent: [] };
  const agents = new Map<string, Counts['by_agent'][number]>();
  for (const r of rows) {
    const n = Number(r.n);
    if (!(r.status in out.by_status)) continue;
    out.total += n;
    out.by_status[r.status] += n;
    let a = agents.get(r.agent_id);
    if (!a) agents.set(r.agent_id, (a = { agent_id: r.agent_id, total: 0, by_status: zeroes() }));
    a.total += n;
    a.by_status[r.status] += n;
  }
  out.by_agent = [...agents.values()];
  return out;
}

/** A discovered lead of the actor's workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireDiscoveredLead(em: EntityManager, actor: Actor, id: string): Promise<DiscoveredLeadRow> {
  const [row]: DiscoveredLeadRow[] = await em.execute(
    `select ${COLUMNS} from discovered_leads d where d.id = ? and d.workspace_id = ?`,
    [id, actor.workspaceId],
  );
  if (!row) throw notFound('discovered lead');
  return norm(row);
}

export async function getDiscoveredLeadContact(em: EntityManager, row: DiscoveredLeadRow): Promise<string | null> {
  if (!row.approved_lead_id) return null;
  const [lead]: { contact_id: string }[] = await em.execute('select contact_id from leads where id = ?', [
    row.approved_lead_id,
  ]);
  return lead?.contact_id ?? null;
}

// ---------------------------------------------------------------------------------------------
// Approval (set-based)

export interface Approval {
  id: string;
  result: BatchResult;
  listId?: string;
  leadId?: string;
  contactId?: string;
  /** The list membership was created by this approval (false when the contact was already in the list). */
  created?: boolean;
}

type Locked = DiscoveredLeadRow & { agent_list_id: string | null };

/**
 * Selects and locks the workspace's rows of these ids (in id order, so concurrent batches do not
 * deadlock), leaving out the ids the access policy refused the caller (another product's: `not_found`).
 */
async function lockRows(
  tx: EntityManager,
  actor: Actor,
  ids: string[],
  refused: ReadonlySet<string>,
): Promise<Map<string, Locked>> {
  const visible = ids.filter((id) => !refused.has(id.toLowerCase()));
  const rows: Locked[] = await tx.execute(
    `select ${COLUMNS}, a.list_id as agent_list_id from discovered_leads d join discovery_agents a on a.id = d.agent_id
     where d.workspace_id = ? and d.id = any(${uuidArray}) order by d.id for update of d`,
    [actor.workspaceId, JSON.stringify(visible)],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Approves the given ids in one transaction with a fixed number of statements: lock the rows, (read the
 * list), read the matching contacts, insert the missing ones, fill blanks of existing ones, insert the
 * leads, (re-read leads that existed), update the rows. `listId` must be a list of each lead's product
 * (400 `invalid_list_id`); without it each lead goes to its agent's list (400 `no_list` if it has none).
 */
export async function approveDiscoveredLeads(
  em: EntityManager,
  actor: Actor,
  ids: string[],
  listId: string | undefined,
  refused: ReadonlySet<string>,
): Promise<Approval[]> {
  assertWritable(actor);
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  if (unique.length > MAX_BATCH) throw badRequest('invalid_body', `at most ${MAX_BATCH} ids per batch`);
  return em.transactional(async (tx) => {
    const rows = await lockRows(tx, actor, unique, refused);
    // The named list is read only when something is to be approved (a batch of unknown ids is all not_found).
    let list: { id: string; app_id: string } | undefined;
    if (listId && [...rows.values()].some((r) => r.status !== 'approved')) {
      [list] = await tx.execute('select id, app_id from lead_lists where id = ? and workspace_id = ?', [
        listId,
        actor.workspaceId,
      ]);
      if (!list)
        throw badRequest(
          'invalid_list_id',
          'invalid list ID; the list must belong to the product of the discovered lead',
        );
    }
    const results = new Map<string, Approval>();
    const pending: (Locked & { list_id: string; emailKey: string | null; urlKey: string | null })[] = [];
    for (const id of unique) {
      const r = rows.get(id);
      if (!r) results.set(id, { id, result: 'not_found' });
      else if (r.status === 'approved')
        results.set(id, {
          id,
          result: 'already_approved',
          listId: r.approved_list_id ?? undefined,
          leadId: r.approved_lead_id ?? undefined,
          created: false,
        });
      else if (!TRANSITIONS[r.status]?.includes('approved')) results.set(id, { id, result: 'invalid_transition' });
      else {
        if (list && list.app_id !== r.app_id)
          throw badRequest(
            'invalid_list_id',
            'invalid list ID; the list must belong to the product of the discovered lead',
          );
        const target = list?.id ?? r.agent_list_id;
        if (!target)
          throw badRequest('no_list', 'no list given and the discovered lead’s agent has no list', { ids: [id] });
        const emailKey = normaliseEmail(r.email);
        const urlKey = normaliseProfileUrl(r.profile_url);
        // Without an identifier there is no contact to create: it cannot be approved.
        if (!emailKey && !urlKey) results.set(id, { id, result: 'invalid_transition' });
        else pending.push({ ...r, list_id: target, emailKey, urlKey });
      }
    }
    if (pending.length) {
      const { contactOf: resolve } = await upsertContacts(tx, actor.workspaceId, pending);
      // Leads: one per (list, contact), inserted once; the ones that existed are read back.
      const pairKey = (listIdOf: string, contactId: string) => `${listIdOf}:${contactId}`;
      const pairs = new Map<string, { list_id: string; contact_id: string }>();
      for (const p of pending)
        pairs.set(pairKey(p.list_id, resolve(p)!), { list_id: p.list_id, contact_id: resolve(p)! });
      const created: { id: string; list_id: string; contact_id: string }[] = await tx.execute(
        `insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
         select v.id, ?, v.list_id, v.contact_id, 'discovery', now(), now() from json_to_recordset(?::json) as v(id uuid, list_id uuid, contact_id uuid)
         on conflict (list_id, contact_id) do nothing returning id, list_id, contact_id`,
        [actor.workspaceId, JSON.stringify([...pairs.values()].map((x) => ({ id: uuidv7(), ...x })))],
      );
      const leads = new Map(created.map((l) => [pairKey(l.list_id, l.contact_id), l.id]));
      const createdKeys = new Set(leads.keys());
      const missing = [...pairs.entries()].filter(([k]) => !leads.has(k)).map(([, v]) => v);
      if (missing.length) {
        const old: { id: string; list_id: string; contact_id: string }[] = await tx.execute(
          `select l.id, l.list_id, l.contact_id from leads l join json_to_recordset(?::json) as v(list_id uuid, contact_id uuid)
             on l.list_id = v.list_id and l.contact_id = v.contact_id`,
          [JSON.stringify(missing)],
        );
        for (const l of old) leads.set(pairKey(l.list_id, l.contact_id), l.id);
      }
      // Within a batch, the first discovered lead of a (list, contact) pair is the one that created it.
      const claimed = new Set<string>();
      for (const p of pending) {
        const contactId = resolve(p)!;
        const k = pairKey(p.list_id, contactId);
        const created = createdKeys.has(k) && !claimed.has(k);
        claimed.add(k);
        results.set(p.id, {
          id: p.id,
          result: 'approved',
          listId: p.list_id,
          leadId: leads.get(k)!,
          contactId,
          created,
        });
      }
      await tx.execute(
        `update discovered_leads d set status = 'approved', approved_lead_id = v.lead_id, approved_list_id = v.list_id, reviewed_at = now(),
           reviewed_by = ?, reject_reason = null, updated_at = now()
         from json_to_recordset(?::json) as v(id uuid, lead_id uuid, list_id uuid) where d.id = v.id`,
        [
          actor.userId,
          JSON.stringify(pending.map((p) => ({ id: p.id, lead_id: results.get(p.id)!.leadId, list_id: p.list_id }))),
        ],
      );
    }
    return unique.map((id) => results.get(id)!);
  });
}

/** Rejects the given ids with a reason (one select-for-update and one update). Approved leads are `invalid_transition`. */
export async function rejectDiscoveredLeads(
  em: EntityManager,
  actor: Actor,
  ids: string[],
  reason: string,
  refused: ReadonlySet<string>,
): Promise<{ id: string; result: BatchResult }[]> {
  assertWritable(actor);
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  if (unique.length > MAX_BATCH) throw badRequest('invalid_body', `at most ${MAX_BATCH} ids per batch`);
  return em.transactional(async (tx) => {
    const rows = await lockRows(tx, actor, unique, refused);
    const results = unique.map((id): { id: string; result: BatchResult } => {
      const r = rows.get(id);
      if (!r) return { id, result: 'not_found' };
      if (r.status === 'rejected') return { id, result: 'already_rejected' };
      if (!TRANSITIONS[r.status]?.includes('rejected')) return { id, result: 'invalid_transition' };
      return { id, result: 'rejected' };
    });
    const toReject = results.filter((r) => r.result === 'rejected').map((r) => r.id);
    if (toReject.length) {
      await tx.execute(
        `update discovered_leads set status = 'rejected', reject_reason = ?, reviewed_at = now(), reviewed_by = ?, updated_at = now()
         where id = any(${uuidArray})`,
        [reason, actor.userId, JSON.stringify(toReject)],
      );
    }
    return results;
  });
}

/** One approval: 404/403 like a read, then the batch path for one id. */
export async function approveDiscoveredLead(
  em: EntityManager,
  actor: Actor,
  id: string,
  listId?: string,
): Promise<Approval> {
  assertWritable(actor);
  await requireDiscoveredLead(em, actor, id);
  const [a] = await approveDiscoveredLeads(em, actor, [id], listId, new Set()); // the id passed requireDiscoveredLead
  if (a.result === 'not_found') throw notFound('discovered lead');
  if (a.result === 'invalid_transition')
    throw new AppError(
      409,
      'invalid_transition',
      'this discovered lead cannot be approved (it has no email or profile URL)',
    );
  if (a.result === 'already_approved' && a.leadId) {
    const [lead]: { contact_id: string }[] = await em.execute('select contact_id from leads where id = ?', [a.leadId]);
    a.contactId = lead?.contact_id;
  }
  return a;
}

/** One rejection: 404/403 like a read; approved → 409 `invalid_transition`; a repeat keeps the first reason. */
export async function rejectDiscoveredLead(
  em: EntityManager,
  actor: Actor,
  id: string,
  reason: string,
): Promise<BatchResult> {
  assertWritable(actor);
  await requireDiscoveredLead(em, actor, id);
  const [r] = await rejectDiscoveredLeads(em, actor, [id], reason, new Set()); // the id passed requireDiscoveredLead
  if (r.result === 'not_found') throw notFound('discovered lead');
  if (r.result === 'invalid_transition')
    throw new AppError(409, 'invalid_transition', 'an approved discovered lead cannot be rejected');
  return r.result;
}
