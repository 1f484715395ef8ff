// What every part of a company decision-maker import shares: the limits, row shapes, the job's lock and reads.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CdmImport, type CdmState, type ICdmImport } from '../../db/entities/CdmImport.js';
import type { CdmCompanyStatus, CdmFailureReason } from '../../db/entities/CdmImportCompany.js';
import type { CdmMemberStatus } from '../../db/entities/CdmImportMember.js';
import type { Seniority } from '../../lib/sources/types.js';
import { notFound } from '../errors.js';
import type { Actor } from '../identity.js';

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

/** A JSON array parameter as an array expression (the query builder would expand a JS array into a list). */
export const uuids = 'array(select x::uuid from json_array_elements_text(?::json) x)';
export const texts = 'array(select json_array_elements_text(?::json))';

const zeroCompanies = (): Record<CdmCompanyStatus, number> => ({ pending: 0, done: 0, failed: 0, duplicate: 0 });
const zeroMembers = (): Record<CdmMemberStatus, number> => ({ pending: 0, approved: 0, rejected: 0, added: 0 });

/** A company name as compared for duplicates (NFC, trimmed, lower case, single spaces). */
export const nameKey = (s: string) => s.normalize('NFC').trim().toLowerCase().replace(/\s+/g, ' ');

// ---------------------------------------------------------------------------------------------
// Reads

export interface JobLock {
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

export async function lockJob(
  tx: EntityManager,
  jobId: string,
  mode: 'update' | 'share' = 'update',
): Promise<JobLock | undefined> {
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
  const [row]: {
    companies: Record<string, number> | null;
    members: Record<string, number> | null;
    pending_batches: number;
    batch_count: number;
  }[] = await em.execute(
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

// ---------------------------------------------------------------------------------------------
// Undoing a run's work (a run that could not start, a search that ended, a confirm that stopped)

/** The pending companies (of one batch, or all) fail with this reason; how many did. */
export async function failPending(
  tx: EntityManager,
  jobId: string,
  batch: number | null,
  reason: CdmFailureReason,
  message: string,
): Promise<number> {
  const rows: unknown[] = await tx.execute(
    `update cdm_import_companies set status = 'failed', reason = ?, message = ?, searched_at = now(), updated_at = now()
     where job_id = ? and status = 'pending' ${batch === null ? '' : 'and batch = ?'} returning id`,
    [reason, message.slice(0, 500), jobId, ...(batch === null ? [] : [batch])],
  );
  return rows.length;
}

/** confirming → ready_for_review with the error that stopped the confirm. */
export async function setConfirmError(tx: EntityManager, jobId: string, code: string, message: string): Promise<void> {
  await tx.execute(
    `update cdm_imports set state = 'ready_for_review', error_code = ?, error_message = ?, updated_at = now() where id = ?`,
    [code, message.slice(0, 500), jobId],
  );
}
