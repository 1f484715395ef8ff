import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { heartbeat } from '@temporalio/activity';
import {
  accountsWithStaleInbound,
  clearDraining,
  DRAIN_HOLD_MS,
  hasPendingInbound,
  markDraining,
  STALE_INBOUND_MS,
} from '../domain/inbox/drain.js';
import { mapLimit } from '../lib/concurrency.js';
import { processInboundBatch } from '../domain/inbox/ingest.js';
import { finishSync, syncPage } from '../domain/inbox/sync.js';
import { replySlot, sendReply, type ReplySlot } from '../domain/inbox/inbox.js';
import type { ActivityDeps } from './deps.js';

/** How long one processing call drains before it hands back to its workflow (a history event per call). */
const DRAIN_BUDGET_MS = 15_000;
/** After the last event, the call keeps looking this long (every INBOX_POLL_MS) before it stops. */
const LINGER_MS = 1_000;
/** How often a lingering call looks for new events (the wake-up time of a stream's next event). */
export const INBOX_POLL_MS = 25;

export function createInboxActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  const connector = () => deps.providers.connector;
  return {
    /**
     * The account's stored inbound events, batch after batch, docs/inbox.md "Inbound processing".
     * Draining here, not one batch per call, spares a busy account a workflow task round trip per
     * batch. While it drains, the account's drain marker (domain/inbox/drain.ts) tells the hook that
     * no signal is needed, and after the last event the call keeps looking for LINGER_MS: a steady
     * stream is then picked up within INBOX_POLL_MS of its storage, without a signal, a workflow
     * task or an activity start per event. It returns `more` after DRAIN_BUDGET_MS (the workflow
     * calls again at once); otherwise it clears the marker and looks once more before it stops.
     */
    async inboxProcessBatch(
      accountId: string,
    ): Promise<{ processed: number; more: boolean; stored: number; replies: number; events: number }> {
      const started = Date.now();
      const total = { processed: 0, more: false, stored: 0, replies: 0, events: 0 };
      let markedAt = 0;
      let idleSince: number | null = null;
      for (;;) {
        if (Date.now() - markedAt > DRAIN_HOLD_MS / 3) {
          await markDraining(em(), accountId);
          markedAt = Date.now();
        }
        // One cheap indexed look per poll; a batch's transaction only when there is something to claim.
        if (await hasPendingInbound(em(), accountId)) {
          const r = await processInboundBatch(em(), deps.jobs, accountId);
          total.processed += r.processed;
          total.stored += r.stored;
          total.replies += r.replies;
          total.events += r.events;
          heartbeat();
          if (r.processed) idleSince = null;
          else idleSince ??= Date.now(); // held by another claim (SKIP LOCKED): wait like an idle poll
        } else idleSince ??= Date.now();
        if (Date.now() - started >= DRAIN_BUDGET_MS) return { ...total, more: true };
        if (idleSince === null) continue;
        if (Date.now() - idleSince < LINGER_MS) {
          await sleep(INBOX_POLL_MS);
          continue;
        }
        // Stopping: clear the marker, then look once more (see domain/inbox/drain.ts).
        await clearDraining(em(), accountId);
        if (!(await hasPendingInbound(em(), accountId))) return total;
        markedAt = 0;
        idleSince = null;
      }
    },
    /** The sweep: a processor signal for each account whose events wait unhandled with no processor draining them. */
    async inboxSweep(): Promise<{ woken: number }> {
      const accounts = await accountsWithStaleInbound(em(), STALE_INBOUND_MS);
      await mapLimit(accounts, 8, (a) => deps.jobs.kickInboundProcessor(a));
      if (accounts.length)
        deps.logger.warn(
          { accounts: accounts.length },
          'inbox sweep woke processors of accounts with unhandled events',
        );
      return { woken: accounts.length };
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
