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

function list(name: string): string[] {
  return (process.env[name] ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
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
  const extra = (configured ?? '').split(',').map((s) => s.trim()).filter(Boolean);
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

export interface Config {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  temporal: { address: string; namespace: string; taskQueue: string };
  jwt: { secret: Uint8Array; issuer: string; audience: string; accessTtlSeconds: number };
  refreshTtlSeconds: number;
  rateLimit: { agentPerMinute: number; publicPerMinute: number; defaultPerMinute: number; authFailuresPerMinute: number };
  /** Lifetime of a cached bearer credential (revocations are also pushed through Redis at once). */
  authCacheTtlSeconds: number;
  bodyLimitBytes: number;
  outboundAllowHosts: string[];
  encryptionKey: Buffer;
  logLevel: string;
  publicBaseUrl: string;
  /** Origins a browser may call `/mcp` from (the Streamable HTTP transport's DNS-rebinding check): PUBLIC_BASE_URL's and MCP_ALLOWED_ORIGINS. */
  mcpAllowedOrigins: string[];
  /** Discovery sources (lib/sources): HTTP when a base URL is set, else the local corpus. */
  sources: SourcesConfig;
  llm: LlmConfig;
  /** Enrichment provider (lib/enrichment): HTTP when a base URL is set, else derived from the local corpus. */
  enrichment: ProviderConfig;
  /** Messaging-network connector (lib/connectors): HTTP when a base URL is set, else the local sandbox network. */
  connector: ProviderConfig & { webhookSecret: string | null };
  /** DNS for sending-domain checks (lib/dns.ts): the local rule-based resolver unless DNS_SERVERS is set. */
  dns: { servers: string[]; timeoutMs: number; dkimSelectors: string[] };
  /** Booking providers (lib/booking): each over HTTP when its base URL is set, else the local one. */
  booking: BookingConfig;
  /** The partner CRM (lib/partner): over HTTP when its base URL is set, else the local one. */
  partner: PartnerConfig;
}

export interface PartnerConfig {
  baseUrl: string | null;
  authorizeUrl: string | null;
  tokenUrl: string | null;
  clientId: string | null;
  clientSecret: string | null;
  scope: string | null;
  timeoutMs: number;
}

export interface BookingConfig {
  timeoutMs: number;
  scheduler: { baseUrl: string | null };
  calendar: { baseUrl: string | null; authorizeUrl: string | null; clientId: string | null; clientSecret: string | null; scope: string | null };
}

export interface ProviderConfig {
  baseUrl: string | null;
  apiKey: string | null;
  timeoutMs: number;
}

export interface SourcesConfig {
  corpus: { seed: number; people: number };
  timeoutMs: number;
  newsforum: { baseUrl: string | null; apiKey: string | null };
  pronet: { baseUrl: string | null; apiKey: string | null; profileHosts: string[] };
}

let cached: Config | undefined;

export function loadConfig(): Config {
  if (cached) return cached;
  const port = int('PORT', 3000);
  cached = {
    port,
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
    publicBaseUrl: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`,
    mcpAllowedOrigins: mcpOrigins(process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`),
    sources: {
      corpus: { seed: int('CORPUS_SEED', 42), people: int('CORPUS_PEOPLE', 12_000) },
      timeoutMs: int('SOURCES_TIMEOUT_MS', 15_000),
      newsforum: { baseUrl: process.env.NEWSFORUM_BASE_URL || null, apiKey: process.env.NEWSFORUM_API_KEY || null },
      pronet: {
        baseUrl: process.env.PRONET_BASE_URL || null,
        apiKey: process.env.PRONET_API_KEY || null,
        profileHosts: list('PRONET_PROFILE_HOSTS').length ? list('PRONET_PROFILE_HOSTS') : ['pronet.example'],
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
    enrichment: {
      baseUrl: process.env.ENRICHMENT_BASE_URL || null,
      apiKey: process.env.ENRICHMENT_API_KEY || null,
      timeoutMs: int('ENRICHMENT_TIMEOUT_MS', 15_000),
    },
    connector: {
      baseUrl: process.env.CONNECTOR_BASE_URL || null,
      apiKey: process.env.CONNECTOR_API_KEY || null,
      timeoutMs: int('CONNECTOR_TIMEOUT_MS', 15_000),
      webhookSecret: process.env.CONNECTOR_WEBHOOK_SECRET || null,
    },
    dns: {
      servers: list('DNS_SERVERS'),
      timeoutMs: int('DNS_TIMEOUT_MS', 3_000),
      dkimSelectors: list('DKIM_SELECTORS').length ? list('DKIM_SELECTORS') : ['default', 'google', 'selector1', 'selector2', 'k1', 's1', 'sandbox'],
    },
    booking: {
      timeoutMs: int('BOOKING_TIMEOUT_MS', 15_000),
      scheduler: { baseUrl: process.env.BOOKING_SCHEDULER_BASE_URL || null },
      calendar: {
        baseUrl: process.env.BOOKING_CALENDAR_BASE_URL || null,
        authorizeUrl: process.env.BOOKING_CALENDAR_AUTHORIZE_URL || null,
        clientId: process.env.BOOKING_CALENDAR_CLIENT_ID || null,
        clientSecret: process.env.BOOKING_CALENDAR_CLIENT_SECRET || null,
        scope: process.env.BOOKING_CALENDAR_SCOPE || null,
      },
    },
    partner: {
      baseUrl: process.env.PARTNER_BASE_URL || null,
      authorizeUrl: process.env.PARTNER_AUTHORIZE_URL || null,
      tokenUrl: process.env.PARTNER_TOKEN_URL || null,
      clientId: process.env.PARTNER_CLIENT_ID || null,
      clientSecret: process.env.PARTNER_CLIENT_SECRET || null,
      scope: process.env.PARTNER_SCOPE || null,
      timeoutMs: int('PARTNER_TIMEOUT_MS', 15_000),
    },
  };
  return cached;
}
