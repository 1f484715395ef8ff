// Company decision-maker imports (docs/company-imports.md): the user names companies (names and/or
// domains) and target roles; the workflow `cdm-import:<jobId>` finds the people in those roles at each
// company through the professional-network source, batch by batch; a reviewer approves or rejects
// them (per person or per company, directly or as an idempotent batch of client events); confirm adds
// the approved people to the job's list as leads (contacts created or reused on normalised email,
// then normalised profile URL, as domain/lists/lists.ts does), one credit per lead created, idempotently.
//
// Job states (409 `invalid_transition` for anything else):
//   searching → ready_for_review            the workflow has searched every pending company
//   ready_for_review → searching            retry: the failed companies only
//   ready_for_review → confirming           confirm (≥ 1 approved person, credits cover them)
//   confirming → completed                  every approved person added
//   confirming → ready_for_review           confirm stopped (credits spent meanwhile, list deleted)
// Decisions are taken while searching or ready_for_review. Every bulk write is set-based: a fixed
// number of statements per batch, whatever its size.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CdmImport, type CdmState, type ICdmImport } from '../../db/entities/CdmImport.js';
import type { CdmCompanyStatus, CdmFailureReason } from '../../db/entities/CdmImportCompany.js';
import type { CdmMemberStatus } from '../../db/entities/CdmImportMember.js';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseDomain, normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { ProviderError } from '../../lib/provider-http.js';
import { SENIORITIES, type Candidate, type DiscoverySource, type Seniority } from '../../lib/sources/types.js';
import { requireApp } from '../apps/apps.js';
import { upsertContacts } from '../contacts/upsert.js';
import { debitCreditsBatch, requireCredits } from '../billing/credits.js';
import { assertWritable } from '../demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { canAccessApp, type Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { notifyCompanyImport } from '../notifications/notifications.js';

/** Companies per job (400 above it). */
export const MAX_COMPANIES = 1000;
export const MAX_TITLES = 20;
export const MAX_PER_COMPANY = 25;
export const DEFAULT_PER_COMPANY = 5;
export const MAX_BATCH_SIZE = 50;
export const DEFAULT_BATCH_SIZE = 10;
/** Member and company ids per approval request; events per events request. */
export const MAX_DECISIONS = 500;
export const CREDITS_PER_MEMBER = 1;
/** Approved people added per confirm transaction. */
export const CONFIRM_CHUNK = 1000;
/** Companies searched at once within a batch. */
const SEARCH_CONCURRENCY = 4;
/** How long preview and batch-preview wait for a batch still being searched. */
export const PREVIEW_WAIT_MS = 5000;

export const REVIEWABLE: readonly CdmState[] = ['searching', 'ready_for_review'];
export type Decision = 'approve' | 'reject';
export type DecisionResult = 'approved' | 'rejected' | 'unchanged' | 'not_found' | 'invalid_transition';

// ---------------------------------------------------------------------------------------------
// Rows

export interface CompanyRow {
  id: string;
  job_id: string;
  position: number;
  batch: number;
  input_name: string | null;
  input_domain: string | null;
  status: CdmCompanyStatus;
  reason: CdmFailureReason | null;
  message: string | null;
  duplicate_of: string | null;
  resolved_name: string | null;
  resolved_domain: string | null;
  resolved_industry: string | null;
  resolved_size: string | null;
  members_found: number;
  attempts: number;
  searched_at: Date | string | null;
  /** Members of the company by status (read with it). */
  approved: number;
  rejected: number;
  added: number;
  pending_review: number;
}

export interface MemberRow {
  id: string;
  job_id: string;
  company_id: string;
  company_position: number;
  batch: number;
  rank: number;
  external_id: string;
  profile_url: string | null;
  email: string | null;
  full_name: string;
  first_name: string | null;
  last_name: string | null;
  title: string | null;
  headline: string | null;
  seniority: Seniority | null;
  country: string | null;
  company_name: string | null;
  company_domain: string | null;
  status: CdmMemberStatus;
  decided_at: Date | string | null;
  decided_by: string | null;
  lead_id: string | null;
  contact_id: string | null;
  lead_created: boolean | null;
  contact_created: boolean | null;
  credits_charged: number;
  added_at: Date | string | null;
}

export interface Counts {
  companies: Record<CdmCompanyStatus, number>;
  members: Record<CdmMemberStatus, number>;
  /** Batches with no pending company left. */
  batchesSearched: number;
}

export interface JobWithCounts {
  id: string;
  job: ICdmImport;
  counts: Counts;
}

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

/** A JSON array parameter as an array expression (the query builder would expand a JS array into a list). */
const uuids = 'array(select x::uuid from json_array_elements_text(?::json) x)';
const texts = 'array(select json_array_elements_text(?::json))';

const zeroCompanies = (): Record<CdmCompanyStatus, number> => ({ pending: 0, done: 0, failed: 0, duplicate: 0 });
const zeroMembers = (): Record<CdmMemberStatus, number> => ({ pending: 0, approved: 0, rejected: 0, added: 0 });

// ---------------------------------------------------------------------------------------------
// Creating a job

export interface CompanyInput {
  name?: string | null;
  domain?: string | null;
}

export interface NewCdmImport {
  appId: string;
  listId: string;
  companies: CompanyInput[];
  titles?: string[];
  seniorities?: Seniority[];
  maxPerCompany?: number;
  batchSize?: number;
}

export interface CdmImportStart {
  jobId: string;
  workspaceId: string;
  appId: string;
  run: number;
  phase: 'search' | 'confirm';
}

