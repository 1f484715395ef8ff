// The Operator's conversation endpoint (a server-sent event stream) and its capability list (docs/operator.md).
import { z } from 'zod';
import { requireApp } from '../../domain/apps/apps.js';
import { dispatch, MAX_MESSAGE, prepareMessage, type MessageBody } from '../../domain/operator/turns.js';
import { allTools } from '../../domain/tools/index.js';
import { needsConfirmation, RISKS } from '../../domain/tools/registry.js';
import { lastEventId } from '../../lib/operator-stream.js';
import { isUuid } from '../../lib/ids.js';
import { operatorWorkflowIds } from '../../lib/workflow-ids.js';
import { AppError } from '../../domain/errors.js';
import { defineOperation } from '../operation.js';
import { streamTurn } from './sse.js';

const tag = 'operator';

const MessageRequest = z
  .object({
    app_id: z.string().meta({ description: 'The product (a UUID; 400 invalid_app otherwise)' }),
    thread_id: z.uuid().optional().meta({
      description:
        'An existing thread of the product (400 invalid_thread, 404 thread_not_found, 400 thread_app_mismatch); a new thread when absent',
    }),
    message: z.string().max(MAX_MESSAGE).optional().meta({ description: 'Required unless a confirmation is sent' }),
    attachment_ids: z
      .array(z.uuid())
      .max(3)
      .optional()
      .meta({ description: 'Up to 3 unique attachment UUIDs of this thread; need thread_id; not with a confirmation' }),
    confirmation_action: z.enum(['confirm', 'cancel']).optional(),
    confirmation_token: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'From the approval_required event; required to cancel; not with message' }),
  })
  .strict()
  // The attachments' own rules are the body's (400 invalid_attachments), before the policy looks them up in the thread.
  .superRefine((b, ctx) => {
    const ids = b.attachment_ids ?? [];
    if (new Set(ids.map((i) => i.toLowerCase())).size !== ids.length)
      ctx.addIssue({ code: 'custom', path: ['attachment_ids'], message: 'attachment ids must be unique' });
    else if (ids.length && b.confirmation_action)
      ctx.addIssue({
        code: 'custom',
        path: ['attachment_ids'],
        message: 'attachments cannot be combined with confirming an action',
      });
  })
  .meta({
    examples: [
      {
        app_id: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a01',
        thread_id: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a02',
        message: 'Which of my campaigns had the most replies last week?',
      },
    ],
  });

const STREAM_DOC = `A server-sent event stream (\`text/event-stream\`). Each event has \`event:\`, \`id:\` (resumable position) and one JSON \`data:\` line:

| event | data |
| --- | --- |
| \`turn\` | \`{turn_id, thread_id, workflow_id, resumed}\` — first, at once |
| \`message_delta\` | \`{message_id, delta}\` — assistant text as it is produced |
| \`message\` | \`{message_id, content}\` — the assistant message, complete |
| \`tool_call\` | \`{tool_call_id, name, args, risk, needs_confirmation}\` |
| \`tool_result\` | \`{tool_call_id, name, status: ok \\| error \\| canceled \\| expired, result?, confirmation_id?}\` |
| \`approval_required\` | \`{confirmation_token, confirmation_id, thread_id, tool_call_id, name, args, risk, expires_at}\` — the turn waits; the response ends. Send \`confirmation_action\` (confirm / cancel) to continue on a new stream. |
| \`done\` | \`{turn_id, usage: {input_tokens, output_tokens, model_calls}, cost_micros, credits}\` — the response ends |
| \`error\` | \`{turn_id, code, message}\` — the response ends |

While idle the server sends a \`: heartbeat\` comment every 15 s. A client that disconnects stops only its stream: the turn completes in its workflow and the thread history shows it.`;

export const postMessageOp = defineOperation({
  method: 'POST',
  path: '/api/agent/messages',
  ids: {
    body: {
      app_id: { kind: 'app', missing: [403, 'app_not_owned'] },
      thread_id: { kind: 'thread', missing: [404, 'thread_not_found'] },
      attachment_ids: { within: 'thread_id', child: 'attachment', missing: [404, 'attachment_not_found'] },
    },
  },
  summary:
    'Talk to the Operator: a turn on Temporal, streamed as server-sent events (or confirm / cancel a pending tool call)',
  description: STREAM_DOC,
  tag,
  auth: 'user',
  body: MessageRequest,
  invalid: { fields: { thread_id: 'invalid_thread', attachment_ids: 'invalid_attachments' } },
  produces: 'text/event-stream',
  responses: { 200: z.string() },
  errors: {
    400: [
      'invalid_app',
      'invalid_attachments',
      'invalid_body',
      'invalid_thread',
      'invalid_user',
      'thread_app_mismatch',
    ],
    402: ['', 'insufficient_credits'],
    403: ['app_not_owned', 'demo_read_only', 'not_assigned'],
    404: ['attachment_not_found', 'thread_not_found', 'confirmation_not_found'],
    409: ['confirmation_not_pending'],
    422: ['attachment_unavailable'],
    500: ['thread_create_failed'],
  },
  handler: async ({ em, actor, services, body, ctx }) => {
    const prepared = await prepareMessage(em, actor, body as MessageBody);
    const { turnId, threadId } = prepared.start;
    // A decision continues after what the client has seen; a new turn streams from its start.
    const after = prepared.kind === 'decision' ? await lastEventId(services.redis, turnId).catch(() => '0') : '0';
    // The API's own first event goes to the client at once; the rest comes from the turn through Redis.
    const stream = streamTurn(ctx, services, turnId, after, {
      event: 'turn',
      data: {
        turn_id: turnId,
        thread_id: threadId,
        workflow_id: operatorWorkflowIds.turn(threadId, turnId),
        resumed: prepared.kind === 'decision',
      },
    });
    // Not awaited: the response (headers and the first event) goes out while the workflow starts.
    void dispatch(services.jobs, prepared, { em: em.fork(), redis: services.redis }).catch((err: unknown) => {
      services.logger.error({ err: String(err), turnId }, 'operator turn not dispatched');
      stream.fail('dispatch_failed', 'the turn could not be started; retry');
    });
  },
});

const CapabilityView = z.object({
  name: z.string(),
  domain: z.string(),
  description: z.string(),
  risk: z.enum(RISKS),
  needs_confirmation: z.boolean(),
});

export const capabilitiesOp = defineOperation({
  method: 'GET',
  path: '/api/agent/capabilities',
  ids: { query: { app_id: 'app' } },
  summary:
    "The Operator's tools (the one registry the Operator and the MCP endpoint serve), without schemas or dispatch details",
  tag,
  auth: 'user',
  // Required and a uuid in the document too (a missing or malformed one is 400 invalid_scope, as the handler answered).
  query: z.object({ app_id: z.uuid() }),
  invalid: { query: 'invalid_scope' },
  responses: { 200: z.object({ app_id: z.uuid(), capabilities: z.array(CapabilityView) }) },
  errors: { 400: ['invalid_scope', 'invalid_user'], 403: ['not_assigned'], 404: ['not_found'], 503: ['unavailable'] },
  handler: async ({ em, actor, query }) => {
    if (!query.app_id || !isUuid(query.app_id)) throw new AppError(400, 'invalid_scope', 'a valid app_id is required');
    await requireApp(em, actor, query.app_id); // ownership before enumerating
    return {
      app_id: query.app_id,
      capabilities: allTools().map((t) => ({
        name: t.name,
        domain: t.domain,
        description: t.description,
        risk: t.risk,
        needs_confirmation: needsConfirmation(t),
      })),
    };
  },
});
