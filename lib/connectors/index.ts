// The messaging-network connector a process uses: over HTTP when CONNECTOR_BASE_URL is set, else the
// sandbox network (the default, so everything runs offline): profiles from the local generated corpus,
// accounts, sends and inbound events in the `sandbox_*` tables of `orm`'s database.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { providerHttpOptions } from '../provider-http.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import { HttpConnector } from './http.js';
import { SandboxNetwork } from './sandbox-network.js';
import type { AccountConnector, NetworkConnector } from './types.js';

export * from './types.js';
export { HttpConnector } from './http.js';
export { SandboxConnector } from './sandbox.js';
export { SandboxNetwork, sandboxAcceptInvitation, sandboxDisconnect, sandboxInjectMessage, sandboxOpenMessage, sandboxReconnect, type InboundSink } from './sandbox-network.js';
export { signInbound, verifyInbound, SIGNATURE_HEADER } from './inbound.js';
export { sandboxFate, recipientBucket } from './sandbox-rules.js';

/** Both halves of the connector: profile lookups and sender accounts. */
export type Connector = NetworkConnector & AccountConnector;

/** `orm` holds the sandbox network's state (only touched when an account method is called). */
export function createConnector(config: Config['connector'], corpus: CorpusOptions, orm: Pick<MikroORM, 'em'>): Connector {
  return config.baseUrl
    ? new HttpConnector(providerHttpOptions('CONNECTOR', config), { webhookSecret: config.webhookSecret })
    : new SandboxNetwork(corpus, orm, config.webhookSecret);
}
