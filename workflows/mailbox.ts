// `mailbox-sync:<accountId>` (docs/email.md "Receiving"): follows a mail-connector account's INBOX for
// as long as it is connected. Each activity call is one pass of up to ~5 minutes (IDLE or polling,
// heartbeating); the cursor lives in the database, so the workflow carries nothing but the ids.
import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { defineJob } from './job.js';
import { mailboxWorkflowIds } from '../lib/workflow-ids.js';
import type { MailboxActivities } from '../activities/mailbox.js';

const { mailboxFollow } = proxyActivities<MailboxActivities>({
  startToCloseTimeout: '8 minutes',
  // A killed worker is noticed this soon; the retry reconnects and resumes from the cursor.
  heartbeatTimeout: '30 seconds',
  // A mailbox that is down for hours keeps being retried (every 5 minutes at most) while connected.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export interface MailboxSyncInput {
  accountId: string;
  workspaceId: string;
}

/** Passes per run before it continues as new (a short history). */
const PASSES_PER_RUN = 50;

/** Ends (with the reason) once the account is gone, not connected, not a mailbox, or its credentials are refused. */
export async function mailboxSync(input: MailboxSyncInput): Promise<{ ended: string }> {
  for (let i = 0; i < PASSES_PER_RUN && !workflowInfo().continueAsNewSuggested; i++) {
    const r = await mailboxFollow(input.accountId);
    if (!r.continue) return { ended: r.reason };
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
});
