// CSV exports of contacts (docs/contacts.md). A request records the export (`queued`) with its
// filters and the requester's product scope, and starts `contacts-export:<id>`. The workflow's
// activities call the steps below: begin (→ `running`, header chunk), write pages (keyset over
// contact ids, one chunk and the cursor per transaction), finish (→ `completed`) or fail
// (→ `failed`). The file lives in `export_file_chunks` and is streamed back chunk by chunk.
//
// Who sees an export: a caller with every product sees all exports of the workspace (they may see
// every contact anyway); a member limited to some products sees the exports they requested, as long
// as those covered only products they still have.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ContactExport, type ExportFilters, type IContactExport } from '../../db/entities/ContactExport.js';
import { csvHeader, csvRecords, type ExportContactRow } from '../../lib/contacts-csv.js';
import { keysetSql, type PageRequest } from '../../lib/pagination.js';
import { checkFilters, contactConditions, scopeOf, type ContactFilters, type Scope } from './contacts.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
// The port's input, declared with the port (domain/jobs.ts) so that the port imports no slice.
import type { ExportStart } from '../jobs.js';
export type { ExportStart };

/** Default page of the export activity: bounded memory (one page of rows and its CSV at a time). */
export const EXPORT_PAGE_SIZE = 5_000;

const toFilters = (f: ContactFilters): ExportFilters =>
  Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined && v !== '')) as ExportFilters;

/** Records the export and starts its workflow; 202 with the export in `queued`. */
export async function createExport(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  filters: ContactFilters,
): Promise<IContactExport> {
  assertWritable(actor);
  await checkFilters(em, actor, filters);
  let appId = filters.appId;
  if (!appId && filters.listId) {
    const [l]: { app_id: string }[] = await em.execute('select app_id from lead_lists where id = ?', [filters.listId]);
    appId = l?.app_id;
  }
  const exp = em.create(ContactExport, {
    workspace: actor.workspaceId,
    requestedBy: actor.userId,
    filters: toFilters(filters),
    scopeAppIds: scopeOf(actor) as string[] | null,
    status: 'queued',
  });
  await em.flush();
  try {
    await jobs.start('contacts-export', { exportId: exp.id, workspaceId: actor.workspaceId, appId });
  } catch (err) {
    await failExport(em, exp.id, 'start_failed', err instanceof Error ? err.message : String(err));
    throw err;
  }
  return exp;
}

/** SQL condition: the caller may see the export `e`. */
function visible(actor: Actor, params: unknown[]): string {
  params.push(actor.workspaceId);
  if (actor.allApps) return 'e.workspace_id = ?';
  params.push(actor.userId, JSON.stringify(actor.appIds));
  return 'e.workspace_id = ? and e.requested_by = ? and e.scope_app_ids is not null and e.scope_app_ids <@ ?::jsonb';
}

/** One page (`limit + 1`) of the exports the caller sees, newest first. */
export async function listExports(em: EntityManager, actor: Actor, page: PageRequest): Promise<IContactExport[]> {
  const params: unknown[] = [];
  const sql = `select e.id from contact_exports e where ${visible(actor, params)}`;
  const k = keysetSql(page, 'e.id', 'desc');
  const ids = ((await em.execute(sql + k.sql, [...params, ...k.params])) as { id: string }[]).map((r) => r.id);
  if (!ids.length) return [];
  const rows = await em.find(ContactExport, { id: { $in: ids } }, { refresh: true });
  return rows.sort((a, b) => (a.id < b.id ? 1 : -1));
}

/** The export, if the caller may see it (404 otherwise, whoever's it is). */
export async function getExport(em: EntityManager, actor: Actor, id: string): Promise<IContactExport> {
  const params: unknown[] = [];
  const found: unknown[] = await em.execute(
    `select 1 from contact_exports e where e.id = ? and ${visible(actor, params)}`,
    [id, ...params],
  );
  if (!found.length) throw notFound('export');
  return em.findOneOrFail(ContactExport, id, { refresh: true });
}

