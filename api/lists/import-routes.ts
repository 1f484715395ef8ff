// CSV imports into lead lists (docs/imports.md). Uploads are multipart/form-data, read only after
// authentication, the Demo rule, the rate limit and the product check; the file part streams into
// the store in 1 MiB chunks (never whole in memory) under the 50 MiB limit (413 file_too_large at
// the first byte past it). An upload that fails leaves nothing behind.
import type { Context } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IListImport } from '../../db/entities/ListImport.js';
import { badRequest } from '../../domain/errors.js';
import type { Actor } from '../../domain/identity.js';
import { FileUpload, pgImportFiles, type UploadedFileFacts } from '../../domain/lists/import-files.js';
import { requireApp } from '../../domain/apps/apps.js';
import {
  beginUpload,
  cleanFilename,
  commitImport,
  completeUpload,
  discardUpload,
  endRun,
  FINAL,
  invalidRows,
  MAX_IMPORT_BYTES,
  requireImport,
  type CommitInput,
} from '../../domain/lists/imports.js';
import type { FormatChoice } from '../../domain/lists/import-csv.js';
import { closeIfUnread, readForm, type Form } from '../middleware/multipart.js';
import { defineOperation, reply } from '../operation.js';
import { AppIdParams } from './schemas.js';
import {
  CommitBody,
  commitOf,
  formatOf,
  ImportForm,
  ImportParams,
  ImportQuery,
  ImportView,
  PreviewForm,
  toImportView,
  toMapping,
} from './import-schemas.js';

const tag = 'lists';
const FORMAT_FIELDS = ['delimiter', 'encoding', 'has_header'] as const;
const COMMIT_FIELDS = ['list_id', 'list_name', 'dedupe_mode', 'mapping'] as const;

const view = async (em: EntityManager, imp: IListImport, page: { after?: number; limit: number } = { limit: 50 }) =>
  toImportView(imp, await invalidRows(em, imp.id, page));

/**
 * Receives the form, streaming its file into a new `uploading` import, and turns it into a draft
 * with `then` (preview, or preview + commit). Anything failing deletes the upload (after the sink
 * has stopped writing) and closes a connection whose body was not read to the end.
 */
async function upload<T>(
  ctx: Context,
  em: EntityManager,
  actor: Actor,
  appId: string,
  fields: readonly string[],
  then: (imp: IListImport, form: Form, facts: UploadedFileFacts) => Promise<T>,
): Promise<T> {
  let imp: IListImport | undefined;
  let sinking: Promise<unknown> | undefined;
  try {
    await requireApp(em, actor, appId);
    const started = await beginUpload(em, actor, appId, { source: 'upload' });
    imp = started;
    const store = pgImportFiles(em);
    let facts: UploadedFileFacts | undefined;
    const form = await readForm(ctx, {
      file: 'file',
      fields,
      fileBytes: MAX_IMPORT_BYTES,
      fieldBytes: 4096,
      sink: (stream, info) => {
        started.filename = cleanFilename(info.filename);
        const run = new FileUpload(store, started.id).consume(stream).then((f) => {
          facts = f;
        });
        sinking = run;
        return run;
      },
    });
    if (!form.streamed || !facts) {
      throw badRequest(
        'missing_file',
        form.fileAsText ? 'the file field must be a file part (with a filename)' : 'the file field is required',
      );
    }
    return await then(started, form, facts);
  } catch (err) {
    closeIfUnread(ctx);
    if (imp) {
      await sinking?.catch(() => {});
      await discardUpload(em, imp.id);
    }
    throw err;
  }
}

const uploadErrors = {
  400: ['invalid_id', 'invalid_user', 'invalid_upload', 'missing_file', 'invalid_file', 'invalid_csv', 'invalid_body'],
  401: ['unauthorized'],
  403: ['not_assigned', 'demo_read_only'],
  404: ['not_found'],
  413: ['file_too_large', 'invalid_upload'],
  500: ['upload_failed'],
};

