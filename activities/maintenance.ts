import { Context } from '@temporalio/activity';
import { uuidv7Floor } from '../lib/ids.js';
import { PURGE_EXPIRED_KEYS_SQL } from '../domain/idempotency/idempotency.js';
import type { ActivityDeps } from './deps.js';

const BATCH = 5000;
/** Webhook delivery records and dispatched outbox events are kept this many days. */

/** The smallest UUIDv7 of a moment: ids below it were minted earlier (so the primary key is the index). */
/** Revoked or expired sessions are kept this long (for the sessions list), then purged. */
const GRACE_MS = 24 * 3600 * 1000;

async function deleteInBatches(deps: ActivityDeps, sql: string, params: unknown[]): Promise<number> {
  const conn = deps.orm.em.getConnection();
  let total = 0;
  for (;;) {
    const res = await conn.execute<{ affectedRows: number }>(sql, [...params, BATCH], 'run');
    total += res.affectedRows;
    Context.current().heartbeat(total);
    if (res.affectedRows < BATCH) return total;
  }
}

export function createMaintenanceActivities(deps: ActivityDeps) {
  return {
    async purgeExpiredAuth(): Promise<{ sessions: number; refreshTokens: number; idempotencyKeys: number }> {
      const cutoff = new Date(Date.now() - GRACE_MS);
      // Sessions first: their refresh tokens go with them (ON DELETE CASCADE).
      const sessions = await deleteInBatches(
        deps,
        `delete from sessions where id in (select id from sessions where expires_at < ? or revoked_at < ? limit ?)`,
        [cutoff, cutoff],
      );
      // Spent or expired refresh tokens of live sessions. Used ones are kept while their session
      // lives so that a replayed token is still recognised as reuse and revokes the session.
      const refreshTokens = await deleteInBatches(
        deps,
        `delete from refresh_tokens where id in (select id from refresh_tokens where expires_at < ? limit ?)`,
        [cutoff],
      );
      // Idempotency-Keys past their 24 hours (docs/idempotency.md): a claim already ignores them, this
      // only frees the space.
      const idempotencyKeys = await deleteInBatches(deps, PURGE_EXPIRED_KEYS_SQL, []);
      return { sessions, refreshTokens, idempotencyKeys };
    },

    async purgeWebhookHistory(): Promise<{ events: number; deliveries: number; previousSecrets: number }> {
      const boundary = uuidv7Floor(Date.now() - deps.config.webhookHistoryDays * 86_400_000);
      const deliveries = await deleteInBatches(
        deps,
        `delete from webhook_deliveries where id in (select id from webhook_deliveries where id < ? limit ?)`,
        [boundary],
      );
      // Undispatched rows are never purged: the dispatcher still owes them a workflow.
      const events = await deleteInBatches(
        deps,
        `delete from webhook_events where id in (select id from webhook_events where id < ? and dispatched_at is not null limit ?)`,
        [boundary],
      );
      // Secrets a rotation replaced, once their overlap has ended: no delivery signs with them any more
      // (domain/webhooks/webhooks.ts signingSecrets), so the sealed copy goes too.
      const previousSecrets = (
        await deps.orm.em
          .getConnection()
          .execute<{ affectedRows: number }>(
            `update webhook_subscriptions set previous_secret_encrypted = null, previous_secret_expires_at = null where previous_secret_expires_at <= now()`,
            [],
            'run',
          )
      ).affectedRows;
      return { events, deliveries, previousSecrets };
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