/** A finished export's file, read two chunks at a time (a chunk is one page of rows, about 1–2 MB). */
export async function* exportChunks(em: EntityManager, exportId: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ;) {
    const rows: { seq: number; data: Buffer }[] = await em.execute(
      'select seq, data from export_file_chunks where export_id = ? and seq >= ? order by seq limit 2',
      [exportId, seq],
    );
    for (const r of rows) {
      yield r.data;
      seq = r.seq + 1;
    }
    if (rows.length < 2) return;
  }
}

/** The export to download: 409 `export_not_ready` while it is queued or running, 409 `export_failed` after a failure. */
export async function requireDownload(em: EntityManager, actor: Actor, id: string): Promise<IContactExport> {
  const exp = await getExport(em, actor, id);
  if (exp.status === 'failed')
    throw new AppError(409, 'export_failed', `this export failed (${exp.errorCode ?? 'unknown'}); start a new one`, {
      status: exp.status,
    });
  if (exp.status !== 'completed')
    throw new AppError(409, 'export_not_ready', `this export is ${exp.status}; download it once it is completed`, {
      status: exp.status,
    });
  return exp;
}

// ---------------------------------------------------------------------------------------------
// The workflow's steps (activities call these)

interface ExportRow {
  id: string;
  workspace_id: string;
  status: string;
  filters: ExportFilters | string;
  scope_app_ids: string[] | string | null;
  next_seq: number;
  last_contact_id: string | null;
  row_count: number;
  byte_count: string | number;
}

const parse = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

export type BeginOutcome = { run: true } | { run: false; status: string };

/** `queued` → `running` with the header as chunk 0; a running export (a resumed or continued run) goes on as it is. */
export async function beginExport(em: EntityManager, exportId: string): Promise<BeginOutcome> {
  return em.transactional(async (tx) => {
    const [e]: ExportRow[] = await tx.execute('select * from contact_exports where id = ? for update', [exportId]);
    if (!e) return { run: false, status: 'missing' };
    if (e.status === 'completed' || e.status === 'failed') return { run: false, status: e.status };
    if (e.status === 'queued') {
      const header = csvHeader();
      await tx.execute(
        'insert into export_file_chunks (export_id, seq, data) values (?, 0, ?) on conflict do nothing',
        [exportId, header],
      );
      await tx.execute(
        `update contact_exports set status = 'running', started_at = now(), next_seq = 1, byte_count = ? where id = ?`,
        [header.length, exportId],
      );
    }
    return { run: true };
  });
}

export interface PagesOutcome {
  done: boolean;
  rows: number;
  chunks: number;
}

/**
 * Writes up to `maxPages` pages of `pageSize` contacts after the export's cursor. Each page is one
 * transaction: the cursor row is advanced only if nobody else advanced it (a stale attempt stops),
 * and the chunk is inserted with it, so what is committed is always a whole prefix of the file.
 */
