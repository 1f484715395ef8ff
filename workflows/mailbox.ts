// `mailbox-sync:<accountId>` (docs/email.md "Receiving"): the lifecycle of a mail-connector account's
// following, visible to operators. The mailbox itself is followed by the mailbox-session service
// beside each worker (workers/mailbox-sessions.ts: one IDLE session per mailbox, holding no activity
// slot); the cursor and every stored message are PostgreSQL's, written in one transaction. This
// workflow is open for as long as the account is followed: the session service signals `ended` when it
// stops for good (refused credentials, a revoked grant, the account gone), and a short standing check
// every few hours ends it when the account was disconnected some other way.
//
// Runs started before the session service (whose history schedules `mailboxFollow`, one long pass
// per activity) replay on the old branch; the old activity now answers `moved`, and they continue as
// new onto this one.
import {
  condition,
  continueAsNew,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { defineJob } from './job.js';
import { mailboxWorkflowIds } from '../lib/workflow-ids.js';
import type { MailboxActivities } from '../activities/mailbox.js';

const { mailboxFollow } = proxyActivities<MailboxActivities>({
  startToCloseTimeout: '8 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

const { mailboxStanding } = proxyActivities<MailboxActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export interface MailboxSyncInput {
  accountId: string;
  workspaceId: string;
}

/** The session service stopped following the mailbox for good; the argument says why. */
export const mailboxEndedSignal = defineSignal<[string]>('ended');

/** Passes per run before it continues as new (a short history). */
const PASSES_PER_RUN = 50;
/** How often the workflow reads the account's standing itself (a disconnect the service did not report). */
export const STANDING_EVERY = '6 hours';
/** Standing checks per run before it continues as new. */
const CHECKS_PER_RUN = 120;

/** Ends (with the reason) once the account is gone, not connected, not a mailbox, or its credentials are refused. */
export async function mailboxSync(input: MailboxSyncInput): Promise<{ ended: string }> {
  let ended: string | null = null;
  setHandler(mailboxEndedSignal, (reason) => void (ended ??= reason));
  if (!patched('mailbox-sessions')) {
    for (let i = 0; i < PASSES_PER_RUN && !workflowInfo().continueAsNewSuggested; i++) {
      const r = await mailboxFollow(input.accountId);
      if (!r.continue) return r.reason === 'moved' ? continueAsNew<typeof mailboxSync>(input) : { ended: r.reason };
    }
    return continueAsNew<typeof mailboxSync>(input);
  }
  for (let i = 0; i < CHECKS_PER_RUN && !workflowInfo().continueAsNewSuggested; i++) {
    const s = await mailboxStanding(input.accountId);
    if (!s.follow) return { ended: s.reason };
    if (await condition(() => ended !== null, STANDING_EVERY)) return { ended: ended! };
  }
  return continueAsNew<typeof mailboxSync>(input);
}

/** A sync that ended (the account was disconnected) starts again on the next connection. */
export const mailboxSyncJob = defineJob('mailbox-sync', {
  workflow: mailboxSync,
  id: (k) => mailboxWorkflowIds.sync(k.accountId),
  args: (s) => [{ accountId: s.accountId, workspaceId: s.workspaceId }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ account_id: s.accountId }),
  repeat: 'while-open',
  signals: { ended: mailboxEndedSignal },
});
