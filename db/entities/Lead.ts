import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';
import { LeadList } from './LeadList.js';
import { Contact } from './Contact.js';

// A contact's membership of a list: what campaigns enroll and webhook events call `lead_id`.
export const Lead = defineEntity({
  name: 'Lead',
  tableName: 'leads',
  uniques: [{ properties: ['list', 'contact'] }],
  // A list's leads are paged by id.
  indexes: [{ name: 'leads_list_id_id_index', properties: ['list', 'id'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    list: p.manyToOne(LeadList).ref().deleteRule('cascade'),
    contact: p.manyToOne(Contact).ref().deleteRule('cascade').index(),
    /** How the lead got into the list: discovery, import or manual. */
    source: p.string().length(20),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ILead = InferEntity<typeof Lead>;
