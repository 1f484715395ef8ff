// CSV imports into lead lists (docs/imports.md): an upload becomes a draft (the file stored, a
// preview), a commit chooses the mapping, the dedupe mode and the target list and starts the
// `list-import:<importId>` workflow, which runs domain/lists/import-run.ts. States:
//
//   uploading → draft | (deleted when the upload fails)
//   draft     → queued (commit) | canceled (cancel)
//   queued    → running (the workflow begins) | canceling (cancel)
//   running   → completed | failed | canceling (cancel)
//   canceling → canceled (the workflow stops at the next chunk boundary)
//
// A repeated commit with the same choices is idempotent (same import, same workflow id); with
// other choices, once committed, it is 409 `already_committed`.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentAttachment } from '../../db/entities/AgentAttachment.js';
import { LeadList } from '../../db/entities/LeadList.js';
import { ListImport, type DedupeMode, type IListImport, type ListImportStatus } from '../../db/entities/ListImport.js';
import { requireApp } from '../apps/apps.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { FileUpload, IMPORT_CHUNK_BYTES, type ImportFileStore, type UploadedFileFacts } from './import-files.js';
import type { Jobs } from '../jobs.js';
import { notifyListImportFinished } from '../notifications/notifications.js';
import {
  analyse,
  checkMapping,
  CONTACT_FIELDS,
  type Analysis,
  type FormatChoice,
  type Mapping,
  type RowProblem,
} from './import-csv.js';
import { createList } from './lists.js';
import { observeImport } from '../../lib/metrics.js';

/** Largest file accepted: 50 MiB (413 file_too_large above, enforced while the upload streams). */
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;
/** A draft nobody commits is deleted after this long; an upload that never finished (a crashed API process), after UPLOAD_TTL. */
export const DRAFT_TTL_DAYS = 7;
export const UPLOAD_TTL_HOURS = 6;

export const FINAL: readonly ListImportStatus[] = ['completed', 'failed', 'canceled'];

export interface CommitInput {
  /** Field → 0-based column; absent: the suggested mapping. */
  mapping?: Mapping;
  /** Default `update_empty`. */
  dedupeMode?: DedupeMode;
  /** Exactly one of: an existing list of the product, or the name of a new one. */
  listId?: string;
  listName?: string;
}

export interface ImportProgress {
  status: ListImportStatus;
  bytesTotal: number;
  bytesRead: number;
  rowsRead: number;
  created: number;
  updated: number;
  duplicate: number;
  invalid: number;
  leadsAdded: number;
  errorCode: string | null;
  errorMessage: string | null;
}

export const progressOf = (i: IListImport): ImportProgress => ({
  status: i.status as ListImportStatus,
  bytesTotal: i.sizeBytes,
  bytesRead: i.cursorBytes,
  rowsRead: i.rowsRead,
  created: i.created,
  updated: i.updated,
  duplicate: i.duplicate,
  invalid: i.invalid,
  leadsAdded: i.leadsAdded,
  errorCode: i.errorCode ?? null,
  errorMessage: i.errorMessage ?? null,
});

// ---------------------------------------------------------------------------------------------
// Reading.

/** The import `importId` of product `appId` (404 when it is not there, in the actor's workspace; 403 as the product). */
export async function requireImport(
  em: EntityManager,
  actor: Actor,
  appId: string,
  importId: string,
): Promise<IListImport> {
  await requireApp(em, actor, appId);
  const imp = await em.findOne(ListImport, { id: importId, workspace: actor.workspaceId, app: appId });
  if (!imp || imp.status === 'uploading') throw notFound('import');
  return imp;
}

/** The import by id alone (Operator tools): 404 outside the workspace. Who may touch it was checked before: domain/access.ts. */
export async function requireImportById(em: EntityManager, actor: Actor, importId: string): Promise<IListImport> {
  const imp = await em.findOne(ListImport, { id: importId, workspace: actor.workspaceId });
  if (!imp || imp.status === 'uploading') throw notFound('import');
  return imp;
}

