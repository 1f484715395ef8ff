// What a reviewer reads of a company decision-maker import: the next batch, pages of people and companies, results, metrics.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ICdmImport } from '../../db/entities/CdmImport.js';
import type { CdmCompanyStatus, CdmFailureReason } from '../../db/entities/CdmImportCompany.js';
import type { CdmMemberStatus } from '../../db/entities/CdmImportMember.js';
import { AppError } from '../errors.js';
import type { Actor } from '../identity.js';
import {
  cdmCounts,
  requireCdmImport,
  requireCdmImportWithCounts,
  texts,
  type CompanyRow,
  type Counts,
  type JobWithCounts,
  type MemberRow,
} from './job.js';

/** How long preview and batch-preview wait for a batch still being searched. */
export const PREVIEW_WAIT_MS = 5000;

const MEMBER_COLUMNS = `m.id, m.job_id, m.company_id, m.company_position, m.batch, m.rank, m.external_id, m.profile_url, m.email, m.full_name,
  m.first_name, m.last_name, m.title, m.headline, m.seniority, m.country, m.company_name, m.company_domain, m.status, m.decided_at,
  m.decided_by, m.lead_id, m.contact_id, m.lead_created, m.contact_created, m.credits_charged, m.added_at`;

const COMPANY_COLUMNS = `c.id, c.job_id, c.position, c.batch, c.input_name, c.input_domain, c.status, c.reason, c.message, c.duplicate_of,
  c.resolved_name, c.resolved_domain, c.resolved_industry, c.resolved_size, c.members_found, c.attempts, c.searched_at,
  coalesce(s.approved, 0)::int as approved, coalesce(s.rejected, 0)::int as rejected, coalesce(s.added, 0)::int as added,
  coalesce(s.pending_review, 0)::int as pending_review`;

/** Per-company member counts, joined to company rows. */
const COMPANY_STATS = `left join lateral (
    select count(*) filter (where m.status = 'approved') as approved, count(*) filter (where m.status = 'rejected') as rejected,
      count(*) filter (where m.status = 'added') as added, count(*) filter (where m.status = 'pending') as pending_review
    from cdm_import_members m where m.company_id = c.id) s on true`;

export interface BatchData {
  batch: number;
  /** Every company of the batch has been searched (none pending). */
  ready: boolean;
  companies: (CompanyRow & { members: MemberRow[] })[];
}

async function readBatch(em: EntityManager, jobId: string, batch: number): Promise<BatchData> {
  const companies: CompanyRow[] = await em.execute(
    `select ${COMPANY_COLUMNS} from cdm_import_companies c ${COMPANY_STATS} where c.job_id = ? and c.batch = ? order by c.position`,
    [jobId, batch],
  );
  const members: MemberRow[] = await em.execute(
    `select ${MEMBER_COLUMNS} from cdm_import_members m where m.job_id = ? and m.batch = ? order by m.company_position, m.rank`,
    [jobId, batch],
  );
  const byCompany = new Map<string, MemberRow[]>();
  for (const m of members) {
    const list = byCompany.get(m.company_id);
    if (list) list.push(m);
    else byCompany.set(m.company_id, [m]);
  }
  return {
    batch,
    ready: companies.every((c) => c.status !== 'pending'),
    companies: companies.map((c) => ({ ...c, members: byCompany.get(c.id) ?? [] })),
  };
}

