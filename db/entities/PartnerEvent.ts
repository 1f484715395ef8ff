import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Integration } from './Integration.js';
import { Workspace } from './Workspace.js';

// A record the partner sync could not push without a person (docs/integrations.md "Partner events"):
// a field conflict (the partner's value differs from ours for a field a person edited there) or a
// possible duplicate. pending → confirmed (once) with a resolution. At most one pending event per record.
export const PartnerEvent = defineEntity({
  name: 'PartnerEvent',
  tableName: 'partner_events',
  indexes: [
    { name: 'partner_events_workspace_id_id_index', properties: ['workspace', 'id'] },
    {
      name: 'partner_events_pending_unique',
      expression: `create unique index "partner_events_pending_unique" on "partner_events" ("integration_id", "record_kind", "record_id") where "state" = 'pending'`,
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    integration: p.manyToOne(Integration).ref().deleteRule('cascade').index(),
    /** field_conflict | possible_duplicate */
    kind: p.string().length(30),
    /** lead | reply | meeting */
    recordKind: p.string().length(20),
    recordId: p.uuid(),
    /** pending | confirmed */
    state: p.string().length(20).default('pending'),
    /** Conflict: `{ fields: [{ field, ours, theirs }] }`; duplicate: `{ partner_id, match, partner_record }`. */
    details: p.json<Record<string, unknown>>(),
    resolution: p.string().length(30).nullable(),
    confirmedByUserId: p.uuid().nullable(),
    confirmedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IPartnerEvent = InferEntity<typeof PartnerEvent>;
