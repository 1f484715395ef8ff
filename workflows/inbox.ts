// The inbox's workflows (docs/inbox.md): the account's inbound processor, its sync, and one reply.
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  defineSignal,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { defineJob, defineSchedule } from './job.js';
import { inboxWorkflowIds } from '../lib/workflow-ids.js';
import type { InboxActivities } from '../activities/inbox.js';

const acts = proxyActivities<InboxActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 20, initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** Sent with each stored inbound event of the account (signal-with-start). */
export const inboundSignal = defineSignal('events');

/** How long an idle processor waits for more events before it ends (the next event starts it again). */
const IDLE = '30 seconds';

/**
 * `inbox-inbound:<accountId>`: processes the account's stored inbound events in batches, in order,
 * one activity at a time (each drains batch after batch, activities/inbox.ts); events arriving
 * meanwhile only set a flag (their rows are already stored), so a burst costs a few activities, not
 * a workflow per event. Ends after IDLE without events; a long-lived
 * one continues as new.
 */
export async function inboxInbound(input: { accountId: string }): Promise<{ processed: number }> {
  let pending = true;
  let processed = 0;
  setHandler(inboundSignal, () => {
    pending = true;
  });
  for (;;) {
    while (pending) {
      pending = false;
      const r = await acts.inboxProcessBatch(input.accountId);
      processed += r.processed;
      if (r.more) pending = true;
    }
    if (!(await condition(() => pending, IDLE))) return { processed };
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 5_000)
      await continueAsNew<typeof inboxInbound>(input);
  }
}

/** `inbox-sweep` (Schedule, every minute): wakes the processors of accounts with events left unhandled (docs/inbox.md). */
export async function inboxSweep(): Promise<{ woken: number }> {
  return acts.inboxSweep();
}

/** `inbox-sync:<accountId>`, run `run`: pages through the account's chats (docs/inbox.md "Sync"). */
export async function inboxSync(input: { accountId: string; run: number }): Promise<{ stored: number }> {
  let stored = 0;
  try {
    for (let page = 0; ; page++) {
      const r = await acts.inboxSyncPage(input.accountId, input.run);
      stored += r.stored;
      if (r.done) break;
      if (page >= 200) await continueAsNew<typeof inboxSync>(input); // the cursor is in the database
    }
    await acts.inboxSyncFinish(input.accountId, input.run, null);
    return { stored };
  } catch (err) {
    const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    await acts.inboxSyncFinish(input.accountId, input.run, message);
    throw ApplicationFailure.nonRetryable(`inbox sync failed: ${message}`, 'inbox_sync_failed');
  }
}

/**
 * `inbox-reply:<messageId>`: asks the account's governor for a slot (sleeping until the time a
 * refusal names), then sends the reply once.
 */
export async function inboxReply(input: { messageId: string }): Promise<{ state: string; errorCode?: string }> {
  for (;;) {
    const slot = await acts.inboxReplySlot(input.messageId);
    if (slot.state === 'done') return { state: 'gone' };
    if (slot.state === 'granted') return acts.inboxReplySend(input.messageId, slot.grantedAt);
    const wait = slot.retryAt ? Math.max(1_000, Date.parse(slot.retryAt) - Date.now()) : 15 * 60_000;
    await sleep(wait);
  }
}

/** Woken with signal-with-start only (jobs/temporal.ts `kickInboundProcessor`, coalesced per account). */
export const inboxInboundJob = defineJob('inbox-inbound', {
  workflow: inboxInbound,
  id: (k) => inboxWorkflowIds.inbound(k.accountId),
  args: (s) => [{ accountId: s.accountId }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ account_id: s.accountId }),
  repeat: 'join',
  signals: { events: inboundSignal },
});

export const inboxSyncJob = defineJob('inbox-sync', {
  workflow: inboxSync,
  id: (k) => inboxWorkflowIds.sync(k.accountId),
  args: (s) => [{ accountId: s.accountId, run: s.run }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ account_id: s.accountId, run: s.run }),
  // A run already open goes on (the row says which run is current); a closed one may start again.
  repeat: 'join',
});

export const inboxReplyJob = defineJob('inbox-reply', {
  workflow: inboxReply,
  id: (k) => inboxWorkflowIds.reply(k.messageId),
  args: (s) => [{ messageId: s.messageId }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ message_id: s.messageId }),
  repeat: 'never-again',
});

export const inboxSweepSchedule = defineSchedule({
  id: 'schedule:inbox-sweep',
  runs: 'inbox-sweep',
  workflow: inboxSweep,
  args: [],
  kind: 'inbox',
  every: { every: '1 minute' },
  catchupWindow: '1 minute',
  overlap: 'skip',
  description:
    'Wakes the inbox processor of every account with inbound events stored over 30 s ago and not handled (a wake-up lost with its API process)',
});
