// Activities of the outbound webhook workflows: finding the targets of an event and one delivery.
import { WebhookEvent } from '../db/entities/WebhookEvent.js';
import { WebhookSubscription } from '../db/entities/WebhookSubscription.js';
import { Workspace } from '../db/entities/Workspace.js';
import { deliverToSubscription } from '../domain/webhooks.js';
import type { Resolver } from '../lib/outbound-http.js';
import type { ActivityDeps } from './index.js';

export function createWebhookActivities(deps: ActivityDeps & { resolver?: Resolver }) {
  return {
    /** Ids of the active subscriptions of the event's workspace that list its name. Demo workspaces: none. */
    async webhookTargets(eventId: string): Promise<{ subscriptionIds: string[] }> {
      const em = deps.orm.em.fork();
      const event = await em.findOne(WebhookEvent, eventId, { fields: ['workspaceId', 'name'] });
      if (!event) return { subscriptionIds: [] };
      const ws = await em.findOne(Workspace, event.workspaceId, { fields: ['isDemo'] });
      if (!ws || ws.isDemo) return { subscriptionIds: [] }; // demo workspaces send no external webhooks
      const rows = await em.getConnection().execute<{ id: string }[]>(
        `select id from webhook_subscriptions where workspace_id = ? and active and events @> ?::jsonb order by id`,
        [event.workspaceId, JSON.stringify([event.name])],
      );
      return { subscriptionIds: rows.map((r) => r.id) };
    },

    /** One signed attempt to one subscription, recorded in webhook_deliveries. */
    async deliverWebhook(input: { eventId: string; subscriptionId: string }): Promise<{ success: boolean; statusCode: number | null; errorClass: string | null }> {
      const em = deps.orm.em.fork();
      const [event, sub] = await Promise.all([
        em.findOne(WebhookEvent, input.eventId),
        em.findOne(WebhookSubscription, input.subscriptionId),
      ]);
      // Deleted or deactivated since the targets were read: nothing to send.
      if (!event || !sub || !sub.active || !sub.events.includes(event.name)) return { success: false, statusCode: null, errorClass: 'skipped' };
      const r = await deliverToSubscription(em, { config: deps.config, resolver: deps.resolver }, sub, { id: event.id, name: event.name, body: event.body });
      deps.logger.info(
        { subscriptionId: sub.id, eventId: event.id, event: event.name, statusCode: r.statusCode, errorClass: r.errorClass, durationMs: r.durationMs },
        r.success ? 'webhook delivered' : 'webhook delivery failed',
      );
      return { success: r.success, statusCode: r.statusCode, errorClass: r.errorClass };
    },

    /**
     * Large fan-outs: one attempt to each subscription of a slice, all at once (each request has its
     * own 10 s deadline, so a stalled receiver delays no other request), recorded one row each.
     * Saves Temporal one activity task per subscription, which is what limits throughput at scale.
     */
    async deliverWebhookBatch(input: { eventId: string; subscriptionIds: string[] }): Promise<{ succeeded: number; failed: number }> {
      const em = deps.orm.em.fork();
      const event = await em.findOne(WebhookEvent, input.eventId);
      if (!event) return { succeeded: 0, failed: 0 };
      const subs = await em.find(WebhookSubscription, { id: { $in: input.subscriptionIds }, active: true });
      const outcomes = await Promise.all(
        subs
          .filter((sub) => sub.events.includes(event.name))
          .map((sub) =>
            deliverToSubscription(em.fork(), { config: deps.config, resolver: deps.resolver }, sub, { id: event.id, name: event.name, body: event.body }).then(
              (r) => {
                if (!r.success) deps.logger.info({ subscriptionId: sub.id, eventId: event.id, statusCode: r.statusCode, errorClass: r.errorClass }, 'webhook delivery failed');
                return r.success;
              },
              (err) => {
                deps.logger.error({ subscriptionId: sub.id, eventId: event.id, err: String(err) }, 'webhook delivery could not be recorded');
                return false;
              },
            ),
          ),
      );
      const succeeded = outcomes.filter(Boolean).length;
      return { succeeded, failed: input.subscriptionIds.length - succeeded };
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
