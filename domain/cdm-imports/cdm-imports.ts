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
//
// The operations the API calls live here (create, confirm, retry); the rest of the slice: job.ts
// (limits, rows, the job's lock and reads), review.ts (batches and pages for review, results,
// metrics), decisions.ts (approvals and client events), search-run.ts and confirm-run.ts (the steps
// the workflow drives).
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseDomain } from '../../lib/normalise.js';
import { SENIORITIES, type Seniority } from '../../lib/sources/types.js';
import { requireApp } from '../apps/apps.js';
import { requireCredits } from '../billing/credits.js';
import { assertWritable } from '../demo/demo.js';
import { badRequest, conflict } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import {
  CREDITS_PER_MEMBER,
  DEFAULT_BATCH_SIZE,
  DEFAULT_PER_COMPANY,
  failPending,
  lockJob,
  MAX_COMPANIES,
  nameKey,
  requireCdmImport,
  requireCdmImportWithCounts,
  setConfirmError,
  type JobWithCounts,
} from './job.js';
// The port's input, declared with the port (domain/jobs.ts) so that the port imports no slice.
import type { CdmImportStart } from '../jobs.js';
export type { CdmImportStart };

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

/**
 * Creates the job with its companies (in the order given, duplicates of an earlier entry — same
 * normalised domain, or same name when neither has a domain — dropped and counted) and starts run 1
 * of `cdm-import:<id>`. The list must be one of the product's (400 `invalid_list_id`).
 */
export async function createCdmImport(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  input: NewCdmImport,
): Promise<JobWithCounts> {
  assertWritable(actor);
  const app = await requireApp(em, actor, input.appId);
  const [list]: { id: string }[] = await em.execute(
    'select id from lead_lists where id = ? and workspace_id = ? and app_id = ?',
    [input.listId, actor.workspaceId, app.id],
  );
  if (!list) throw badRequest('invalid_list_id', 'list_id must name a list of the product app_id');
  if (input.companies.length < 1 || input.companies.length > MAX_COMPANIES)
    throw badRequest('invalid_body', `give 1 to ${MAX_COMPANIES} companies`);
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
      [
        jobId,
        JSON.stringify(
          companies.map((c, i) => ({
            id: ids[i],
            position: i,
            batch: Math.floor(i / batchSize),
            name: c.name,
            domain: c.domain,
          })),
        ),
      ],
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
    await jobs.start('cdm-import', start);
  } catch (err) {
    const message = String((err as Error)?.message ?? err).slice(0, 500);
    await em.fork().transactional(async (tx) => {
      const job = await lockJob(tx, start.jobId);
      if (!job || job.run !== start.run) return;
      if (start.phase === 'search' && job.state === 'searching') {
        await failPending(tx, start.jobId, null, 'search_failed', `the search could not start: ${message}`);
        await tx.execute(
          `update cdm_imports set state = 'ready_for_review', search_finished_at = now(), updated_at = now() where id = ?`,
          [start.jobId],
        );
      } else if (start.phase === 'confirm' && job.state === 'confirming') {
        await setConfirmError(tx, start.jobId, 'start_failed', `the confirm could not start: ${message}`);
      }
    });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Confirm and retry (the person's requests)

/**
 * ready_for_review → confirming and a confirm run: 409 `invalid_transition` while searching, 409
 * `nothing_approved`, 409 `list_deleted`, 402 `insufficient_credits` when the balance is below what
 * the approved people may cost (one credit each) — all before anything is added. A confirming job
 * is joined (`started: false`); a completed one is answered as it is.
 */
export async function confirmCdmImport(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  id: string,
): Promise<{ job: JobWithCounts; started: boolean }> {
  assertWritable(actor);
  const j = await requireCdmImport(em, actor, id);
  const run = await em.fork().transactional(async (tx) => {
    const job = (await lockJob(tx, j.id))!;
    if (job.state === 'completed' || job.state === 'confirming') return null;
    if (job.state !== 'ready_for_review')
      throw conflict(
        'invalid_transition',
        `an import is confirmed once it is ready_for_review; this one is ${job.state}`,
      );
    if (!job.list_id) throw conflict('list_deleted', 'the list this import adds to was deleted');
    const [{ n }]: { n: number }[] = await tx.execute(
      `select count(*)::int as n from cdm_import_members where job_id = ? and status = 'approved'`,
      [job.id],
    );
    if (n === 0) throw conflict('nothing_approved', 'approve at least one person before confirming');
    await requireCredits(tx, actor.workspaceId, n * CREDITS_PER_MEMBER);
    await tx.execute(
      `update cdm_imports set state = 'confirming', run = run + 1, error_code = null, error_message = null, confirm_started_at = now(), updated_at = now() where id = ?`,
      [job.id],
    );
    return job.run + 1;
  });
  if (run !== null)
    await startRun(em, jobs, { jobId: j.id, workspaceId: actor.workspaceId, appId: j.app.id, run, phase: 'confirm' });
  return { job: await requireCdmImportWithCounts(em.fork(), actor, id), started: run !== null };
}

/**
 * ready_for_review → searching for the failed companies only (409 `invalid_transition` in another
 * state, 409 `nothing_to_retry` without failed companies): they go back to pending, the review
 * cursor back to the first batch holding one, and a new search run starts.
 */
export async function retryCdmImport(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  id: string,
): Promise<{ job: JobWithCounts; retried: number }> {
  assertWritable(actor);
  const j = await requireCdmImport(em, actor, id);
  const { run, retried } = await em.fork().transactional(async (tx) => {
    const job = (await lockJob(tx, j.id))!;
    if (job.state !== 'ready_for_review')
      throw conflict(
        'invalid_transition',
        `failed companies are retried once an import is ready_for_review; this one is ${job.state}`,
      );
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
