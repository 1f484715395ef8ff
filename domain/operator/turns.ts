// Operator turns (docs/operator.md): the rules of `POST /api/agent/messages`, and the steps the turn
// workflow `operator-turn:<threadId>:<turnId>` runs as activities — a model step (context of the last
// 20 turns, streamed to the client through Redis), tool calls (read tools at once; any other risk
// waits for the user's confirmation), and the completion that records the turn's cost.
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { AgentAttachment } from '../../db/entities/AgentAttachment.js';
import { AgentConfirmation } from '../../db/entities/AgentConfirmation.js';
import { AgentMessage, type IAgentMessage } from '../../db/entities/AgentMessage.js';
import { AgentThread } from '../../db/entities/AgentThread.js';
import { AgentTurn } from '../../db/entities/AgentTurn.js';
import { App } from '../../db/entities/App.js';
import { Workspace } from '../../db/entities/Workspace.js';
import type { ChatMessage, ModelAdapter, ToolSpec, Usage } from '../../lib/llm/types.js';
import { runtimeSettings } from '../../lib/config.js';
import { isUuid, uuidv7 } from '../../lib/ids.js';
import { publishTurnEvent, type TurnStream } from '../../lib/operator-stream.js';
import { debitCredits, holdCredits, releaseCredits } from '../billing/credits.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { requireChatAttachments } from './attachments.js';
import { appendMessages, requireOwnedApp, requireThread } from './threads.js';
import { memoryForContext } from './memory.js';
import { requireOperatorAccess } from '../billing/plans.js';
import { allTools, findTool } from '../tools/index.js';
import { needsConfirmation, requiresAppId, runTool, type Risk, type ToolContext } from '../tools/registry.js';
import { resolveActor } from '../workspaces.js';
import { notifyConfirmationPending } from '../notifications/notifications.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import { operatorToolCalls, operatorTurns } from '../../lib/metrics.js';
// The port's input, declared with the port (domain/jobs.ts) so that the port imports no slice.
import type { TurnStart } from '../jobs.js';
export type { TurnStart };

export const MAX_MESSAGE = 20_000;
export const MAX_ATTACHMENTS = 3;
/** The model sees the last this-many turns of a thread (the history route returns all). */
export const CONTEXT_TURNS = 20;
/** Model calls per turn at most (each tool round is one more). */
export const MAX_MODEL_STEPS = 6;
/** How long a confirmation waits (OPERATOR_CONFIRMATION_TTL_MS, default 1 hour; read where the turn runs). */
export const confirmationTtlMs = runtimeSettings.operatorConfirmationTtlMs;
/** Credits one turn costs (the model's own cost is recorded per turn in micros). */
export const TURN_CREDITS = 1;
/**
 * The turn's charge (ledger key) and the hold taken for it (docs/plans-and-credits.md, "Holds"). The
 * hold counts for one model step and one confirmation wait, with room; each model step renews it,
 * so only a turn whose run was lost outlives it.
 */
const turnHold = (turnId: string) => ({
  key: `operator-turn:${turnId}`,
  reason: 'Operator turn',
  ttlMs: confirmationTtlMs() + 15 * 60_000,
});
/** Tool results kept in history and context (characters of JSON). */
const MAX_RESULT_CHARS = 20_000;

export interface MessageBody {
  app_id: string;
  thread_id?: string;
  message?: string;
  attachment_ids?: string[];
  confirmation_action?: 'confirm' | 'cancel';
  confirmation_token?: string;
}

export type PreparedMessage =
  | { kind: 'turn'; start: TurnStart }
  | { kind: 'decision'; start: TurnStart; confirmationId: string; action: 'confirm' | 'cancel' };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The body rules that need no database (400 invalid_body / invalid_app / invalid_thread / invalid_attachments). */
