import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';
import { App } from './App.js';

// A lead list of a product. Its members are leads (a contact's membership, at most once per list).
export const LeadList = defineEntity({
  name: 'LeadList',
  tableName: 'lead_lists',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    name: p.string().length(200),
    description: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ILeadList = InferEntity<typeof LeadList>;
