import { Context } from '@temporalio/activity';
import { sendNotificationEmails } from '../domain/notifications.js';
import { emailSender } from '../lib/email.js';
import type { ActivityDeps } from './index.js';

/** Notification emails claimed per transaction. */
const BATCH = 50;
/** Emails one run sends at most; the next minute's run takes the rest. */
const PER_RUN = 2000;

export function createNotificationActivities(deps: ActivityDeps) {
  return {
    /** Mails pending notification emails in batches until none is left (or PER_RUN were tried). */
    async sendNotificationEmails(): Promise<{ sent: number; failed: number }> {
      const mailer = emailSender(deps.orm);
      let sent = 0;
      let failed = 0;
      while (sent + failed < PER_RUN) {
        const r = await sendNotificationEmails(deps.orm.em.fork(), mailer, { limit: BATCH, baseUrl: deps.config.publicBaseUrl });
        sent += r.sent;
        failed += r.failed;
        Context.current().heartbeat({ sent, failed });
        // A batch with failures stops the run: those rows wait for the next one (a retry each minute).
        if (r.sent + r.failed < BATCH || r.failed) break;
      }
      return { sent, failed };
    },
  };
}

export type NotificationActivities = ReturnType<typeof createNotificationActivities>;
