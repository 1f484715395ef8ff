import type { EntityManager } from '@mikro-orm/postgresql';
import { heartbeat } from '@temporalio/activity';
import { processInboundBatch } from '../domain/inbox/ingest.js';
import { finishSync, syncPage } from '../domain/inbox/sync.js';
import { replySlot, sendReply, type ReplySlot } from '../domain/inbox/inbox.js';
import type { ActivityDeps } from './index.js';

/** How long one processing call drains before it hands back to its workflow (a history event per call). */
const DRAIN_BUDGET_MS = 15_000;

export function createInboxActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  const connector = () => deps.providers.connector;
  return {
    /**
     * The account's stored inbound events, batch after batch until one finds none or DRAIN_BUDGET_MS
     * has passed (then `more`), docs/inbox.md "Inbound processing". Draining here, not one batch per
     * call, spares a busy account a workflow task round trip per batch: events stored meanwhile are
     * picked up by the next batch, and their signals only wake a processor that went idle.
     */
    async inboxProcessBatch(accountId: string): Promise<{ processed: number; more: boolean; stored: number; replies: number; events: number }> {
      const started = Date.now();
      const total = { processed: 0, more: false, stored: 0, replies: 0, events: 0 };
      for (;;) {
        const r = await processInboundBatch(em(), deps.jobs, accountId);
        total.processed += r.processed;
        total.stored += r.stored;
        total.replies += r.replies;
        total.events += r.events;
        if (!r.processed) return total;
        if (Date.now() - started >= DRAIN_BUDGET_MS) return { ...total, more: true };
        heartbeat();
      }
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