function checkBody(b: MessageBody): void {
  const confirming = b.confirmation_action !== undefined;
  if (b.confirmation_action === 'cancel' && !b.confirmation_token)
    throw badRequest('invalid_body', 'confirmation_token is required to cancel');
  if (b.confirmation_token !== undefined && !b.confirmation_action)
    throw badRequest('invalid_body', 'confirmation_token needs confirmation_action');
  if (b.message !== undefined && b.confirmation_token !== undefined)
    throw badRequest('invalid_body', 'message and confirmation_token cannot be combined');
  if (!confirming && (b.message === undefined || !b.message.trim()))
    throw badRequest('invalid_body', 'message is required');
  if (!isUuid(b.app_id)) throw badRequest('invalid_app', 'app_id must be a valid product id');
  if (b.thread_id !== undefined && !isUuid(b.thread_id))
    throw badRequest('invalid_thread', 'thread_id must be a valid thread id');
  const ids = b.attachment_ids;
  if (ids !== undefined) {
    if (
      ids.length > MAX_ATTACHMENTS ||
      !ids.every(isUuid) ||
      new Set(ids.map((i) => i.toLowerCase())).size !== ids.length
    ) {
      throw badRequest('invalid_attachments', `attachment_ids must be unique UUIDs, at most ${MAX_ATTACHMENTS}`);
    }
    if (ids.length && confirming)
      throw badRequest('invalid_attachments', 'attachments cannot be combined with confirming an action');
    if (ids.length && !b.thread_id)
      throw badRequest('invalid_attachments', 'attachments require an existing thread (thread_id)');
  }
}

/**
 * Applies every rule of the spec in order and prepares the turn: a new one (the user message and the
 * turn row written), or the decision on a pending confirmation (already recorded: single use).
 */
export async function prepareMessage(em: EntityManager, actor: Actor, b: MessageBody): Promise<PreparedMessage> {
  checkBody(b);
  await requireOperatorAccess(em, actor);
  await requireOwnedApp(em, actor, b.app_id);
  let threadId = b.thread_id;
  if (threadId) {
    const thread = await requireThread(em, actor, threadId, 'thread_not_found');
    if (thread.app.id !== b.app_id) throw badRequest('thread_app_mismatch', 'the thread belongs to another product');
  }
  if (b.confirmation_action) return decide(em, actor, b.app_id, threadId, b.confirmation_action, b.confirmation_token);

  const attachments = b.attachment_ids?.length
    ? await requireChatAttachments(em, actor, threadId!, b.attachment_ids)
    : [];
  // The thread (when new), the turn, the user's message and the turn's credit hold (402
  // insufficient_credits, nothing recorded, when it cannot be covered): one transaction.
  const turn = await em
    .transactional(async (tx) => {
      if (!threadId) {
        threadId = uuidv7();
        tx.create(AgentThread, {
          id: threadId,
          workspace: actor.workspaceId,
          user: actor.userId,
          app: b.app_id,
          title: titleFrom(b.message!),
        });
      }
      const created = tx.create(AgentTurn, {
        thread: threadId,
        workspace: actor.workspaceId,
        userId: actor.userId,
        appId: b.app_id,
      });
      await tx.flush();
      await holdCredits(tx, actor.workspaceId, TURN_CREDITS, turnHold(created.id));
      await appendMessages(tx, threadId, [
        {
          turnId: created.id,
          role: 'user',
          content: b.message!.trim().slice(0, MAX_MESSAGE),
          attachmentIds: attachments.map((a) => a.id),
        },
      ]);
      return created;
    })
    .catch((err: unknown) => {
      if (err instanceof AppError || b.thread_id) throw err;
      throw new AppError(500, 'thread_create_failed', 'the thread could not be created');
    });
  if (!threadId) throw new AppError(500, 'thread_create_failed', 'the thread could not be created');
  return { kind: 'turn', start: { turnId: turn.id, threadId, workspaceId: actor.workspaceId, appId: b.app_id } };
}

/** A new thread is titled after the first message (its first line, up to 60 characters). */
const titleFrom = (message: string) => message.trim().split('\n')[0].slice(0, 60).trim() || 'New thread';

/**
 * Records the user's decision on a pending confirmation: the token's (bound to this user and, when
 * given, this thread), or without a token the thread's latest pending one. Single use: only a pending,
 * unexpired confirmation changes (404 `confirmation_not_found`, 409 `confirmation_not_pending`).
 */
