// Activities of the outbound webhook workflows: finding the targets of an event, one delivery, a
// slice of a large fan-out, and all the deliveries of an outbox batch.
import { Context } from '@temporalio/activity';
import { WebhookEvent } from '../db/entities/WebhookEvent.js';
import { WebhookDelivery } from '../db/entities/WebhookDelivery.js';
import { WebhookSubscription } from '../db/entities/WebhookSubscription.js';
import { Workspace } from '../db/entities/Workspace.js';
import { deliverToSubscription, groupedRecorder } from '../domain/webhooks/webhooks.js';
import { mapLimit } from '../lib/concurrency.js';
import type { Resolver } from '../lib/outbound-http.js';
import type { ActivityDeps } from './deps.js';

/**
 * Requests of one batch in flight at once. Each has its own 10 s deadline, so a stalled receiver
 * holds one slot for 10 s and no more; a full batch (≤ 100 events × ≤ 20 targets) takes at most
 * 2,000 / 100 × 10 s = 200 s even if every receiver stalls. Several batches run side by side
 * (WORKER_MAX_ACTIVITIES), each with its own slots.
 */
export const BATCH_CONCURRENCY = 100;

/** `{"a","b"}`: a PostgreSQL array literal of plain strings (ids, event names). */
const pgArray = (xs: string[]) => `{${xs.map((x) => JSON.stringify(x)).join(',')}}`;

/** What a delivery of one event to its subscriptions came to (the workflows' results). */
export interface DeliverySummary {
  targets: number;
  succeeded: number;
  failed: number;
}

/** A batch's deliveries, per event. */
export interface BatchSummary {
  /** Per event of the batch. */
  events: Record<string, DeliverySummary>;
  /** Set when the delivery activity failed: the summaries are then what was recorded. */
  incomplete?: true;
}

