import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { App } from './App.js';
import { LeadList } from './LeadList.js';
import { Workspace } from './Workspace.js';

/**
 * docs/imports.md has the state table. `uploading`: the file is arriving (never shown: the upload
 * request has not answered yet); `draft`: stored and previewed, waiting for a commit; `queued`:
 * committed, the `list-import:<id>` workflow starting; `running`; `canceling`: a cancel is
 * recorded, the workflow stops at the next chunk; `completed`, `failed`, `canceled` are final.
 */
export const LIST_IMPORT_STATUSES = [
  'uploading',
  'draft',
  'queued',
  'running',
  'canceling',
  'completed',
  'failed',
  'canceled',
] as const;
export type ListImportStatus = (typeof LIST_IMPORT_STATUSES)[number];
export const DEDUPE_MODES = ['skip', 'update_empty', 'overwrite'] as const;
export type DedupeMode = (typeof DEDUPE_MODES)[number];

// A CSV import into a lead list of a product: the uploaded file (its bytes in import_file_chunks),
// what the preview found, the committed mapping and options, and the run's exact progress. The
// counters and the cursor (the file offset after the last committed record) are written in the
// same transaction as each chunk of contacts and leads, so they are never ahead of or behind the data.
export const ListImport = defineEntity({
  name: 'ListImport',
  tableName: 'list_imports',
  indexes: [{ properties: ['workspace', 'status', 'createdAt'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    userId: p.uuid(),
    status: p.string().length(20),
    /** `upload` (the REST routes) or `attachment` (an Operator attachment's text). */
    source: p.string().length(20),
    attachmentId: p.uuid().nullable(),
    filename: p.string().length(255),
    sizeBytes: p.integer().default(0),
    sha256: p.string().length(64).nullable(),
    /** Bytes per stored chunk (the offset arithmetic of the reader). */
    chunkBytes: p.integer(),
    encoding: p.string().length(20).nullable(),
    bom: p.boolean().default(false),
    delimiter: p.string().length(1).nullable(),
    hasHeader: p.boolean().default(true),
    /** The header's row number (blank lines before it count), 0 without a header. */
    headerRow: p.integer().default(0),
    columnCount: p.integer().default(0),
    /** The preview: columns (header, suggested field, samples), sample rows and their problems. */
    columns: p.json<unknown>().nullable(),
    sample: p.json<unknown>().nullable(),
    suggestedMapping: p.json<Record<string, number>>().nullable(),
    /** What the commit chose. */
    mapping: p.json<Record<string, number>>().nullable(),
    dedupeMode: p.string().length(20).nullable(),
    list: p.manyToOne(LeadList).ref().nullable().deleteRule('set null').index(),
    /** The name asked for when the commit created the list (`list_name`). */
    listName: p.string().length(200).nullable(),
    /** Progress: committed with each chunk. */
    cursorBytes: p.integer().default(0),
    /** Records consumed so far, the header included (the next record is row cursorRow + 1). */
    cursorRow: p.integer().default(0),
    rowsRead: p.integer().default(0),
    created: p.integer().default(0),
    updated: p.integer().default(0),
    duplicate: p.integer().default(0),
    invalid: p.integer().default(0),
    leadsAdded: p.integer().default(0),
    chunks: p.integer().default(0),
    /** Milliseconds spent inside the chunk transactions (the database writes). */
    writeMs: p.integer().default(0),
    errorCode: p.string().length(60).nullable(),
    errorMessage: p.string().length(1000).nullable(),
    committedAt: p.datetime().nullable(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IListImport = InferEntity<typeof ListImport>;