export interface InvalidRow {
  row: number;
  reasons: RowProblem[];
  values: string[];
}

/** A page of the invalid rows, by row number after `after`; `next` is the last row's number when more follow. */
export async function invalidRows(
  em: EntityManager,
  importId: string,
  page: { after?: number; limit: number },
): Promise<{ items: InvalidRow[]; next: number | null }> {
  const rows: { row: number; reasons: unknown; values: unknown }[] = await em.execute(
    'select row, reasons, values from list_import_problems where list_import_id = ? and row > ? order by row limit ?',
    [importId, page.after ?? 0, page.limit + 1],
  );
  const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
  const items = rows
    .slice(0, page.limit)
    .map((r) => ({ row: r.row, reasons: parse(r.reasons) as RowProblem[], values: parse(r.values) as string[] }));
  return { items, next: rows.length > page.limit ? items[items.length - 1].row : null };
}

// ---------------------------------------------------------------------------------------------
// Upload → draft.

/**
 * Starts an upload: the `uploading` row its file chunks hang from. Deletes, first, the workspace's
 * uploads that never finished (older than UPLOAD_TTL_HOURS: the API process died during them) and
 * drafts never committed within DRAFT_TTL_DAYS, with their files.
 */
export async function beginUpload(
  em: EntityManager,
  actor: Actor,
  appId: string,
  input: { filename?: string; source: 'upload' | 'attachment'; attachmentId?: string },
): Promise<IListImport> {
  assertWritable(actor);
  const app = await requireApp(em, actor, appId);
  await em.execute(
    `delete from list_imports where workspace_id = ?
       and ((status = 'uploading' and created_at < now() - make_interval(hours => ?)) or (status = 'draft' and created_at < now() - make_interval(days => ?)))`,
    [actor.workspaceId, UPLOAD_TTL_HOURS, DRAFT_TTL_DAYS],
  );
  const imp = em.create(ListImport, {
    workspace: actor.workspaceId,
    app: app.id,
    userId: actor.userId,
    status: 'uploading',
    source: input.source,
    attachmentId: input.attachmentId ?? null,
    filename: cleanFilename(input.filename),
    chunkBytes: IMPORT_CHUNK_BYTES,
  } as never);
  await em.flush();
  return imp;
}

/** The base name as the client gave it, without control characters, at most 255 characters; `import.csv` when none is left. */
export function cleanFilename(name: string | undefined): string {
  let s = (name ?? '').normalize('NFC');
  s = s.slice(Math.max(s.lastIndexOf('/'), s.lastIndexOf('\\')) + 1);
  s = s.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '').trim();
  if (!s) return 'import.csv';
  return [...s].slice(0, 255).join('');
}

/**
 * Deletes an upload that did not become an import the client can name: still uploading, or (the
 * one-shot import, whose commit was refused) a draft whose id was never answered. Its chunks go with it.
 */
export async function discardUpload(em: EntityManager, importId: string): Promise<void> {
  await em.execute(`delete from list_imports where id = ? and status in ('uploading', 'draft')`, [importId]);
}

/** How many of the sample's valid rows match a contact already in the workspace. */
async function existingInSample(em: EntityManager, workspaceId: string, keys: Analysis['keys']): Promise<number> {
  if (!keys.rows.length) return 0;
  const found: { email_normalised: string | null; profile_url_normalised: string | null }[] = await em.execute(
    `select email_normalised, profile_url_normalised from contacts where workspace_id = ?
       and (email_normalised in (select json_array_elements_text(?::json)) or profile_url_normalised in (select json_array_elements_text(?::json)))`,
    [workspaceId, JSON.stringify(keys.emails), JSON.stringify(keys.urls)],
  );
  const emails = new Set(found.map((f) => f.email_normalised));
  const urls = new Set(found.map((f) => f.profile_url_normalised));
  return keys.rows.filter((r) => (r.emailKey && emails.has(r.emailKey)) || (r.urlKey && urls.has(r.urlKey))).length;
}

