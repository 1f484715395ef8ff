// The messaging-network connector a process uses: Unipile when CONNECTOR_PROVIDER=unipile (LinkedIn
// accounts through Unipile's hosted wizard; docs/providers.md "Unipile"), else the sandbox network
// (the default, so everything runs offline): profiles from the local generated corpus, accounts,
// sends and inbound events in the `sandbox_*` tables of `orm`'s database. Email accounts
// connected with their own SMTP/IMAP credentials are served by the mail connector beside it
// (routing.ts chooses per call).
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import type { Resolver } from '../outbound-http.js';
import type { MailAccountLookup } from './mailbox/account.js';
import type { MailTokenSource } from './mailbox/oauth.js';
import { MailConnector } from './mailbox/connector.js';
import { RoutingConnector, type RefusalSink } from './routing.js';
import { SandboxNetwork } from './sandbox-network.js';
import type { AccountConnector, NetworkConnector } from './types.js';
import { UnipileConnector } from './unipile/connector.js';

export * from './types.js';
export { SandboxConnector } from './sandbox.js';
export {
  SandboxNetwork,
  sandboxAcceptInvitation,
  sandboxDisconnect,
  sandboxInjectMessage,
  sandboxOpenMessage,
  sandboxReconnect,
  type InboundSink,
} from './sandbox-network.js';
export { signInbound, verifyInbound, SIGNATURE_HEADER } from './inbound.js';
export { sandboxFate, recipientBucket } from './sandbox-rules.js';
export { MailConnector } from './mailbox/connector.js';
export { RoutingConnector, type RefusalSink } from './routing.js';
export { UnipileConnector } from './unipile/connector.js';

/** Both halves of the connector: profile lookups and sender accounts. */
export type Connector = NetworkConnector & AccountConnector;

/** What the mail connector needs: the stored accounts (the domain's lookup), the key that unseals their credentials, and the outbound allow-list for local mail servers. */
export interface MailConnectorSettings {
  accounts: MailAccountLookup;
  encryptionKey: Buffer;
  allowHosts: readonly string[];
  resolver?: Resolver;
  /** OAuth mailboxes' access tokens (domain/mailbox/oauth-tokens.ts). */
  tokens?: MailTokenSource;
}

/** `orm` holds the sandbox network's state (only touched when an account method is called); the mail accounts are read through `mail.accounts`. */
export function createConnector(
  config: Config['connector'],
  corpus: CorpusOptions,
  orm: Pick<MikroORM, 'em'>,
  mail: MailConnectorSettings,
  onRefusal?: RefusalSink,
): RoutingConnector {
  return new RoutingConnector(baseConnector(config, corpus, orm), new MailConnector(mail), onRefusal);
}

function baseConnector(config: Config['connector'], corpus: CorpusOptions, orm: Pick<MikroORM, 'em'>): Connector {
  if (config.provider === 'unipile') {
    const u = config.unipile;
    if (!u) throw new Error('CONNECTOR_PROVIDER=unipile needs the UNIPILE_* settings (lib/config.ts)');
    return new UnipileConnector({
      baseUrl: u.baseUrl,
      apiKey: u.apiKey,
      timeoutMs: u.timeoutMs,
      publicBaseUrl: u.publicBaseUrl,
      searchAccountId: u.searchAccountId,
      webhookSecret: u.webhookSecret,
    });
  }
  return new SandboxNetwork(corpus, orm, config.webhookSecret);
}

/** The Unipile connector behind `connector` (itself, or the configured half of a routing connector); null otherwise. */
export function unipileConnectorOf(connector: unknown): UnipileConnector | null {
  const base = connector instanceof RoutingConnector ? connector.base : connector;
  return base instanceof UnipileConnector ? base : null;
}

/** The mail connector behind `connector` (the routing connector's mail half, or itself); null otherwise (a fake). */
export function mailConnectorOf(connector: unknown): MailConnector | null {
  if (connector instanceof RoutingConnector) return connector.mail;
  return connector instanceof MailConnector ? connector : null;
}

/** The sandbox network behind `connector` (itself, or the configured half of a routing connector); null for Unipile or a fake. */
export function sandboxNetworkOf(connector: unknown): SandboxNetwork | null {
  const base = connector instanceof RoutingConnector ? connector.base : connector;
  return base instanceof SandboxNetwork ? base : null;
}