async function decide(
  em: EntityManager,
  actor: Actor,
  appId: string,
  threadId: string | undefined,
  action: 'confirm' | 'cancel',
  token?: string,
): Promise<PreparedMessage> {
  let conf;
  if (token) conf = await em.findOne(AgentConfirmation, { tokenHash: sha256(token) });
  else if (threadId)
    conf = await em.findOne(
      AgentConfirmation,
      { thread: threadId, userId: actor.userId, status: 'pending' },
      { orderBy: { createdAt: 'desc' } },
    );
  else throw badRequest('invalid_body', 'confirming without a confirmation_token needs thread_id');
  if (!conf || conf.userId !== actor.userId || (threadId && conf.thread.id !== threadId)) {
    throw new AppError(404, 'confirmation_not_found', 'no such confirmation for you in this thread');
  }
  const thread = await requireThread(em, actor, conf.thread.id, 'thread_not_found');
  if (thread.app.id !== appId)
    throw badRequest('thread_app_mismatch', 'the confirmation belongs to a thread of another product');
  const decided: unknown[] = await em.execute(
    `update agent_confirmations set status = ?, decided_at = now() where id = ? and status = 'pending' and expires_at > now() returning id`,
    [action === 'confirm' ? 'confirmed' : 'canceled', conf.id],
  );
  if (!decided.length)
    throw new AppError(
      409,
      'confirmation_not_pending',
      `the confirmation was already ${conf.status === 'pending' ? 'expired' : conf.status}`,
    );
  return {
    kind: 'decision',
    start: { turnId: conf.turn.id, threadId: thread.id, workspaceId: actor.workspaceId, appId },
    confirmationId: conf.id,
    action,
  };
}

// ---------------------------------------------------------------------------------------------
// The workflow's steps

export interface PlannedCall {
  id: string;
  name: string;
  args: unknown;
  /** The registry's risk; null for a tool the registry does not have. */
  risk: Risk | null;
}

export interface StepResult {
  toolCalls: PlannedCall[];
  usage: Usage;
}

/** Everything a step needs to act as the turn's user. */
export interface TurnDeps {
  em: EntityManager;
  redis: TurnStream;
  llm: ModelAdapter;
  /** Tool context extras (jobs, providers) for tools that start work or call providers. */
  toolContext: Omit<ToolContext, 'em' | 'actor'>;
}

async function loadTurn(em: EntityManager, turnId: string) {
  const turn = await em.findOne(AgentTurn, turnId);
  if (!turn) throw notFound('turn');
  return turn;
}

/** The turn's user as an Actor in the thread's workspace (acting for its owner when it is not theirs). */
async function turnActor(em: EntityManager, turn: { userId: string; workspace: { id: string } }): Promise<Actor> {
  const ws = await em.findOneOrFail(Workspace, turn.workspace.id);
  return resolveActor(
    em,
    { userId: turn.userId, kind: 'session' },
    ws.owner.id === turn.userId ? undefined : ws.owner.id,
  );
}

const clipJson = (v: unknown): string => {
  const s = JSON.stringify(v ?? null);
  return s.length > MAX_RESULT_CHARS ? `${s.slice(0, MAX_RESULT_CHARS)}…` : s;
};