const nameKey = (s: string) => s.normalize('NFC').trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * Creates the job with its companies (in the order given, duplicates of an earlier entry — same
 * normalised domain, or same name when neither has a domain — dropped and counted) and starts run 1
 * of `cdm-import:<id>`. The list must be one of the product's (400 `invalid_list_id`).
 */
export async function createCdmImport(em: EntityManager, actor: Actor, jobs: Jobs, input: NewCdmImport): Promise<JobWithCounts> {
  assertWritable(actor);
  const app = await requireApp(em, actor, input.appId);
  const [list]: { id: string }[] = await em.execute('select id from lead_lists where id = ? and workspace_id = ? and app_id = ?', [input.listId, actor.workspaceId, app.id]);
  if (!list) throw badRequest('invalid_list_id', 'list_id must name a list of the product app_id');
  if (input.companies.length < 1 || input.companies.length > MAX_COMPANIES) throw badRequest('invalid_body', `give 1 to ${MAX_COMPANIES} companies`);
  const titles = [...new Set((input.titles ?? []).map((t) => t.trim()).filter(Boolean))];
  const seniorities = [...new Set(input.seniorities ?? [])].filter((s) => SENIORITIES.includes(s));
  if (!titles.length && !seniorities.length) throw badRequest('invalid_body', 'give at least one title or seniority');
  const batchSize = input.batchSize ?? DEFAULT_BATCH_SIZE;
  const seen = new Set<string>();
  const companies: { name: string | null; domain: string | null }[] = [];
  for (const c of input.companies) {
    const name = c.name?.trim() || null;
    const domain = c.domain ? normaliseDomain(c.domain) : null;
    if (c.domain && !domain) throw badRequest('invalid_body', `"${c.domain}" is not a domain name`);
    if (!name && !domain) throw badRequest('invalid_body', 'each company needs a name or a domain');
    const key = domain ? `d:${domain}` : `n:${nameKey(name!)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    companies.push({ name, domain });
  }
  const jobId = uuidv7();
  // Ids in position order (several are minted within one millisecond, and v7 is random within it).
  const ids = companies.map(() => uuidv7()).sort();
  await em.transactional(async (tx) => {
    await tx.execute(
      `insert into cdm_imports (id, workspace_id, app_id, list_id, created_by_id, state, run, titles, seniorities, max_per_company, batch_size,
         company_count, batch_count, duplicates_removed, review_cursor, credits_charged, created_at, updated_at)
       values (?, ?, ?, ?, ?, 'searching', 1, ?::jsonb, ?::jsonb, ?, ?, ?, ?, ?, 0, 0, now(), now())`,
      [
        jobId,
        actor.workspaceId,
        app.id,
        list.id,
        actor.userId,
        JSON.stringify(titles),
        JSON.stringify(seniorities),
        input.maxPerCompany ?? DEFAULT_PER_COMPANY,
        batchSize,
        companies.length,
        Math.ceil(companies.length / batchSize),
        input.companies.length - companies.length,
      ],
    );
    await tx.execute(
      `insert into cdm_import_companies (id, job_id, position, batch, input_name, input_domain, status, members_found, attempts, created_at, updated_at)
       select v.id, ?, v.position, v.batch, v.name, v.domain, 'pending', 0, 0, now(), now()
       from json_to_recordset(?::json) as v(id uuid, position int, batch int, name text, domain text)`,
      [jobId, JSON.stringify(companies.map((c, i) => ({ id: ids[i], position: i, batch: Math.floor(i / batchSize), name: c.name, domain: c.domain })))],
    );
  });
  await startRun(em, jobs, { jobId, workspaceId: actor.workspaceId, appId: app.id, run: 1, phase: 'search' });
  return requireCdmImportWithCounts(em.fork(), actor, jobId);
}

/**
 * Starts the run; if Temporal refuses, the run's work is undone so that the job is not left waiting
 * for a workflow that does not exist: a search's pending companies fail (`search_failed`, retryable),
 * a confirm goes back to ready_for_review with the error `start_failed`.
 */
async function startRun(em: EntityManager, jobs: Jobs, start: CdmImportStart): Promise<void> {
  try {
    await jobs.startCdmImport(start);
  } catch (err) {
    const message = String((err as Error)?.message ?? err).slice(0, 500);
    await em.fork().transactional(async (tx) => {
      const job = await lockJob(tx, start.jobId);
      if (!job || job.run !== start.run) return;
      if (start.phase === 'search' && job.state === 'searching') {
        await failPending(tx, start.jobId, null, 'search_failed', `the search could not start: ${message}`);
        await tx.execute(`update cdm_imports set state = 'ready_for_review', search_finished_at = now(), updated_at = now() where id = ?`, [start.jobId]);
      } else if (start.phase === 'confirm' && job.state === 'confirming') {
        await setConfirmError(tx, start.jobId, 'start_failed', `the confirm could not start: ${message}`);
      }
    });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Reads

interface JobLock {
  id: string;
  workspace_id: string;
  app_id: string;
  list_id: string | null;
  state: CdmState;
  run: number;
  titles: string[] | string;
  seniorities: string[] | string;
  max_per_company: number;
  batch_count: number;
  review_cursor: number;
}

async function lockJob(tx: EntityManager, jobId: string, mode: 'update' | 'share' = 'update'): Promise<JobLock | undefined> {
  const [row]: JobLock[] = await tx.execute(
    `select id, workspace_id, app_id, list_id, state, run, titles, seniorities, max_per_company, batch_count, review_cursor from cdm_imports where id = ? for ${mode === 'update' ? 'update' : 'share'}`,
    [jobId],
  );
  return row;
}

/** A job of the actor's workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireCdmImport(em: EntityManager, actor: Actor, id: string): Promise<ICdmImport> {
  const job = await em.findOne(CdmImport, { id, workspace: actor.workspaceId }, { refresh: true });
  if (!job) throw notFound('company decision-maker import');
  return job;
}

export async function cdmCounts(em: EntityManager, jobId: string): Promise<Counts> {
  const [row]: { companies: Record<string, number> | null; members: Record<string, number> | null; pending_batches: number; batch_count: number }[] = await em.execute(
    `select
       (select json_object_agg(status, n) from (select status, count(*)::int as n from cdm_import_companies where job_id = ? group by status) x) as companies,
       (select json_object_agg(status, n) from (select status, count(*)::int as n from cdm_import_members where job_id = ? group by status) y) as members,
       (select count(distinct batch)::int from cdm_import_companies where job_id = ? and status = 'pending') as pending_batches,
       (select batch_count from cdm_imports where id = ?) as batch_count`,
    [jobId, jobId, jobId, jobId],
  );
  const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
  return {
    companies: { ...zeroCompanies(), ...parse<Record<CdmCompanyStatus, number>>(row.companies ?? {}) },
    members: { ...zeroMembers(), ...parse<Record<CdmMemberStatus, number>>(row.members ?? {}) },
    batchesSearched: Number(row.batch_count) - Number(row.pending_batches),
  };
}

export async function requireCdmImportWithCounts(em: EntityManager, actor: Actor, id: string): Promise<JobWithCounts> {
  const job = await requireCdmImport(em, actor, id);
  return { id: job.id, job, counts: await cdmCounts(em, job.id) };
}

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
  const members: MemberRow[] = await em.execute(`select ${MEMBER_COLUMNS} from cdm_import_members m where m.job_id = ? and m.batch = ? order by m.company_position, m.rank`, [
    jobId,
    batch,
  ]);
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
    const [row]: { n: number }[] = await em.execute(`select count(*)::int as n from cdm_import_companies where job_id = ? and batch = ? and status = 'pending'`, [jobId, batch]);
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
export async function previewBatch(em: EntityManager, actor: Actor, id: string, opts: { batch?: number; waitMs?: number } = {}): Promise<{ job: JobWithCounts; batch: BatchData | null }> {
  const job = await requireCdmImport(em, actor, id);
  if (opts.batch !== undefined && opts.batch >= job.batchCount) {
    throw new AppError(422, 'batch_out_of_range', `this import has ${job.batchCount} batch${job.batchCount === 1 ? '' : 'es'} (0 to ${job.batchCount - 1})`);
  }
  const target = opts.batch ?? job.reviewCursor;
  if (target >= job.batchCount) return { job: await requireCdmImportWithCounts(em, actor, id), batch: null };
  const ready = await waitForBatch(em, job.id, target, opts.waitMs ?? PREVIEW_WAIT_MS);
  if (ready && opts.batch === undefined && !actor.isDemo) {
    await em.execute('update cdm_imports set review_cursor = greatest(review_cursor, ?), updated_at = now() where id = ?', [target + 1, job.id]);
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
export async function listMembers(em: EntityManager, actor: Actor, id: string, f: MemberFilter, page: { limit: number; after?: string }): Promise<(MemberRow & { cursor_id: string })[]> {
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
    em.execute(`select coalesce(seniority, 'unknown') as seniority, count(*)::int as n from cdm_import_members where job_id = ? group by 1`, [job.id]),
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
    failureReasons: { company_not_found: c.company_not_found, source_unavailable: c.source_unavailable, source_error: c.source_error, search_failed: c.search_failed },
    sourceSearches: c.searches,
    companiesRetried: c.retried,
    bySeniority: Object.fromEntries(seniority.map((r) => [r.seniority, r.n])),
    leadsCreated: m.leads_created,
    alreadyInList: m.already_in_list,
    contactsCreated: m.contacts_created,
  };
}

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
async function applyDecisions(tx: EntityManager, actor: Actor, decisions: DecisionInput[]): Promise<DecisionOutcome[]> {
  if (!decisions.length) return [];
  const jobIds = [...new Set(decisions.map((d) => d.jobId))];
  const jobs: { id: string; app_id: string; state: CdmState }[] = await tx.execute(
    `select id, app_id, state from cdm_imports where workspace_id = ? and id = any(${uuids}) order by id for share`,
    [actor.workspaceId, JSON.stringify(jobIds)],
  );
  const jobById = new Map(jobs.filter((j) => canAccessApp(actor, j.app_id)).map((j) => [j.id, j]));
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
      ? await tx.execute(`select id, job_id from cdm_import_companies where job_id = any(${uuids}) and id = any(${uuids})`, [JSON.stringify(visible), JSON.stringify(companyIds)])
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

  const writes = members.filter((m) => status.get(m.id) !== m.status).map((m) => ({ id: m.id, status: status.get(m.id) }));
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
export async function decideCdmImport(em: EntityManager, actor: Actor, id: string, input: ApprovalInput): Promise<ApprovalOutcome> {
  assertWritable(actor);
  const memberIds = [...new Set(input.memberIds ?? [])];
  const companyIds = [...new Set(input.companyIds ?? [])];
  if (!memberIds.length && !companyIds.length) throw badRequest('invalid_body', 'give member_ids and/or company_ids');
  if (memberIds.length + companyIds.length > MAX_DECISIONS) throw badRequest('invalid_body', `at most ${MAX_DECISIONS} ids per request`);
  const job = await requireCdmImport(em, actor, id);
  const items = [...memberIds.map((m) => ({ kind: 'member' as const, id: m })), ...companyIds.map((c) => ({ kind: 'company' as const, id: c }))];
  const outcomes = await em.fork().transactional(async (tx) => {
    const locked = (await lockJob(tx, job.id, 'share'))!;
    if (!REVIEWABLE.includes(locked.state)) throw conflict('invalid_transition', `decisions are taken while an import is searching or ready_for_review; this one is ${locked.state}`);
    return applyDecisions(
      tx,
      actor,
      items.map((i) => ({ jobId: job.id, kind: i.kind, targetId: i.id, decision: input.decision })),
    );
  });
  return { job: await requireCdmImportWithCounts(em.fork(), actor, id), results: items.map((i, n) => ({ ...i, ...outcomes[n] })) };
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

/**
 * Records the reviewer's decisions, each under the client's id: an id seen before (in an earlier
 * request, or earlier in this one) is ignored and answered with what it did the first time. The new
 * ones are claimed first (insert … on conflict do nothing), so two requests racing with the same id
 * apply it once; then they are applied in order and their results stored.
 */
export async function recordCdmEvents(em: EntityManager, actor: Actor, events: ReviewEvent[]): Promise<EventOutcome[]> {
  assertWritable(actor);
  if (events.length < 1 || events.length > MAX_DECISIONS) throw badRequest('invalid_body', `give 1 to ${MAX_DECISIONS} events`);
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
        JSON.stringify(firsts.map((e) => ({ id: uuidv7(), client_id: e.id, job_id: e.jobId, type: e.type, target_id: e.targetId, occurred_at: e.occurredAt ?? null }))),
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
    );
    const now = new Date();
    const done = new Map<string, { result: DecisionResult; membersChanged: number; recordedAt: Date }>();
    fresh.forEach((e, i) => done.set(e.id, { result: outcomes[i].result, membersChanged: outcomes[i].membersChanged, recordedAt: now }));
    if (fresh.length) {
      await tx.execute(
        `update cdm_import_events e set result = v.result, members_changed = v.changed from json_to_recordset(?::json) as v(client_id text, result text, changed int)
         where e.workspace_id = ? and e.client_id = v.client_id`,
        [JSON.stringify(fresh.map((e) => ({ client_id: e.id, result: done.get(e.id)!.result, changed: done.get(e.id)!.membersChanged }))), actor.workspaceId],
      );
    }
    // Ids recorded before this request: what they did then.
    const earlier = firsts.filter((e) => !mine.has(e.id)).map((e) => e.id);
    if (earlier.length) {
      const stored: { client_id: string; result: DecisionResult; members_changed: number; created_at: Date | string }[] = await tx.execute(
        `select client_id, result, members_changed, created_at from cdm_import_events where workspace_id = ? and client_id = any(${texts})`,
        [actor.workspaceId, JSON.stringify(earlier)],
      );
      for (const s of stored) done.set(s.client_id, { result: s.result, membersChanged: s.members_changed, recordedAt: new Date(s.created_at) });
    }
    return events.map((e, i): EventOutcome => {
      if (first.get(e.id) === i && mine.has(e.id)) {
        const o = outcomes[fresh.indexOf(e)];
        return { id: e.id, jobId: e.jobId, ...o, duplicate: null };
      }
      return { id: e.id, jobId: e.jobId, result: 'unchanged', membersChanged: 0, membersUnchanged: 0, duplicate: done.get(e.id)! };
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Confirm and retry (the person's requests)

/**
 * ready_for_review → confirming and a confirm run: 409 `invalid_transition` while searching, 409
 * `nothing_approved`, 409 `list_deleted`, 402 `insufficient_credits` when the balance is below what
 * the approved people may cost (one credit each) — all before anything is added. A confirming job
 * is joined (`started: false`); a completed one is answered as it is.
 */
export async function confirmCdmImport(em: EntityManager, actor: Actor, jobs: Jobs, id: string): Promise<{ job: JobWithCounts; started: boolean }> {
  assertWritable(actor);
  const j = await requireCdmImport(em, actor, id);
  const run = await em.fork().transactional(async (tx) => {
    const job = (await lockJob(tx, j.id))!;
    if (job.state === 'completed' || job.state === 'confirming') return null;
    if (job.state !== 'ready_for_review') throw conflict('invalid_transition', `an import is confirmed once it is ready_for_review; this one is ${job.state}`);
    if (!job.list_id) throw conflict('list_deleted', 'the list this import adds to was deleted');
    const [{ n }]: { n: number }[] = await tx.execute(`select count(*)::int as n from cdm_import_members where job_id = ? and status = 'approved'`, [job.id]);
    if (n === 0) throw conflict('nothing_approved', 'approve at least one person before confirming');
    await requireCredits(tx, actor.workspaceId, n * CREDITS_PER_MEMBER);
    await tx.execute(
      `update cdm_imports set state = 'confirming', run = run + 1, error_code = null, error_message = null, confirm_started_at = now(), updated_at = now() where id = ?`,
      [job.id],
    );
    return job.run + 1;
  });
  if (run !== null) await startRun(em, jobs, { jobId: j.id, workspaceId: actor.workspaceId, appId: j.app.id, run, phase: 'confirm' });
  return { job: await requireCdmImportWithCounts(em.fork(), actor, id), started: run !== null };
}

/**
 * ready_for_review → searching for the failed companies only (409 `invalid_transition` in another
 * state, 409 `nothing_to_retry` without failed companies): they go back to pending, the review
 * cursor back to the first batch holding one, and a new search run starts.
 */
export async function retryCdmImport(em: EntityManager, actor: Actor, jobs: Jobs, id: string): Promise<{ job: JobWithCounts; retried: number }> {
  assertWritable(actor);
  const j = await requireCdmImport(em, actor, id);
  const { run, retried } = await em.fork().transactional(async (tx) => {
    const job = (await lockJob(tx, j.id))!;
    if (job.state !== 'ready_for_review') throw conflict('invalid_transition', `failed companies are retried once an import is ready_for_review; this one is ${job.state}`);
    const reset: { batch: number }[] = await tx.execute(
      `update cdm_import_companies set status = 'pending', reason = null, message = null, updated_at = now() where job_id = ? and status = 'failed' returning batch`,
      [job.id],
    );
    if (!reset.length) throw conflict('nothing_to_retry', 'no company of this import failed');
    const first = Math.min(...reset.map((r) => r.batch));
    await tx.execute(
      `update cdm_imports set state = 'searching', run = run + 1, review_cursor = least(review_cursor, ?), search_finished_at = null, updated_at = now() where id = ?`,
      [first, job.id],
    );
    return { run: job.run + 1, retried: reset.length };
  });
  await startRun(em, jobs, { jobId: j.id, workspaceId: actor.workspaceId, appId: j.app.id, run, phase: 'search' });
  return { job: await requireCdmImportWithCounts(em.fork(), actor, id), retried };
}

// ---------------------------------------------------------------------------------------------
// The workflow's steps (activities call these; no actor: the job carries its workspace)

async function failPending(tx: EntityManager, jobId: string, batch: number | null, reason: CdmFailureReason, message: string): Promise<number> {
  const rows: unknown[] = await tx.execute(
    `update cdm_import_companies set status = 'failed', reason = ?, message = ?, searched_at = now(), updated_at = now()
     where job_id = ? and status = 'pending' ${batch === null ? '' : 'and batch = ?'} returning id`,
    [reason, message.slice(0, 500), jobId, ...(batch === null ? [] : [batch])],
  );
  return rows.length;
}

async function setConfirmError(tx: EntityManager, jobId: string, code: string, message: string): Promise<void> {
  await tx.execute(`update cdm_imports set state = 'ready_for_review', error_code = ?, error_message = ?, updated_at = now() where id = ?`, [code, message.slice(0, 500), jobId]);
}

/** The batches this search run has to work through (those with pending companies); none when the run is stale. */
export async function beginCdmSearch(em: EntityManager, input: { jobId: string; run: number }): Promise<{ proceed: boolean; batches: number[] }> {
  const live: unknown[] = await em.execute(
    `update cdm_imports set search_started_at = coalesce(search_started_at, now()), updated_at = now() where id = ? and run = ? and state = 'searching' returning id`,
    [input.jobId, input.run],
  );
  if (!live.length) return { proceed: false, batches: [] };
  const rows: { batch: number }[] = await em.execute(`select distinct batch from cdm_import_companies where job_id = ? and status = 'pending' order by batch`, [input.jobId]);
  return { proceed: true, batches: rows.map((r) => r.batch) };
}

export interface BatchOutcome {
  searched: number;
  found: number;
  failed: number;
  /** Companies left pending by a transient source error (the activity is retried for them). */
  transient: { companyId: string; code: string; message: string; retryAfterSeconds: number | null }[];
}

const cut = (s: string | null | undefined, n: number): string | null => {
  const v = s?.trim();
  return v ? v.slice(0, n) : null;
};

const mapLimit = async <T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
};

type Found = { name: string; domain: string | null; size: string | null; industry: string | null };
type CompanyOutcome =
  | { kind: 'found'; resolved: Found; people: Candidate[] }
  | { kind: 'failed'; reason: CdmFailureReason; message: string }
  | { kind: 'transient'; code: string; message: string; retryAfterSeconds: number | null };

/**
 * Searches the batch's pending companies (a few at a time), then records the whole batch in one
 * transaction with a fixed number of statements: found (its people inserted once per job), a
 * duplicate of a company found earlier in the job, `company_not_found`, or `source_error` (a
 * permanent provider error). A transient error leaves the company pending (its attempt counted) and
 * is reported, so the activity can be retried for those companies only. People without an email or
 * a profile URL are skipped: no contact could be made of them.
 */
export async function searchCdmBatch(
  em: EntityManager,
  source: DiscoverySource,
  input: { jobId: string; run: number; batch: number },
  hooks: { heartbeat?: (d: unknown) => void; signal?: AbortSignal } = {},
): Promise<BatchOutcome> {
  const out: BatchOutcome = { searched: 0, found: 0, failed: 0, transient: [] };
  const [job]: JobLock[] = await em.execute(`select id, state, run, titles, seniorities, max_per_company from cdm_imports where id = ?`, [input.jobId]);
  if (!job || job.run !== input.run || job.state !== 'searching') return out;
  if (!source.companyPeople) throw new Error(`the ${source.name} source cannot list a company's people`);
  const list = (v: string[] | string) => (typeof v === 'string' ? (JSON.parse(v) as string[]) : v);
  const roles = { titles: list(job.titles), seniorities: list(job.seniorities) as Seniority[] };
  const companies: BatchCompany[] = await em.execute(
    `select id, position, batch, input_name, input_domain from cdm_import_companies where job_id = ? and batch = ? and status = 'pending' order by position`,
    [input.jobId, input.batch],
  );
  const outcomes = new Map<string, CompanyOutcome>();
  await mapLimit(companies, SEARCH_CONCURRENCY, async (co) => {
    outcomes.set(co.id, await searchCompany(source, co, roles, job.max_per_company, hooks.signal));
    hooks.heartbeat?.({ batch: input.batch, searched: outcomes.size });
  });
  for (const co of companies) {
    const o = outcomes.get(co.id)!;
    if (o.kind === 'transient') out.transient.push({ companyId: co.id, code: o.code, message: o.message, retryAfterSeconds: o.retryAfterSeconds });
    else {
      out.searched++;
      if (o.kind === 'found') out.found++;
      else out.failed++;
    }
  }
  await recordBatch(em, input, companies, outcomes);
  return out;
}

interface BatchCompany {
  id: string;
  position: number;
  batch: number;
  input_name: string | null;
  input_domain: string | null;
}

async function searchCompany(source: DiscoverySource, co: BatchCompany, roles: { titles: string[]; seniorities: Seniority[] }, max: number, signal?: AbortSignal): Promise<CompanyOutcome> {
  try {
    const people: Candidate[] = [];
    let resolved: Found | null = null;
    let cursor: string | undefined;
    let pages = 0;
    do {
      // A little more than needed per page: people without a usable identifier are skipped.
      const page = await source.companyPeople!({ name: co.input_name, domain: co.input_domain }, roles, { cursor, limit: Math.min(200, max * 2) }, signal);
      if (!page) break;
      resolved = page.company;
      for (const p of page.people) if (people.length < max && (normaliseEmail(p.email) || normaliseProfileUrl(p.profileUrl))) people.push(p);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && people.length < max && ++pages < 10);
    return resolved ? { kind: 'found', resolved, people } : { kind: 'failed', reason: 'company_not_found', message: 'the professional network does not know this company' };
  } catch (err) {
    if (signal?.aborted || !(err instanceof ProviderError)) throw err;
    if (err.retryable) return { kind: 'transient', code: err.code, message: err.message, retryAfterSeconds: err.retryAfterSeconds };
    return { kind: 'failed', reason: 'source_error', message: err.message };
  }
}

/**
 * One batch's outcomes in one transaction: check the run under the job's lock, read the companies
 * of the job already found under the same resolved keys, then one update of the companies (only
 * those still pending: a retried activity whose first attempt committed writes nothing twice), one
 * insert of the people, one update of the counts, one update of the transient attempts.
 */
async function recordBatch(em: EntityManager, input: { jobId: string; run: number }, companies: BatchCompany[], outcomes: Map<string, CompanyOutcome>): Promise<void> {
  const keyOf = (r: Found) => ((r.domain && normaliseDomain(r.domain)) || `name:${nameKey(r.name)}`).slice(0, 320);
  await em.transactional(async (tx) => {
    const job = await lockJob(tx, input.jobId, 'share');
    if (!job || job.run !== input.run || job.state !== 'searching') return;
    // Duplicates are decided by what is stored: one batch of a job records at a time.
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`cdm:${input.jobId}`]);
    const found = companies.filter((c) => outcomes.get(c.id)!.kind === 'found');
    const keys = [...new Set(found.map((c) => keyOf((outcomes.get(c.id) as { resolved: Found }).resolved)))];
    const earlier: { id: string; resolved_key: string }[] = keys.length
      ? await tx.execute(
          `select distinct on (resolved_key) id, resolved_key from cdm_import_companies where job_id = ? and status = 'done' and resolved_key = any(${texts}) order by resolved_key, position`,
          [input.jobId, JSON.stringify(keys)],
        )
      : [];
    const firstOf = new Map(earlier.map((e) => [e.resolved_key, e.id]));
    const updates: Record<string, unknown>[] = [];
    const newMembers: { company: BatchCompany; people: Candidate[]; resolved: Found }[] = [];
    for (const co of companies) {
      const o = outcomes.get(co.id)!;
      if (o.kind === 'transient') continue;
      if (o.kind === 'failed') {
        updates.push({ id: co.id, status: 'failed', reason: o.reason, message: o.message.slice(0, 500) });
        continue;
      }
      const key = keyOf(o.resolved);
      const resolved = { resolved_name: cut(o.resolved.name, 300), resolved_domain: cut(o.resolved.domain, 255), resolved_industry: cut(o.resolved.industry, 200), resolved_size: cut(o.resolved.size, 20), resolved_key: key };
      const dup = firstOf.get(key);
      if (dup && dup !== co.id) {
        updates.push({ id: co.id, status: 'duplicate', duplicate_of: dup, ...resolved });
      } else {
        firstOf.set(key, co.id);
        updates.push({ id: co.id, status: 'done', ...resolved });
        newMembers.push({ company: co, people: o.people, resolved: o.resolved });
      }
    }
    const claimed: { id: string }[] = updates.length
      ? await tx.execute(
          `update cdm_import_companies c set status = v.status, reason = v.reason, message = v.message, duplicate_of = v.duplicate_of,
             resolved_name = v.resolved_name, resolved_domain = v.resolved_domain, resolved_industry = v.resolved_industry, resolved_size = v.resolved_size,
             resolved_key = v.resolved_key, attempts = c.attempts + 1, searched_at = now(), updated_at = now()
           from json_to_recordset(?::json) as v(id uuid, status text, reason text, message text, duplicate_of uuid, resolved_name text, resolved_domain text,
             resolved_industry text, resolved_size text, resolved_key text)
           where c.id = v.id and c.status = 'pending' returning c.id`,
          [JSON.stringify(updates)],
        )
      : [];
    const mine = new Set(claimed.map((c) => c.id));
    const rows = newMembers
      .filter((m) => mine.has(m.company.id))
      .flatMap(({ company, people, resolved }) => {
        const ids = people.map(() => uuidv7()).sort();
        return people.map((p, rank) => ({
          id: ids[rank],
          company_id: company.id,
          company_position: company.position,
          batch: company.batch,
          rank,
          external_id: p.externalId.slice(0, 200),
          profile_url: cut(p.profileUrl, 2048),
          email: cut(p.email, 320),
          full_name: cut(p.fullName, 400) ?? p.externalId.slice(0, 400),
          first_name: cut(p.firstName, 200),
          last_name: cut(p.lastName, 200),
          title: cut(p.title, 300),
          headline: cut(p.headline, 300),
          seniority: p.seniority,
          country: cut(p.country, 100),
          company_name: cut(p.company?.name ?? resolved.name, 300),
          company_domain: cut(p.company?.domain ?? resolved.domain, 255),
        }));
      });
    if (rows.length) {
      const inserted: { company_id: string }[] = await tx.execute(
        `insert into cdm_import_members (id, job_id, company_id, company_position, batch, rank, external_id, profile_url, email, full_name, first_name, last_name,
           title, headline, seniority, country, company_name, company_domain, status, credits_charged, created_at, updated_at)
         select v.id, ?, v.company_id, v.company_position, v.batch, v.rank, v.external_id, v.profile_url, v.email, v.full_name, v.first_name, v.last_name,
           v.title, v.headline, v.seniority, v.country, v.company_name, v.company_domain, 'pending', 0, now(), now()
         from json_to_recordset(?::json) as v(id uuid, company_id uuid, company_position int, batch int, rank int, external_id text, profile_url text, email text,
           full_name text, first_name text, last_name text, title text, headline text, seniority text, country text, company_name text, company_domain text)
         on conflict (job_id, external_id) do nothing returning company_id`,
        [input.jobId, JSON.stringify(rows)],
      );
      const counts = new Map<string, number>();
      for (const r of inserted) counts.set(r.company_id, (counts.get(r.company_id) ?? 0) + 1);
      if (counts.size) {
        await tx.execute(`update cdm_import_companies c set members_found = v.n from json_to_recordset(?::json) as v(id uuid, n int) where c.id = v.id`, [
          JSON.stringify([...counts].map(([id, n]) => ({ id, n }))),
        ]);
      }
    }
    const transient = companies.filter((c) => outcomes.get(c.id)!.kind === 'transient');
    if (transient.length) {
      await tx.execute(
        `update cdm_import_companies c set attempts = c.attempts + 1, message = v.message, updated_at = now()
         from json_to_recordset(?::json) as v(id uuid, message text) where c.id = v.id and c.status = 'pending'`,
        [JSON.stringify(transient.map((c) => ({ id: c.id, message: (outcomes.get(c.id) as { message: string }).message.slice(0, 500) })))],
      );
    }
  });
}

