import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

// A note a person wrote about a lead (follow-ups), newest first.
export const LeadNote = defineEntity({
  name: 'LeadNote',
  tableName: 'lead_notes',
  indexes: [{ properties: ['leadId', 'createdAt', 'id'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspaceId: p.uuid(),
    leadId: p.uuid(),
    authorId: p.uuid(),
    body: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ILeadNote = InferEntity<typeof LeadNote>;
