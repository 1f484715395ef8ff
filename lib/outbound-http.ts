// The project's single outbound HTTP path to customer-chosen destinations (webhooks today,
// connectors later). Guarantees:
// - Destination policy: absolute HTTPS URL whose host is public. Literal private, loopback,
//   link-local, multicast, reserved, CGNAT, IPv4-mapped/compatible IPv6, NAT64 and 6to4 forms of
//   those, and local names (localhost, *.local, single-label names…) are refused. Hosts listed in
//   OUTBOUND_ALLOW_HOSTS (`host` = any port, `host:port` = that port) are exempt from both the
//   private-network block and the HTTPS requirement (local receivers in tests, internal partners).
// - The check is repeated at connect time on the resolved addresses, and the socket connects to
//   exactly the address that was validated (a custom `lookup` on an undici Agent), so a name that
//   resolves to a private address, or DNS rebinding between check and connect, cannot get through.
// - One hard deadline (default 10 s) covers DNS, connect, TLS, headers and body; at most a bounded
//   number of response body bytes are read. `postGuarded` (webhooks) never follows redirects (3xx is
//   a failure); `getGuarded` (reading a web page) follows up to `maxRedirects`, each hop checked
//   against the same policy, under the same single deadline.
import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';

export type ResolvedAddress = { address: string; family: 4 | 6 };
/** Resolves a host name to its addresses (injectable in tests). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export type OutboundErrorClass = 'timeout' | 'blocked_destination' | 'connection_error' | 'http_status' | 'invalid_url';

/** Why a URL is not an acceptable destination: `invalid_url` (shape/scheme) or `blocked_destination`. */
export class DestinationError extends Error {
  constructor(
    readonly code: 'invalid_url' | 'blocked_destination',
    message: string,
  ) {
    super(message);
    this.name = 'DestinationError';
  }
}

// ---------------------------------------------------------------------------------------------
// Address and host classification

function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const b = v6.toByteArray();
  const range = v6.range();
  if (range === 'ipv4Mapped') return v6.toIPv4Address();
  if (range === 'rfc6052' || range === 'rfc6145') return new ipaddr.IPv4(b.slice(12, 16)); // NAT64 / SIIT: last 32 bits
  if (range === '6to4') return new ipaddr.IPv4(b.slice(2, 6)); // 2002:VVVV:VVVV::/48
  return undefined;
}

/** True when an IP address literal must not be contacted (anything but global unicast). */
export function isBlockedAddress(ip: string): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return true;
  }
  if (addr.kind() === 'ipv4') return addr.range() !== 'unicast';
  const v6 = addr as ipaddr.IPv6;
  // ::/96: unspecified, loopback and the deprecated IPv4-compatible form (::a.b.c.d).
  if (
    v6
      .toByteArray()
      .slice(0, 12)
      .every((x) => x === 0)
  )
    return true;
  const v4 = embeddedIPv4(v6);
  if (v4) return v4.range() !== 'unicast';
  return v6.range() !== 'unicast';
}

const LOCAL_NAME = /(^|\.)(localhost|local|localdomain|internal|home\.arpa)$/;

/** Host-name check for names (not literals): local-only names and single-label names are refused. */
export function isBlockedHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (!h.includes('.')) return true;
  return LOCAL_NAME.test(h);
}

const isIpLiteral = (host: string) => ipaddr.isValid(host.replace(/^\[|\]$/g, ''));

