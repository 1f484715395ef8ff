// The search the `cdm-import:<jobId>` workflow drives, batch by batch (activities call it; the job carries its workspace).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CdmState } from '../../db/entities/CdmImport.js';
import type { CdmFailureReason } from '../../db/entities/CdmImportCompany.js';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseDomain, normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { ProviderError } from '../../lib/provider-http.js';
import type { Candidate, DiscoverySource, Seniority } from '../../lib/sources/types.js';
import { notifyCompanyImport } from '../notifications/notifications.js';
import { failPending, lockJob, nameKey, texts, type JobLock } from './job.js';

/** Companies searched at once within a batch. */
const SEARCH_CONCURRENCY = 4;

/** The batches this search run has to work through (those with pending companies); none when the run is stale. */
export async function beginCdmSearch(
  em: EntityManager,
  input: { jobId: string; run: number },
): Promise<{ proceed: boolean; batches: number[] }> {
  const live: unknown[] = await em.execute(
    `update cdm_imports set search_started_at = coalesce(search_started_at, now()), updated_at = now() where id = ? and run = ? and state = 'searching' returning id`,
    [input.jobId, input.run],
  );
  if (!live.length) return { proceed: false, batches: [] };
  const rows: { batch: number }[] = await em.execute(
    `select distinct batch from cdm_import_companies where job_id = ? and status = 'pending' order by batch`,
    [input.jobId],
  );
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
  const [job]: JobLock[] = await em.execute(
    `select id, state, run, titles, seniorities, max_per_company from cdm_imports where id = ?`,
    [input.jobId],
  );
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
    if (o.kind === 'transient')
      out.transient.push({
        companyId: co.id,
        code: o.code,
        message: o.message,
        retryAfterSeconds: o.retryAfterSeconds,
      });
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

async function searchCompany(
  source: DiscoverySource,
  co: BatchCompany,
  roles: { titles: string[]; seniorities: Seniority[] },
  max: number,
  signal?: AbortSignal,
): Promise<CompanyOutcome> {
  try {
    const people: Candidate[] = [];
    let resolved: Found | null = null;
    let cursor: string | undefined;
    let pages = 0;
    do {
      // A little more than needed per page: people without a usable identifier are skipped.
      const page = await source.companyPeople!(
        { name: co.input_name, domain: co.input_domain },
        roles,
        { cursor, limit: Math.min(200, max * 2) },
        signal,
      );
      if (!page) break;
      resolved = page.company;
      for (const p of page.people)
        if (people.length < max && (normaliseEmail(p.email) || normaliseProfileUrl(p.profileUrl))) people.push(p);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && people.length < max && ++pages < 10);
    return resolved
      ? { kind: 'found', resolved, people }
      : { kind: 'failed', reason: 'company_not_found', message: 'the professional network does not know this company' };
  } catch (err) {
    if (signal?.aborted || !(err instanceof ProviderError)) throw err;
    if (err.retryable)
      return { kind: 'transient', code: err.code, message: err.message, retryAfterSeconds: err.retryAfterSeconds };
    return { kind: 'failed', reason: 'source_error', message: err.message };
  }
}

/**
 * One batch's outcomes in one transaction: check the run under the job's lock, read the companies
 * of the job already found under the same resolved keys, then one update of the companies (only
 * those still pending: a retried activity whose first attempt committed writes nothing twice), one
 * insert of the people, one update of the counts, one update of the transient attempts.
 */
async function recordBatch(
  em: EntityManager,
  input: { jobId: string; run: number },
  companies: BatchCompany[],
  outcomes: Map<string, CompanyOutcome>,
): Promise<void> {
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
      const resolved = {
        resolved_name: cut(o.resolved.name, 300),
        resolved_domain: cut(o.resolved.domain, 255),
        resolved_industry: cut(o.resolved.industry, 200),
        resolved_size: cut(o.resolved.size, 20),
        resolved_key: key,
      };
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
        await tx.execute(
          `update cdm_import_companies c set members_found = v.n from json_to_recordset(?::json) as v(id uuid, n int) where c.id = v.id`,
          [JSON.stringify([...counts].map(([id, n]) => ({ id, n })))],
        );
      }
    }
    const transient = companies.filter((c) => outcomes.get(c.id)!.kind === 'transient');
    if (transient.length) {
      await tx.execute(
        `update cdm_import_companies c set attempts = c.attempts + 1, message = v.message, updated_at = now()
         from json_to_recordset(?::json) as v(id uuid, message text) where c.id = v.id and c.status = 'pending'`,
        [
          JSON.stringify(
            transient.map((c) => ({
              id: c.id,
              message: (outcomes.get(c.id) as { message: string }).message.slice(0, 500),
            })),
          ),
        ],
      );
    }
  });
}

/** After the activity's last attempt: the batch's companies still pending failed with this reason. */
export async function failCdmBatch(
  em: EntityManager,
  input: { jobId: string; run: number; batch: number; reason: CdmFailureReason; message: string },
): Promise<number> {
  return em.transactional(async (tx) => {
    const job = await lockJob(tx, input.jobId, 'share');
    if (!job || job.run !== input.run || job.state !== 'searching') return 0;
    return failPending(tx, input.jobId, input.batch, input.reason, input.message);
  });
}

/** searching → ready_for_review once every batch has been worked through (anything still pending failed). */
export async function finishCdmSearch(
  em: EntityManager,
  input: { jobId: string; run: number },
): Promise<{ state: CdmState | null }> {
  return em.transactional(async (tx) => {
    const job = await lockJob(tx, input.jobId);
    if (!job || job.run !== input.run || job.state !== 'searching') return { state: job?.state ?? null };
    await failPending(tx, input.jobId, null, 'search_failed', 'the search ended before this company was searched');
    await tx.execute(
      `update cdm_imports set state = 'ready_for_review', search_finished_at = now(), updated_at = now() where id = ?`,
      [input.jobId],
    );
    await notifyCompanyImport(tx, input.jobId, 'ready_for_review');
    return { state: 'ready_for_review' as const };
  });
}
