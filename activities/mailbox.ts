import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { followMailbox, type FollowDeps, type FollowResult } from '../domain/mailbox/follow.js';
import { recordCursorError } from '../domain/mailbox/mailbox.js';
import type { ActivityDeps } from './deps.js';

/**
 * The mailbox sync's activity (docs/email.md "Receiving"). `overrides` tune a pass (a test's budget or
 * forced polling); the worker passes none.
 */
export function createMailboxActivities(
  deps: ActivityDeps,
  overrides: Partial<Pick<FollowDeps, 'budgetMs' | 'pollMs' | 'forcePoll'>> = {},
) {
  const em = () => deps.orm.em.fork() as EntityManager;
  return {
    /**
     * Follows the account's INBOX for up to ~5 minutes, heartbeating (a lost worker is noticed within
     * the heartbeat timeout and the retry resumes from the stored cursor). Failures are kept on the
     * cursor and thrown for Temporal to retry; refused credentials end the sync instead.
     */
    async mailboxFollow(accountId: string): Promise<FollowResult> {
      const ctx = Context.current();
      try {
        const r = await followMailbox(
          {
            em,
            jobs: deps.jobs,
            mailbox: deps.providers.mailbox,
            heartbeat: () => ctx.heartbeat(),
            signal: ctx.cancellationSignal,
            ...overrides,
          },
          accountId,
        );
        // Cancelled (the sync was terminated, the worker is stopping): say so rather than complete.
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
        return r;
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        await recordCursorError(em(), accountId, err instanceof Error ? err.message : String(err)).catch(
          () => undefined,
        );
        throw err;
      }
    },
  };
}

export type MailboxActivities = ReturnType<typeof createMailboxActivities>;
