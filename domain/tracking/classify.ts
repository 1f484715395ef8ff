// Who made a tracking hit: a person (`human`) or a machine (`machine`), by declared rules
// (docs/tracking.md "Classification"). Pure: the hit's facts and the action's earlier events in, a
// class with why (`reason`) and which network or agent (`source`) out. Only human events count as an
// open or a click of the person (`scheduled_actions.opened_at` / `clicked_at`, the `opened` and
// `clicked` condition steps); machine ones are kept and shown beside them.
//
// Rules, first match wins:
//   1. any hit from a known scanner or HTTP-library user agent → machine `scanner_agent`
//   2. an open through an image proxy within OPEN_PROXY_WINDOW_MS of delivery → machine `proxy_prefetch`
//   3. a click within BURST_WINDOW_MS of a click on another link → machine `link_burst` (the others too)
//   4. a click before any open, within CLICK_SCANNER_WINDOW_MS of delivery → machine `click_before_open`
//   otherwise human.
import ipaddr from 'ipaddr.js';

export type TrackingKind = 'open' | 'click';
export type TrackingClass = 'human' | 'machine';
export type TrackingReason = 'scanner_agent' | 'proxy_prefetch' | 'link_burst' | 'click_before_open';

export interface Classification {
  class: TrackingClass;
  /** Why a machine (null for a human). */
  reason: TrackingReason | null;
  /** The proxy network or agent family it came through, when known (a human open through a proxy keeps it). */
  source: string | null;
}

/** An event already recorded for the same action. */
export interface EarlierEvent {
  id: string;
  kind: TrackingKind;
  linkIndex: number | null;
  class: TrackingClass;
  at: Date;
}

export interface HitFacts {
  kind: TrackingKind;
  at: Date;
  /** When the email was handed to the recipient's server (the action's `executed_at`, or `claimed_at` while its send is being recorded). */
  deliveredAt: Date;
  /** The client address, IPv4 or IPv6 (an IPv4-mapped IPv6 reads as IPv4; anything unparsable matches no network). */
  ip: string;
  userAgent: string | null | undefined;
  /** The link's place in the body (clicks). */
  linkIndex?: number | null;
  earlier: EarlierEvent[];
}

/**
 * Rule 2's window: 2 minutes after delivery. A proxy prefetch follows the delivery at once — the
 * receiving server's filtering (seconds, rarely a minute), then the proxy fetching every image as the
 * message lands (Apple Mail Privacy Protection on a pushed mailbox). A person rarely opens a cold
 * email that fast, while later proxy loads are mostly a person opening it (the Gmail proxy fetches on
 * open; MPP fetches again once its copy is stale), so a longer window would turn real early readers
 * into machines and fail their `opened` condition. Missed, knowingly: an MPP prefetch by a device that
 * syncs later (offline, a 15-minute fetch schedule) counts as human.
 */
export const OPEN_PROXY_WINDOW_MS = 2 * 60_000;

/**
 * Rule 4's window: 10 minutes after delivery. Link scanners of mail gateways (Microsoft Safe Links,
 * Proofpoint, Mimecast…) follow every link as the message arrives, seconds to a few minutes after
 * delivery, and load no images. A person who clicks without an open was recorded has images off (or
 * opens are not tracked); limiting the rule to the first minutes keeps that person's later click human.
 */
export const CLICK_SCANNER_WINDOW_MS = 10 * 60_000;

/**
 * Rule 3's window: 5 seconds. A scanner follows the links of a message one after the other within
 * a second or two; a person clicking one link reads a page before coming back for another. Every
 * click inside the window (the earlier ones too) becomes machine once it spans BURST_MIN_LINKS
 * distinct links; one link clicked twice (a double click, a reload) is no burst.
 */
export const BURST_WINDOW_MS = 5_000;
/** Distinct links a burst must touch. */
export const BURST_MIN_LINKS = 2;

/**
 * Rule 2's proxy networks, by address. `apple_mpp`: Apple Mail Privacy Protection fetches through
 * Apple's relay (the iCloud Private Relay infrastructure): Apple's own networks (AS714: 17.0.0.0/8,
 * 2620:149::/32, 2a01:b740::/32) and the covering blocks of the relay's egress operators, Cloudflare
 * (104.28.0.0/16, 2a09:bac0::/29) and Akamai (172.224.0.0/13, 2a02:26f7::/32). Apple publishes the
 * exact egress list (mask-api.icloud.com/egress-ip-ranges.csv, thousands of prefixes, changing);
 * the blocks here over-approximate it on purpose, and only matter for opens in the first minutes.
 */
export const PROXY_NETWORKS: Readonly<Record<string, readonly string[]>> = {
  apple_mpp: [
    '17.0.0.0/8',
    '2620:149::/32',
    '2a01:b740::/32',
    '104.28.0.0/16',
    '2a09:bac0::/29',
    '172.224.0.0/13',
    '2a02:26f7::/32',
  ],
};