/**
 * Turns a finished upload into a draft: refuses files that are empty, binary or UTF-16 (400
 * `invalid_file`), analyses the head (lib/csv.ts, import-csv.ts: 400 `invalid_csv`), and
 * stores the preview. `mapping`, when given (the one-shot import), is the one the sample is checked with.
 */
export async function completeUpload(
  em: EntityManager,
  actor: Actor,
  imp: IListImport,
  facts: UploadedFileFacts,
  choice: FormatChoice,
  mapping?: Mapping,
): Promise<IListImport> {
  if (facts.size === 0) throw badRequest('invalid_file', 'the file is empty');
  if (facts.hasNul) {
    throw badRequest(
      'invalid_file',
      'the file is not text (it contains NUL bytes: a binary file, or UTF-16, which is not read; save it as CSV UTF-8)',
    );
  }
  const a = analyse(
    facts.head,
    { complete: facts.size <= facts.head.length, utf8: facts.utf8, bom: facts.bom },
    choice,
    mapping,
  );
  const existing = await existingInSample(em, actor.workspaceId, a.keys);
  em.assign(imp, {
    status: 'draft',
    sizeBytes: facts.size,
    sha256: facts.sha256,
    encoding: a.encoding,
    bom: a.bom,
    delimiter: a.delimiter,
    hasHeader: a.hasHeader,
    headerRow: a.headerRow,
    columnCount: a.columnCount,
    columns: a.columns,
    sample: { ...a.sample, existing_contacts: existing },
    suggestedMapping: a.suggestedMapping as Record<string, number>,
  });
  await em.flush();
  return imp;
}

// ---------------------------------------------------------------------------------------------
// Commit and cancel.

const canonical = (m: Mapping | null | undefined) =>
  JSON.stringify(
    Object.entries(m ?? {})
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([a], [b]) => a.localeCompare(b)),
  );

/** Whether a repeated commit asks for what the import was committed with. */
function sameChoices(imp: IListImport, input: CommitInput, mapping: Mapping): boolean {
  if (canonical(imp.mapping as Mapping) !== canonical(mapping)) return false;
  if ((input.dedupeMode ?? 'update_empty') !== imp.dedupeMode) return false;
  if (input.listId) return imp.list?.id === input.listId.toLowerCase() && !imp.listName;
  return !!imp.listName && imp.listName.toLowerCase() === input.listName!.trim().toLowerCase();
}

export interface CommitResult {
  imp: IListImport;
  /** false when this commit repeated an earlier one. */
  committed: boolean;
}

/**
 * Commits a draft: checks the mapping (422 `invalid_mapping`), the target (an existing list of the
 * product, else 400 `invalid_list_id`; or a new list's name, 409 `list_name_taken` when the product
 * has one), records the choices and `queued` in one transaction, then starts `list-import:<id>`
 * (idempotent: a repeat, or a retry after a lost start, joins it). Final or canceled drafts: 409.
 */
