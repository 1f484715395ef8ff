import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// A product of a workspace (minimal here; the products issue extends it).
export const App = defineEntity({
  name: 'App',
  tableName: 'apps',
  properties: (p) => ({
    id: p.uuid().primary().onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    name: p.string().length(200),
    description: p.text().nullable(),
    websiteUrl: p.string().length(2048).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});
export type IApp = InferEntity<typeof App>;
