import { defineOperation } from '../operation.js';
import { createApp, listApps } from '../../domain/apps.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { AppPage, AppView, CreateAppBody, ListAppsQuery, toAppView } from './schemas.js';

const tag = 'apps';

export const listAppsOp = defineOperation({
  method: 'GET',
  path: '/api/apps',
  summary: 'Products of the effective workspace that the caller can access',
  tag,
  auth: 'user',
  query: ListAppsQuery,
  responses: { 200: AppPage },
  errors: { 400: ['invalid_query', 'invalid_user'], 401: ['unauthorized'], 403: ['not_assigned'] },
  handler: async ({ em, actor, query }) => page(await listApps(em, actor, toPageRequest(query)), query.limit, toAppView),
});

export const createAppOp = defineOperation({
  method: 'POST',
  path: '/api/apps',
  summary: 'Create a product',
  tag,
  auth: 'user',
  body: CreateAppBody,
  responses: { 201: AppView },
  errors: { 400: ['invalid_body', 'invalid_user'], 401: ['unauthorized'], 403: ['not_assigned', 'plan_limit_reached'] },
  handler: async ({ em, actor, body }) => toAppView(await createApp(em, actor, body)),
});