/** After the activity's last attempt: the batch's companies still pending failed with this reason. */
export async function failCdmBatch(em: EntityManager, input: { jobId: string; run: number; batch: number; reason: CdmFailureReason; message: string }): Promise<number> {
  return em.transactional(async (tx) => {
    const job = await lockJob(tx, input.jobId, 'share');
    if (!job || job.run !== input.run || job.state !== 'searching') return 0;
    return failPending(tx, input.jobId, input.batch, input.reason, input.message);
  });
}

/** searching → ready_for_review once every batch has been worked through (anything still pending failed). */
export async function finishCdmSearch(em: EntityManager, input: { jobId: string; run: number }): Promise<{ state: CdmState | null }> {
  return em.transactional(async (tx) => {
    const job = await lockJob(tx, input.jobId);
    if (!job || job.run !== input.run || job.state !== 'searching') return { state: job?.state ?? null };
    await failPending(tx, input.jobId, null, 'search_failed', 'the search ended before this company was searched');
    await tx.execute(`update cdm_imports set state = 'ready_for_review', search_finished_at = now(), updated_at = now() where id = ?`, [input.jobId]);
    await notifyCompanyImport(tx, input.jobId, 'ready_for_review');
    return { state: 'ready_for_review' as const };
  });
}

interface ApprovedRow {
  id: string;
  email: string | null;
  profile_url: string | null;
  first_name: string | null;
  last_name: string | null;
  full_name: string;
  title: string | null;
  company_name: string | null;
  company_domain: string | null;
  country: string | null;
}

