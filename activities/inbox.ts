import type { EntityManager } from '@mikro-orm/postgresql';
import { processInboundBatch } from '../domain/inbox-ingest.js';
import { finishSync, syncPage } from '../domain/inbox-sync.js';
import { replySlot, sendReply, type ReplySlot } from '../domain/inbox.js';
import type { ActivityDeps } from './index.js';

export function createInboxActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  const connector = () => {
    if (!deps.connector) throw new Error('inbox activities need the worker’s connector');
    return deps.connector;
  };
  return {
    /** One batch of the account's stored inbound events (docs/inbox.md "Inbound processing"). */
    async inboxProcessBatch(accountId: string): Promise<{ processed: number; more: boolean; stored: number; replies: number; events: number }> {
      return processInboundBatch(em(), deps.jobs, accountId);
    },
    async inboxSyncPage(accountId: string, run: number): Promise<{ done: boolean; stored: number }> {
      return syncPage(em(), connector(), deps.jobs, accountId, run);
    },
    async inboxSyncFinish(accountId: string, run: number, error: string | null): Promise<void> {
      await finishSync(em(), accountId, run, error);
    },
    async inboxReplySlot(messageId: string): Promise<ReplySlot> {
      return replySlot(em(), messageId);
    },
    async inboxReplySend(messageId: string, grantedAt: string): Promise<{ state: string; errorCode?: string }> {
      return sendReply(em(), connector(), messageId, grantedAt);
    },
  };
}

export type InboxActivities = ReturnType<typeof createInboxActivities>;
