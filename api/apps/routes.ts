import { defineOperation } from '../operation.js';
import { appStats, createApp, listApps, requireApp, updateApp } from '../../domain/apps/apps.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import {
  AppIdParams,
  AppPage,
  AppStatsView,
  AppView,
  CreateAppBody,
  ListAppsQuery,
  UpdateAppBody,
  toAppView,
} from './schemas.js';

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
  handler: async ({ em, actor, query }) =>
    page(await listApps(em, actor, toPageRequest(query)), query.limit, toAppView),
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

export const getAppOp = defineOperation({
  method: 'GET',
  path: '/api/apps/{id}',
  ids: { path: { id: 'app' } },
  summary: 'A product with its profile and ideal customer profile',
  tag,
  auth: 'user',
  params: AppIdParams,
  responses: { 200: AppView },
  errors: { 400: ['invalid_id', 'invalid_user'], 401: ['unauthorized'], 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toAppView(await requireApp(em, actor, params.id)),
});

export const updateAppOp = defineOperation({
  method: 'PUT',
  path: '/api/apps/{id}',
  ids: { path: { id: 'app' } },
  summary: 'Update a product’s profile (absent fields stay; null clears)',
  tag,
  auth: 'user',
  params: AppIdParams,
  body: UpdateAppBody,
  responses: { 200: AppView },
  errors: {
    400: ['invalid_body', 'invalid_id', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) => toAppView(await updateApp(em, actor, params.id, body)),
});

export const appStatsOp = defineOperation({
  method: 'GET',
  path: '/api/apps/stats',
  summary: 'Per-product counts (agents, active agents, lists, leads) for the products the caller can access',
  tag,
  auth: 'user',
  responses: { 200: AppStatsView },
  errors: { 400: ['invalid_user'], 401: ['unauthorized'], 403: ['not_assigned'] },
  handler: async ({ em, actor }) => ({ items: await appStats(em, actor) }),
});
