import { Context } from '@temporalio/activity';
import { reconcilePage, withdrawalPage } from '../domain/accounts/jobs.js';
import { ensureMailboxSyncs } from '../domain/mailbox/mailbox.js';
import type { ActivityDeps } from './deps.js';

// Both jobs page through accounts by id and heartbeat the last finished id, so a retried activity
// resumes after the last full page instead of starting over.
export function createAccountActivities(deps: ActivityDeps) {
  const connector = () => deps.providers.connector;
  return {
    /** Reads every account's status at the connector (pages of 100, a few pages at once) and applies transitions. */
    async reconcileAccounts(input: { pageSize?: number; concurrency?: number } = {}): Promise<{
      checked: number;
      disconnected: number;
      connected: number;
      problems: number;
      failedPages: number;
      mailboxes?: number;
    }> {
      const total = { checked: 0, disconnected: 0, connected: 0, problems: 0, failedPages: 0 };
      let afterId: string | null = (Context.current().info.heartbeatDetails as string | undefined) ?? null;
      do {
        const r = await reconcilePage(deps.orm.em.fork(), connector(), {
          afterId,
          pageSize: input.pageSize ?? 100,
          concurrency: input.concurrency ?? 4,
        });
        total.checked += r.checked;
        total.disconnected += r.disconnected;
        total.connected += r.connected;
        total.problems += r.problems;
        total.failedPages += r.failedPages;
        afterId = r.lastId;
        if (afterId) Context.current().heartbeat(afterId);
      } while (afterId);
      // Every connected mailbox has its sync running (docs/email.md "Receiving").
      const mailboxes = await ensureMailboxSyncs(deps.orm.em.fork(), deps.jobs);
      return { ...total, mailboxes };
    },
    /** Withdraws pending invitations older than each account's setting; accounts page by page. */
    async withdrawOldInvitations(
      input: { now?: string } = {},
    ): Promise<{ accounts: number; withdrawn: number; failedAccounts: number }> {
      const total = { accounts: 0, withdrawn: 0, failedAccounts: 0 };
      const now = input.now ? new Date(input.now) : new Date();
      let afterId: string | null = (Context.current().info.heartbeatDetails as string | undefined) ?? null;
      do {
        const r = await withdrawalPage(deps.orm.em.fork(), connector(), {
          afterId,
          now,
          pageSize: 20,
          heartbeat: () => Context.current().heartbeat(afterId),
        });
        total.accounts += r.accounts;
        total.withdrawn += r.withdrawn;
        total.failedAccounts += r.failedAccounts;
        afterId = r.lastId;
        if (afterId) Context.current().heartbeat(afterId);
      } while (afterId);
      return total;
    },
  };
}

export type AccountActivities = ReturnType<typeof createAccountActivities>;
