import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { App } from './App.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

/** `scope` of a fact that holds for every product of the workspace (app_id null). */
export const ALL_PRODUCTS_SCOPE = 'all';

// A fact the Operator remembers for one user in one workspace (docs/operator-tasks.md, "Memory"):
// about one product (`app`) or about all of them (`app` null). The key is unique per
// (workspace, user, scope), where `scope` is the product id or 'all' — a plain unique constraint,
// since PostgreSQL treats NULL app ids as distinct; PUT upserts on it.
export const OperatorMemory = defineEntity({
  name: 'OperatorMemory',
  tableName: 'operator_memories',
  uniques: [{ properties: ['workspace', 'user', 'scope', 'key'] }],
  indexes: [{ properties: ['user', 'workspace', 'updatedAt'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    user: p.manyToOne(User).ref().deleteRule('cascade'),
    app: p.manyToOne(App).ref().deleteRule('cascade').nullable().index(),
    /** The product id, or 'all' when `app` is null. */
    scope: p.string().length(36),
    key: p.string().length(100),
    value: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IOperatorMemory = InferEntity<typeof OperatorMemory>;
