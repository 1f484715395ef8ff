import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

export const VIEW_TABLES = [
  'contacts',
  'leads',
  'discovered_leads',
  'lists',
  'campaigns',
  'enrollments',
  'scheduled_actions',
  'message_drafts',
  'conversations',
  'follow_ups',
  'meetings',
  'platform_accounts',
  'agents',
  'list_imports',
] as const;
export type ViewTable = (typeof VIEW_TABLES)[number];

// A saved column/filter/sort layout of one table, for one user in one workspace
// (docs/ideas-views-onboarding.md). Names are unique per (workspace, user, table), case-insensitively:
// POST upserts by that key.
export const TableView = defineEntity({
  name: 'TableView',
  tableName: 'table_views',
  indexes: [
    {
      name: 'table_views_name_unique',
      expression:
        'create unique index "table_views_name_unique" on "table_views" ("workspace_id", "user_id", "table", lower("name"))',
    },
    { name: 'table_views_user_workspace_id_index', properties: ['user', 'workspace', 'id'] },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    user: p.manyToOne(User).ref().deleteRule('cascade'),
    table: p.string().length(40),
    name: p.string().length(100),
    /** `{columns, filters, sort}` as validated by the API (api/table-views/schemas.ts). */
    layout: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ITableView = InferEntity<typeof TableView>;