/**
 * Adds up to CONFIRM_CHUNK approved people to the list in one transaction, with a fixed number of
 * statements: read them, find their contacts (normalised email first, then normalised profile URL),
 * insert the missing contacts, fill empty fields of existing ones (never overwrite), insert the
 * leads, debit one credit per lead created (ledger key `cdm:<jobId>:<memberId>`), mark them added.
 * A chunk the balance cannot cover is rolled back whole: the job goes back to ready_for_review with
 * `insufficient_credits`. When none is left the job is completed.
 */
export async function confirmCdmChunk(em: EntityManager, input: { jobId: string; run: number }): Promise<{ done: boolean; added: number }> {
  try {
    return await em.transactional(async (tx) => {
      // The list first, then the job: the order a list's deletion takes them in (it nulls list_id), so the two cannot deadlock.
      await tx.execute('select 1 from lead_lists l join cdm_imports j on j.list_id = l.id where j.id = ? for key share of l', [input.jobId]);
      const job = await lockJob(tx, input.jobId);
      if (!job || job.run !== input.run || job.state !== 'confirming') return { done: true, added: 0 };
      if (!job.list_id) {
        await setConfirmError(tx, job.id, 'list_deleted', 'the list this import adds to was deleted');
        return { done: true, added: 0 };
      }
      const rows: ApprovedRow[] = await tx.execute(
        `select id, email, profile_url, first_name, last_name, full_name, title, company_name, company_domain, country
         from cdm_import_members where job_id = ? and status = 'approved' order by id limit ?`,
        [job.id, CONFIRM_CHUNK],
      );
      if (!rows.length) {
        await tx.execute(`update cdm_imports set state = 'completed', completed_at = now(), updated_at = now() where id = ?`, [job.id]);
        await notifyCompanyImport(tx, job.id, 'completed');
        return { done: true, added: 0 };
      }
      const added = await addMembers(tx, job, rows);
      return { done: false, added };
    });
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'insufficient_credits')) throw err;
    await em.transactional(async (tx) => {
      const job = await lockJob(tx, input.jobId);
      if (job && job.run === input.run && job.state === 'confirming') await setConfirmError(tx, job.id, 'insufficient_credits', err.message);
    });
    return { done: true, added: 0 };
  }
}

