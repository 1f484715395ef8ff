// Runtime configuration, read once from the environment. Every value has a local default so that
// `npm start` works on a fresh machine; production sets the secrets explicitly.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The directory holding package.json: one level up from source (lib/), two from the build (dist/lib/).
const up = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = existsSync(join(up, 'package.json')) ? up : resolve(up, '..');
export const dataDir = join(repoRoot, '.data');

function int(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

/** `Number(process.env[name] ?? fallback)`, as these settings have always been read (no validation). */
function num(name: string, fallback: number): number {
  return Number(process.env[name] ?? fallback);
}

/** A positive number of seconds/days from the environment, else `fallback`. */
function positive(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

function list(name: string): string[] {
  return (process.env[name] ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * An origin as browsers send it in `Origin` (scheme://host[:port], no path): http(s) origins are
 * normalised by URL (lower case, default port dropped); other schemes (an IDE's webview) compare as
 * written, lower case, without a trailing slash. Null when `value` is not an origin.
 */
export function normaliseOrigin(value: string): string | null {
  const v = value.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s]+\/?$/i.test(v)) return null;
  if (!/^https?:/i.test(v)) return v.toLowerCase().replace(/\/$/, '');
  return URL.canParse(v) ? new URL(v).origin : null;
}

/** The origins allowed to call `/mcp` (docs/mcp.md, "Origin"): the service's own, plus MCP_ALLOWED_ORIGINS (comma-separated). */
export function mcpOrigins(publicBaseUrl: string, configured = process.env.MCP_ALLOWED_ORIGINS): string[] {
  const own = URL.canParse(publicBaseUrl) ? normaliseOrigin(new URL(publicBaseUrl).origin) : null;
  const extra = (configured ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const out = new Set(own ? [own] : []);
  for (const raw of extra) {
    const o = normaliseOrigin(raw);
    if (!o) throw new Error(`MCP_ALLOWED_ORIGINS: "${raw}" is not an origin (scheme://host[:port], no path)`);
    out.add(o);
  }
  return [...out];
}

/** A secret from the environment, or one generated once and kept under .data/ for local runs. */
function localSecret(name: string): string {
  const fromEnv = process.env[name];
  if (fromEnv) {
    if (fromEnv.length < 32) throw new Error(`${name} must be at least 32 characters`);
    return fromEnv;
  }
  if (process.env.NODE_ENV === 'production') throw new Error(`${name} is required in production`);
  const file = join(dataDir, 'secrets.json');
  const stored: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  if (!stored[name]) {
    stored[name] = randomBytes(32).toString('base64url');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return stored[name];
}

/** The model adapter (lib/llm): OpenAI-compatible when a base URL or key is set, else the local model. */
export interface LlmConfig {
  baseUrl: string | null;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  /** Integer prices in micros (millionths of a USD) per million tokens; 0 when unknown. */
  priceInputPerMTokMicros: number;
  priceOutputPerMTokMicros: number;
}

/** Outbound email (lib/email.ts): SMTP when SMTP_URL is set, else the local `sent_emails` outbox. */
export interface EmailConfig {
  smtpUrl?: string;
  from: string;
}

/** The worker process (workers/worker.ts). */
export interface WorkerConfig {
  /** WORKER_MAX_ACTIVITIES: activity task slots (webhook fan-out runs many short I/O-bound ones). */
  maxActivities: number;
  /** WORKER_MAX_WORKFLOW_TASKS: workflow task slots. */
  maxWorkflowTasks: number;
  /** WORKER_MAX_LOCAL_ACTIVITIES: local activity slots. */
  maxLocalActivities: number;
  /** TEMPORAL_SCHEDULES=off: the worker does not create or repoint the Schedules (test runs on their own queue). */
  schedules: boolean;
  /** WEBHOOK_DISPATCHER=off: the worker runs without the outbound-webhook dispatcher. */
  webhookDispatcher: boolean;
  /** WEBHOOK_DISPATCH_COALESCE_MS: the dispatcher's pass interval (its own default when unset). */
  webhookDispatchCoalesceMs: number | undefined;
  /** WORKER_METRICS_PORT: the worker's own GET /metrics (9464; 0: not served). */
  metricsPort: number;
  /** The mailbox-session service beside the worker (docs/deploy.md "Mailbox sessions"). */
  mailboxSessions: {
    /** MAILBOX_SESSIONS=off: this worker follows no mailbox (another worker's service does). */
    enabled: boolean;
    /** MAILBOX_SESSIONS_MAX: the most mailboxes this worker follows (default 5000). */
    max: number;
    /** MAILBOX_LOGIN_CONCURRENCY: IMAP handshakes in flight at once (default 16). */
    loginConcurrency: number;
    /** MAILBOX_LOGINS_PER_SECOND: IMAP handshakes started per second at most (default 40). */
    loginsPerSecond: number;
    /** MAILBOX_LEASE_TICK_MS: lease renewal and rebalancing interval (default 10000; leases last 30 s). */
    tickMs: number;
    /** MAILBOX_SESSIONS_UNASSIGNED=off: follow only mailboxes whose lifecycle runs on this worker's task queue. */
    unassigned: boolean;
    /** MAILBOX_REFUSAL_GRACE_MS: how long refused logins go on before the mailbox is disconnected (default 120000). */
    refusalGraceMs: number;
  };
  /** WORKER_METRICS_HOST: the address it listens on (loopback unless a scraper elsewhere needs it). */
  metricsHost: string;
}

/**
 * Settings read at each use rather than once at start-up: domain code (which is given no Config) and
 * tests that change them in a running process read them here. Still the only place that reads them.
 */
export const runtimeSettings = {
  /** OPERATOR_HEARTBEAT_MS: an idle Operator stream's heartbeat (15 s). */
  operatorHeartbeatMs: (): number => num('OPERATOR_HEARTBEAT_MS', 15_000),
  /** OPERATOR_CONFIRMATION_TTL_MS: how long an Operator confirmation waits (1 hour). */
  operatorConfirmationTtlMs: (): number => num('OPERATOR_CONFIRMATION_TTL_MS', 60 * 60 * 1000),
  /** MCP_APPROVAL_TTL_SECONDS: how long an MCP approval request waits (15 minutes). */
  mcpApprovalTtlSeconds: (): number => positive('MCP_APPROVAL_TTL_SECONDS', 900),
  /** MCP_ACCESS_TOKEN_TTL_SECONDS: MCP access tokens (1 hour). */
  mcpAccessTokenTtlSeconds: (): number => positive('MCP_ACCESS_TOKEN_TTL_SECONDS', 3600),
  /** MCP_REFRESH_TOKEN_TTL_SECONDS: MCP refresh tokens (30 days). */
  mcpRefreshTokenTtlSeconds: (): number => positive('MCP_REFRESH_TOKEN_TTL_SECONDS', 30 * 24 * 3600),
  /** INVITATION_TTL_DAYS: team invitations (7 days). */
  invitationTtlDays: (): number => positive('INVITATION_TTL_DAYS', 7),
  /** INBOX_LIVE_TIMEOUT_MS: the bound on a live conversation read at the connector (5 s). */
  inboxLiveTimeoutMs: (): number => num('INBOX_LIVE_TIMEOUT_MS', 5_000),
  /** INBOX_SYNC_FRESH_MS: an account synced more recently is not synced again unless forced (60 s). */
  inboxSyncFreshMs: (): number => num('INBOX_SYNC_FRESH_MS', 60_000),
  /** FOLLOW_UP_AFTER_HOURS: an unanswered reply becomes a follow-up after this long (24 h). */
  followUpAfterHours: (): number => num('FOLLOW_UP_AFTER_HOURS', 24),
  /** TRUST_PROXY=1: trust X-Forwarded-* (read when the Koa app is created). */
  trustProxy: (): boolean => process.env.TRUST_PROXY === '1',
};

export interface Config {
  port: number;
  /** HOST: the address the API listens on. */
  host: string;
  /** NODE_ENV=production (secrets required, buffered logs, no response validation). */
  production: boolean;
  databaseUrl: string;
  redisUrl: string;
  temporal: { address: string; namespace: string; taskQueue: string };
  jwt: { secret: Uint8Array; issuer: string; audience: string; accessTtlSeconds: number };
  refreshTtlSeconds: number;
  rateLimit: {
    agentPerMinute: number;
    publicPerMinute: number;
    defaultPerMinute: number;
    authFailuresPerMinute: number;
  };
  /** Lifetime of a cached bearer credential (revocations are also pushed through Redis at once). */
  authCacheTtlSeconds: number;
  bodyLimitBytes: number;
  outboundAllowHosts: string[];
  encryptionKey: Buffer;
  logLevel: string;
  /** Logs are written in 4 KiB batches: in production unless LOG_SYNC=1. */
  logBuffered: boolean;
  publicBaseUrl: string;
  /** PUBLIC_BASE_URL as set, null when unset (MCP links then use the origin each request reached). */
  publicBaseUrlFromEnv: string | null;
  /** METRICS_TOKEN: the bearer token `/metrics` (API and worker) requires; null: open, except in production (closed). */
  metricsToken: string | null;
  /** The ORM's pool and logging (db/mikro-orm.config.ts): DB_POOL_MAX, DB_DEBUG=1. */
  db: { poolMax: number; debug: boolean };
  /** Sign-in OAuth providers (lib/oauth.ts): the OAUTH_PROVIDERS and OAUTH_<NAME>_* variables as set. */
  oauthEnv: Record<string, string | undefined>;
  email: EmailConfig;
  worker: WorkerConfig;
  /** INBOX_KICK_COALESCE_MS: inbound events of one account within this share one signal to its processor. */
  inboxKickCoalesceMs: number;
  /** List imports: LIST_IMPORT_CHUNK_ROWS records per chunk transaction, LIST_IMPORT_CONCURRENCY imports at once per worker. */
  listImport: { chunkRows: number; concurrency: number };
  /** WEBHOOK_HISTORY_DAYS: webhook deliveries kept this long. */
  webhookHistoryDays: number;
  /** EXECUTOR_TEST_PAUSE_AFTER_SEND_MS (tests only): the executor pauses after a send, so a test can kill the worker there. */
  executorTestPauseAfterSendMs: number;
  /** Origins a browser may call `/mcp` from (the Streamable HTTP transport's DNS-rebinding check): PUBLIC_BASE_URL's and MCP_ALLOWED_ORIGINS. */
  mcpAllowedOrigins: string[];
  /** Discovery sources (lib/sources): newsforum as Hacker News search when NEWSFORUM_PROVIDER=hn, pronet over Unipile when configured; else the local corpus. */
  sources: SourcesConfig;
  llm: LlmConfig;
  /** Enrichment provider (lib/enrichment): Hunter when ENRICHMENT_PROVIDER=hunter, else derived from the local corpus. */
  enrichment: EnrichmentConfig;
  /** Messaging-network connector (lib/connectors): Unipile when CONNECTOR_PROVIDER=unipile, else the local sandbox network. */
  connector: ConnectorConfig;
  /** DNS for sending-domain checks (lib/dns.ts): the local rule-based resolver unless DNS_SERVERS is set. */
  dns: { servers: string[]; timeoutMs: number; dkimSelectors: string[] };
  /** Booking providers (lib/booking): each over HTTP when its base URL is set, else the local one. */
  booking: BookingConfig;
  /** The partner CRM (lib/partner): HubSpot when PARTNER_PROVIDER=hubspot, else the local one. */
  partner: PartnerConfig;
  /** Mailboxes connected with Google or Microsoft OAuth (lib/connectors/mailbox/oauth.ts, docs/email.md): the MAIL_OAUTH_* settings. */
  mailOAuth: MailOAuthConfig;
}

/** One OAuth mail provider (MAIL_OAUTH_<GOOGLE|MICROSOFT>_*): null client id or secret means not configured. */
export interface MailOAuthProviderConfig {
  clientId: string | null;
  clientSecret: string | null;
  authorizeUrl: string;
  tokenUrl: string;
  /** Our callback: `<PUBLIC_BASE_URL>/oauth/mailbox/<provider>/callback` unless set. */
  redirectUri: string;
  scope: string;
  /** The provider's mail servers (overridable: tests point them at the local mail server). */
  smtp: { host: string; port: number; security: string };
  imap: { host: string; port: number; security: string };
}

export interface MailOAuthConfig {
  google: MailOAuthProviderConfig;
  microsoft: MailOAuthProviderConfig & { tenant: string };
  /** MAIL_OAUTH_TIMEOUT_MS: the deadline of one request to a token endpoint. */
  timeoutMs: number;
}

/** The scopes the providers document for IMAP + SMTP with XOAUTH2, plus `openid email` (the address the grant belongs to). */
export const MAIL_OAUTH_SCOPES = {
  google: 'https://mail.google.com/ openid email',
  microsoft:
    'https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send offline_access openid email',
} as const;

function mailOAuthProvider(
  name: 'google' | 'microsoft',
  publicBaseUrl: string,
  defaults: {
    authorizeUrl: string;
    tokenUrl: string;
    smtp: { host: string; port: number; security: string };
    imap: { host: string; port: number; security: string };
  },
): MailOAuthProviderConfig {
  const key = `MAIL_OAUTH_${name.toUpperCase()}_`;
  const env = (k: string) => process.env[`${key}${k}`] || null;
  const side = (s: 'SMTP' | 'IMAP', d: { host: string; port: number; security: string }) => ({
    host: env(`${s}_HOST`) ?? d.host,
    port: int(`${key}${s}_PORT`, d.port),
    security: env(`${s}_SECURITY`) ?? d.security,
  });
  return {
    clientId: env('CLIENT_ID'),
    clientSecret: env('CLIENT_SECRET'),
    authorizeUrl: env('AUTHORIZE_URL') ?? defaults.authorizeUrl,
    tokenUrl: env('TOKEN_URL') ?? defaults.tokenUrl,
    redirectUri: env('REDIRECT_URI') ?? `${publicBaseUrl.replace(/\/+$/, '')}/oauth/mailbox/${name}/callback`,
    scope: env('SCOPE') ?? MAIL_OAUTH_SCOPES[name],
    smtp: side('SMTP', defaults.smtp),
    imap: side('IMAP', defaults.imap),
  };
}

function mailOAuthConfig(publicBaseUrl: string): MailOAuthConfig {
  const tenant = process.env.MAIL_OAUTH_MICROSOFT_TENANT || 'common';
  const ms = `https://login.microsoftonline.com/${encodeURIComponent(tenant)}/oauth2/v2.0`;
  return {
    google: mailOAuthProvider('google', publicBaseUrl, {
      authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      smtp: { host: 'smtp.gmail.com', port: 465, security: 'tls' },
      imap: { host: 'imap.gmail.com', port: 993, security: 'tls' },
    }),
    microsoft: {
      ...mailOAuthProvider('microsoft', publicBaseUrl, {
        authorizeUrl: `${ms}/authorize`,
        tokenUrl: `${ms}/token`,
        smtp: { host: 'smtp.office365.com', port: 587, security: 'starttls' },
        imap: { host: 'outlook.office365.com', port: 993, security: 'tls' },
      }),
      tenant,
    },
    timeoutMs: int('MAIL_OAUTH_TIMEOUT_MS', 15_000),
  };
}

export const PARTNER_PROVIDERS = ['local', 'hubspot'] as const;

/** The partner CRM (PARTNER_PROVIDER; docs/partner.md "Configuration"). URLs and client are null for the local one. */
export interface PartnerConfig {
  provider: (typeof PARTNER_PROVIDERS)[number];
  /** HUBSPOT_API_BASE_URL: the CRM API and the OAuth token endpoints. */
  apiBaseUrl: string | null;
  /** HUBSPOT_AUTHORIZE_URL: where the browser installs the app. */
  authorizeUrl: string | null;
  /** `<apiBaseUrl>/oauth/v1/token`. */
  tokenUrl: string | null;
  clientId: string | null;
  clientSecret: string | null;
  /** PARTNER_SCOPE: the scopes asked for, space-separated (HubSpot: HUBSPOT_DEFAULT_SCOPE). */
  scope: string | null;
  timeoutMs: number;
}

/** What the sync needs: contacts, companies, the notes on contacts and the associations between them. */
export const HUBSPOT_DEFAULT_SCOPE =
  'crm.objects.contacts.read crm.objects.contacts.write crm.objects.companies.read crm.objects.companies.write';

/** The partner CRM's settings from `env`: the local one unless PARTNER_PROVIDER=hubspot, which needs its OAuth client. */
export function partnerSettings(
  timeoutMs: number,
  env: Record<string, string | undefined> = process.env,
): PartnerConfig {
  const get = (k: string) => env[k]?.trim() || null;
  const provider = (get('PARTNER_PROVIDER') ?? 'local').toLowerCase();
  if (!(PARTNER_PROVIDERS as readonly string[]).includes(provider))
    throw new Error(`PARTNER_PROVIDER must be one of ${PARTNER_PROVIDERS.join(', ')}, got "${provider}"`);
  const none = { apiBaseUrl: null, authorizeUrl: null, tokenUrl: null, clientId: null, clientSecret: null };
  if (provider === 'local') return { provider: 'local', ...none, scope: null, timeoutMs };
  const missing = ['PARTNER_CLIENT_ID', 'PARTNER_CLIENT_SECRET'].filter((k) => !get(k));
  if (missing.length)
    throw new Error(`PARTNER_PROVIDER=hubspot needs ${missing.join(' and ')} (the app's OAuth client)`);
  const url = (k: string, fallback: string) => {
    const raw = get(k) ?? fallback;
    if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol))
      throw new Error(`${k} must be an absolute http(s) URL, got "${raw}"`);
    return raw.replace(/\/+$/, '');
  };
  const apiBaseUrl = url('HUBSPOT_API_BASE_URL', 'https://api.hubapi.com');
  return {
    provider: 'hubspot',
    apiBaseUrl,
    authorizeUrl: url('HUBSPOT_AUTHORIZE_URL', 'https://app.hubspot.com/oauth/authorize'),
    tokenUrl: `${apiBaseUrl}/oauth/v1/token`,
    clientId: get('PARTNER_CLIENT_ID'),
    clientSecret: get('PARTNER_CLIENT_SECRET'),
    scope: (get('PARTNER_SCOPE') ?? HUBSPOT_DEFAULT_SCOPE).split(/\s+/).join(' '),
    timeoutMs,
  };
}

export interface BookingConfig {
  timeoutMs: number;
  /** BOOKING_SCHEDULER_PROVIDER and the CALCOM_* variables (schedulerSettings). */
  scheduler: SchedulerConfig;
  /** BOOKING_CALENDAR_PROVIDER and the Google Calendar variables (calendarSettings). */
  calendar: CalendarConfig;
}

export const CALENDAR_PROVIDERS = ['local', 'google'] as const;
export type CalendarProvider = (typeof CALENDAR_PROVIDERS)[number];

/** The `calendar` booking provider (docs/calendar.md): the local one, or Google Calendar API v3 through OAuth. */
export interface CalendarConfig {
  provider: CalendarProvider;
  /** Set when the provider is google. */
  google: GoogleCalendarConfig | null;
}

export interface GoogleCalendarConfig {
  /** GOOGLE_CALENDAR_BASE_URL: the Calendar API v3 (the stand-in in tests). */
  baseUrl: string;
  /** GOOGLE_OAUTH_AUTHORIZE_URL and GOOGLE_OAUTH_TOKEN_URL: Google's OAuth 2.0 endpoints. */
  authorizeUrl: string;
  tokenUrl: string;
  /** BOOKING_CALENDAR_CLIENT_ID, BOOKING_CALENDAR_CLIENT_SECRET: our OAuth client (type Web application). */
  clientId: string;
  clientSecret: string;
  /** BOOKING_CALENDAR_SCOPE: space-separated; every one must be granted. */
  scope: string;
  /** GOOGLE_CALENDAR_REQUESTS_PER_MINUTE: the pace per connected account in this process (Google allows 600 per user per minute). */
  requestsPerMinute: number;
}

export const GOOGLE_CALENDAR_DEFAULTS = {
  baseUrl: 'https://www.googleapis.com/calendar/v3',
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  scope: 'https://www.googleapis.com/auth/calendar.readonly',
  requestsPerMinute: 500,
} as const;

/**
 * BOOKING_CALENDAR_PROVIDER and the Google Calendar variables, checked together: a Google variable
 * set without BOOKING_CALENDAR_PROVIDER=google fails (rather than silently running the local
 * calendar), and so does google without its OAuth client.
 */
export function calendarSettings(env: Record<string, string | undefined> = process.env): CalendarConfig {
  const get = (k: string) => env[k]?.trim() || null;
  const provider = (get('BOOKING_CALENDAR_PROVIDER') ?? 'local').toLowerCase();
  if (!(CALENDAR_PROVIDERS as readonly string[]).includes(provider))
    throw new Error(`BOOKING_CALENDAR_PROVIDER must be one of ${CALENDAR_PROVIDERS.join(', ')}, got "${provider}"`);
  const googleVars = [
    'GOOGLE_CALENDAR_BASE_URL',
    'GOOGLE_OAUTH_AUTHORIZE_URL',
    'GOOGLE_OAUTH_TOKEN_URL',
    'GOOGLE_CALENDAR_REQUESTS_PER_MINUTE',
    'BOOKING_CALENDAR_CLIENT_ID',
    'BOOKING_CALENDAR_CLIENT_SECRET',
    'BOOKING_CALENDAR_SCOPE',
  ].filter((k) => get(k));
  if (provider !== 'google') {
    if (googleVars.length)
      throw new Error(
        `${googleVars.join(', ')} ${googleVars.length > 1 ? 'are' : 'is'} set but BOOKING_CALENDAR_PROVIDER is not google`,
      );
    return { provider: 'local', google: null };
  }
  const missing = ['BOOKING_CALENDAR_CLIENT_ID', 'BOOKING_CALENDAR_CLIENT_SECRET'].filter((k) => !get(k));
  if (missing.length) throw new Error(`BOOKING_CALENDAR_PROVIDER=google needs ${missing.join(' and ')}`);
  const url = (k: string, fallback: string) => {
    const v = get(k) ?? fallback;
    if (!URL.canParse(v) || !/^https?:$/.test(new URL(v).protocol))
      throw new Error(`${k} must be an absolute http(s) URL (${fallback})`);
    return v;
  };
  const rawRate = get('GOOGLE_CALENDAR_REQUESTS_PER_MINUTE');
  const requestsPerMinute = rawRate === null ? GOOGLE_CALENDAR_DEFAULTS.requestsPerMinute : Number(rawRate);
  if (!Number.isInteger(requestsPerMinute) || requestsPerMinute < 1 || requestsPerMinute > 10_000)
    throw new Error(`GOOGLE_CALENDAR_REQUESTS_PER_MINUTE must be an integer from 1 to 10000, got "${rawRate}"`);
  return {
    provider: 'google',
    google: {
      baseUrl: url('GOOGLE_CALENDAR_BASE_URL', GOOGLE_CALENDAR_DEFAULTS.baseUrl),
      authorizeUrl: url('GOOGLE_OAUTH_AUTHORIZE_URL', GOOGLE_CALENDAR_DEFAULTS.authorizeUrl),
      tokenUrl: url('GOOGLE_OAUTH_TOKEN_URL', GOOGLE_CALENDAR_DEFAULTS.tokenUrl),
      clientId: get('BOOKING_CALENDAR_CLIENT_ID')!,
      clientSecret: get('BOOKING_CALENDAR_CLIENT_SECRET')!,
      scope: (get('BOOKING_CALENDAR_SCOPE') ?? GOOGLE_CALENDAR_DEFAULTS.scope).split(/\s+/).join(' '),
      requestsPerMinute,
    },
  };
}

export const SCHEDULER_PROVIDERS = ['local', 'calcom'] as const;
export type SchedulerProvider = (typeof SCHEDULER_PROVIDERS)[number];

/** The `scheduler` booking provider (docs/scheduler.md): the local one, or Cal.com's API v2 with each workspace's API key. */
export interface SchedulerConfig {
  provider: SchedulerProvider;
  /** Set when the provider is calcom. */
  calcom: CalcomConfig | null;
}

export interface CalcomConfig {
  /** CALCOM_BASE_URL: default https://api.cal.com/v2 (a self-hosted instance's API v2; the stand-in in tests). */
  baseUrl: string;
  /** CALCOM_REQUESTS_PER_MINUTE: the pace per API key in this process (default 120: Cal.com's documented limit per key). */
  requestsPerMinute: number;
}

export const CALCOM_DEFAULT_BASE_URL = 'https://api.cal.com/v2';

/**
 * BOOKING_SCHEDULER_PROVIDER and the CALCOM_* variables, checked together: CALCOM_* set without
 * BOOKING_SCHEDULER_PROVIDER=calcom fails (rather than silently running the local scheduler).
 */
export function schedulerSettings(env: Record<string, string | undefined> = process.env): SchedulerConfig {
  const get = (k: string) => env[k]?.trim() || null;
  const provider = (get('BOOKING_SCHEDULER_PROVIDER') ?? 'local').toLowerCase();
  if (!(SCHEDULER_PROVIDERS as readonly string[]).includes(provider))
    throw new Error(`BOOKING_SCHEDULER_PROVIDER must be one of ${SCHEDULER_PROVIDERS.join(', ')}, got "${provider}"`);
  const calcomVars = ['CALCOM_BASE_URL', 'CALCOM_REQUESTS_PER_MINUTE'].filter((k) => get(k));
  if (provider !== 'calcom') {
    if (calcomVars.length)
      throw new Error(
        `${calcomVars.join(', ')} ${calcomVars.length > 1 ? 'are' : 'is'} set but BOOKING_SCHEDULER_PROVIDER is not calcom`,
      );
    return { provider: 'local', calcom: null };
  }
  const baseUrl = get('CALCOM_BASE_URL') ?? CALCOM_DEFAULT_BASE_URL;
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
    throw new Error(`CALCOM_BASE_URL must be an absolute http(s) URL (${CALCOM_DEFAULT_BASE_URL})`);
  const rawRate = get('CALCOM_REQUESTS_PER_MINUTE');
  const requestsPerMinute = rawRate === null ? 120 : Number(rawRate);
  if (!Number.isInteger(requestsPerMinute) || requestsPerMinute < 10 || requestsPerMinute > 10_000)
    throw new Error(`CALCOM_REQUESTS_PER_MINUTE must be an integer from 10 to 10000, got "${rawRate}"`);
  return { provider: 'calcom', calcom: { baseUrl, requestsPerMinute } };
}

export const ENRICHMENT_PROVIDERS = ['local', 'hunter'] as const;
export type EnrichmentProviderName = (typeof ENRICHMENT_PROVIDERS)[number];

/** Hunter's API (docs/enrichment.md): the default of HUNTER_BASE_URL. */
export const HUNTER_DEFAULT_BASE_URL = 'https://api.hunter.io/v2';

/** The enrichment provider (docs/enrichment.md "Providers"): the local corpus, or Hunter's API v2. */
export interface EnrichmentConfig {
  /** ENRICHMENT_PROVIDER: `local` (the default) or `hunter`. */
  provider: EnrichmentProviderName;
  /** Set when the provider is hunter: HUNTER_BASE_URL (default https://api.hunter.io/v2) and HUNTER_API_KEY. */
  hunter: { baseUrl: string; apiKey: string } | null;
  /** ENRICHMENT_TIMEOUT_MS: the deadline of each call to the provider (default 15 s). */
  timeoutMs: number;
}

/**
 * ENRICHMENT_PROVIDER and the HUNTER_* variables, checked together: hunter without a key, a base URL
 * that is not http(s), or HUNTER_* set for the local provider fail at start-up naming the variable.
 */
export function enrichmentSettings(env: Record<string, string | undefined> = process.env): EnrichmentConfig {
  const get = (k: string) => env[k]?.trim() || null;
  const provider = (get('ENRICHMENT_PROVIDER') ?? 'local').toLowerCase();
  if (!(ENRICHMENT_PROVIDERS as readonly string[]).includes(provider))
    throw new Error(`ENRICHMENT_PROVIDER must be one of ${ENRICHMENT_PROVIDERS.join(', ')}, got "${provider}"`);
  const raw = get('ENRICHMENT_TIMEOUT_MS');
  const timeoutMs = raw === null ? 15_000 : Number(raw);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new Error(`ENRICHMENT_TIMEOUT_MS must be a positive integer (milliseconds), got "${raw}"`);
  const hunterVars = ['HUNTER_API_KEY', 'HUNTER_BASE_URL'].filter((k) => get(k));
  if (provider !== 'hunter') {
    // Set for nothing would silently enrich from the local corpus.
    if (hunterVars.length)
      throw new Error(
        `${hunterVars.join(', ')} ${hunterVars.length > 1 ? 'are' : 'is'} set but ENRICHMENT_PROVIDER is not hunter`,
      );
    return { provider: 'local', hunter: null, timeoutMs };
  }
  const apiKey = get('HUNTER_API_KEY');
  if (!apiKey) throw new Error("ENRICHMENT_PROVIDER=hunter needs HUNTER_API_KEY (an API key from Hunter's dashboard)");
  const baseUrl = get('HUNTER_BASE_URL') ?? HUNTER_DEFAULT_BASE_URL;
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
    throw new Error(`HUNTER_BASE_URL must be an absolute http(s) URL (${HUNTER_DEFAULT_BASE_URL})`);
  return { provider: 'hunter', hunter: { baseUrl, apiKey }, timeoutMs };
}

export interface SourcesConfig {
  corpus: { seed: number; people: number };
  timeoutMs: number;
  /** NEWSFORUM_PROVIDER and the HN_SEARCH_* variables (newsforumSettings). */
  newsforum: NewsforumConfig;
  pronet: {
    profileHosts: string[];
    /** LinkedIn search over Unipile (CONNECTOR_PROVIDER=unipile with UNIPILE_SEARCH_ACCOUNT_ID); null: the local corpus. */
    unipile?: UnipileSearchConfig | null;
  };
}

export const NEWSFORUM_PROVIDERS = ['local', 'hn'] as const;
export type NewsforumProvider = (typeof NEWSFORUM_PROVIDERS)[number];

/** The newsforum source (docs/newsforum.md): the local corpus, or Hacker News through its public search API (no key). */
export interface NewsforumConfig {
  provider: NewsforumProvider;
  /** Set when the provider is hn. */
  hn: HnSearchConfig | null;
}

export interface HnSearchConfig {
  /** HN_SEARCH_BASE_URL: default https://hn.algolia.com/api/v1 (the stand-in in tests). */
  baseUrl: string;
  /** HN_SEARCH_REQUESTS_PER_HOUR: this process's pace (default 10,000: the documented limit per IP). */
  requestsPerHour: number;
  /** HN_SEARCH_WINDOW_DAYS: how far back a signal without `since` searches (default 30). */
  windowDays: number;
}

export const HN_SEARCH_DEFAULT_BASE_URL = 'https://hn.algolia.com/api/v1';

/**
 * NEWSFORUM_PROVIDER and the HN_SEARCH_* variables, checked together: HN_SEARCH_* set without
 * NEWSFORUM_PROVIDER=hn fails (rather than silently searching the local corpus). `env` defaults to the process's.
 */
export function newsforumSettings(env: Record<string, string | undefined> = process.env): NewsforumConfig {
  const get = (k: string) => env[k]?.trim() || null;
  const provider = (get('NEWSFORUM_PROVIDER') ?? 'local').toLowerCase();
  if (!(NEWSFORUM_PROVIDERS as readonly string[]).includes(provider))
    throw new Error(`NEWSFORUM_PROVIDER must be one of ${NEWSFORUM_PROVIDERS.join(', ')}, got "${provider}"`);
  const hnVars = ['HN_SEARCH_BASE_URL', 'HN_SEARCH_REQUESTS_PER_HOUR', 'HN_SEARCH_WINDOW_DAYS'].filter((k) => get(k));
  if (provider !== 'hn') {
    if (hnVars.length)
      throw new Error(`${hnVars.join(', ')} ${hnVars.length > 1 ? 'are' : 'is'} set but NEWSFORUM_PROVIDER is not hn`);
    return { provider: 'local', hn: null };
  }
  const baseUrl = get('HN_SEARCH_BASE_URL') ?? HN_SEARCH_DEFAULT_BASE_URL;
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
    throw new Error(`HN_SEARCH_BASE_URL must be an absolute http(s) URL (${HN_SEARCH_DEFAULT_BASE_URL})`);
  const positiveInt = (k: string, fallback: number, max: number): number => {
    const raw = get(k);
    if (raw === null) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > max)
      throw new Error(`${k} must be an integer from 1 to ${max}, got "${raw}"`);
    return n;
  };
  return {
    provider: 'hn',
    hn: {
      baseUrl,
      requestsPerHour: positiveInt('HN_SEARCH_REQUESTS_PER_HOUR', 10_000, 10_000),
      windowDays: positiveInt('HN_SEARCH_WINDOW_DAYS', 30, 3650),
    },
  };
}

export const CONNECTOR_PROVIDERS = ['sandbox', 'unipile'] as const;
export type ConnectorProvider = (typeof CONNECTOR_PROVIDERS)[number];

/** Unipile (docs/providers.md "Unipile"): the UNIPILE_* variables, checked at start-up. */
export interface UnipileConfig {
  /** UNIPILE_BASE_URL: the DSN as a URL, `https://apiN.unipile.com:PORT`. */
  baseUrl: string;
  /** UNIPILE_API_KEY: sent as X-API-KEY. */
  apiKey: string;
  /** UNIPILE_WEBHOOK_SECRET: the secret header of our webhooks and the key of the hosted-auth notify tokens. */
  webhookSecret: string;
  /** UNIPILE_SEARCH_ACCOUNT_ID: the connected LinkedIn account profile look-ups and searches run as. */
  searchAccountId: string | null;
  /** PUBLIC_BASE_URL: where Unipile reaches our hooks (notify URL, webhooks). */
  publicBaseUrl: string;
  /** CONNECTOR_TIMEOUT_MS (default 15 s): the deadline of each call to Unipile. */
  timeoutMs: number;
}

export const UNIPILE_SEARCH_API_NAMES = ['classic', 'sales_navigator'] as const;

/** The pronet source over Unipile's LinkedIn search. */
export interface UnipileSearchConfig {
  baseUrl: string;
  apiKey: string;
  accountId: string;
  /** UNIPILE_SEARCH_API: classic (default) or sales_navigator. */
  api: (typeof UNIPILE_SEARCH_API_NAMES)[number];
  /** UNIPILE_SEARCH_DAILY_PROFILES: search results per UTC day (unset: the source's default for the API). */
  dailyProfiles: number | null;
  /** UNIPILE_PROFILE_DAILY_VISITS: profile look-ups per UTC day (unset: the source's default for the API). */
  dailyProfileVisits: number | null;
}

export interface ConnectorConfig {
  /** CONNECTOR_WEBHOOK_SECRET: the key of the sandbox network's signed events at POST /hooks/connector (lib/connectors/inbound.ts). */
  webhookSecret: string | null;
  /** CONNECTOR_PROVIDER: `sandbox` (the default) or `unipile`. */
  provider?: ConnectorProvider;
  /** Set when the provider is unipile. */
  unipile?: UnipileConfig | null;
}

/**
 * CONNECTOR_PROVIDER and the UNIPILE_* variables, checked together: an invalid combination fails at
 * start-up with the variable to fix. `env` defaults to the process's.
 */
export function unipileSettings(
  publicBaseUrl: string,
  timeoutMs: number,
  env: Record<string, string | undefined> = process.env,
): { provider: ConnectorProvider; unipile: UnipileConfig | null; search: UnipileSearchConfig | null } {
  const get = (k: string) => env[k]?.trim() || null;
  const provider = (get('CONNECTOR_PROVIDER') ?? 'sandbox').toLowerCase();
  if (!(CONNECTOR_PROVIDERS as readonly string[]).includes(provider))
    throw new Error(`CONNECTOR_PROVIDER must be one of ${CONNECTOR_PROVIDERS.join(', ')}, got "${provider}"`);
  // The UNIPILE_* variables are read only for the unipile provider (a sandbox run may keep them set).
  if (provider !== 'unipile') return { provider: 'sandbox', unipile: null, search: null };
  const missing = ['UNIPILE_BASE_URL', 'UNIPILE_API_KEY', 'UNIPILE_WEBHOOK_SECRET'].filter((k) => !get(k));
  if (missing.length) throw new Error(`CONNECTOR_PROVIDER=unipile needs ${missing.join(', ')}`);
  const baseUrl = get('UNIPILE_BASE_URL')!;
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
    throw new Error(`UNIPILE_BASE_URL must be an absolute http(s) URL (the DSN, https://apiN.unipile.com:PORT)`);
  const webhookSecret = get('UNIPILE_WEBHOOK_SECRET')!;
  if (webhookSecret.length < 16) throw new Error('UNIPILE_WEBHOOK_SECRET must be at least 16 characters');
  if (env.NODE_ENV === 'production' && !get('PUBLIC_BASE_URL'))
    throw new Error('CONNECTOR_PROVIDER=unipile needs PUBLIC_BASE_URL in production (Unipile calls our hooks there)');
  const api = (get('UNIPILE_SEARCH_API') ?? 'classic').toLowerCase();
  if (!(UNIPILE_SEARCH_API_NAMES as readonly string[]).includes(api))
    throw new Error(`UNIPILE_SEARCH_API must be classic or sales_navigator, got "${api}"`);
  const daily = (k: string): number | null => {
    const raw = get(k);
    if (raw === null) return null;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${k} must be a positive integer, got "${raw}"`);
    return n;
  };
  const searchAccountId = get('UNIPILE_SEARCH_ACCOUNT_ID');
  const dailyProfiles = daily('UNIPILE_SEARCH_DAILY_PROFILES');
  const dailyProfileVisits = daily('UNIPILE_PROFILE_DAILY_VISITS');
  const apiKey = get('UNIPILE_API_KEY')!;
  return {
    provider: 'unipile',
    unipile: { baseUrl, apiKey, webhookSecret, searchAccountId, publicBaseUrl, timeoutMs },
    search: searchAccountId
      ? {
          baseUrl,
          apiKey,
          accountId: searchAccountId,
          api: api as UnipileSearchConfig['api'],
          dailyProfiles,
          dailyProfileVisits,
        }
      : null,
  };
}

/**
 * The variables of the removed HTTP adapters (connector, pronet and newsforum sources, enrichment …),
 * whose wire formats this project invented and no service spoke. A deployment still setting one fails at
 * start-up (rather than silently running on the sandbox or the local corpus), told what replaces it.
 */
const REMOVED_VARIABLES: Record<string, string> = {
  CONNECTOR_BASE_URL:
    'the HTTP connector was removed: set CONNECTOR_PROVIDER=unipile with UNIPILE_BASE_URL, UNIPILE_API_KEY and UNIPILE_WEBHOOK_SECRET (or leave CONNECTOR_PROVIDER unset for the local sandbox network)',
  CONNECTOR_API_KEY: 'the HTTP connector was removed: Unipile takes its key from UNIPILE_API_KEY',
  PRONET_BASE_URL:
    'the HTTP pronet source was removed: pronet searches run over Unipile with CONNECTOR_PROVIDER=unipile and UNIPILE_SEARCH_ACCOUNT_ID (else the local corpus)',
  PRONET_API_KEY: 'the HTTP pronet source was removed: Unipile takes its key from UNIPILE_API_KEY',
  PARTNER_BASE_URL:
    'the HTTP partner CRM was removed: the partner CRM is HubSpot with PARTNER_PROVIDER=hubspot and PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET (HUBSPOT_API_BASE_URL, default https://api.hubapi.com; docs/partner.md), else the local partner CRM',
  PARTNER_AUTHORIZE_URL:
    'the HTTP partner CRM was removed: HubSpot’s authorization page is HUBSPOT_AUTHORIZE_URL (default https://app.hubspot.com/oauth/authorize)',
  PARTNER_TOKEN_URL:
    'the HTTP partner CRM was removed: HubSpot’s token endpoint is <HUBSPOT_API_BASE_URL>/oauth/v1/token',
  ENRICHMENT_BASE_URL:
    'the HTTP enrichment provider was removed: set ENRICHMENT_PROVIDER=hunter with HUNTER_API_KEY (HUNTER_BASE_URL defaults to https://api.hunter.io/v2; docs/enrichment.md), or leave ENRICHMENT_PROVIDER unset for the local corpus',
  ENRICHMENT_API_KEY: 'the HTTP enrichment provider was removed: Hunter takes its key from HUNTER_API_KEY',
  NEWSFORUM_BASE_URL:
    'the HTTP newsforum source was removed: newsforum searches Hacker News with NEWSFORUM_PROVIDER=hn (HN_SEARCH_BASE_URL, default https://hn.algolia.com/api/v1; docs/newsforum.md), else the local corpus',
  NEWSFORUM_API_KEY: 'the HTTP newsforum source was removed: Hacker News search needs no key (NEWSFORUM_PROVIDER=hn)',
  BOOKING_CALENDAR_BASE_URL:
    'the HTTP calendar was removed: the calendar is Google Calendar with BOOKING_CALENDAR_PROVIDER=google and BOOKING_CALENDAR_CLIENT_ID, BOOKING_CALENDAR_CLIENT_SECRET (GOOGLE_CALENDAR_BASE_URL, default https://www.googleapis.com/calendar/v3; docs/calendar.md), else the local calendar',
  BOOKING_CALENDAR_AUTHORIZE_URL:
    'the HTTP calendar was removed: Google Calendar’s authorization page is GOOGLE_OAUTH_AUTHORIZE_URL (default https://accounts.google.com/o/oauth2/v2/auth)',
  BOOKING_SCHEDULER_BASE_URL:
    'the HTTP scheduler was removed: the scheduler is Cal.com with BOOKING_SCHEDULER_PROVIDER=calcom (CALCOM_BASE_URL, default https://api.cal.com/v2; each workspace connects its own API key; docs/scheduler.md), else the local scheduler',
};

/** Throws when `env` still sets a removed variable (REMOVED_VARIABLES), naming each and what replaces it. */
export function refuseRemovedVariables(env: Record<string, string | undefined> = process.env): void {
  const set = Object.keys(REMOVED_VARIABLES).filter((k) => env[k]?.trim());
  if (set.length)
    throw new Error(
      `${set.map((k) => `${k} is no longer supported (${REMOVED_VARIABLES[k]})`).join('; ')}; unset ${set.length > 1 ? 'them' : 'it'}`,
    );
}

let cached: Config | undefined;

/** Forgets the configuration read so far: a script that sets its environment after something read it (the stack's migrations) reads it again. */
export function reloadConfig(): Config {
  cached = undefined;
  return loadConfig();
}

export function loadConfig(): Config {
  if (cached) return cached;
  refuseRemovedVariables();
  const port = int('PORT', 3000);
  const publicBaseUrl = process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`;
  // CONNECTOR_TIMEOUT_MS: Unipile's deadline per call (the sandbox network makes no calls).
  const unipile = unipileSettings(publicBaseUrl, int('CONNECTOR_TIMEOUT_MS', 15_000));
  cached = {
    port,
    host: process.env.HOST ?? '127.0.0.1',
    production: process.env.NODE_ENV === 'production',
    databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:54329/outreach',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6389',
    temporal: {
      address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: process.env.TEMPORAL_TASK_QUEUE ?? 'outreach',
    },
    jwt: {
      secret: new TextEncoder().encode(localSecret('JWT_SECRET')),
      issuer: process.env.JWT_ISSUER ?? 'outreach-api',
      audience: process.env.JWT_AUDIENCE ?? 'outreach-api',
      accessTtlSeconds: int('ACCESS_TOKEN_TTL_SECONDS', 900),
    },
    refreshTtlSeconds: int('REFRESH_TOKEN_TTL_SECONDS', 30 * 24 * 3600),
    rateLimit: {
      agentPerMinute: int('RATE_LIMIT_AGENT_PER_MINUTE', 20),
      publicPerMinute: int('RATE_LIMIT_PUBLIC_PER_MINUTE', 30),
      defaultPerMinute: int('RATE_LIMIT_DEFAULT_PER_MINUTE', 600),
      authFailuresPerMinute: int('RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', 30),
    },
    authCacheTtlSeconds: int('AUTH_CACHE_TTL_SECONDS', 30),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024 * 1024),
    outboundAllowHosts: list('OUTBOUND_ALLOW_HOSTS'),
    // AES-256-GCM key for secrets we must be able to read back (webhook signing secrets).
    encryptionKey: createHash('sha256').update(localSecret('ENCRYPTION_KEY')).digest(),
    logLevel: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
    logBuffered: process.env.NODE_ENV === 'production' && process.env.LOG_SYNC !== '1',
    publicBaseUrl,
    publicBaseUrlFromEnv: process.env.PUBLIC_BASE_URL || null,
    metricsToken: process.env.METRICS_TOKEN || null,
    db: { poolMax: num('DB_POOL_MAX', 10), debug: process.env.DB_DEBUG === '1' },
    oauthEnv: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('OAUTH_'))),
    email: {
      smtpUrl: process.env.SMTP_URL || undefined,
      from: process.env.EMAIL_FROM || 'Outreach <no-reply@localhost>',
    },
    worker: {
      maxActivities: num('WORKER_MAX_ACTIVITIES', 300),
      maxWorkflowTasks: num('WORKER_MAX_WORKFLOW_TASKS', 100),
      maxLocalActivities: num('WORKER_MAX_LOCAL_ACTIVITIES', 200),
      schedules: process.env.TEMPORAL_SCHEDULES !== 'off',
      webhookDispatcher: process.env.WEBHOOK_DISPATCHER !== 'off',
      webhookDispatchCoalesceMs: process.env.WEBHOOK_DISPATCH_COALESCE_MS
        ? Number(process.env.WEBHOOK_DISPATCH_COALESCE_MS)
        : undefined,
      metricsPort: int('WORKER_METRICS_PORT', 9464),
      metricsHost: process.env.WORKER_METRICS_HOST || '127.0.0.1',
      mailboxSessions: {
        enabled: process.env.MAILBOX_SESSIONS !== 'off',
        max: Math.max(0, num('MAILBOX_SESSIONS_MAX', 5000)),
        loginConcurrency: Math.max(1, num('MAILBOX_LOGIN_CONCURRENCY', 16)),
        loginsPerSecond: Math.max(1, num('MAILBOX_LOGINS_PER_SECOND', 40)),
        tickMs: Math.min(14_000, Math.max(500, num('MAILBOX_LEASE_TICK_MS', 10_000))),
        unassigned: process.env.MAILBOX_SESSIONS_UNASSIGNED !== 'off',
        refusalGraceMs: Math.max(0, num('MAILBOX_REFUSAL_GRACE_MS', 120_000)),
      },
    },
    inboxKickCoalesceMs: num('INBOX_KICK_COALESCE_MS', 50),
    listImport: {
      chunkRows: Math.max(1, num('LIST_IMPORT_CHUNK_ROWS', 5000)),
      concurrency: Math.max(1, num('LIST_IMPORT_CONCURRENCY', 3)),
    },
    webhookHistoryDays: num('WEBHOOK_HISTORY_DAYS', 30),
    executorTestPauseAfterSendMs: num('EXECUTOR_TEST_PAUSE_AFTER_SEND_MS', 0),
    mcpAllowedOrigins: mcpOrigins(process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`),
    sources: {
      corpus: { seed: int('CORPUS_SEED', 42), people: int('CORPUS_PEOPLE', 12_000) },
      timeoutMs: int('SOURCES_TIMEOUT_MS', 15_000),
      newsforum: newsforumSettings(),
      pronet: {
        profileHosts: list('PRONET_PROFILE_HOSTS').length ? list('PRONET_PROFILE_HOSTS') : ['pronet.example'],
        unipile: unipile.search,
      },
    },
    llm: {
      baseUrl: process.env.LLM_BASE_URL || null,
      apiKey: process.env.LLM_API_KEY || null,
      model: process.env.LLM_MODEL || 'gpt-4o-mini',
      timeoutMs: int('LLM_TIMEOUT_MS', 60_000),
      maxRetries: int('LLM_MAX_RETRIES', 1),
      priceInputPerMTokMicros: int('LLM_PRICE_INPUT_PER_MTOK_MICROS', 0),
      priceOutputPerMTokMicros: int('LLM_PRICE_OUTPUT_PER_MTOK_MICROS', 0),
    },
    enrichment: enrichmentSettings(),
    connector: {
      webhookSecret: process.env.CONNECTOR_WEBHOOK_SECRET || null,
      provider: unipile.provider,
      unipile: unipile.unipile,
    },
    dns: {
      servers: list('DNS_SERVERS'),
      timeoutMs: int('DNS_TIMEOUT_MS', 3_000),
      dkimSelectors: list('DKIM_SELECTORS').length
        ? list('DKIM_SELECTORS')
        : ['default', 'google', 'selector1', 'selector2', 'k1', 's1', 'sandbox'],
    },
    booking: {
      timeoutMs: int('BOOKING_TIMEOUT_MS', 15_000),
      scheduler: schedulerSettings(),
      calendar: calendarSettings(),
    },
    partner: partnerSettings(int('PARTNER_TIMEOUT_MS', 15_000)),
    mailOAuth: mailOAuthConfig(process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`),
  };
  return cached;
}