/** Waits (polling, up to `ms`) until no company of the batch is pending; false when the time ran out. */
async function waitForBatch(em: EntityManager, jobId: string, batch: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const [row]: { n: number }[] = await em.execute(
      `select count(*)::int as n from cdm_import_companies where job_id = ? and batch = ? and status = 'pending'`,
      [jobId, batch],
    );
    if (row.n === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A batch for review: `batch` when given (422 `batch_out_of_range` past the last), else the next one
 * not yet shown (null once every batch was shown). A batch still being searched is waited for up to
 * `waitMs`, then returned as it is (`ready: false`); only a ready batch moves the review cursor on.
 */
export async function previewBatch(
  em: EntityManager,
  actor: Actor,
  id: string,
  opts: { batch?: number; waitMs?: number } = {},
): Promise<{ job: JobWithCounts; batch: BatchData | null }> {
  const job = await requireCdmImport(em, actor, id);
  if (opts.batch !== undefined && opts.batch >= job.batchCount) {
    throw new AppError(
      422,
      'batch_out_of_range',
      `this import has ${job.batchCount} batch${job.batchCount === 1 ? '' : 'es'} (0 to ${job.batchCount - 1})`,
    );
  }
  const target = opts.batch ?? job.reviewCursor;
  if (target >= job.batchCount) return { job: await requireCdmImportWithCounts(em, actor, id), batch: null };
  const ready = await waitForBatch(em, job.id, target, opts.waitMs ?? PREVIEW_WAIT_MS);
  if (ready && opts.batch === undefined && !actor.isDemo) {
    await em.execute(
      'update cdm_imports set review_cursor = greatest(review_cursor, ?), updated_at = now() where id = ?',
      [target + 1, job.id],
    );
  }
  const batch = await readBatch(em, job.id, target);
  return { job: await requireCdmImportWithCounts(em, actor, id), batch };
}

/**
 * Cursors of the ordered pages: the position (and rank) of the last row, packed into the 16 bytes a
 * page cursor carries (lib/pagination.ts), so that any well-formed cursor is meaningful.
 */
export const positionCursor = (position: number, rank = 0): string => {
  const h = `${'0'.repeat(16)}${position.toString(16).padStart(8, '0')}${rank.toString(16).padStart(8, '0')}`;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
const fromPositionCursor = (after: string | undefined): [number, number] => {
  if (!after) return [-1, -1];
  const h = after.replace(/-/g, '');
  return [parseInt(h.slice(16, 24), 16), parseInt(h.slice(24, 32), 16)];
};

/** ` and <column> = ?` for each filter given (undefined: not filtered), with its parameters in order. */
function equalities(filters: Record<string, unknown>): { sql: string; params: unknown[] } {
  const given = Object.entries(filters).filter(([, v]) => v !== undefined);
  return { sql: given.map(([column]) => ` and ${column} = ?`).join(''), params: given.map(([, v]) => v) };
}

export interface MemberFilter {
  status?: CdmMemberStatus[];
  companyId?: string;
  batch?: number;
}

/** One page (`limit + 1` rows) of the job's people in review order; rows carry `cursor_id` for the next page. */
export async function listMembers(
  em: EntityManager,
  actor: Actor,
  id: string,
  f: MemberFilter,
  page: { limit: number; after?: string },
): Promise<(MemberRow & { cursor_id: string })[]> {
  const job = await requireCdmImport(em, actor, id);
  const [pos, rank] = fromPositionCursor(page.after);
  const status = f.status?.length ? ` and m.status = any(${texts})` : '';
  const eq = equalities({ 'm.company_id': f.companyId || undefined, 'm.batch': f.batch });
  const rows: MemberRow[] = await em.execute(
    `select ${MEMBER_COLUMNS} from cdm_import_members m where m.job_id = ? and (m.company_position, m.rank) > (?, ?)${status}${eq.sql}
     order by m.company_position, m.rank limit ?`,
    [job.id, pos, rank, ...(status ? [JSON.stringify(f.status)] : []), ...eq.params, page.limit + 1],
  );
  return rows.map((r) => ({ ...r, cursor_id: positionCursor(r.company_position, r.rank) }));
}

/** One page (`limit + 1` rows) of the job's companies in the order given, with their outcome. */
export async function listCompanies(
  em: EntityManager,
  actor: Actor,
  id: string,
  f: { status?: CdmCompanyStatus; batch?: number },
  page: { limit: number; after?: string },
): Promise<(CompanyRow & { cursor_id: string })[]> {
  const job = await requireCdmImport(em, actor, id);
  const [pos] = fromPositionCursor(page.after);
  const eq = equalities({ 'c.status': f.status || undefined, 'c.batch': f.batch });
  const rows: CompanyRow[] = await em.execute(
    `select ${COMPANY_COLUMNS} from cdm_import_companies c ${COMPANY_STATS} where c.job_id = ? and c.position > ?${eq.sql} order by c.position limit ?`,
    [job.id, pos, ...eq.params, page.limit + 1],
  );
  return rows.map((r) => ({ ...r, cursor_id: positionCursor(r.position) }));
}

export interface Metrics {
  job: ICdmImport;
  counts: Counts;
  failureReasons: Record<CdmFailureReason, number>;
  sourceSearches: number;
  companiesRetried: number;
  bySeniority: Record<string, number>;
  leadsCreated: number;
  alreadyInList: number;
  contactsCreated: number;
}

export async function cdmMetrics(em: EntityManager, actor: Actor, id: string): Promise<Metrics> {
  const job = await requireCdmImport(em, actor, id);
  const [counts, [c], seniority, [m]] = (await Promise.all([
    cdmCounts(em, job.id),
    em.execute(
      `select coalesce(sum(attempts), 0)::int as searches, count(*) filter (where attempts > 1)::int as retried,
         count(*) filter (where status = 'failed' and reason = 'company_not_found')::int as company_not_found,
         count(*) filter (where status = 'failed' and reason = 'source_unavailable')::int as source_unavailable,
         count(*) filter (where status = 'failed' and reason = 'source_error')::int as source_error,
         count(*) filter (where status = 'failed' and reason = 'search_failed')::int as search_failed
       from cdm_import_companies where job_id = ?`,
      [job.id],
    ),
    em.execute(
      `select coalesce(seniority, 'unknown') as seniority, count(*)::int as n from cdm_import_members where job_id = ? group by 1`,
      [job.id],
    ),
    em.execute(
      `select count(*) filter (where lead_created)::int as leads_created, count(*) filter (where status = 'added' and not lead_created)::int as already_in_list,
         count(*) filter (where contact_created)::int as contacts_created
       from cdm_import_members where job_id = ?`,
      [job.id],
    ),
  ])) as [Counts, Record<string, number>[], { seniority: string; n: number }[], Record<string, number>[]];
  return {
    job,
    counts,
    failureReasons: {
      company_not_found: c.company_not_found,
      source_unavailable: c.source_unavailable,
      source_error: c.source_error,
      search_failed: c.search_failed,
    },
    sourceSearches: c.searches,
    companiesRetried: c.retried,
    bySeniority: Object.fromEntries(seniority.map((r) => [r.seniority, r.n])),
    leadsCreated: m.leads_created,
    alreadyInList: m.already_in_list,
    contactsCreated: m.contacts_created,
  };
}

export interface ResultSummary {
  added: number;
  leads_created: number;
  already_in_list: number;
  contacts_created: number;
  contacts_reused: number;
  credits_charged: number;
  awaiting_confirm: number;
}

/** What confirm did: the counts, and one page of the people added (review order). */
export async function cdmResults(
  em: EntityManager,
  actor: Actor,
  id: string,
  page: { limit: number; after?: string },
): Promise<{ job: ICdmImport; summary: ResultSummary; rows: (MemberRow & { cursor_id: string })[] }> {
  const job = await requireCdmImport(em, actor, id);
  const rows = await listMembers(em, actor, id, { status: ['added'] }, page);
  const [s]: Record<keyof ResultSummary, number>[] = await em.execute(
    `select count(*) filter (where status = 'added')::int as added, count(*) filter (where lead_created)::int as leads_created,
       count(*) filter (where status = 'added' and not lead_created)::int as already_in_list, count(*) filter (where contact_created)::int as contacts_created,
       count(*) filter (where status = 'added' and not contact_created)::int as contacts_reused, coalesce(sum(credits_charged), 0)::int as credits_charged,
       count(*) filter (where status = 'approved')::int as awaiting_confirm
     from cdm_import_members where job_id = ?`,
    [job.id],
  );
  return { job, summary: s, rows };
}

/** One page of the people approved (and those already added), with both counts. */
export async function approvedMembers(
  em: EntityManager,
  actor: Actor,
  id: string,
  page: { limit: number; after?: string },
) {
  const rows = await listMembers(em, actor, id, { status: ['approved', 'added'] }, page);
  const counts = await cdmCounts(em, id);
  return { rows, counts: { approved: counts.members.approved, added: counts.members.added } };
}
