import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { standing } from '../domain/mailbox/follow.js';
import { stampFleet } from '../domain/mailbox/leases.js';
import type { ActivityDeps } from './deps.js';

/**
 * The mailbox sync's activities (docs/email.md "Receiving"). The mailbox is followed by the
 * mailbox-session service beside the worker (workers/mailbox-sessions.ts), not in an activity.
 */
export function createMailboxActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  return {
    /**
     * Whether the account is still to be followed, else why not (a short read). A followed one is
     * stamped with this task queue: its fleet, whose workers' session services follow it.
     */
    async mailboxStanding(accountId: string): Promise<{ follow: true } | { follow: false; reason: string }> {
      const e = em();
      const s = await standing(e, accountId);
      if ('end' in s) return { follow: false, reason: s.end };
      await stampFleet(e, accountId, Context.current().info.taskQueue);
      return { follow: true };
    },
    /**
     * The pass of runs started before the session service (their histories schedule it): answers
     * `moved`, and they continue as new onto the lifecycle that the session service reports to.
     */
    async mailboxFollow(_accountId: string): Promise<{ continue: false; reason: 'moved' }> {
      return { continue: false, reason: 'moved' };
    },
  };
}

export type MailboxActivities = ReturnType<typeof createMailboxActivities>;
