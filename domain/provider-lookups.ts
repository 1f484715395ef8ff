// What the process's providers read and tell of the domain (lib/ imports no domain/): made once here
// for the API and the worker alike, so both run their connector with the same rules.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../lib/config.js';
import { MailOAuthClient } from '../lib/connectors/mailbox/oauth.js';
import type { ProviderLookups } from '../lib/providers.js';
import { connectorRefusals } from './accounts/refusals.js';
import { mailAccounts } from './mailbox/accounts.js';
import { mailTokenSource } from './mailbox/oauth-tokens.js';

export function providerLookups(orm: MikroORM, config: Config): ProviderLookups {
  const em = () => orm.em.fork();
  return {
    mailAccounts: mailAccounts(em),
    // OAuth mailboxes' access tokens, refreshed once across processes (docs/email.md).
    mailTokens: mailTokenSource({
      em,
      client: new MailOAuthClient(config.mailOAuth, { allowHosts: config.outboundAllowHosts }),
      encryptionKey: config.encryptionKey,
    }),
    // A lost account disconnected, a rate-limited one throttled, whichever path made the call.
    refusals: connectorRefusals(em),
  };
}
