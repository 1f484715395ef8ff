import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// A reviewer's decision sent through POST /api/company-decision-maker-imports/events, kept under the
// client's id (unique per workspace) so that a repeated id is recognised and ignored; `result` is
// what it did the first time.
export const CdmImportEvent = defineEntity({
  name: 'CdmImportEvent',
  tableName: 'cdm_import_events',
  uniques: [{ properties: ['workspace', 'clientId'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    clientId: p.string().length(100),
    /** As given (not a foreign key: an unknown or foreign job is recorded as not_found). */
    jobId: p.uuid(),
    type: p.string().length(30),
    targetId: p.uuid(),
    /** As the client sent it (ISO 8601, any offset): kept for the record, never computed with. */
    occurredAt: p.text().nullable(),
    result: p.string().length(30),
    membersChanged: p.integer().default(0),
    userId: p.uuid(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ICdmImportEvent = InferEntity<typeof CdmImportEvent>;
