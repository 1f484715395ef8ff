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
  removeLeadFromList,
  updateList,
} from '../../domain/lists/lists.js';
import { MAX_PEOPLE, addLeadsToList } from '../../domain/lists/add-leads.js';
import {
  AddLeadsBody,
  AddedLeadsView,
  AppIdParams,
  CreateListBody,
  DeletedListView,
  LeadPage,
  ListAllListsQuery,
  ListLeadParams,
  ListLeadsQuery,
  ListListsQuery,
  ListPage,
  ListView,
  UpdateListBody,
  toAddedLeadsView,
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
  operationId: 'createList',
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

// Leads over JSON: beyond the spec (docs/imports.md, "Adding leads over JSON").

/** Bodies of up to MAX_PEOPLE people with every field filled in: 4 MiB (more: 413 payload_too_large). */
export const ADD_LEADS_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

export const addListLeadsOp = defineOperation({
  method: 'POST',
  path: '/api/lists/{id}/leads',
  operationId: 'addListLeads',
  ids: { path: { id: 'list' } },
  summary: `Add up to ${MAX_PEOPLE} people to a list over JSON (beyond the spec), by the CSV import’s row rules and dedupe`,
  description: `Beyond the spec. Each person is checked by the CSV import’s row rule and deduplicated against the workspace’s contacts as an import row is (\`dedupe_mode\`, default \`update_empty\`); every valid person’s contact joins the list once. One answer per person in \`items\`, in order, with \`totals\`: the request is 200 even when some people are invalid. A body that is not valid as a whole (not an object, no people or more than ${MAX_PEOPLE}, an unknown field or dedupe mode) is 400 \`invalid_body\` and changes nothing. One transaction; leads added this way have \`source: "api"\`. 409 \`conflict\`: a contact of these people was written concurrently three times running; repeat the request.`,
  tag,
  beyondSpec: true,
  auth: 'user',
  // It answers 200 but creates leads: a retry after a lost answer must not add twice (docs/idempotency.md).
  idempotency: true,
  params: IdParams,
  body: AddLeadsBody,
  bodyLimitBytes: ADD_LEADS_BODY_LIMIT_BYTES,
  responses: { 200: AddedLeadsView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['conflict'],
  },
  handler: async ({ em, actor, params, body }) =>
    toAddedLeadsView(await addLeadsToList(em, actor, params.id, body.people, body.dedupe_mode)),
});

export const removeListLeadOp = defineOperation({
  method: 'DELETE',
  path: '/api/lists/{id}/leads/{leadId}',
  operationId: 'removeListLead',
  ids: { path: { id: 'list', leadId: { within: 'id', child: 'list_lead' } } },
  summary: 'Remove a lead from its list (beyond the spec); refused with 409 lead_in_use while a campaign enrolls it',
  description:
    'Beyond the spec. The lead goes as when its list is deleted: its contact stays in the workspace and in its other lists. A lead with an enrollment (any status) in a campaign that is not archived is refused with 409 `lead_in_use` (`details.campaign_ids`, `details.campaign_count`), since removing it would delete those enrollments: archive the campaigns first. A lead of another list is 404.',
  tag,
  beyondSpec: true,
  auth: 'user',
  params: ListLeadParams,
  responses: { 204: null },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['lead_in_use'],
  },
  handler: async ({ em, actor, params }) => {
    await removeLeadFromList(em, actor, params.id, params.leadId);
  },
});