/** `host` entries match any port; `host:port` entries match that port only. Entries are lower-case. */
export function isAllowedHost(url: URL, allowHosts: readonly string[]): boolean {
  const host = url.hostname.toLowerCase();
  const bare = host.replace(/^\[|\]$/g, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');
  return allowHosts.some((entry) => {
    const e = entry.trim().toLowerCase();
    let h = e;
    let p: string | undefined;
    const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
    if (bracket) [h, p] = [bracket[1], bracket[2]];
    else if ((e.match(/:/g) ?? []).length === 1) [h, p] = e.split(':');
    if (h !== bare && h !== host) return false;
    return p === undefined || p === port;
  });
}

export interface DestinationPolicy {
  allowHosts: readonly string[];
}

/**
 * Validates a destination URL (create/update time and again before every request). Throws
 * DestinationError. Returns the parsed URL and whether it is on the allow list.
 */
export function checkDestination(raw: string, policy: DestinationPolicy): { url: URL; allowListed: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationError('invalid_url', 'url must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new DestinationError('invalid_url', 'url must use https');
  if (url.username || url.password) throw new DestinationError('invalid_url', 'url must not contain credentials');
  const allowListed = isAllowedHost(url, policy.allowHosts);
  if (allowListed) return { url, allowListed };
  if (url.protocol !== 'https:') throw new DestinationError('invalid_url', 'url must use https');
  const host = url.hostname;
  if (isIpLiteral(host) ? isBlockedAddress(host) : isBlockedHostname(host)) {
    throw new DestinationError('blocked_destination', `destination host ${host} is a private-network or local address`);
  }
  return { url, allowListed };
}

// ---------------------------------------------------------------------------------------------
// The guarded request

export interface PostOptions extends DestinationPolicy {
  /** Hard deadline for the whole exchange (DNS, connect, TLS, headers, body). Default 10 s. */
  timeoutMs?: number;
  /** At most this many response body bytes are read and kept. Default 1 KiB. */
  maxExcerptBytes?: number;
  resolver?: Resolver;
}

export interface OutboundResult {
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  errorClass: OutboundErrorClass | null;
  error: string | null;
  responseExcerpt: string | null;
}

class BlockedAtConnect extends Error {
  readonly code = 'EBLOCKEDDESTINATION';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAtConnect';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that resolves with `resolver`, refuses blocked answers, and hands the socket exactly the validated address(es). */
export function guardedLookup(resolver: Resolver, allowListed: boolean) {
  return (hostname: string, options: { all?: boolean } | number | undefined, cb: LookupCallback) => {
    resolver(hostname).then(
      (answers) => {
        if (answers.length === 0)
          return cb(Object.assign(new Error(`no addresses for ${hostname}`), { code: 'ENOTFOUND' }), '');
        const blocked = allowListed ? undefined : answers.find((a) => isBlockedAddress(a.address));
        if (blocked)
          return cb(new BlockedAtConnect(`${hostname} resolves to a private-network address (${blocked.address})`), '');
        if (typeof options === 'object' && options?.all)
          return cb(
            null,
            answers.map((a) => ({ address: a.address, family: a.family })),
          );
        cb(null, answers[0].address, answers[0].family);
      },
      (err: NodeJS.ErrnoException) => cb(err, ''),
    );
  };
}

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err, i = 0; e && i < 6; e = (e as { cause?: unknown }).cause, i++) out.push(e);
  return out;
}

function classifyError(err: unknown, timedOut: boolean): { errorClass: OutboundErrorClass; error: string } {
  const chain = causes(err);
  const blocked = chain.find(
    (e) => e instanceof BlockedAtConnect || (e as { code?: string })?.code === 'EBLOCKEDDESTINATION',
  );
  if (blocked) return { errorClass: 'blocked_destination', error: (blocked as Error).message };
  if (timedOut) return { errorClass: 'timeout', error: 'no complete response within the time limit' };
  const codes = chain.map((e) => (e as { code?: string })?.code).filter(Boolean);
  if (codes.some((c) => /TIMEOUT/.test(String(c))))
    return { errorClass: 'timeout', error: 'no complete response within the time limit' };
  const first = chain.find((e) => e instanceof Error && e.message) as Error | undefined;
  const last = chain[chain.length - 1] as Error | undefined;
  return {
    errorClass: 'connection_error',
    error: `${codes[codes.length - 1] ?? 'error'}: ${last?.message || first?.message || 'connection failed'}`.slice(
      0,
      500,
    ),
  };
}

/** One connection whose socket goes only to addresses the guarded lookup validated. */
function guardedAgent(resolver: Resolver, allowListed: boolean, timeoutMs: number): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(resolver, allowListed) as never, timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connections: 1,
    pipelining: 0,
  });
}

/**
 * Kept-alive connections for POSTs, per resolver, policy and deadline: one connection per webhook
 * delivery cost a TCP handshake and teardown each, most of a delivery's CPU at hundreds per second.
 * A pooled socket stays pinned to the address its guarded lookup validated when it connected, so
 * reuse opens no path the lookup would refuse. Idle sockets close after 2 s (under the 5 s most
 * servers keep them; undici also follows a server's `Keep-Alive: timeout` hint), so a receiver
 * closing an idle socket as a request starts is rare; a POST is never retried on another socket.
 */
