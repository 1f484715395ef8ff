// Table views (docs/ideas-views-onboarding.md): a person's saved column/filter/sort layouts of one of
// the product's tables, in the workspace they act in (filters name that workspace's lists,
// campaigns, …). POST upserts by (table, name), names compared case-insensitively; nobody else — not
// another member of the same workspace — sees, changes or deletes them.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ViewTable } from '../../db/entities/TableView.js';
import { uuidv7 } from '../../lib/ids.js';
import { keysetSql, type PageRequest } from '../../lib/pagination.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';

/** Views one person may keep per table and workspace (409 `view_limit_reached` for a new one above it). */
export const MAX_VIEWS_PER_TABLE = 50;

export interface TableViewRow {
  id: string;
  table: ViewTable;
  name: string;
  layout: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, "table", name, layout, created_at, updated_at';

/** The caller's views in this workspace, oldest first (by id); `table` narrows to one table. */
export function listViews(
  em: EntityManager,
  actor: Actor,
  q: PageRequest & { table?: ViewTable },
): Promise<TableViewRow[]> {
  const params: unknown[] = [actor.userId, actor.workspaceId];
  let sql = `select ${COLUMNS} from table_views where user_id = ? and workspace_id = ?`;
  if (q.table) {
    sql += ' and "table" = ?';
    params.push(q.table);
  }
  const k = keysetSql(q, 'id');
  return em.execute<TableViewRow[]>(sql + k.sql, [...params, ...k.params]);
}

/**
 * Saves a view: a new (table, name) is created (`created: true`), an existing one — same name in
 * any letter case — gets the new layout and the name as now spelt. The per-table cap is checked
 * under a lock on the person's views of that table, so concurrent saves cannot pass it.
 */
export async function saveView(
  em: EntityManager,
  actor: Actor,
  input: { table: ViewTable; name: string; layout: Record<string, unknown> },
): Promise<{ view: TableViewRow; created: boolean }> {
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [
      `table-views:${actor.workspaceId}:${actor.userId}:${input.table}`,
    ]);
    const [existing] = await tx.execute<{ id: string }[]>(
      `select id from table_views where workspace_id = ? and user_id = ? and "table" = ? and lower(name) = lower(?)`,
      [actor.workspaceId, actor.userId, input.table, input.name],
    );
    if (existing) {
      const [view] = await tx.execute<TableViewRow[]>(
        `update table_views set name = ?, layout = ?::jsonb, updated_at = now() where id = ? returning ${COLUMNS}`,
        [input.name, JSON.stringify(input.layout), existing.id],
      );
      return { view, created: false };
    }
    const [{ n }] = await tx.execute<{ n: number }[]>(
      `select count(*)::int as n from table_views where workspace_id = ? and user_id = ? and "table" = ?`,
      [actor.workspaceId, actor.userId, input.table],
    );
    if (n >= MAX_VIEWS_PER_TABLE)
      throw new AppError(
        409,
        'view_limit_reached',
        `at most ${MAX_VIEWS_PER_TABLE} saved views per table; delete one first`,
      );
    const [view] = await tx.execute<TableViewRow[]>(
      `insert into table_views (id, workspace_id, user_id, "table", name, layout, created_at, updated_at) values (?, ?, ?, ?, ?, ?::jsonb, now(), now()) returning ${COLUMNS}`,
      [uuidv7(), actor.workspaceId, actor.userId, input.table, input.name, JSON.stringify(input.layout)],
    );
    return { view, created: true };
  });
}

/** Deletes one of the caller's views: 404 for an unknown id, another person's or another workspace's. */
export async function deleteView(em: EntityManager, actor: Actor, id: string): Promise<void> {
  const rows = await em.execute<{ id: string }[]>(
    `delete from table_views where id = ? and user_id = ? and workspace_id = ? returning id`,
    [id, actor.userId, actor.workspaceId],
  );
  if (!rows.length) throw notFound('table view');
}
