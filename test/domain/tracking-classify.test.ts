// The classification of tracking hits (domain/tracking/classify.ts, docs/tracking.md
// "Classification"): each rule provokes its class and reason, and each window has a human side.
import test from 'ava';
import {
  BURST_WINDOW_MS,
  CLICK_SCANNER_WINDOW_MS,
  OPEN_PROXY_WINDOW_MS,
  burstPartners,
  classifyHit,
  proxyOf,
  scannerAgent,
  type EarlierEvent,
  type HitFacts,
} from '../../domain/tracking/classify.js';

const DELIVERED = new Date('2026-11-27T09:00:00.000Z');
const after = (ms: number) => new Date(DELIVERED.getTime() + ms);
const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const GMAIL_PROXY = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const PERSON_IP = '198.51.100.7';
const APPLE_IP = '17.58.101.4';

const open = (ms: number, over: Partial<HitFacts> = {}): HitFacts => ({
  kind: 'open',
  at: after(ms),
  deliveredAt: DELIVERED,
  ip: PERSON_IP,
  userAgent: BROWSER,
  earlier: [],
  ...over,
});
const click = (ms: number, linkIndex: number, over: Partial<HitFacts> = {}): HitFacts => ({
  ...open(ms),
  kind: 'click',
  linkIndex,
  ...over,
});
let n = 0;
const event = (
  kind: 'open' | 'click',
  ms: number,
  linkIndex: number | null = null,
  cls: 'human' | 'machine' = 'human',
): EarlierEvent => ({
  id: `e${++n}`,
  kind,
  linkIndex,
  class: cls,
  at: after(ms),
});

test('rule 2: an open from Apple’s MPP network within the window is a prefetch; the same after the window is a person', (t) => {
  t.deepEqual(classifyHit(open(5_000, { ip: APPLE_IP })), {
    class: 'machine',
    reason: 'proxy_prefetch',
    source: 'apple_mpp',
  });
  t.deepEqual(
    classifyHit(open(OPEN_PROXY_WINDOW_MS, { ip: APPLE_IP })),
    { class: 'machine', reason: 'proxy_prefetch', source: 'apple_mpp' },
    'the window’s edge is inside',
  );
  t.deepEqual(classifyHit(open(OPEN_PROXY_WINDOW_MS + 1, { ip: APPLE_IP })), {
    class: 'human',
    reason: null,
    source: 'apple_mpp',
  });
  t.deepEqual(
    classifyHit(open(5_000, { ip: '::ffff:17.58.101.4' })),
    { class: 'machine', reason: 'proxy_prefetch', source: 'apple_mpp' },
    'IPv4-mapped IPv6',
  );
  t.deepEqual(
    classifyHit(open(5_000, { ip: '2620:149:a:b::1' })),
    { class: 'machine', reason: 'proxy_prefetch', source: 'apple_mpp' },
    'Apple’s IPv6',
  );
  t.deepEqual(
    classifyHit(open(5_000)),
    { class: 'human', reason: null, source: null },
    'an early open from elsewhere is a person',
  );
});

test('rule 2: the Gmail and Yahoo image proxies by user agent, early → machine, later → human', (t) => {
  t.deepEqual(classifyHit(open(3_000, { userAgent: GMAIL_PROXY, ip: '66.249.84.1' })), {
    class: 'machine',
    reason: 'proxy_prefetch',
    source: 'google_proxy',
  });
  t.deepEqual(
    classifyHit(open(3_600_000, { userAgent: GMAIL_PROXY })),
    { class: 'human', reason: null, source: 'google_proxy' },
    'the Gmail proxy fetching on open',
  );
  t.is(proxyOf(PERSON_IP, 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html'), 'yahoo_proxy');
});

test('rule 1: scanner and library user agents are machines, opens and clicks alike, at any time; no user agent counts', (t) => {
  for (const [ua, source] of [
    ['python-requests/2.31.0', 'http_library'],
    ['curl/8.5.0', 'http_library'],
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'crawler'],
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36',
      'headless_browser',
    ],
    ['Barracuda Sentinel (EE)', 'security_gateway'],
    ['', 'no_user_agent'],
  ] as const) {
    t.deepEqual(
      classifyHit(click(86_400_000, 0, { userAgent: ua, earlier: [event('open', 1_000)] })),
      { class: 'machine', reason: 'scanner_agent', source },
      ua,
    );
    t.is(classifyHit(open(86_400_000, { userAgent: ua })).reason, 'scanner_agent', ua);
  }
  t.is(scannerAgent(undefined), 'no_user_agent');
  t.is(scannerAgent(BROWSER), null);
  t.is(
    scannerAgent('Mozilla/5.0 (Linux; Android 10; CUBOT X19) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36'),
    null,
    'a phone named *bot is no bot',
  );
});

test('rule 4: a click before any open within the window is a scanner; after the window, or after an open, a person', (t) => {
  t.deepEqual(classifyHit(click(20_000, 0)), { class: 'machine', reason: 'click_before_open', source: null });
  t.deepEqual(
    classifyHit(click(CLICK_SCANNER_WINDOW_MS + 1, 0)),
    { class: 'human', reason: null, source: null },
    'images off, clicked later',
  );
  t.deepEqual(
    classifyHit(click(20_000, 0, { earlier: [event('open', 10_000)] })),
    { class: 'human', reason: null, source: null },
    'opened first',
  );
  t.deepEqual(
    classifyHit(click(20_000, 0, { earlier: [event('open', 2_000, null, 'machine')] })),
    { class: 'human', reason: null, source: null },
    'an open of any class counts',
  );
});

test('rule 3: clicks on two links within the burst window are all machine (the earlier one too); one link clicked twice is no burst', (t) => {
  const first = event('click', CLICK_SCANNER_WINDOW_MS + 60_000, 0);
  const burst = click(CLICK_SCANNER_WINDOW_MS + 60_000 + BURST_WINDOW_MS, 1, {
    earlier: [event('open', 1_000), first],
  });
  t.deepEqual(classifyHit(burst), { class: 'machine', reason: 'link_burst', source: null });
  t.deepEqual(burstPartners(burst), [first], 'the earlier click is reclassified');

  const twice = click(CLICK_SCANNER_WINDOW_MS + 61_000, 0, { earlier: [event('open', 1_000), first] });
  t.deepEqual(classifyHit(twice), { class: 'human', reason: null, source: null });
  t.deepEqual(burstPartners(twice), []);

  const apart = click(CLICK_SCANNER_WINDOW_MS + 60_000 + BURST_WINDOW_MS + 1, 1, {
    earlier: [event('open', 1_000), first],
  });
  t.is(classifyHit(apart).class, 'human', 'another link just outside the window');
  t.deepEqual(burstPartners(open(1_000, { earlier: [first] })), [], 'opens make no burst');
});

test('addresses of any form never throw: IPv6, zones, garbage', (t) => {
  for (const ip of ['2001:db8::1', 'fe80::1%eth0', '::1', '', 'not-an-ip', '999.1.1.1', '17.0.0.0/8']) {
    t.notThrows(() => classifyHit(open(1_000, { ip })), ip);
    t.notThrows(() => classifyHit(click(1_000, 0, { ip })), ip);
  }
  t.is(proxyOf('2001:db8::1', BROWSER), null);
  t.is(proxyOf('not-an-ip', GMAIL_PROXY), 'google_proxy', 'the agent is still read');
});