const postAgents = new WeakMap<Resolver, Map<string, Agent>>();
function pooledPostAgent(resolver: Resolver, allowListed: boolean, timeoutMs: number): Agent {
  let byPolicy = postAgents.get(resolver);
  if (!byPolicy) postAgents.set(resolver, (byPolicy = new Map()));
  const key = `${allowListed}:${timeoutMs}`;
  let agent = byPolicy.get(key);
  if (!agent) {
    agent = new Agent({
      connect: { lookup: guardedLookup(resolver, allowListed) as never, timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 2_000,
      keepAliveMaxTimeout: 4_000,
      pipelining: 1,
    });
    byPolicy.set(key, agent);
  }
  return agent;
}

/**
 * POSTs `body` (sent byte-for-byte) to `rawUrl` under the destination policy. Never throws for
 * destination or receiver failures: the outcome is in the result. 2xx is success; anything else
 * (including 3xx, which is not followed) is an `http_status` failure.
 */
export async function postGuarded(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
): Promise<OutboundResult> {
  const started = performance.now();
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxExcerptBytes ?? 1024;
  const elapsed = () => Math.round(performance.now() - started);
  let checked: { url: URL; allowListed: boolean };
  try {
    checked = checkDestination(rawUrl, opts);
  } catch (err) {
    const e = err as DestinationError;
    return {
      success: false,
      statusCode: null,
      durationMs: elapsed(),
      errorClass: e.code ?? 'invalid_url',
      error: e.message,
      responseExcerpt: null,
    };
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('outbound request deadline exceeded'));
  }, timeoutMs);
  const agent = pooledPostAgent(opts.resolver ?? systemResolver, checked.allowListed, timeoutMs);
  let statusCode: number | null = null;
  try {
    const res = await request(checked.url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'outreach-webhooks/1', ...headers },
      dispatcher: agent,
      signal: controller.signal,
    });
    statusCode = res.statusCode;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= maxBytes) break; // leaving the loop destroys the stream: the rest is never read
    }
    // PostgreSQL text holds no NUL: a receiver's answer with one is stored with U+FFFD in its place.
    const excerpt = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8').replaceAll('\0', '\uFFFD');
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return {
      success: ok,
      statusCode: res.statusCode,
      durationMs: elapsed(),
      errorClass: ok ? null : 'http_status',
      error: ok
        ? null
        : res.statusCode >= 300 && res.statusCode < 400
          ? `HTTP ${res.statusCode} (redirects are not followed)`
          : `HTTP ${res.statusCode}`,
      responseExcerpt: excerpt || null,
    };
  } catch (err) {
    return {
      success: false,
      statusCode,
      durationMs: elapsed(),
      ...classifyError(err, timedOut),
      responseExcerpt: null,
    };
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// The guarded GET (reading a customer's web page)

export interface GetOptions extends DestinationPolicy {
  /** One deadline for the whole exchange, redirects included. Default 10 s. */
  timeoutMs?: number;
  /** At most this many body bytes are read; the rest is never downloaded (`truncated`). Default 1 MiB. */
  maxBytes?: number;
  /** Redirects followed, each hop checked against the policy like the first URL. Default 0. */
  maxRedirects?: number;
  accept?: string;
  resolver?: Resolver;
}

export interface GetResult {
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  errorClass: OutboundErrorClass | null;
  error: string | null;
  /** The URL that answered (after redirects). */
  url: string;
  contentType: string | null;
  body: Buffer | null;
  truncated: boolean;
}

/**
 * GETs `rawUrl` under the destination policy (checked again for every redirect hop, and at connect
 * time on the resolved addresses). Never throws for destination or server failures: 2xx is success
 * with at most `maxBytes` of the body; anything else is a failure with its class.
 */
export async function getGuarded(rawUrl: string, opts: GetOptions): Promise<GetResult> {
  const started = performance.now();
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  const maxRedirects = opts.maxRedirects ?? 0;
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (url: string, statusCode: number | null, errorClass: OutboundErrorClass, error: string): GetResult => ({
    success: false,
    statusCode,
    durationMs: elapsed(),
    errorClass,
    error,
    url,
    contentType: null,
    body: null,
    truncated: false,
  });
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('outbound request deadline exceeded'));
  }, timeoutMs);
  const agents: Agent[] = [];
  let current = rawUrl;
  try {
    for (let hop = 0; ; hop++) {
      let checked: { url: URL; allowListed: boolean };
      try {
        checked = checkDestination(current, opts);
      } catch (err) {
        const e = err as DestinationError;
        return fail(current, null, e.code ?? 'invalid_url', e.message);
      }
      const agent = guardedAgent(opts.resolver ?? systemResolver, checked.allowListed, timeoutMs);
      agents.push(agent);
      let statusCode: number | null = null;
      try {
        const res = await request(checked.url, {
          method: 'GET',
          headers: { accept: opts.accept ?? '*/*', 'user-agent': 'outreach-fetch/1' },
          dispatcher: agent,
          signal: controller.signal,
        });
        statusCode = res.statusCode;
        if (statusCode >= 300 && statusCode < 400) {
          await res.body.dump();
          const location = res.headers.location;
          const next = typeof location === 'string' ? location : undefined;
          if (!next) return fail(current, statusCode, 'http_status', `HTTP ${statusCode} without a Location`);
          if (hop >= maxRedirects)
            return fail(current, statusCode, 'http_status', `HTTP ${statusCode} (more than ${maxRedirects} redirects)`);
          current = new URL(next, checked.url).toString();
          continue;
        }
        if (statusCode < 200 || statusCode >= 300) {
          await res.body.dump();
          return fail(current, statusCode, 'http_status', `HTTP ${statusCode}`);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        for await (const chunk of res.body) {
          chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
          if (size > maxBytes) {
            truncated = true;
            break; // leaving the loop destroys the stream: the rest is never read
          }
        }
        const type = res.headers['content-type'];
        return {
          success: true,
          statusCode,
          durationMs: elapsed(),
          errorClass: null,
          error: null,
          url: current,
          contentType: typeof type === 'string' ? type : null,
          body: Buffer.concat(chunks).subarray(0, maxBytes),
          truncated,
        };
      } catch (err) {
        const c = classifyError(err, timedOut);
        return fail(current, statusCode, c.errorClass, c.error);
      }
    }
  } finally {
    clearTimeout(timer);
    for (const a of agents) a.destroy().catch(() => {});
  }
}
