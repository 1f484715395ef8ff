// The Operator's memory and notification preferences (docs/operator-tasks.md).
import { z } from 'zod';
import { forgetFact, listFacts, rememberFacts, setNotificationPreferences } from '../../domain/operator/memory.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import {
  MemoryPage,
  MemoryParams,
  MemoryQuery,
  MemoryView,
  PreferencesBody,
  PreferencesView,
  PutMemoryBody,
  toMemoryView,
  toPreferencesChange,
  toPreferencesView,
} from './memory-schemas.js';

const tag = 'operator';

export const listMemoryOp = defineOperation({
  method: 'GET',
  path: '/api/operator/memory',
  ids: { query: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } } },
  summary:
    'The facts the Operator remembers for the caller in this workspace, newest first (optionally for one product)',
  tag,
  auth: 'user',
  query: MemoryQuery,
  responses: { 200: MemoryPage },
  errors: { 400: ['invalid_query', 'invalid_user'], 403: ['app_not_owned', 'not_assigned'] },
  handler: async ({ em, actor, query }) =>
    page(await listFacts(em, actor, toPageRequest(query), query.app_id), query.limit, toMemoryView),
});

export const putMemoryOp = defineOperation({
  method: 'PUT',
  path: '/api/operator/memory',
  ids: {
    body: {
      app_id: { kind: 'app', missing: [403, 'app_not_owned'] },
      '[].app_id': { kind: 'app', missing: [403, 'app_not_owned'] },
    },
  },
  summary: 'Remember facts: each is inserted, or replaces the value of the same key (per product, or for all products)',
  tag,
  auth: 'user',
  body: PutMemoryBody,
  responses: { 200: z.array(MemoryView) },
  errors: {
    400: ['invalid_body', 'invalid_user'],
    403: ['app_not_owned', 'not_assigned', 'demo_read_only'],
    409: ['memory_full'],
  },
  handler: async ({ em, actor, body }) => {
    const facts = (Array.isArray(body) ? body : [body]).map((f) => ({
      appId: f.app_id ?? null,
      key: f.key,
      value: f.value,
    }));
    return (await rememberFacts(em, actor, facts)).map(toMemoryView);
  },
});

export const deleteMemoryOp = defineOperation({
  method: 'DELETE',
  path: '/api/operator/memory/{memoryID}',
  ids: { path: { memoryID: 'memory' } },
  summary: 'Forget one fact',
  tag,
  auth: 'user',
  params: MemoryParams,
  responses: { 204: null },
  errors: { 400: ['invalid_id', 'invalid_user'], 403: ['demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    await forgetFact(em, actor, params.memoryID);
    return reply(204);
  },
});

export const putNotificationPreferencesOp = defineOperation({
  method: 'PUT',
  path: '/api/operator/notification-preferences',
  summary:
    'How the caller hears about each topic of notifications (in_app, email or none): finished tasks, pending confirmations, disconnected accounts, replies, finished imports, overdue reviews; the fields given change, the answer is the whole set',
  tag,
  auth: 'user',
  body: PreferencesBody,
  responses: { 200: PreferencesView },
  errors: { 400: ['invalid_body', 'invalid_user'], 403: ['demo_read_only'] },
  handler: async ({ em, actor, body }) =>
    toPreferencesView(await setNotificationPreferences(em, actor, toPreferencesChange(body))),
});
