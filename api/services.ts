import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { ModelAdapter } from '../lib/llm/index.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import type { Sources } from '../lib/sources/index.js';
import type { Connector } from '../lib/connectors/index.js';
import type { Authenticator } from './authenticator.js';
import type { Jobs } from '../domain/jobs.js';
import type { PdfExtractorLoader } from '../lib/pdf-text.js';
import type { DnsResolver } from '../lib/dns.js';
import type { BookingProviders } from '../lib/booking/types.js';
import type { PartnerAdapter } from '../lib/partner/types.js';

/** Long-lived dependencies the API hands to every handler. */
export interface Services {
  config: Config;
  orm: MikroORM;
  redis: Redis;
  temporal: Client;
  logger: Logger;
  rateLimiter: RateLimiter;
  authenticator: Authenticator;
  /** Long-running jobs (workflows) that handlers and Operator tools start. */
  jobs: Jobs;
  /** The model adapter every AI operation uses (createModelAdapter(config.llm) unless a test gives another). */
  llm: ModelAdapter;
  /** The discovery sources, for synchronous, bounded work (signal preview). */
  sources: Sources;
  /** The messaging-network connector: network-profile lookups and sender accounts (sends, inbound events). */
  connector: Connector;
  /** Loads the PDF text extractor (lib/pdf-text.ts loadPdfExtractor unless a test gives another). */
  pdf: PdfExtractorLoader;
  /** DNS for sending-domain checks (createDns(config.dns) unless a test gives another). */
  dns: DnsResolver;
  /** The booking providers (createBookingProviders(config.booking) unless a test gives others). */
  booking: BookingProviders;
  /** The partner CRM (createPartner(config.partner) unless a test gives another; absent: built from the config on first use). */
  partner?: PartnerAdapter;
}

