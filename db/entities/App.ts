import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// A product of a workspace: what discovery needs to know about it (profile and ideal customer).
export const App = defineEntity({
  name: 'App',
  tableName: 'apps',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    name: p.string().length(200),
    description: p.text().nullable(),
    websiteUrl: p.string().length(2048).nullable(),
    valueProposition: p.text().nullable(),
    /** The ideal customer profile: free text plus structured filters (titles, industries, countries, sizes, keywords). */
    icpDescription: p.text().nullable(),
    icpFilters: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IApp = InferEntity<typeof App>;