async function addMembers(tx: EntityManager, job: JobLock, rows: ApprovedRow[]): Promise<number> {
  const pending = rows.map((r) => ({ ...r, company: r.company_name, emailKey: normaliseEmail(r.email), urlKey: normaliseProfileUrl(r.profile_url) }));
  const { contactOf: resolve, created: createdContacts } = await upsertContacts(tx, job.workspace_id, pending);
  const contactIds = [...new Set(pending.map(resolve).filter((x): x is string => !!x))];
  const createdLeads: { id: string; contact_id: string }[] = contactIds.length
    ? await tx.execute(
        `insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
         select v.id, ?, ?, v.contact_id, 'import', now(), now() from json_to_recordset(?::json) as v(id uuid, contact_id uuid)
         on conflict (list_id, contact_id) do nothing returning id, contact_id`,
        [job.workspace_id, job.list_id, JSON.stringify(contactIds.map((c) => ({ id: uuidv7(), contact_id: c })))],
      )
    : [];
  const leads = new Map(createdLeads.map((l) => [l.contact_id, l.id]));
  const newLeads = new Set(leads.keys());
  const missing = contactIds.filter((c) => !leads.has(c));
  if (missing.length) {
    const old: { id: string; contact_id: string }[] = await tx.execute(`select id, contact_id from leads where list_id = ? and contact_id = any(${uuids})`, [job.list_id, JSON.stringify(missing)]);
    for (const l of old) leads.set(l.contact_id, l.id);
  }
  // Within a chunk, the first person of a contact is the one who created the lead (and the contact).
  const claimedLead = new Set<string>();
  const claimedContact = new Set<string>();
  const updates = pending.map((p) => {
    const contactId = resolve(p);
    if (!contactId) return { id: p.id, status: 'rejected', lead_id: null, contact_id: null, lead_created: null, contact_created: null, credits: 0 };
    const leadCreated = newLeads.has(contactId) && !claimedLead.has(contactId);
    const contactCreated = createdContacts.has(contactId) && !claimedContact.has(contactId);
    claimedLead.add(contactId);
    claimedContact.add(contactId);
    return { id: p.id, status: 'added', lead_id: leads.get(contactId)!, contact_id: contactId, lead_created: leadCreated, contact_created: contactCreated, credits: leadCreated ? CREDITS_PER_MEMBER : 0 };
  });
  const charged = updates.filter((u) => u.credits > 0);
  // All or nothing: 402 here rolls the whole chunk back (contacts, leads and all).
  await debitCreditsBatch(
    tx,
    job.workspace_id,
    charged.map((u) => ({ key: `cdm:${job.id}:${u.id}`, amount: u.credits })),
    `Company decision-maker import ${job.id}`,
  );
  await tx.execute(
    `update cdm_import_members m set status = v.status, lead_id = v.lead_id, contact_id = v.contact_id, lead_created = v.lead_created,
       contact_created = v.contact_created, credits_charged = v.credits, added_at = case when v.status = 'added' then now() end, updated_at = now()
     from json_to_recordset(?::json) as v(id uuid, status text, lead_id uuid, contact_id uuid, lead_created boolean, contact_created boolean, credits int)
     where m.id = v.id`,
    [JSON.stringify(updates)],
  );
  const total = charged.reduce((n, u) => n + u.credits, 0);
  if (total) await tx.execute('update cdm_imports set credits_charged = credits_charged + ?, updated_at = now() where id = ?', [total, job.id]);
  return updates.filter((u) => u.status === 'added').length;
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
export async function cdmResults(em: EntityManager, actor: Actor, id: string, page: { limit: number; after?: string }): Promise<{ job: ICdmImport; summary: ResultSummary; rows: (MemberRow & { cursor_id: string })[] }> {
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
export async function approvedMembers(em: EntityManager, actor: Actor, id: string, page: { limit: number; after?: string }) {
  const rows = await listMembers(em, actor, id, { status: ['approved', 'added'] }, page);
  const counts = await cdmCounts(em, id);
  return { rows, counts: { approved: counts.members.approved, added: counts.members.added } };
}