/** The model's view of the thread: a system message (with the user's remembered facts), then the last CONTEXT_TURNS turns. */
export async function buildContext(
  em: EntityManager,
  actor: Actor,
  threadId: string,
  appId: string,
): Promise<ChatMessage[]> {
  const app = await em.findOne(App, appId);
  const facts = await memoryForContext(em, actor, appId);
  const messages: IAgentMessage[] = await em.find(
    AgentMessage,
    {
      thread: threadId,
      turn: {
        $in: (
          await em.find(
            AgentTurn,
            { thread: threadId },
            { orderBy: { startedAt: 'desc' }, limit: CONTEXT_TURNS, fields: ['id'] },
          )
        ).map((t) => t.id),
      },
    },
    { orderBy: { seq: 'asc' } },
  );
  const attachmentIds = messages.flatMap((m) => m.attachmentIds);
  const attachments = attachmentIds.length
    ? new Map((await em.find(AgentAttachment, { id: { $in: attachmentIds } })).map((a) => [a.id, a]))
    : new Map();
  const out: ChatMessage[] = [
    {
      role: 'system',
      content:
        `You are the Operator of a lead-discovery and outreach workspace, working on the product "${app?.name ?? 'unknown'}" (id ${appId}). ` +
        'Use the tools to look up and act on the workspace’s data. Tools that change anything run only after the user confirms.' +
        (facts.length
          ? `\nWhat the user asked you to remember:\n${facts.map((f) => `- ${f.key}: ${f.value}`).join('\n')}`
          : ''),
    },
  ];
  for (const m of messages) {
    if (m.role === 'user') {
      const files = m.attachmentIds.map((id) => attachments.get(id)).filter(Boolean);
      const text = files
        .map((a) => `\n\n[Attachment ${a.filename}]\n${(a.text ?? '').slice(0, MAX_RESULT_CHARS)}`)
        .join('');
      out.push({ role: 'user', content: `${m.content ?? ''}${text}` });
    } else if (m.role === 'assistant') {
      out.push({
        role: 'assistant',
        content: m.content ?? null,
        ...(m.toolCalls?.length ? { toolCalls: m.toolCalls } : {}),
      });
    } else {
      out.push({
        role: 'tool',
        toolCallId: m.toolCallId ?? '',
        content: clipJson({ status: m.toolStatus, result: m.toolResult }),
      });
    }
  }
  return out;
}

/**
 * The registry as the model sees it (JSON Schema per tool). Every thread has a product, and a tool's
 * `app_id` defaults to it (runTool with the turn's appId): so it is optional here.
 */
