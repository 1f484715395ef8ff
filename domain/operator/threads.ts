// Operator threads and their history (docs/operator.md). A thread belongs to the pair (authenticated
// user, product) inside the effective workspace: another user's thread, even in the same workspace,
// is not found. Messages are numbered per thread (`seq`) under the thread's row lock.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentMessage, type IAgentMessage, type MessageRole } from '../../db/entities/AgentMessage.js';
import { AgentThread, type IAgentThread } from '../../db/entities/AgentThread.js';
import { App } from '../../db/entities/App.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { canAccessApp, type Actor } from '../identity.js';

/** Longest thread title (characters as sent): 400 `title_too_long` above it. */
export const MAX_TITLE = 200;

/** The product must be the workspace's (403 `app_not_owned`) and the member's (403 `not_assigned`). */
export async function requireOwnedApp(em: EntityManager, actor: Actor, appId: string): Promise<void> {
  const app = await em.findOne(App, { id: appId, workspace: actor.workspaceId }, { fields: ['id'] });
  if (!app) throw new AppError(403, 'app_not_owned', 'this product is not in your workspace');
  if (!canAccessApp(actor, appId)) throw new AppError(403, 'not_assigned', 'you have no access to this product');
}

/** Trimmed title; 400 `title_too_long` above MAX_TITLE characters, `invalid_title` when empty after trimming. */
export function cleanTitle(title: string): string {
  if (title.length > MAX_TITLE) throw badRequest('title_too_long', `title is longer than ${MAX_TITLE} characters`);
  const t = title.trim();
  if (!t) throw badRequest('invalid_title', 'title cannot be empty');
  return t;
}

export async function createThread(
  em: EntityManager,
  actor: Actor,
  appId: string,
  title?: string,
): Promise<IAgentThread> {
  await requireOwnedApp(em, actor, appId);
  const thread = em.create(AgentThread, {
    workspace: actor.workspaceId,
    user: actor.userId,
    app: appId,
    title: title === undefined ? null : cleanTitle(title),
  });
  await em.flush();
  return thread;
}

/** The caller's threads of a product, most recently active first. */
export async function listThreads(em: EntityManager, actor: Actor, appId: string): Promise<IAgentThread[]> {
  // The filter's product is checked as on create: another workspace's 403 app_not_owned, another product's 403 not_assigned.
  await requireOwnedApp(em, actor, appId);
  return em.find(
    AgentThread,
    { workspace: actor.workspaceId, user: actor.userId, app: appId },
    { orderBy: { updatedAt: 'desc', id: 'desc' }, limit: 500 },
  );
}

/** The caller's thread: 404 `notFoundCode` for an unknown one, another user's or another workspace's. */
export async function requireThread(
  em: EntityManager,
  actor: Actor,
  threadId: string,
  notFoundCode = 'not_found',
): Promise<IAgentThread> {
  const thread = await em.findOne(AgentThread, { id: threadId, workspace: actor.workspaceId, user: actor.userId });
  if (!thread || !canAccessApp(actor, thread.app.id)) throw new AppError(404, notFoundCode, 'thread not found');
  return thread;
}

export async function renameThread(
  em: EntityManager,
  actor: Actor,
  threadId: string,
  title: string,
): Promise<IAgentThread> {
  const thread = await requireThread(em, actor, threadId);
  thread.title = cleanTitle(title);
  await em.flush();
  return thread;
}

/** Deletes the thread; its messages, turns (cost records), confirmations and attachments go with it (FK cascades, one statement). */
export async function deleteThread(em: EntityManager, actor: Actor, threadId: string): Promise<void> {
  const thread = await requireThread(em, actor, threadId);
  await em.transactional(async (tx) => {
    await tx.execute('delete from agent_threads where id = ?', [thread.id]);
  });
}

/** The whole history, in order (the model sees only the last turns; see operator-context). */
export async function threadMessages(em: EntityManager, actor: Actor, threadId: string): Promise<IAgentMessage[]> {
  const thread = await requireThread(em, actor, threadId);
  return em.find(AgentMessage, { thread: thread.id }, { orderBy: { seq: 'asc' } });
}

export interface NewMessage {
  /** Given by the workflow (deterministic), so a retried activity does not write the message twice. */
  id?: string;
  turnId: string | null;
  role: MessageRole;
  content: string | null;
  toolCalls?: { id: string; name: string; args: unknown }[] | null;
  toolCallId?: string | null;
  toolName?: string | null;
  toolStatus?: string | null;
  toolResult?: unknown;
  attachmentIds?: string[];
}

/**
 * Appends messages to a thread in one transaction, numbered after the last one. Messages whose `id`
 * is already stored (a retried activity) are skipped.
 */
export async function appendMessages(em: EntityManager, threadId: string, messages: NewMessage[]): Promise<string[]> {
  return em.transactional(async (tx) => {
    const [thread]: { message_count: number }[] = await tx.execute(
      'select message_count from agent_threads where id = ? for update',
      [threadId],
    );
    if (!thread) throw notFound('thread');
    const given = messages.flatMap((m) => (m.id ? [m.id] : []));
    const stored = new Set(
      given.length ? (await tx.find(AgentMessage, { id: { $in: given } }, { fields: ['id'] })).map((m) => m.id) : [],
    );
    const ids: string[] = [];
    let seq = thread.message_count;
    for (const m of messages) {
      if (m.id && stored.has(m.id)) {
        ids.push(m.id);
        continue;
      }
      const row = tx.create(AgentMessage, {
        ...(m.id ? { id: m.id } : {}),
        thread: threadId,
        turn: m.turnId,
        seq: ++seq,
        role: m.role,
        content: m.content,
        toolCalls: m.toolCalls ?? null,
        toolCallId: m.toolCallId ?? null,
        toolName: m.toolName ?? null,
        toolStatus: m.toolStatus ?? null,
        toolResult: m.toolResult === undefined ? null : (m.toolResult as object),
        attachmentIds: m.attachmentIds ?? [],
      });
      ids.push(row.id);
    }
    await tx.flush();
    await tx.execute(
      'update agent_threads set message_count = ?, last_message_at = now(), updated_at = now() where id = ?',
      [seq, threadId],
    );
    return ids;
  });
}
