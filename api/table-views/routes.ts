// Saved table layouts (docs/ideas-views-onboarding.md): per person, table and workspace.
import { deleteView, listViews, saveView } from '../../domain/table-views/table-views.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import { SaveViewBody, TableViewPage, TableViewView, TableViewsQuery, toTableView } from './schemas.js';

const tag = 'table-views';
const auth = { 401: ['unauthorized'] };

export const listTableViewsOp = defineOperation({
  method: 'GET',
  path: '/api/table-views',
  summary: 'The caller’s saved table views in this workspace (optionally of one table), oldest first',
  tag,
  auth: 'user',
  query: TableViewsQuery,
  responses: { 200: TableViewPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) =>
    page(await listViews(em, actor, { ...toPageRequest(query), table: query.table }), query.limit, toTableView),
});

export const saveTableViewOp = defineOperation({
  method: 'POST',
  path: '/api/table-views',
  summary: 'Save a table view by (table, name): 201 when new, 200 when it replaced the layout of the view of that name',
  tag,
  auth: 'user',
  body: SaveViewBody,
  responses: { 201: TableViewView, 200: TableViewView },
  errors: { 400: ['invalid_body', 'invalid_user'], ...auth, 403: ['demo_read_only'], 409: ['view_limit_reached'] },
  handler: async ({ em, actor, body }) => {
    const { view, created } = await saveView(em, actor, body);
    return reply(created ? 201 : 200, toTableView(view));
  },
});

export const deleteTableViewOp = defineOperation({
  method: 'DELETE',
  path: '/api/table-views/{id}',
  ids: { path: { id: { own: 'a table view of the caller' } } },
  summary: 'Delete one of your table views',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 204: null },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    await deleteView(em, actor, params.id);
    return reply(204);
  },
});
