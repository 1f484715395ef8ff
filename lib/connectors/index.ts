// The messaging-network connector a process uses: over HTTP when CONNECTOR_BASE_URL is set, else the
// sandbox network over the local generated corpus (the default, so everything runs offline). Profiles
// (`createConnector`) need no database; accounts (`createAccountConnector`) do in the sandbox.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { providerHttpOptions } from '../provider-http.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import { HttpConnector } from './http.js';
import { SandboxConnector } from './sandbox.js';
import { SandboxNetwork } from './sandbox-network.js';
import type { AccountConnector, NetworkConnector } from './types.js';

export * from './types.js';
export { HttpConnector } from './http.js';
export { SandboxConnector } from './sandbox.js';
export { SandboxNetwork, sandboxAcceptInvitation, sandboxDisconnect, sandboxInjectMessage, sandboxReconnect, type InboundSink } from './sandbox-network.js';
export { signInbound, verifyInbound, SIGNATURE_HEADER } from './inbound.js';
export { sandboxFate, recipientBucket } from './sandbox-rules.js';

export function createConnector(config: Config['connector'], corpus: CorpusOptions): NetworkConnector {
  return config.baseUrl ? new HttpConnector(providerHttpOptions('CONNECTOR', config)) : new SandboxConnector(corpus);
}

/** The account half: the HTTP connector, or the sandbox network with its state in `orm`'s database. */
export function createAccountConnector(config: Config['connector'], orm: Pick<MikroORM, 'em'>): AccountConnector {
  return config.baseUrl
    ? new HttpConnector(providerHttpOptions('CONNECTOR', config), { webhookSecret: config.webhookSecret })
    : new SandboxNetwork(orm, config.webhookSecret);
}