export function toolSpecs(): ToolSpec[] {
  return allTools().map((t) => {
    const { $schema: _drop, ...parameters } = z.toJSONSchema(t.input, {
      io: 'input',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    if (requiresAppId(t)) {
      const properties = parameters.properties as Record<string, Record<string, unknown>>;
      properties.app_id = { ...properties.app_id, description: 'The product; default: this thread’s product' };
      parameters.required = (parameters.required as string[]).filter((k) => k !== 'app_id');
    }
    return { name: t.name, description: t.description, parameters };
  });
}

/** One model call: streams its text to the client, stores the assistant message, returns the tool calls it asked for. */
export async function modelStep(
  deps: TurnDeps,
  input: { turnId: string; messageId: string; signal?: AbortSignal },
): Promise<StepResult> {
  const turn = await loadTurn(deps.em, input.turnId);
  // Renews the turn's hold before each model call (402 if it lapsed and cannot be taken again).
  await holdCredits(deps.em, turn.workspace.id, TURN_CREDITS, turnHold(turn.id));
  const context = await buildContext(deps.em, await turnActor(deps.em, turn), turn.thread.id, turn.appId);
  let text = '';
  const calls: PlannedCall[] = [];
  let usage: Usage = { inputTokens: 0, outputTokens: 0, costMicros: 0 };
  for await (const e of deps.llm.stream({ messages: context, tools: toolSpecs(), signal: input.signal })) {
    if (e.type === 'text') {
      text += e.delta;
      await publishTurnEvent(deps.redis, turn.id, 'message_delta', { message_id: input.messageId, delta: e.delta });
    } else if (e.type === 'tool_call') {
      calls.push({ id: e.call.id, name: e.call.name, args: e.call.args, risk: findTool(e.call.name)?.risk ?? null });
    } else usage = e.usage;
  }
  await appendMessages(deps.em, turn.thread.id, [
    {
      id: input.messageId,
      turnId: turn.id,
      role: 'assistant',
      content: text || null,
      toolCalls: calls.length ? calls.map(({ id, name, args }) => ({ id, name, args })) : null,
    },
  ]);
  await publishTurnEvent(deps.redis, turn.id, 'message', { message_id: input.messageId, content: text });
  for (const c of calls) {
    await publishTurnEvent(deps.redis, turn.id, 'tool_call', {
      tool_call_id: c.id,
      name: c.name,
      args: c.args,
      risk: c.risk,
      needs_confirmation: c.risk !== null && needsConfirmation({ risk: c.risk }),
    });
  }
  return { toolCalls: calls, usage };
}

/**
 * Runs a tool as the turn's user, for the thread's product (`app_id` defaults to it); an error becomes
 * the tool's result (the model sees it), not a failed turn.
 */
async function invoke(
  deps: TurnDeps,
  actor: Actor,
  appId: string,
  name: string,
  args: unknown,
): Promise<{ status: 'ok' | 'error'; result: unknown }> {
  const tool = findTool(name);
  const outcome = await invokeTool(deps, actor, appId, tool, name, args);
  // The registry's name, never the model's: a made-up name is `unknown`.
  operatorToolCalls.inc({ tool: tool?.name ?? 'unknown', outcome: outcome.status });
  return outcome;
}

async function invokeTool(
  deps: TurnDeps,
  actor: Actor,
  appId: string,
  tool: ReturnType<typeof findTool>,
  name: string,
  args: unknown,
): Promise<{ status: 'ok' | 'error'; result: unknown }> {
  if (!tool) return { status: 'error', result: { code: 'unknown_tool', message: `there is no tool named ${name}` } };
  try {
    const result = await runTool(tool, { ...deps.toolContext, em: deps.em.fork(), actor, appId }, args);
    return { status: 'ok', result: JSON.parse(clipJson(result).replace(/…$/, '"…"')) };
  } catch (err) {
    if (err instanceof AppError) return { status: 'error', result: { code: err.code, message: err.message } };
    if (err instanceof z.ZodError)
      return {
        status: 'error',
        result: {
          code: 'invalid_arguments',
          message: err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
        },
      };
    throw err;
  }
}

/** A read tool (or an unknown one): runs now; its result is stored and streamed. */
export async function runReadTool(
  deps: TurnDeps,
  input: { turnId: string; call: PlannedCall; messageId: string },
): Promise<void> {
  const turn = await loadTurn(deps.em, input.turnId);
  const stored = await deps.em.findOne(AgentMessage, input.messageId);
  const outcome = stored
    ? { status: stored.toolStatus as 'ok' | 'error', result: stored.toolResult }
    : await invoke(deps, await turnActor(deps.em, turn), turn.appId, input.call.name, input.call.args);
  if (!stored) {
    await appendMessages(deps.em, turn.thread.id, [
      {
        id: input.messageId,
        turnId: turn.id,
        role: 'tool',
        content: null,
        toolCallId: input.call.id,
        toolName: input.call.name,
        toolStatus: outcome.status,
        toolResult: outcome.result,
      },
    ]);
  }
  await publishTurnEvent(deps.redis, turn.id, 'tool_result', {
    tool_call_id: input.call.id,
    name: input.call.name,
    status: outcome.status,
    result: outcome.result,
  });
}

/**
 * A risky tool call: records the confirmation (token stored hashed, bound to user, thread and these
 * exact arguments) and a tool message awaiting it, and streams the token once. Returns when it expires.
 */
export async function requestConfirmation(
  deps: TurnDeps,
  input: { turnId: string; call: PlannedCall; messageId: string; confirmationId: string },
): Promise<{ expiresAt: string }> {
  const turn = await loadTurn(deps.em, input.turnId);
  const token = `opc_${randomBytes(32).toString('base64url')}`;
  const argsHash = sha256(canonicalJson(input.call.args));
  let conf = await deps.em.findOne(AgentConfirmation, input.confirmationId);
  if (conf) {
    conf.tokenHash = sha256(token); // a retried activity: the earlier token was never shown, or is replaced
  } else {
    conf = deps.em.create(AgentConfirmation, {
      id: input.confirmationId,
      thread: turn.thread.id,
      turn: turn.id,
      userId: turn.userId,
      tokenHash: sha256(token),
      toolCallId: input.call.id,
      toolName: input.call.name,
      args: (input.call.args ?? null) as object,
      argsHash,
      expiresAt: new Date(Date.now() + confirmationTtlMs()),
    });
  }
  turn.status = 'awaiting_confirmation';
  await deps.em.flush();
  await notifyConfirmationPending(deps.em, conf.id);
  await appendMessages(deps.em, turn.thread.id, [
    {
      id: input.messageId,
      turnId: turn.id,
      role: 'tool',
      content: null,
      toolCallId: input.call.id,
      toolName: input.call.name,
      toolStatus: 'awaiting_confirmation',
      toolResult: { confirmation_id: conf.id },
    },
  ]);
  await publishTurnEvent(deps.redis, turn.id, 'approval_required', {
    confirmation_token: token,
    confirmation_id: conf.id,
    thread_id: turn.thread.id,
    tool_call_id: input.call.id,
    name: input.call.name,
    args: input.call.args,
    risk: input.call.risk,
    expires_at: conf.expiresAt.toISOString(),
  });
  return { expiresAt: conf.expiresAt.toISOString() };
}

/** Updates the tool message that awaited the confirmation. */
async function settleToolMessage(
  em: EntityManager,
  confirmationId: string,
  status: string,
  result: unknown,
): Promise<void> {
  await em.execute(
    `update agent_messages set tool_status = ?, tool_result = ?::jsonb
      where role = 'tool' and tool_status = 'awaiting_confirmation' and tool_result->>'confirmation_id' = ?`,
    [status, JSON.stringify(result ?? null), confirmationId],
  );
}

/**
 * Runs a confirmed tool call exactly once: `executed_at` is claimed before it runs, so a retried
 * activity reports the stored outcome instead of running it again.
 */
export async function executeConfirmed(
  deps: TurnDeps,
  input: { turnId: string; confirmationId: string },
): Promise<void> {
  const em = deps.em;
  const turn = await loadTurn(em, input.turnId);
  const conf = await em.findOneOrFail(AgentConfirmation, input.confirmationId);
  let outcome: { status: 'ok' | 'error'; result: unknown };
  const claimed: unknown[] =
    conf.status === 'confirmed'
      ? await em.execute(
          `update agent_confirmations set executed_at = now() where id = ? and executed_at is null returning id`,
          [conf.id],
        )
      : [];
  if (conf.status !== 'confirmed')
    outcome = { status: 'error', result: { code: 'not_confirmed', message: 'the call was not confirmed' } };
  else if (!claimed.length) {
    const stored = (await em.fork().findOneOrFail(AgentConfirmation, conf.id)).result as {
      status: 'ok' | 'error';
      result: unknown;
    } | null;
    outcome = stored ?? {
      status: 'error',
      result: { code: 'outcome_unknown', message: 'the call was started but its outcome was not recorded' },
    };
  } else if (sha256(canonicalJson(conf.args)) !== conf.argsHash) {
    outcome = {
      status: 'error',
      result: { code: 'arguments_changed', message: 'the confirmed arguments do not match' },
    };
  } else {
    outcome = await invoke(deps, await turnActor(em, turn), turn.appId, conf.toolName, conf.args);
    await em.execute('update agent_confirmations set result = ?::jsonb where id = ?', [
      JSON.stringify(outcome),
      conf.id,
    ]);
  }
  await settleToolMessage(em, conf.id, outcome.status, outcome.result);
  await em.execute(`update agent_turns set status = 'running' where id = ? and status = 'awaiting_confirmation'`, [
    turn.id,
  ]);
  await publishTurnEvent(deps.redis, turn.id, 'tool_result', {
    tool_call_id: conf.toolCallId,
    name: conf.toolName,
    status: outcome.status,
    result: outcome.result,
    confirmation_id: conf.id,
  });
}

/** A canceled or expired confirmation: the tool never runs. */
export async function closeConfirmation(
  deps: TurnDeps,
  input: { turnId: string; confirmationId: string; outcome: 'canceled' | 'expired' },
): Promise<void> {
  const em = deps.em;
  if (input.outcome === 'expired')
    await em.execute(`update agent_confirmations set status = 'expired' where id = ? and status = 'pending'`, [
      input.confirmationId,
    ]);
  const conf = await em.findOneOrFail(AgentConfirmation, input.confirmationId);
  const status = conf.status === 'canceled' ? 'canceled' : 'expired';
  await settleToolMessage(em, conf.id, status, { code: status, message: `the user did not confirm (${status})` });
  await em.execute(`update agent_turns set status = 'running' where id = ? and status = 'awaiting_confirmation'`, [
    input.turnId,
  ]);
  await publishTurnEvent(deps.redis, input.turnId, 'tool_result', {
    tool_call_id: conf.toolCallId,
    name: conf.toolName,
    status,
    confirmation_id: conf.id,
  });
}

/** Records the turn's cost and debits its credits (key `operator-turn:<turnId>`: once; it consumes the turn's hold), then streams `done`. */
export async function completeTurn(
  deps: TurnDeps,
  input: { turnId: string; usage: Usage; modelCalls: number },
): Promise<{ credits: number }> {
  let completedNow = false;
  const credits = await deps.em.transactional(async (tx) => {
    const turn = await tx.findOneOrFail(AgentTurn, input.turnId);
    let charged = turn.credits;
    if (turn.status !== 'completed') {
      completedNow = true;
      try {
        await debitCredits(tx, turn.workspace.id, TURN_CREDITS, {
          key: turnHold(turn.id).key,
          reason: 'Operator turn',
        });
        charged = TURN_CREDITS;
      } catch (err) {
        // Only after the turn's hold lapsed (its run stalled past the hold's lifetime) and the credits went
        // elsewhere: the turn is recorded unpaid.
        if (!(err instanceof AppError && err.status === 402)) throw err;
        charged = 0;
      }
      Object.assign(turn, {
        status: 'completed',
        modelCalls: input.modelCalls,
        inputTokens: input.usage.inputTokens,
        outputTokens: input.usage.outputTokens,
        costMicros: input.usage.costMicros,
        credits: charged,
        finishedAt: new Date(),
      });
    }
    return charged;
  });
  if (completedNow) operatorTurns.inc({ outcome: 'completed' });
  await publishTurnEvent(deps.redis, input.turnId, 'done', {
    turn_id: input.turnId,
    usage: {
      input_tokens: input.usage.inputTokens,
      output_tokens: input.usage.outputTokens,
      model_calls: input.modelCalls,
    },
    cost_micros: input.usage.costMicros,
    credits,
  });
  return { credits };
}

export async function failTurn(
  deps: Pick<TurnDeps, 'em' | 'redis'>,
  input: { turnId: string; code: string; message: string },
): Promise<void> {
  // The status it had, to count a turn's failure once (a later failure still records its own code).
  const [was] = await deps.em.execute<{ was: string }[]>(
    `update agent_turns t set status = 'failed', error_code = ?, error_message = ?, finished_at = now()
       from (select id, status as was from agent_turns where id = ? for update) o
      where t.id = o.id and o.was <> 'completed' returning o.was`,
    [input.code.slice(0, 60), input.message.slice(0, 500), input.turnId],
  );
  if (was && was.was !== 'failed') operatorTurns.inc({ outcome: 'failed' });
  const [turn] = await deps.em.execute<{ workspace_id: string }[]>(
    'select workspace_id from agent_turns where id = ?',
    [input.turnId],
  );
  if (turn) await releaseCredits(deps.em, turn.workspace_id, turnHold(input.turnId).key);
  await publishTurnEvent(deps.redis, input.turnId, 'error', {
    turn_id: input.turnId,
    code: input.code,
    message: input.message.slice(0, 500),
  });
}

/**
 * Starts (or, for a decision, signals) the turn's workflow. A new turn whose workflow could not be
 * started is marked failed (`dispatch_failed`), so its thread is not left with a turn that never
 * runs; should the start have reached the server after all, the workflow's completion wins.
 */
export async function dispatch(
  jobs: Jobs,
  prepared: PreparedMessage,
  deps: Pick<TurnDeps, 'em' | 'redis'>,
): Promise<void> {
  try {
    if (prepared.kind === 'turn') await jobs.start('operator-turn', prepared.start);
    else if (
      !(await jobs.signal('operator-turn', prepared.start, 'decision', {
        confirmationId: prepared.confirmationId,
        action: prepared.action,
      }))
    )
      throw new Error(`operator turn ${prepared.start.turnId} is not open`);
  } catch (err) {
    if (prepared.kind === 'turn') {
      await failTurn(deps, {
        turnId: prepared.start.turnId,
        code: 'dispatch_failed',
        message: 'the turn could not be started; retry',
      }).catch(() => {});
    }
    throw err;
  }
}
