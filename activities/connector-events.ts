import { createAccountConnector, SandboxNetwork } from '../lib/connectors/index.js';
import { handleConnectorEvent, ingestConnectorEvent } from '../domain/connector-events.js';
import type { ActivityDeps } from './index.js';

export function createConnectorActivities(deps: ActivityDeps) {
  let accounts: ReturnType<typeof createAccountConnector> | undefined;
  return {
    async handleConnectorEvent(eventId: string): Promise<{ type: string; outcome: string }> {
      return handleConnectorEvent(deps.orm.em.fork(), eventId);
    },

    /** Hands the sandbox network's due events to the inbound pipeline (nothing with the HTTP connector). */
    async deliverSandboxEvents(): Promise<{ delivered: number }> {
      accounts ??= createAccountConnector(deps.config.connector, deps.orm);
      if (!(accounts instanceof SandboxNetwork)) return { delivered: 0 };
      const jobs = deps.jobs;
      if (!jobs) throw new Error('deliverSandboxEvents needs the Jobs port');
      const delivered = await accounts.deliverDue(new Date(), async (event, wire) => {
        await ingestConnectorEvent(deps.orm.em.fork(), jobs, accounts!.name, event, wire);
      });
      return { delivered };
    },
  };
}

export type ConnectorActivities = ReturnType<typeof createConnectorActivities>;
