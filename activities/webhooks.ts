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
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