export async function commitImport(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  appId: string,
  importId: string,
  input: CommitInput,
): Promise<CommitResult> {
  assertWritable(actor);
  if (!input.listId === !input.listName)
    throw badRequest(
      'invalid_body',
      'give exactly one of list_id (an existing list of the product) and list_name (a new list)',
    );
  await requireImport(em, actor, appId, importId);
  const result = await em.transactional(async (tx) => {
    const imp = await tx.findOneOrFail(ListImport, importId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const mapping = input.mapping ?? ((imp.suggestedMapping ?? {}) as Mapping);
    if (imp.status !== 'draft') {
      if (imp.committedAt && sameChoices(imp, input, mapping)) return { imp, committed: false };
      if (imp.committedAt)
        throw new AppError(
          409,
          'already_committed',
          `this import was already committed (status ${imp.status}) with other choices`,
        );
      throw new AppError(409, 'invalid_transition', `a ${imp.status} import cannot be committed`);
    }
    checkMapping(mapping, imp.columnCount);
    let listId: string;
    if (input.listId) {
      const list = await tx.findOne(LeadList, {
        id: input.listId.toLowerCase(),
        workspace: actor.workspaceId,
        app: appId,
      });
      if (!list) throw badRequest('invalid_list_id', 'list_id must be a list of this product');
      listId = list.id;
    } else {
      listId = (await createList(tx, actor, appId, { name: input.listName!.trim() })).id;
    }
    const clean = Object.fromEntries(
      CONTACT_FIELDS.filter((f) => mapping[f] !== undefined && mapping[f] !== null).map((f) => [f, mapping[f]!]),
    );
    tx.assign(imp, {
      status: 'queued',
      mapping: clean,
      dedupeMode: input.dedupeMode ?? 'update_empty',
      list: listId,
      listName: input.listName?.trim() ?? null,
      committedAt: new Date(),
    } as never);
    await tx.flush();
    return { imp, committed: true };
  });
  const { imp } = result;
  if (imp.status === 'queued' || imp.status === 'running' || imp.status === 'canceling') {
    await jobs.start('list-import', { importId: imp.id, workspaceId: actor.workspaceId, appId });
  }
  return result;
}

/**
 * Cancels an import: a draft is canceled at once (its file deleted); a queued or running one
 * becomes `canceling`, and its workflow, told by signal, stops at the next chunk boundary (the
 * rows of committed chunks stay imported), then `canceled`. Canceling again is a no-op; a completed
 * or failed import is 409 `invalid_transition`.
 */
export async function cancelImport(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  files: ImportFileStore,
  importId: string,
): Promise<IListImport> {
  assertWritable(actor);
  await requireImportById(em, actor, importId);
  const imp = await em.transactional(async (tx) => {
    const row = await tx.findOneOrFail(ListImport, importId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (row.status === 'canceled' || row.status === 'canceling') return row;
    if (row.status === 'completed' || row.status === 'failed')
      throw new AppError(409, 'invalid_transition', `a ${row.status} import cannot be canceled`);
    if (row.status === 'draft') tx.assign(row, { status: 'canceled', finishedAt: new Date() });
    else tx.assign(row, { status: 'canceling' });
    await tx.flush();
    return row;
  });
  if (imp.status === 'canceled') {
    await files.remove(imp.id);
    return imp;
  }
  // No workflow to tell (its start was lost, or has not happened yet): end the import here. A
  // workflow that starts afterwards finds it canceled and ends at once.
  if (!(await jobs.signal('list-import', { importId: imp.id }, 'cancel')))
    await endRun(em, files, imp.id, { canceled: true });
  return em.findOneOrFail(ListImport, imp.id, { refresh: true });
}

// ---------------------------------------------------------------------------------------------
// An Operator attachment as the file.

/**
 * Imports a CSV the user attached in chat: the attachment (the caller's, in this workspace; 404
 * `attachment_not_found`) keeps its text as extracted, which for a text file is the file's content
 * in UTF-8. One cut to the attachment limit (`truncated`) would import part of the rows: 422
 * `attachment_truncated`; a PDF or a file without text: 422 `attachment_unavailable`. The text
 * becomes the import's file (stored like an upload), then the draft is committed.
 */
export async function importAttachment(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  files: ImportFileStore,
  input: CommitInput & { attachmentId: string; appId?: string; format?: FormatChoice },
): Promise<CommitResult> {
  assertWritable(actor);
  const a = await em.findOne(
    AgentAttachment,
    { id: input.attachmentId.toLowerCase(), workspace: actor.workspaceId, userId: actor.userId },
    { populate: ['thread'] },
  );
  if (!a) throw new AppError(404, 'attachment_not_found', 'no such attachment of yours');
  if (a.extractionStatus === 'truncated')
    throw new AppError(
      422,
      'attachment_truncated',
      'the attachment was cut to the chat limit when uploaded; upload the CSV through the import route instead',
    );
  if (a.contentType === 'application/pdf' || a.extractionStatus !== 'extracted' || !a.text) {
    throw new AppError(
      422,
      'attachment_unavailable',
      `attachment ${a.filename} has no CSV text (${a.contentType}, extraction ${a.extractionStatus})`,
    );
  }
  const appId = (input.appId ?? (a.thread.getEntity() as { app: { id: string } }).app.id).toLowerCase();
  const imp = await beginUpload(em, actor, appId, { filename: a.filename, source: 'attachment', attachmentId: a.id });
  try {
    const upload = new FileUpload(files, imp.id);
    const bytes = Buffer.from(a.text, 'utf8');
    for (let at = 0; at < bytes.length; at += IMPORT_CHUNK_BYTES)
      await upload.write(bytes.subarray(at, at + IMPORT_CHUNK_BYTES));
    await completeUpload(em, actor, imp, await upload.finish(), input.format ?? {}, input.mapping);
  } catch (err) {
    await discardUpload(em, imp.id);
    throw err;
  }
  return commitImport(em, actor, jobs, appId, imp.id, input);
}

// ---------------------------------------------------------------------------------------------
// The workflow's side (no actor: the import row says whose it is).

/** queued → running (idempotent). `runnable` false when the import is no longer to run. */
export async function beginRun(
  em: EntityManager,
  importId: string,
): Promise<{ runnable: boolean; progress: ImportProgress }> {
  return em.transactional(async (tx) => {
    const imp = await tx.findOne(ListImport, importId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!imp) return { runnable: false, progress: { ...emptyProgress, status: 'canceled' as const } };
    if (imp.status === 'queued') tx.assign(imp, { status: 'running', startedAt: new Date() });
    await tx.flush();
    return { runnable: imp.status === 'running', progress: progressOf(imp) };
  });
}

const emptyProgress: Omit<ImportProgress, 'status'> = {
  bytesTotal: 0,
  bytesRead: 0,
  rowsRead: 0,
  created: 0,
  updated: 0,
  duplicate: 0,
  invalid: 0,
  leadsAdded: 0,
  errorCode: null,
  errorMessage: null,
};

/** The committed progress. */
export async function readProgress(em: EntityManager, importId: string): Promise<ImportProgress> {
  const imp = await em.findOne(ListImport, importId, { refresh: true });
  return imp ? progressOf(imp) : { ...emptyProgress, status: 'canceled' };
}

/**
 * The end of a run: running → completed (the whole file is committed), canceling → canceled (and
 * running → canceled when the workflow itself was canceled); `failure` → failed with its code. The
 * file is deleted once the import is final.
 */
export async function endRun(
  em: EntityManager,
  files: ImportFileStore,
  importId: string,
  outcome: { canceled?: boolean; failure?: { code: string; message: string } },
): Promise<ImportProgress> {
  const { failure } = outcome;
  let ended: { status: string; seconds: number } | undefined;
  const imp = await em.transactional(async (tx) => {
    const row = await tx.findOne(ListImport, importId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!row) return null;
    const was = row.status;
    const now = new Date();
    if (row.status === 'canceling' || (outcome.canceled && (row.status === 'running' || row.status === 'queued')))
      tx.assign(row, { status: 'canceled', finishedAt: now });
    else if (failure && (row.status === 'running' || row.status === 'queued')) {
      tx.assign(row, {
        status: 'failed',
        errorCode: failure.code,
        errorMessage: failure.message.slice(0, 1000),
        finishedAt: now,
      });
    } else if (!failure && row.status === 'running') tx.assign(row, { status: 'completed', finishedAt: now });
    await tx.flush();
    if (row.status !== was && (row.status === 'completed' || row.status === 'failed'))
      await notifyListImportFinished(tx, row.id);
    if (row.status !== was && row.finishedAt)
      ended = {
        status: row.status,
        seconds: (row.finishedAt.getTime() - (row.startedAt ?? row.createdAt).getTime()) / 1000,
      };
    return row;
  });
  if (ended) observeImport(ended.status, ended.seconds); // once committed, by its final state
  if (!imp) return { ...emptyProgress, status: 'canceled' };
  if (FINAL.includes(imp.status as ListImportStatus)) await files.remove(importId);
  return progressOf(imp);
}
