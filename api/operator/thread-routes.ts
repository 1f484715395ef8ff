// Operator threads (docs/operator.md): create, list, read, rename, delete, history.
import { z } from 'zod';
import {
  createThread,
  deleteThread,
  listThreads,
  renameThread,
  requireThread,
  threadMessages,
} from '../../domain/operator/threads.js';
import { defineOperation, reply } from '../operation.js';
import {
  AppQuery,
  CreateThreadBody,
  MessageView,
  RenameThreadBody,
  ThreadParams,
  ThreadView,
  toMessageView,
  toThreadView,
} from './thread-schemas.js';

const tag = 'operator';
const byThread = { params: 'invalid_thread' };

export const createThreadOp = defineOperation({
  method: 'POST',
  path: '/api/agent/threads',
  ids: { body: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } } },
  summary: 'Start a thread with the Operator about one product',
  tag,
  auth: 'user',
  body: CreateThreadBody,
  invalid: { fields: { app_id: 'invalid_app', title: 'invalid_body' } },
  responses: { 201: ThreadView },
  errors: {
    400: ['invalid_app', 'invalid_body', 'invalid_title', 'title_too_long', 'invalid_user'],
    403: ['app_not_owned'],
  },
  handler: async ({ em, actor, body }) =>
    reply(201, toThreadView(await createThread(em, actor, body.app_id, body.title))),
});

export const listThreadsOp = defineOperation({
  method: 'GET',
  path: '/api/agent/threads',
  ids: { query: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } } },
  summary: "The caller's threads of a product, most recently active first (possibly empty)",
  tag,
  auth: 'user',
  query: AppQuery,
  invalid: { query: 'invalid_app' },
  responses: { 200: z.array(ThreadView) },
  errors: { 400: ['invalid_app', 'invalid_user'], 403: ['app_not_owned', 'not_assigned'] },
  handler: async ({ em, actor, query }) => (await listThreads(em, actor, query.app_id)).map(toThreadView),
});

export const getThreadOp = defineOperation({
  method: 'GET',
  path: '/api/agent/threads/{threadId}',
  ids: { path: { threadId: 'thread' } },
  summary: 'One of the caller’s threads',
  tag,
  auth: 'user',
  params: ThreadParams,
  invalid: byThread,
  responses: { 200: ThreadView },
  errors: { 400: ['invalid_thread', 'invalid_user'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toThreadView(await requireThread(em, actor, params.threadId)),
});

export const renameThreadOp = defineOperation({
  method: 'PATCH',
  path: '/api/agent/threads/{threadId}',
  ids: { path: { threadId: 'thread' } },
  summary: 'Rename a thread (the title is the only field a client changes)',
  tag,
  auth: 'user',
  params: ThreadParams,
  body: RenameThreadBody,
  invalid: byThread,
  responses: { 200: ThreadView },
  errors: {
    400: ['invalid_body', 'invalid_thread', 'invalid_title', 'invalid_user', 'title_too_long'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) =>
    toThreadView(await renameThread(em, actor, params.threadId, body.title)),
});

export const deleteThreadOp = defineOperation({
  method: 'DELETE',
  path: '/api/agent/threads/{threadId}',
  ids: { path: { threadId: 'thread' } },
  summary: 'Delete a thread with its messages, confirmations, per-turn cost records and attachments (one transaction)',
  tag,
  auth: 'user',
  params: ThreadParams,
  invalid: byThread,
  responses: { 204: null },
  errors: { 400: ['invalid_thread', 'invalid_user'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    await deleteThread(em, actor, params.threadId);
    return reply(204);
  },
});

export const threadMessagesOp = defineOperation({
  method: 'GET',
  path: '/api/agent/threads/{threadId}/messages',
  ids: { path: { threadId: 'thread' } },
  summary: 'The whole history of a thread, in order (the Operator itself considers only the last 20 turns)',
  tag,
  auth: 'user',
  params: ThreadParams,
  invalid: byThread,
  responses: { 200: z.array(MessageView) },
  errors: { 400: ['invalid_thread', 'invalid_user'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => (await threadMessages(em, actor, params.threadId)).map(toMessageView),
});