export function createWebhookActivities(deps: ActivityDeps & { resolver?: Resolver }) {
  return {
    /** Ids of the active subscriptions of the event's workspace that list its name. Demo workspaces: none. */
    async webhookTargets(eventId: string): Promise<{ subscriptionIds: string[] }> {
      const em = deps.orm.em.fork();
      const event = await em.findOne(WebhookEvent, eventId, { fields: ['workspaceId', 'name'] });
      if (!event) return { subscriptionIds: [] };
      const ws = await em.findOne(Workspace, event.workspaceId, { fields: ['isDemo'] });
      if (!ws || ws.isDemo) return { subscriptionIds: [] }; // demo workspaces send no external webhooks
      const rows = await em
        .getConnection()
        .execute<{ id: string }[]>(
          `select id from webhook_subscriptions where workspace_id = ? and active and events @> ?::jsonb order by id`,
          [event.workspaceId, JSON.stringify([event.name])],
        );
      return { subscriptionIds: rows.map((r) => r.id) };
    },

    /** One signed attempt to one subscription, recorded in webhook_deliveries. */
    async deliverWebhook(input: {
      eventId: string;
      subscriptionId: string;
    }): Promise<{ success: boolean; statusCode: number | null; errorClass: string | null }> {
      const em = deps.orm.em.fork();
      const [event, sub] = await Promise.all([
        em.findOne(WebhookEvent, input.eventId),
        em.findOne(WebhookSubscription, input.subscriptionId),
      ]);
      // Deleted or deactivated since the targets were read: nothing to send.
      if (!event || !sub || !sub.active || !sub.events.includes(event.name))
        return { success: false, statusCode: null, errorClass: 'skipped' };
      // A retry after a lost worker: an attempt that was recorded is never made again.
      const prior = await em.findOne(WebhookDelivery, { subscriptionId: sub.id, eventId: event.id });
      if (prior)
        return { success: prior.success, statusCode: prior.statusCode ?? null, errorClass: prior.errorClass ?? null };
      const r = await deliverToSubscription(em, { config: deps.config, resolver: deps.resolver }, sub, {
        id: event.id,
        name: event.name,
        body: event.body,
      });
      deps.logger.info(
        {
          subscriptionId: sub.id,
          eventId: event.id,
          event: event.name,
          statusCode: r.statusCode,
          errorClass: r.errorClass,
          durationMs: r.durationMs,
        },
        r.success ? 'webhook delivered' : 'webhook delivery failed',
      );
      return { success: r.success, statusCode: r.statusCode, errorClass: r.errorClass };
    },

    /**
     * Large fan-outs: one attempt to each subscription of a slice, all at once (each request has its
     * own 10 s deadline, so a stalled receiver delays no other request), recorded one row each.
     * Saves Temporal one activity task per subscription, which is what limits throughput at scale.
     */
    async deliverWebhookBatch(input: {
      eventId: string;
      subscriptionIds: string[];
    }): Promise<{ succeeded: number; failed: number }> {
      const em = deps.orm.em.fork();
      const event = await em.findOne(WebhookEvent, input.eventId);
      if (!event) return { succeeded: 0, failed: 0 };
      const subs = await em.find(WebhookSubscription, { id: { $in: input.subscriptionIds }, active: true });
      // A retry after a lost worker: attempts that were recorded are never made again.
      const prior = new Map(
        (await em.find(WebhookDelivery, { eventId: event.id, subscriptionId: { $in: input.subscriptionIds } })).map(
          (d) => [d.subscriptionId, d.success],
        ),
      );
      const record = groupedRecorder(em);
      const outcomes = await Promise.all(
        subs
          .filter((sub) => sub.events.includes(event.name))
          .map((sub) =>
            prior.has(sub.id)
              ? Promise.resolve(prior.get(sub.id)!)
              : deliverToSubscription(
                  em,
                  { config: deps.config, resolver: deps.resolver },
                  sub,
                  { id: event.id, name: event.name, body: event.body },
                  record,
                ).then(
                  (r) => {
                    if (!r.success)
                      deps.logger.info(
                        {
                          subscriptionId: sub.id,
                          eventId: event.id,
                          statusCode: r.statusCode,
                          errorClass: r.errorClass,
                        },
                        'webhook delivery failed',
                      );
                    return r.success;
                  },
                  (err) => {
                    deps.logger.error(
                      { subscriptionId: sub.id, eventId: event.id, err: String(err) },
                      'webhook delivery could not be recorded',
                    );
                    return false;
                  },
                ),
          ),
      );
      const succeeded = outcomes.filter(Boolean).length;
      return { succeeded, failed: input.subscriptionIds.length - succeeded };
    },

    /**
     * Every delivery of an outbox batch (the events whose `batch_id` is `batchId`; one workspace):
     * each (event, matching active subscription) pair once, BATCH_CONCURRENCY at a time, each with
     * its own 10 s deadline through the guarded client, each recorded in webhook_deliveries as a
     * single delivery is. A pair already recorded is not sent again. Heartbeats as deliveries finish.
     */
    async deliverWebhookEventsOfBatch(input: { batchId: string }): Promise<BatchSummary> {
      const em = deps.orm.em.fork();
      const conn = em.getConnection();
      const events = await em.find(WebhookEvent, { batchId: input.batchId }, { orderBy: { id: 'asc' } });
      const summaries: Record<string, DeliverySummary> = {};
      for (const e of events) summaries[e.id] = { targets: 0, succeeded: 0, failed: 0 };
      if (!events.length) return { events: summaries };
      // Targets: active subscriptions of these events' workspace(s) listing one of their names; none
      // for demo workspaces (they send no external webhooks).
      const workspaceIds = [...new Set(events.map((e) => e.workspaceId))];
      const names = [...new Set(events.map((e) => e.name))];
      const [targetRows, done] = await Promise.all([
        conn.execute<{ id: string }[]>(
          `select s.id from webhook_subscriptions s join workspaces w on w.id = s.workspace_id and not w.is_demo
            where s.workspace_id = any(?::uuid[]) and s.active
              and exists (select 1 from jsonb_array_elements_text(s.events) n where n = any(?::text[]))`,
          [pgArray(workspaceIds), pgArray(names)],
        ),
        conn.execute<{ subscription_id: string; event_id: string; success: boolean }[]>(
          `select subscription_id, event_id, success from webhook_deliveries where event_id = any(?::uuid[])`,
          [pgArray(events.map((e) => e.id))],
        ),
      ]);
      const subs = targetRows.length
        ? await em.find(WebhookSubscription, { id: { $in: targetRows.map((r) => r.id) } }, { orderBy: { id: 'asc' } })
        : [];
      const recorded = new Map(done.map((d) => [`${d.subscription_id}:${d.event_id}`, d.success]));
      // Oldest event first, so a batch delivers in emission order as far as concurrency allows.
      const pairs = events.flatMap((event) =>
        subs
          .filter((sub) => sub.workspace.id === event.workspaceId && sub.events.includes(event.name))
          .map((sub) => ({ event, sub })),
      );
      for (const { event } of pairs) summaries[event.id].targets++;
      let finished = 0;
      Context.current().heartbeat(finished);
      // The batch's attempts are recorded in groups (one insert per ≤ 100 rows or 50 ms).
      const record = groupedRecorder(em);
      await mapLimit(pairs, BATCH_CONCURRENCY, async ({ event, sub }) => {
        const summary = summaries[event.id];
        const before = recorded.get(`${sub.id}:${event.id}`);
        if (before !== undefined) {
          // Attempted by an earlier try of this activity (the unique (subscription_id, event_id) record): never a second attempt.
          if (before) summary.succeeded++;
          else summary.failed++;
          return;
        }
        try {
          const r = await deliverToSubscription(
            em,
            { config: deps.config, resolver: deps.resolver },
            sub,
            { id: event.id, name: event.name, body: event.body },
            record,
          );
          if (r.success) summary.succeeded++;
          else summary.failed++;
          deps.logger.info(
            {
              subscriptionId: sub.id,
              eventId: event.id,
              event: event.name,
              batchId: input.batchId,
              statusCode: r.statusCode,
              errorClass: r.errorClass,
              durationMs: r.durationMs,
            },
            r.success ? 'webhook delivered' : 'webhook delivery failed',
          );
        } catch (err) {
          summary.failed++;
          deps.logger.error(
            { subscriptionId: sub.id, eventId: event.id, batchId: input.batchId, err: String(err) },
            'webhook delivery could not be recorded',
          );
        }
        Context.current().heartbeat(++finished);
      });
      return { events: summaries };
    },

    /** After a failed batch activity: per event of the batch, the attempts that were recorded. */
    async recordedDeliveriesOfBatch(input: { batchId: string }): Promise<Record<string, DeliverySummary>> {
      const rows = await deps.orm.em
        .fork()
        .getConnection()
        .execute<{ id: string; attempts: number; succeeded: number }[]>(
          `select e.id, count(d.id)::int as attempts, (count(d.id) filter (where d.success))::int as succeeded
           from webhook_events e left join webhook_deliveries d on d.event_id = e.id
          where e.batch_id = ? group by e.id`,
          [input.batchId],
        );
      return Object.fromEntries(
        rows.map((r) => [r.id, { targets: r.attempts, succeeded: r.succeeded, failed: r.attempts - r.succeeded }]),
      );
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
