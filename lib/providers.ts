// The process's providers (docs/architecture.md "Providers, built once per process"): the model,
// discovery sources, enrichment, the messaging-network connector (and the connected mailboxes it
// reads), booking, the partner CRM, DNS, email and the PDF extractor, made once at start-up from
// lib/config.ts and handed down — to activities through `ActivityDeps`, to Operator/MCP tools through
// the tool context, to handlers through the API's services. Each is built on first use (a worker that never enriches builds no enrichment
// provider); a test passes its own fake over the bundle with `withProviders`.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from './config.js';
import { createBookingProviders } from './booking/index.js';
import type { BookingProviders } from './booking/types.js';
import { createConnector, type Connector, type RefusalSink, type RoutingConnector } from './connectors/index.js';
import type { MailAccountLookup } from './connectors/mailbox/account.js';
import type { MailTokenSource } from './connectors/mailbox/oauth.js';
import type { MailboxProvider } from './connectors/mailbox/reader.js';
import { createDns, type DnsResolver } from './dns.js';
import { emailSender, type EmailSender } from './email.js';
import { createEnrichment, type EnrichmentProvider } from './enrichment/index.js';
import { createModelAdapter, type ModelAdapter } from './llm/index.js';
import { createPartner } from './partner/index.js';
import type { PartnerAdapter } from './partner/types.js';
import { loadPdfExtractor, type PdfExtractorLoader } from './pdf-text.js';
import { createSources, type Sources } from './sources/index.js';

export interface Providers {
  /** The model adapter every AI operation uses. */
  llm: ModelAdapter;
  /** The discovery sources (newsforum, pronet). */
  sources: Sources;
  /** The enrichment provider. */
  enrichment: EnrichmentProvider;
  /** The messaging-network connector: network-profile lookups and sender accounts (sends, inbound events); mailboxes connected over SMTP/IMAP through the mail connector. */
  connector: Connector;
  /** The mailboxes connected over SMTP/IMAP, read by the mailbox sync: the connector's mail half, which unseals each account's credentials. */
  mailbox: MailboxProvider;
  /** The booking providers (scheduler, calendar). */
  booking: BookingProviders;
  /** The partner CRM. */
  partner: PartnerAdapter;
  /** DNS for sending-domain checks. */
  dns: DnsResolver;
  /** Outbound email (SMTP, or the local `sent_emails` outbox). */
  email: EmailSender;
  /** Loads the PDF text extractor. */
  pdf: PdfExtractorLoader;
}

export type ProviderBundle = Providers & {
  /** Closes the providers made so far (their HTTP pools, the sources' corpus workers …). */
  close(): Promise<void>;
};

/** What the providers read of the domain's tables, through queries the domain hands in (lib/ imports no domain/). */
export interface ProviderLookups {
  /** The mail connector's accounts (domain/mailbox/accounts.ts). */
  mailAccounts: MailAccountLookup;
  /** OAuth mailboxes' access tokens, refreshed in one place (domain/mailbox/oauth-tokens.ts). */
  mailTokens?: MailTokenSource;
  /** What a connector's refusal of an account call means for the account (domain/accounts/refusals.ts). */
  refusals?: RefusalSink;
}

/**
 * The process's providers, chosen from `config` (each over HTTP when its base URL is set, the
 * connector and pronet over Unipile when CONNECTOR_PROVIDER=unipile; else the local one). `orm` holds the local connector's, partner's and email outbox's state. Each provider is
 * made on first read; reading every field (the API does, at start-up) makes them all.
 */
export function createProviders(config: Config, orm: MikroORM, lookups: ProviderLookups): ProviderBundle {
  const made: Partial<Providers> = {};
  const once = <K extends keyof Providers>(key: K, make: () => Providers[K]): Providers[K] => (made[key] ??= make());
  // One routing connector: `connector`, and its mail half as `mailbox`.
  const connector = () =>
    once('connector', () =>
      createConnector(
        config.connector,
        config.sources.corpus,
        orm,
        {
          accounts: lookups.mailAccounts,
          encryptionKey: config.encryptionKey,
          allowHosts: config.outboundAllowHosts,
          tokens: lookups.mailTokens,
        },
        lookups.refusals,
      ),
    ) as RoutingConnector;
  return {
    get llm() {
      return once('llm', () => createModelAdapter(config.llm));
    },
    get sources() {
      return once('sources', () => createSources(config.sources));
    },
    get enrichment() {
      return once('enrichment', () => createEnrichment(config.enrichment, config.sources.corpus));
    },
    get connector() {
      return connector();
    },
    get mailbox() {
      return connector().mail; // closed with the connector
    },
    get booking() {
      return once('booking', () => createBookingProviders(config.booking, config.publicBaseUrl));
    },
    get partner() {
      return once('partner', () => createPartner(config.partner, config.publicBaseUrl, orm));
    },
    get dns() {
      return once('dns', () => createDns(config.dns));
    },
    get email() {
      return once('email', () => emailSender(orm, config.email));
    },
    get pdf() {
      return loadPdfExtractor;
    },
    async close() {
      const closable = Object.values(made) as { close?: () => unknown }[];
      await Promise.all(closable.map((p) => (typeof p?.close === 'function' ? p.close() : undefined)));
    },
  };
}

/**
 * `base` with some providers replaced (a test's fakes), the others still read (and made) from `base`
 * on first use. Without overrides, `base` itself.
 */
export function withProviders<P extends Providers>(base: P, overrides: Partial<Providers> = {}): P {
  const given = Object.entries(overrides).filter(([, v]) => v !== undefined);
  if (!given.length) return base;
  const out = Object.create(base) as P;
  for (const [key, value] of given) Object.defineProperty(out, key, { value, enumerable: true });
  return out;
}