export const previewImportOp = defineOperation({
  method: 'POST',
  path: '/api/apps/{appId}/lists/import-drafts/preview',
  operationId: 'previewListImport',
  ids: { path: { appId: 'app' } },
  summary:
    'Upload a CSV (≤ 50 MiB) as an import draft: stored, its encoding, delimiter and header detected, a column mapping suggested, its first 1,000 rows checked',
  description:
    'The draft keeps the file until it is committed (POST …/import-drafts/{importId}/commit) or canceled; an uncommitted draft is deleted after 7 days. Optional form fields override the detection: delimiter, encoding, has_header.',
  tag,
  auth: 'user',
  params: AppIdParams,
  form: PreviewForm,
  responses: { 201: ImportView },
  errors: uploadErrors,
  handler: async ({ ctx, em, actor, params }) =>
    upload(ctx, em, actor, params.appId, FORMAT_FIELDS, async (imp, form, facts) => {
      const choice: FormatChoice = formatOf(form.fields);
      await completeUpload(em, actor, imp, facts, choice);
      return reply(201, await view(em, imp));
    }),
});

export const importListOp = defineOperation({
  method: 'POST',
  path: '/api/apps/{appId}/lists/import',
  operationId: 'importList',
  ids: { path: { appId: 'app' } },
  summary: 'Upload a CSV and import it at once (preview + commit): starts the list-import:<id> workflow',
  description:
    'The form takes the file, exactly one of list_id (an existing list of the product) and list_name (a new list), and optionally dedupe_mode, mapping (JSON; default: the suggested one) and the format overrides of the preview. 202 with the import (status queued or running); follow it with GET …/import-drafts/{id}.',
  tag,
  auth: 'user',
  params: AppIdParams,
  form: ImportForm,
  responses: { 202: ImportView },
  errors: {
    ...uploadErrors,
    409: ['list_name_taken'],
    400: [...uploadErrors[400], 'invalid_list_id'],
    422: ['invalid_mapping'],
  },
  handler: async ({ ctx, em, actor, params, services }) =>
    upload(ctx, em, actor, params.appId, [...FORMAT_FIELDS, ...COMMIT_FIELDS], async (imp, form, facts) => {
      const choice = formatOf(form.fields);
      const input: CommitInput = commitOf(form.fields);
      await completeUpload(em, actor, imp, facts, choice, input.mapping);
      try {
        const { imp: committed } = await commitImport(em, actor, services.jobs, params.appId, imp.id, input);
        return reply(202, await view(em, committed));
      } catch (err) {
        // Committed, but the workflow could not be started: nobody was told this import's id to
        // commit it again, so it ends `failed` (start_failed) rather than waiting forever.
        await endRun(em, pgImportFiles(em), imp.id, {
          failure: { code: 'start_failed', message: err instanceof Error ? err.message : String(err) },
        });
        throw err;
      }
    }),
});

export const getImportDraftOp = defineOperation({
  method: 'GET',
  path: '/api/apps/{appId}/lists/import-drafts/{importId}',
  ids: { path: { appId: 'app', importId: { within: 'appId', child: 'list_import' } } },
  summary:
    'An import: the draft (format, columns, suggested mapping, sample and its problems), the committed choices, exact progress, and a page of invalid rows',
  description:
    'progress is what the committed chunks recorded (the workflow’s progress query answers the same). invalid_rows lists the rows not imported with their reasons and values, by row number: invalid_limit (1–200, default 50) and invalid_after page through them.',
  tag,
  auth: 'user',
  params: ImportParams,
  query: ImportQuery,
  responses: { 200: ImportView },
  errors: {
    400: ['invalid_id', 'invalid_query', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, query }) => {
    const imp = await requireImport(em, actor, params.appId, params.importId);
    return view(em, imp, { after: query.invalid_after, limit: query.invalid_limit ?? 50 });
  },
});

export const commitImportOp = defineOperation({
  method: 'POST',
  path: '/api/apps/{appId}/lists/import-drafts/{importId}/commit',
  ids: {
    path: { appId: 'app', importId: { within: 'appId', child: 'list_import' } },
    body: { list_id: { kind: 'list', missing: [400, 'invalid_list_id'] } },
  },
  summary:
    'Commit a draft: the mapping, the dedupe mode and the target list; starts the list-import:<id> workflow (a repeat with the same choices is idempotent)',
  tag,
  auth: 'user',
  params: ImportParams,
  body: CommitBody,
  invalid: { fields: { list_id: 'invalid_list_id' } },
  responses: { 202: ImportView, 200: ImportView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user', 'invalid_list_id'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['already_committed', 'invalid_transition', 'list_name_taken'],
    422: ['invalid_mapping'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const { imp } = await commitImport(em, actor, services.jobs, params.appId, params.importId, {
      mapping: toMapping(body.mapping),
      dedupeMode: body.dedupe_mode,
      listId: body.list_id,
      listName: body.list_name,
    });
    return reply(FINAL.includes(imp.status as never) ? 200 : 202, await view(em, imp));
  },
});
