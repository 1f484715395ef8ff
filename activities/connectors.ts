import { sandboxNetworkOf } from '../lib/connectors/index.js';
import { handleConnectorEvent, ingestConnectorEvent } from '../domain/connectors/events.js';
import type { ActivityDeps } from './deps.js';

export function createConnectorActivities(deps: ActivityDeps) {
  return {
    async handleConnectorEvent(eventId: string): Promise<{ type: string; outcome: string }> {
      return handleConnectorEvent(deps.orm.em.fork(), eventId, deps.jobs);
    },

    /** Hands the sandbox network's due events to the inbound pipeline (nothing to do with Unipile, whose events come in through its webhooks). */
    async deliverSandboxEvents(): Promise<{ delivered: number }> {
      const { jobs } = deps;
      if (!jobs) throw new Error('deliverSandboxEvents needs the worker’s Jobs');
      const connector = sandboxNetworkOf(deps.providers.connector);
      if (!connector) return { delivered: 0 };
      // Wake-ups of the accounts' inbox processors are coalesced, so they are awaited once at the end
      // (a failure fails the activity, which then hands the rest over again).
      const kicks: Promise<void>[] = [];
      const delivered = await connector.deliverDue(new Date(), async (event, wire) => {
        await ingestConnectorEvent(deps.orm.em.fork(), jobs, connector.name, event, wire, (k) => kicks.push(k));
      });
      await Promise.all(kicks);
      return { delivered };
    },
  };
}

export type ConnectorActivities = ReturnType<typeof createConnectorActivities>;