export async function writeExportPages(
  em: EntityManager,
  exportId: string,
  opts: { pageSize: number; maxPages: number; onPage?: (p: { rows: number; chunks: number }) => void },
): Promise<PagesOutcome> {
  const [e]: ExportRow[] = await em.execute('select * from contact_exports where id = ?', [exportId]);
  if (!e) throw new AppError(404, 'not_found', 'the export was deleted');
  if (e.status !== 'running') throw new AppError(409, 'invalid_transition', `the export is ${e.status}, not running`);
  const filters = parse(e.filters);
  const scope = parse(e.scope_app_ids) as Scope;
  let { next_seq: seq, last_contact_id: after, row_count: rows } = e;
  const read = (from: string | null) => readPage(em, e.workspace_id, exportId, scope, filters, from, opts.pageSize);
  // The next page is read while this one is turned into CSV and written (the database and this
  // process work at once); at most two pages are in memory.
  let next = read(after);
  for (let page = 0; page < opts.maxPages; page++) {
    const batch = await next;
    if (!batch.length) return { done: true, rows, chunks: seq };
    const last = batch[batch.length - 1].id;
    const full = batch.length === opts.pageSize;
    next = full && page + 1 < opts.maxPages ? read(last) : Promise.resolve([]);
    next.catch(() => {}); // awaited on the next turn; a failure of this one must not go unhandled meanwhile
    const data = csvRecords(batch);
    const advanced = await em.transactional(async (tx) => {
      const moved: unknown[] = await tx.execute(
        `update contact_exports set next_seq = next_seq + 1, last_contact_id = ?, row_count = row_count + ?, byte_count = byte_count + ?
          where id = ? and status = 'running' and next_seq = ? returning id`,
        [last, batch.length, data.length, exportId, seq],
      );
      if (!moved.length) return false;
      await tx.execute(
        'insert into export_file_chunks (export_id, seq, data) values (?, ?, ?) on conflict (export_id, seq) do update set data = excluded.data',
        [exportId, seq, data],
      );
      return true;
    });
    // Another attempt advanced the cursor (this one was presumed lost): stop; a retry starts from the new cursor.
    if (!advanced) throw new Error('another attempt advanced this export');
    seq += 1;
    after = last;
    rows += batch.length;
    opts.onPage?.({ rows, chunks: seq });
    if (!full) return { done: true, rows, chunks: seq };
  }
  return { done: false, rows, chunks: seq };
}

/** One page of the export's contacts by id (keyset), with the names of their lists the requester could see. */
async function readPage(
  em: EntityManager,
  workspaceId: string,
  exportId: string,
  scope: Scope,
  f: ExportFilters,
  after: string | null,
  limit: number,
): Promise<ExportContactRow[]> {
  const params: unknown[] = [];
  const lists = scope ? (scope.length ? `and ll.app_id in (${scope.map(() => '?').join(', ')})` : 'and false') : '';
  if (scope) params.push(...scope);
  const where = contactConditions(workspaceId, scope, f as ContactFilters, params);
  params.push(exportId, after ?? '00000000-0000-0000-0000-000000000000', limit);
  return em.execute(
    `select c.id, c.full_name, c.first_name, c.last_name, c.email, c.phone, c.title, c.headline, c.company, c.company_domain, c.country, c.time_zone,
        c.profile_url, c.fit_score, c.fit_label, c.pinned_at, c.created_at, c.updated_at,
        (select string_agg(ll.name, '; ' order by ll.name) from leads l join lead_lists ll on ll.id = l.list_id where l.contact_id = c.id ${lists}) as lists
       from contacts c
      where ${where} and c.id <= ? and c.id > ?
      order by c.id limit ?`,
    params,
  );
}

export type FinishOutcome = { status: 'completed'; rows: number; bytes: number };

/** `running` → `completed` (idempotent: a completed export answers what it recorded). */
export async function finishExport(em: EntityManager, exportId: string): Promise<FinishOutcome> {
  await em.execute(
    `update contact_exports set status = 'completed', finished_at = now() where id = ? and status = 'running'`,
    [exportId],
  );
  const [e]: ExportRow[] = await em.execute('select * from contact_exports where id = ?', [exportId]);
  if (e?.status !== 'completed')
    throw new AppError(409, 'invalid_transition', `the export is ${e?.status ?? 'missing'}, not running`);
  return { status: 'completed', rows: e.row_count, bytes: Number(e.byte_count) };
}

/** `queued` | `running` → `failed`, with the reason; the chunks written so far are deleted (a partial file is never served). */
export async function failExport(em: EntityManager, exportId: string, code: string, message: string): Promise<void> {
  await em.transactional(async (tx) => {
    const failed: unknown[] = await tx.execute(
      `update contact_exports set status = 'failed', error_code = ?, error_message = ?, finished_at = now() where id = ? and status in ('queued', 'running') returning id`,
      [code.slice(0, 40), message.slice(0, 500), exportId],
    );
    if (failed.length) await tx.execute('delete from export_file_chunks where export_id = ?', [exportId]);
  });
}
