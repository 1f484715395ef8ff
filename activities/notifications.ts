import { Context } from '@temporalio/activity';
import { purgeNotificationBatch, sendNotificationEmails } from '../domain/notifications/notifications.js';
import type { ActivityDeps } from './deps.js';

/** Notification emails claimed per transaction. */
const BATCH = 50;
/** Emails one run sends at most; the next minute's run takes the rest. */
const PER_RUN = 2000;
/** Notifications deleted per statement by the retention job: short transactions and locks. */
const PURGE_BATCH = 5000;

export function createNotificationActivities(deps: ActivityDeps) {
  return {
    /** Mails pending notification emails in batches until none is left (or PER_RUN were tried). */
    async sendNotificationEmails(): Promise<{ sent: number; failed: number }> {
      const mailer = deps.providers.email;
      let sent = 0;
      let failed = 0;
      while (sent + failed < PER_RUN) {
        const r = await sendNotificationEmails(deps.orm.em.fork(), mailer, {
          limit: BATCH,
          baseUrl: deps.config.publicBaseUrl,
        });
        sent += r.sent;
        failed += r.failed;
        Context.current().heartbeat({ sent, failed });
        // A batch with failures stops the run: those rows wait for the next one (a retry each minute).
        if (r.sent + r.failed < BATCH || r.failed) break;
      }
      return { sent, failed };
    },

    /**
     * Deletes notifications past retention (domain/notifications/notifications.ts), batch after batch until a short
     * one. A batch that comes up short because rows went meanwhile (a workspace deleted) ends the run
     * early; the next day's run takes the rest.
     */
    async purgeNotifications(input: { batch?: number } = {}): Promise<{ expired: number; read: number }> {
      // Smaller batches only (tests cover several batches without bulk rows).
      const limit = Math.min(Math.max(1, input.batch ?? PURGE_BATCH), PURGE_BATCH);
      const now = new Date();
      const total = { expired: 0, read: 0 };
      // The year-old rule first: it empties the oldest part of the range that the read rule walks next.
      for (const rule of ['expired', 'read'] as const) {
        let after: string | null = null;
        for (;;) {
          const r = await purgeNotificationBatch(deps.orm.em.fork(), rule, { now, after, limit });
          total[rule] += r.deleted;
          Context.current().heartbeat(total);
          if (r.deleted < limit) break;
          after = r.last;
        }
      }
      return total;
    },
  };
}

export type NotificationActivities = ReturnType<typeof createNotificationActivities>;
