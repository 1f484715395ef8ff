// CSV imports for the Operator (docs/imports.md): import a CSV the user attached in chat, read an
// import's progress, cancel one. Starting and canceling change data, so they need a confirmation.
import { z } from 'zod';
import { DEDUPE_MODES, type IListImport } from '../../db/entities/ListImport.js';
import { pgImportFiles } from '../lists/import-files.js';
import { CONTACT_FIELDS, MAX_COLUMNS } from '../lists/import-csv.js';
import { cancelImport, importAttachment, invalidRows, progressOf, requireImportById } from '../lists/imports.js';
import { listImportWorkflowIds } from '../../lib/workflow-ids.js';
import { defineTool } from './registry.js';

const summary = (i: IListImport) => {
  const p = progressOf(i);
  return {
    import_id: i.id,
    app_id: i.app.id,
    list_id: i.list?.id ?? null,
    filename: i.filename,
    status: p.status,
    workflow_id: i.committedAt ? listImportWorkflowIds.run(i.id) : null,
    progress: {
      percent: p.status === 'completed' ? 100 : p.bytesTotal ? Math.round((p.bytesRead / p.bytesTotal) * 1000) / 10 : 0,
      rows_read: p.rowsRead,
      created: p.created,
      updated: p.updated,
      duplicate: p.duplicate,
      invalid: p.invalid,
      leads_added: p.leadsAdded,
    },
    error: p.errorCode ? { code: p.errorCode, message: p.errorMessage } : null,
  };
};

const Mapping = z
  .object(
    Object.fromEntries(
      CONTACT_FIELDS.map((f) => [
        f,
        z
          .number()
          .int()
          .min(0)
          .max(MAX_COLUMNS - 1)
          .optional(),
      ]),
    ),
  )
  .strict();

export const listImportTools = [
  defineTool({
    name: 'import_csv_attachment',
    ids: {
      attachment_id: { kind: 'attachment', missing: [404, 'attachment_not_found'] },
      app_id: 'app',
      list_id: 'list',
    },
    domain: 'lists',
    description:
      'Import a CSV file the user attached in chat (attachment_id) into a lead list of a product: an existing list (list_id) or a new one (list_name). Columns are mapped onto contact fields automatically (or by mapping: field → 0-based column); contacts are deduplicated on email, then profile URL; dedupe_mode says what a row does to an existing contact: skip, update_empty (default: fill empty fields) or overwrite. Runs in the background; read it with get_list_import.',
    input: z
      .object({
        attachment_id: z.uuid(),
        app_id: z.uuid().optional(),
        list_id: z.uuid().optional(),
        list_name: z.string().trim().min(1).max(200).optional(),
        dedupe_mode: z.enum(DEDUPE_MODES).optional(),
        mapping: Mapping.optional(),
      })
      .strict()
      .refine((v) => (v.list_id === undefined) !== (v.list_name === undefined), {
        message: 'give exactly one of list_id and list_name',
      }),
    risk: 'change',
    run: async ({ em, actor, jobs }, input) => {
      const { imp, committed } = await importAttachment(em, actor, jobs, pgImportFiles(em), {
        attachmentId: input.attachment_id,
        appId: input.app_id,
        listId: input.list_id,
        listName: input.list_name,
        dedupeMode: input.dedupe_mode,
        mapping: input.mapping,
      });
      return { ...summary(imp), started: committed, mapping: imp.mapping, sample: imp.sample };
    },
  }),
  defineTool({
    name: 'get_list_import',
    ids: { import_id: 'list_import' },
    domain: 'lists',
    description:
      "A CSV import's status and exact progress (rows read, created, updated, duplicate, invalid, leads added), and its first invalid rows with their reasons.",
    input: z.object({ import_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      const imp = await requireImportById(em, actor, input.import_id);
      const invalid = await invalidRows(em, imp.id, { limit: 20 });
      return {
        ...summary(imp),
        invalid_rows: invalid.items.map((r) => ({ row: r.row, reasons: r.reasons.map((x) => x.message) })),
        more_invalid_rows: invalid.next !== null,
      };
    },
  }),
  defineTool({
    name: 'cancel_list_import',
    ids: { import_id: 'list_import' },
    domain: 'lists',
    description:
      'Cancel a CSV import: a draft is dropped; a running import stops after the chunk it is writing (rows already imported stay).',
    input: z.object({ import_id: z.uuid() }).strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, input) =>
      summary(await cancelImport(em, actor, jobs, pgImportFiles(em), input.import_id)),
  }),
];
