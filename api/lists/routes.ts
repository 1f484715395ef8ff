import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import {
  createList,
  deleteList,
  getList,
  listLeads,
  listLists,
  listListsOfApp,
  updateList,
} from '../../domain/lists/lists.js';
import {
  AppIdParams,
  CreateListBody,
  DeletedListView,
  LeadPage,
  ListAllListsQuery,
  ListLeadsQuery,
  ListListsQuery,
  ListPage,
  ListView,
  UpdateListBody,
  toDeletedListView,
  toLeadView,
  toListView,
} from './schemas.js';

const tag = 'lists';
const auth = { 401: ['unauthorized'] };

export const listAppLists = defineOperation({
  method: 'GET',
  path: '/api/apps/{appId}/lists',
  ids: { path: { appId: 'app' } },
  summary: "A product's lead lists, oldest first, each with its lead_count",
  tag,
  auth: 'user',
  params: AppIdParams,
  query: ListListsQuery,
  responses: { 200: ListPage },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params, query }) =>
    page(await listListsOfApp(em, actor, params.appId, toPageRequest(query)), query.limit, toListView),
});

export const createAppList = defineOperation({
  method: 'POST',
  path: '/api/apps/{appId}/lists',
  ids: { path: { appId: 'app' } },
  summary: 'Create an empty lead list in a product (name unique in the product, case-insensitively)',
  tag,
  auth: 'user',
  params: AppIdParams,
  body: CreateListBody,
  responses: { 201: ListView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['list_name_taken'],
  },
  handler: async ({ em, actor, params, body }) => toListView(await createList(em, actor, params.appId, body)),
});

export const listAllLists = defineOperation({
  method: 'GET',
  path: '/api/lists',
  ids: { query: { app_id: 'app' } },
  summary: 'Lead lists across the products the caller can access (optionally of one product), oldest first',
  tag,
  auth: 'user',
  query: ListAllListsQuery,
  responses: { 200: ListPage },
  // app_id names a product the way a path id does: another workspace's is 404, one the member was not given 403.
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, query }) =>
    page(await listLists(em, actor, toPageRequest(query), query.app_id), query.limit, toListView),
});

export const getListOp = defineOperation({
  method: 'GET',
  path: '/api/lists/{id}',
  ids: { path: { id: 'list' } },
  summary: 'One lead list with its lead_count',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ListView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toListView(await getList(em, actor, params.id)),
});

export const updateListOp = defineOperation({
  method: 'PUT',
  path: '/api/lists/{id}',
  ids: { path: { id: 'list' } },
  summary: 'Rename a list and/or change its description (null clears it)',
  tag,
  auth: 'user',
  params: IdParams,
  body: UpdateListBody,
  responses: { 200: ListView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['list_name_taken'],
  },
  handler: async ({ em, actor, params, body }) => toListView(await updateList(em, actor, params.id, body)),
});

export const deleteListOp = defineOperation({
  method: 'DELETE',
  path: '/api/lists/{id}',
  ids: { path: { id: 'list' } },
  summary:
    'Delete a list and its leads (contacts stay in the workspace). Discovery agents that delivered into it keep running with no destination list (their list_id becomes null); their ids are returned in agents_cleared. A list with leads enrolled in a campaign that is not archived is refused with 409 list_in_use (details.campaign_ids, details.campaign_count): archive those campaigns first.',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: DeletedListView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['list_in_use'],
  },
  handler: async ({ em, actor, params }) => toDeletedListView(await deleteList(em, actor, params.id)),
});

export const listLeadsOp = defineOperation({
  method: 'GET',
  path: '/api/lists/{id}/leads',
  ids: { path: { id: 'list' } },
  summary: "A list's leads with their contact, oldest first; q searches name, email and company",
  tag,
  auth: 'user',
  params: IdParams,
  query: ListLeadsQuery,
  responses: { 200: LeadPage },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params, query }) =>
    page(await listLeads(em, actor, params.id, toPageRequest(query), query.q || undefined), query.limit, toLeadView),
});
