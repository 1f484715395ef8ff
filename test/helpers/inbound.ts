// Sandbox inbound events of the test's own accounts, handed to the inbound pipeline as the delivery
// Schedule would (stored once, inbox processors woken). Scoped by account: a global delivery would
// take events other test files (running at the same time) wait for.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ingestConnectorEvent } from '../../domain/connectors/events.js';
import { sandboxNetworkOf } from '../../lib/connectors/index.js';
import { api } from './api.js';

export async function deliverFor(...connectorAccountIds: string[]): Promise<number> {
  const { services } = await api();
  const network = sandboxNetworkOf(services.connector);
  if (!network) throw new Error('deliverFor needs the sandbox network');
  const kicks: Promise<void>[] = [];
  const n = await network.deliverDue(
    new Date(),
    async (event, wire) =>
      void (await ingestConnectorEvent(
        services.orm.em.fork() as EntityManager,
        services.jobs,
        network.name,
        event,
        wire,
        (k) => kicks.push(k),
      )),
    100,
    connectorAccountIds,
  );
  await Promise.all(kicks);
  return n;
}
