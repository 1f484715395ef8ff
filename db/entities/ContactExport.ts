import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

export const EXPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** The filters an export was asked with (the same as GET /api/contacts). */
export interface ExportFilters {
  listId?: string;
  appId?: string;
  fit?: string;
  pinned?: boolean;
  q?: string;
}

// A CSV export of contacts (docs/contacts.md), written by the workflow `contacts-export:<id>` as
// chunks in `export_file_chunks`. The cursor columns (`last_contact_id`, `next_seq`, `row_count`,
// `byte_count`) move in the same transaction as each chunk, so a retried or resumed activity
// continues exactly where the last committed page ended. Contacts with an id above the export's own
// (UUIDv7: created after the request) are not included.
export const ContactExport = defineEntity({
  name: 'ContactExport',
  tableName: 'contact_exports',
  indexes: [{ name: 'contact_exports_workspace_id_id_index', properties: ['workspace', 'id'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    requestedBy: p.uuid(),
    filters: p.json<ExportFilters>().default('{}'),
    /** The products the requester could see (null: all of them), fixed at the request. */
    scopeAppIds: p.json<string[]>().nullable(),
    status: p.string().length(20).default('queued'),
    rowCount: p.integer().default(0),
    byteCount: p.bigint('number').default(0),
    /** Chunks written so far (the next chunk's `seq`); chunk 0 is the header. */
    nextSeq: p.integer().default(0),
    lastContactId: p.uuid().nullable(),
    errorCode: p.string().length(40).nullable(),
    errorMessage: p.string().length(500).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  }),
});
export type IContactExport = InferEntity<typeof ContactExport>;