/**
 * Rule 2's proxies, by user agent: Gmail's image proxy (`… (via ggpht.com GoogleImageProxy)`) and
 * Yahoo Mail's (`YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html`).
 */
export const PROXY_AGENTS: readonly { source: string; pattern: RegExp }[] = [
  { source: 'google_proxy', pattern: /GoogleImageProxy|ggpht\.com/i },
  { source: 'yahoo_proxy', pattern: /YahooMailProxy/i },
];

/**
 * Rule 1's agents: what no person's mail client or browser sends. Kept short on purpose: most
 * security gateways pose as a browser (rules 3 and 4 catch them by timing); the names below are those
 * that say what they are. An absent or empty user agent counts: every mail client and browser sends one.
 */
export const SCANNER_AGENTS: readonly { source: string; pattern: RegExp }[] = [
  { source: 'crawler', pattern: /\bbot\b|bot[/-]|crawler|spider|facebookexternalhit/i },
  {
    source: 'http_library',
    pattern:
      /python-requests|python-urllib|aiohttp|\bcurl\/|\bwget\/|go-http-client|okhttp|libwww-perl|apache-httpclient|\bjava\/|node-fetch|axios\//i,
  },
  { source: 'headless_browser', pattern: /HeadlessChrome|PhantomJS/i },
  { source: 'security_gateway', pattern: /barracuda|mimecast|proofpoint/i },
];

const NETWORKS: { source: string; range: [ipaddr.IPv4 | ipaddr.IPv6, number] }[] = Object.entries(
  PROXY_NETWORKS,
).flatMap(([source, cidrs]) => cidrs.map((cidr) => ({ source, range: ipaddr.parseCIDR(cidr) })));

/** The address as ipaddr reads it (IPv4-mapped IPv6 as IPv4), or null when it is not one. */
function parseIp(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    return ipaddr.isValid(ip) ? ipaddr.process(ip) : null;
  } catch {
    return null;
  }
}

/** Rule 1: the scanner family a user agent names, or null. */
export function scannerAgent(userAgent: string | null | undefined): string | null {
  const ua = userAgent?.trim();
  if (!ua) return 'no_user_agent';
  return SCANNER_AGENTS.find((a) => a.pattern.test(ua))?.source ?? null;
}

/** Rule 2: the image proxy a hit came through (by address, then by user agent), or null. */
export function proxyOf(ip: string, userAgent: string | null | undefined): string | null {
  const addr = parseIp(ip);
  if (addr) {
    const hit = NETWORKS.find((n) => n.range[0].kind() === addr.kind() && addr.match(n.range));
    if (hit) return hit.source;
  }
  return (userAgent && PROXY_AGENTS.find((a) => a.pattern.test(userAgent))?.source) || null;
}

/**
 * Rule 3: the earlier clicks that form a burst with this one — every click within BURST_WINDOW_MS of
 * it, when they and it touch at least BURST_MIN_LINKS distinct links — else none.
 */
export function burstPartners(f: Pick<HitFacts, 'kind' | 'at' | 'linkIndex' | 'earlier'>): EarlierEvent[] {
  if (f.kind !== 'click') return [];
  const near = f.earlier.filter(
    (e) => e.kind === 'click' && Math.abs(f.at.getTime() - e.at.getTime()) <= BURST_WINDOW_MS,
  );
  const links = new Set([f.linkIndex ?? null, ...near.map((e) => e.linkIndex)]);
  return links.size >= BURST_MIN_LINKS ? near : [];
}

const human = (source: string | null = null): Classification => ({ class: 'human', reason: null, source });
const machine = (reason: TrackingReason, source: string | null = null): Classification => ({
  class: 'machine',
  reason,
  source,
});

/** The class of one hit by the rules above (the earlier clicks a burst reclassifies: `burstPartners`). */
export function classifyHit(f: HitFacts): Classification {
  const sinceDelivery = f.at.getTime() - f.deliveredAt.getTime();
  const scanner = scannerAgent(f.userAgent);
  if (scanner) return machine('scanner_agent', scanner);
  if (f.kind === 'open') {
    const proxy = proxyOf(f.ip, f.userAgent);
    if (proxy && sinceDelivery <= OPEN_PROXY_WINDOW_MS) return machine('proxy_prefetch', proxy);
    return human(proxy);
  }
  if (burstPartners(f).length) return machine('link_burst');
  const openedBefore = f.earlier.some((e) => e.kind === 'open' && e.at.getTime() <= f.at.getTime());
  if (!openedBefore && sinceDelivery <= CLICK_SCANNER_WINDOW_MS) return machine('click_before_open');
  return human();
}
