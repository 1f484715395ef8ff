import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Integration } from './Integration.js';

// The partner sync's high-water mark per integration and record kind (lead | reply | meeting): the
// (changed_at, id) of the last record pushed or skipped. A run resumes after it; committed with the
// page it covers (docs/integrations.md "Sync").
export const PartnerSyncCursor = defineEntity({
  name: 'PartnerSyncCursor',
  tableName: 'partner_sync_cursors',
  uniques: [{ properties: ['integration', 'recordKind'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    integration: p.manyToOne(Integration).ref().deleteRule('cascade'),
    recordKind: p.string().length(20),
    cursorAt: p.datetime().nullable(),
    cursorId: p.uuid().nullable(),
    /** Records of this kind sent to the partner so far (each version once). */
    pushed: p.integer().default(0),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IPartnerSyncCursor = InferEntity<typeof PartnerSyncCursor>;
