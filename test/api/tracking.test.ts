// Open and click tracking over real HTTP and PostgreSQL (docs/tracking.md): the pixel answers the
// same GIF for every token and records only for a valid one; a human open or click sets `opened_at`, a
// proxy prefetch never; a link redirects to the stored body's URL (404 for an unknown link or a bad
// token), recorded or not; a link burst makes every click of it machine and clears `clicked_at`; a
// campaign without tracking records nothing; the routes are in the document, beyond the spec.
import test from 'ava';
import { PIXEL_GIF } from '../../api/tracking/routes.js';
import { linksOf } from '../../lib/connectors/mailbox/compose.js';
import { uuidv7 } from '../../lib/ids.js';
import { MAX_EVENTS_PER_KIND, recordTrackingHit } from '../../domain/tracking/record.js';
import { BURST_WINDOW_MS, OPEN_PROXY_WINDOW_MS } from '../../domain/tracking/classify.js';
import { mulberry32 } from '../../lib/sources/local-corpus.js';
import { readTrackingToken, trackingToken, trackingUrls } from '../../domain/tracking/token.js';
import { api, call, closeApi, listen } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, seedCampaign } from '../helpers/campaigns.js';
test.after.always(closeApi);

const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const BODY =
  'Hi Ada,\n\nThe plan: https://example.com/plan?id=7. Pricing: https://example.com/pricing\n\nBye: https://api.example/unsubscribe/x.y';
const key = async () => (await api()).services.config.encryptionKey;

interface Sent {
  actionId: string;
  campaignId: string;
  token: string;
}

/**
 * A sent email of a campaign (written directly: its sending is the executor's), delivered
 * `deliveredAgoMs` ago — an hour by default, past every machine window, so a browser's hit is human.
 */
async function sentEmail(
  opts: { trackOpens?: boolean; trackClicks?: boolean; deliveredAgoMs?: number; state?: string } = {},
): Promise<Sent> {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [],
    steps: [{ type: 'email', config: { subject: 'Hi', body: BODY } }],
  });
  const e = await em();
  await e.execute(`update campaigns set track_opens = ?, track_clicks = ? where id = ?`, [
    opts.trackOpens ?? true,
    opts.trackClicks ?? true,
    campaign.id,
  ]);
  const [lead] = await o.leads(1);
  const enrollmentId = uuidv7();
  await e.execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, enrolled_at, created_at, updated_at) values (?, ?, ?, ?, ?, 'active', 1, now(), now(), now())`,
    [enrollmentId, o.workspaceId, campaign.id, lead.leadId, lead.contactId],
  );
  const actionId = uuidv7();
  const state = opts.state ?? 'executed';
  await e.execute(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, executed_at, claimed_at, content, attempts, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 0, 1, 'email', ?, now(), case when ? then now() - make_interval(secs => ?) end, case when ? then now() - make_interval(secs => ?) end, ?::jsonb, 1, now(), now())`,
    [
      actionId,
      o.workspaceId,
      campaign.id,
      enrollmentId,
      lead.leadId,
      campaign.stepIds[0],
      state,
      state === 'executed',
      (opts.deliveredAgoMs ?? 3_600_000) / 1000,
      ['executing', 'executed'].includes(state),
      (opts.deliveredAgoMs ?? 3_600_000) / 1000,
      JSON.stringify({ subject: 'Hi', body: BODY, recipient: lead.email }),
    ],
  );
  return { actionId, campaignId: campaign.id, token: trackingToken(await key(), actionId) };
}

const action = async (id: string) =>
  (
    await (
      await em()
    ).execute<{ opened_at: Date | null; clicked_at: Date | null }[]>(
      `select opened_at, clicked_at from scheduled_actions where id = ?`,
      [id],
    )
  )[0];
const events = async (id: string) =>
  (await em()).execute<
    { kind: string; link_index: number | null; class: string; reason: string | null; source: string | null }[]
  >(
    `select kind, link_index, class, reason, source from tracking_events where action_id = ? order by occurred_at, id`,
    [id],
  );

/** A GET as a mail client or browser sends it, redirects not followed. */
async function get(path: string, opts: { base?: string; headers?: Record<string, string>; method?: string } = {}) {
  const res = await fetch((opts.base ?? (await api()).base) + path, {
    method: opts.method ?? 'GET',
    redirect: 'manual',
    headers: { 'user-agent': BROWSER, ...opts.headers },
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}
const tampered = (token: string) => `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;

test('the token names one action, reads back only untouched and in one spelling; the URLs are under the public base URL', async (t) => {
  const k = await key();
  const id = '0190f843-0000-7000-8000-0000000000aa';
  const token = trackingToken(k, id);
  t.regex(token, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
  t.is(readTrackingToken(k, token), id);
  t.is(readTrackingToken(Buffer.alloc(32, 7), token), null, 'another key');
  t.is(readTrackingToken(k, tampered(token)), null, 'a MAC changed');
  t.is(
    readTrackingToken(k, `${token.slice(0, 21)}${token[21] === 'Q' ? 'R' : 'Q'}${token.slice(22)}`),
    null,
    'another spelling of the id bytes, or other bytes',
  );
  t.is(readTrackingToken(k, 'x.y'), null);
  const urls = trackingUrls({ encryptionKey: k, publicBaseUrl: 'https://mail.example/' }, id);
  t.is(urls.open, `https://mail.example/t/${token}/open.gif`);
  t.is(urls.click(3), `https://mail.example/t/${token}/l/3`);
});

test('the pixel: 200 with the same 43-byte GIF, no-store, for a valid, a tampered and a malformed token; a valid one records a human open that sets opened_at once', async (t) => {
  const s = await sentEmail();
  for (const token of [s.token, tampered(s.token), 'not-a-token']) {
    const r = await get(`/t/${token}/open.gif`);
    t.is(r.status, 200, token);
    t.is(r.headers.get('content-type'), 'image/gif');
    t.is(r.headers.get('cache-control'), 'no-store, private');
    t.is(r.headers.get('cross-origin-resource-policy'), 'cross-origin', 'a webmail page may show it');
    t.is(r.bytes.length, 43);
    t.true(r.bytes.equals(PIXEL_GIF));
  }
  t.deepEqual(
    await events(s.actionId),
    [{ kind: 'open', link_index: null, class: 'human', reason: null, source: null }],
    'only the valid token recorded',
  );
  const first = (await action(s.actionId)).opened_at;
  t.truthy(first);

  const again = await get(`/t/${s.token}/open.gif`);
  t.is(again.status, 200);
  t.is((await events(s.actionId)).length, 2, 'a second open is an event');
  t.deepEqual((await action(s.actionId)).opened_at, first, 'opened_at is set once');

  const head = await get(`/t/${s.token}/open.gif`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is((await events(s.actionId)).length, 2, 'HEAD records nothing');
});

test('a link: 302 to the stored body’s URL and a click recorded (clicked_at); an unknown index or a bad token is 404 not_found', async (t) => {
  const s = await sentEmail();
  const links = linksOf(BODY);
  const r = await get(`/t/${s.token}/l/1`);
  t.is(r.status, 302);
  t.is(r.headers.get('location'), links[1]);
  t.is(r.headers.get('cache-control'), 'no-store');
  t.deepEqual(await events(s.actionId), [{ kind: 'click', link_index: 1, class: 'human', reason: null, source: null }]);
  const clicked = await action(s.actionId);
  t.truthy(clicked.clicked_at);
  t.deepEqual(clicked.opened_at, clicked.clicked_at, 'a person’s click is an open too (images off: no pixel)');

  for (const path of [`/t/${s.token}/l/${links.length}`, `/t/${tampered(s.token)}/l/0`, `/t/not-a-token/l/0`]) {
    const bad = await call('GET', path);
    t.is(bad.status, 404, path);
    t.is(bad.body.error.code, 'not_found', path);
  }
  const malformed = await call('GET', `/t/${s.token}/l/01`);
  t.is(malformed.status, 400);
  t.is(malformed.body.error.code, 'invalid_id');

  const head = await get(`/t/${s.token}/l/0`, { method: 'HEAD' });
  t.is(head.status, 302);
  t.is(head.headers.get('location'), links[0]);
  t.is((await events(s.actionId)).length, 1, 'HEAD (a link checker) records nothing');
});

test('tracking off on the campaign: nothing recorded, the pixel still served and the link still redirects; an unsent action records nothing either', async (t) => {
  const s = await sentEmail({ trackOpens: false, trackClicks: false });
  t.is((await get(`/t/${s.token}/open.gif`)).status, 200);
  const r = await get(`/t/${s.token}/l/0`);
  t.is(r.status, 302);
  t.is(r.headers.get('location'), linksOf(BODY)[0]);
  t.deepEqual(await events(s.actionId), []);
  t.like(await action(s.actionId), { opened_at: null, clicked_at: null });

  const planned = await sentEmail({ state: 'planned' });
  t.is((await get(`/t/${planned.token}/open.gif`)).status, 200);
  t.is((await get(`/t/${planned.token}/l/0`)).status, 302);
  t.deepEqual(await events(planned.actionId), []);
});

test('an email whose send is still being recorded (executing: it reached the mailbox first) records its opens, timed from its claim', async (t) => {
  const s = await sentEmail({ state: 'executing', deliveredAgoMs: 1000 });
  t.is(
    (await get(`/t/${s.token}/open.gif`, { headers: { 'user-agent': 'Mozilla/5.0 (via ggpht.com GoogleImageProxy)' } }))
      .status,
    200,
  );
  t.like(
    (await events(s.actionId))[0],
    { kind: 'open', class: 'machine', reason: 'proxy_prefetch' },
    'a prefetch at delivery, even before the send is recorded',
  );
  await get(`/t/${s.token}/open.gif`);
  t.like((await events(s.actionId))[1], { kind: 'open', class: 'human' });
  t.truthy((await action(s.actionId)).opened_at);
});

test('an open from Apple’s MPP network right after delivery is a machine prefetch and leaves opened_at null; from elsewhere it is a person', async (t) => {
  const { services } = await api();
  process.env.TRUST_PROXY = '1'; // read when the Koa app is created
  const { base } = await listen(services);
  delete process.env.TRUST_PROXY;
  const s = await sentEmail({ deliveredAgoMs: 5_000 });
  t.is((await get(`/t/${s.token}/open.gif`, { base, headers: { 'x-forwarded-for': '17.58.101.4' } })).status, 200);
  t.deepEqual(await events(s.actionId), [
    { kind: 'open', link_index: null, class: 'machine', reason: 'proxy_prefetch', source: 'apple_mpp' },
  ]);
  t.is((await action(s.actionId)).opened_at, null);

  t.is((await get(`/t/${s.token}/open.gif`, { base, headers: { 'x-forwarded-for': '198.51.100.7' } })).status, 200);
  t.is((await events(s.actionId))[1].class, 'human');
  t.truthy((await action(s.actionId)).opened_at);
});

test('a scanner agent’s open and click are machine and set nothing', async (t) => {
  const s = await sentEmail();
  t.is((await get(`/t/${s.token}/open.gif`, { headers: { 'user-agent': 'python-requests/2.31.0' } })).status, 200);
  t.is((await get(`/t/${s.token}/l/0`, { headers: { 'user-agent': 'python-requests/2.31.0' } })).status, 302);
  t.deepEqual(
    (await events(s.actionId)).map((e) => [e.kind, e.class, e.reason, e.source]),
    [
      ['open', 'machine', 'scanner_agent', 'http_library'],
      ['click', 'machine', 'scanner_agent', 'http_library'],
    ],
  );
  t.like(await action(s.actionId), { opened_at: null, clicked_at: null });
});

test('a link burst: a second link clicked within seconds makes both clicks machine and clears clicked_at; the same link twice is no burst', async (t) => {
  const s = await sentEmail();
  t.is((await get(`/t/${s.token}/l/0`)).status, 302);
  t.truthy((await action(s.actionId)).clicked_at, 'the first click alone is a person’s');
  t.is((await get(`/t/${s.token}/l/0`)).status, 302);
  t.deepEqual(
    (await events(s.actionId)).map((e) => e.class),
    ['human', 'human'],
    'one link twice',
  );
  t.is((await get(`/t/${s.token}/l/1`)).status, 302);
  t.deepEqual(
    (await events(s.actionId)).map((e) => [e.link_index, e.class, e.reason]),
    [
      [0, 'machine', 'link_burst'],
      [0, 'machine', 'link_burst'],
      [1, 'machine', 'link_burst'],
    ],
  );
  t.like(
    await action(s.actionId),
    { clicked_at: null, opened_at: null },
    'no human click remains, nor the open it made',
  );
});

test('a click before any open right after delivery is a scanner’s; events per action and kind are capped', async (t) => {
  const s = await sentEmail({ deliveredAgoMs: 10_000 });
  t.is((await get(`/t/${s.token}/l/0`)).status, 302);
  t.like((await events(s.actionId))[0], { class: 'machine', reason: 'click_before_open' });
  t.is((await action(s.actionId)).clicked_at, null);

  // The cap, straight through the domain function.
  const e = (await api()).services.orm.em.fork();
  for (let i = 0; i < MAX_EVENTS_PER_KIND + 2; i++)
    await recordTrackingHit(e as never, { actionId: s.actionId, kind: 'open', ip: '198.51.100.7', userAgent: BROWSER });
  t.is((await events(s.actionId)).filter((x) => x.kind === 'open').length, MAX_EVENTS_PER_KIND);
  t.deepEqual(
    await recordTrackingHit(e as never, {
      actionId: s.actionId,
      kind: 'click',
      linkIndex: 1,
      ip: '198.51.100.7',
      userAgent: BROWSER,
    }),
    {
      recorded: true,
      url: linksOf(BODY)[1],
    },
  );
  t.deepEqual(
    await recordTrackingHit(e as never, { actionId: uuidv7(), kind: 'open', ip: '198.51.100.7', userAgent: BROWSER }),
    { recorded: false },
    'an unknown action',
  );
});

test('the tracking routes are in the OpenAPI document, public and beyond the spec', async (t) => {
  const doc = (await call('GET', '/openapi.json')).body;
  const pixel = doc.paths['/t/{token}/open.gif'].get;
  const link = doc.paths['/t/{token}/l/{index}'].get;
  t.is(pixel['x-beyond-spec'], true);
  t.is(link['x-beyond-spec'], true);
  t.deepEqual(pixel.security, []);
  t.deepEqual(link.security, []);
  t.truthy(pixel.responses['200']);
  t.regex(pixel.description, /43-byte GIF/);
  t.truthy(link.responses['302']);
  t.deepEqual(link.responses['404'], { $ref: '#/components/responses/NotFound' });
  t.deepEqual(link['x-error-codes']['404'], ['not_found']);
});

test('generated sequences of opens and clicks (seeded; replay one with TRACKING_SEED): the invariants hold after every hit', async (t) => {
  const first = Number(process.env.TRACKING_SEED ?? Date.now() % 1_000_000);
  const seeds = process.env.TRACKING_SEED ? [first] : Array.from({ length: 12 }, (_, i) => first + i);
  const agents = [BROWSER, BROWSER, 'Mozilla/5.0 (via ggpht.com GoogleImageProxy)', 'python-requests/2.31', ''];
  const ips = ['203.0.113.9', '203.0.113.9', '17.58.1.2', '::ffff:198.51.100.4', '2a01:b740::1'];
  const gaps = [300, 2_000, 4_000, 30_000, 150_000, 700_000];
  const links = linksOf(BODY).length;
  const db = await em();
  let hits = 0;
  for (const seed of seeds) {
    const r = mulberry32(seed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
    const s = await sentEmail({ deliveredAgoMs: 0 });
    const [{ executed_at }] = await db.execute<{ executed_at: Date }[]>(
      `select executed_at from scheduled_actions where id = ?`,
      [s.actionId],
    );
    let at = new Date(executed_at).getTime();
    const sent: { kind: string; ua: string; ip: string; at: number }[] = [];
    for (let i = 0; i < 10; i++) {
      at += pick(gaps);
      const hit = { kind: r() < 0.5 ? ('open' as const) : ('click' as const), ua: pick(agents), ip: pick(ips), at };
      await recordTrackingHit(db, {
        actionId: s.actionId,
        kind: hit.kind,
        linkIndex: Math.floor(r() * links),
        ip: hit.ip,
        userAgent: hit.ua,
        at: new Date(at),
      });
      sent.push(hit);
      hits++;
      const ev = await db.execute<
        { kind: string; link_index: number | null; class: string; reason: string | null; occurred_at: Date }[]
      >(
        `select kind, link_index, class, reason, occurred_at from tracking_events where action_id = ? order by occurred_at, id`,
        [s.actionId],
      );
      const a = await action(s.actionId);
      const firstHuman = (kind: string) => ev.find((e) => e.kind === kind && e.class === 'human')?.occurred_at ?? null;
      const where = `seed ${seed}, hit ${i}`;
      // opened_at is a person's first open or click, clicked_at their first click, and nothing else.
      const firstRead = ev.find((e) => e.class === 'human')?.occurred_at ?? null;
      t.deepEqual(
        a.opened_at && new Date(a.opened_at).getTime(),
        firstRead && new Date(firstRead).getTime(),
        `${where}: opened_at`,
      );
      t.deepEqual(
        a.clicked_at && new Date(a.clicked_at).getTime(),
        firstHuman('click') && new Date(firstHuman('click')!).getTime(),
        `${where}: clicked_at`,
      );
      // No human click has a click on another link within the burst window.
      for (const c of ev.filter((e) => e.kind === 'click' && e.class === 'human')) {
        const near = ev.filter(
          (o) =>
            o.kind === 'click' &&
            o.link_index !== c.link_index &&
            Math.abs(new Date(o.occurred_at).getTime() - new Date(c.occurred_at).getTime()) <= BURST_WINDOW_MS,
        );
        t.deepEqual(near, [], `${where}: a human click in a burst`);
      }
      // A scanner's agent is never a person; nor a proxy's open within the prefetch window.
      for (const [j, e] of ev.entries()) {
        const h = sent[j];
        if (h.ua === '' || h.ua.startsWith('python'))
          t.is(e.class, 'machine', `${where}: event ${j} from a scanner agent`);
        if (
          e.kind === 'open' &&
          (h.ua.includes('GoogleImageProxy') || h.ip.startsWith('17.') || h.ip.startsWith('2a01:b740')) &&
          h.at - new Date(executed_at).getTime() <= OPEN_PROXY_WINDOW_MS
        ) {
          t.is(e.class, 'machine', `${where}: event ${j}, a proxy open at delivery`);
        }
      }
      t.true(
        ev.filter((e) => e.kind === 'open').length <= MAX_EVENTS_PER_KIND &&
          ev.filter((e) => e.kind === 'click').length <= MAX_EVENTS_PER_KIND,
      );
    }
  }
  t.log(`tracking sequences: seeds ${seeds[0]}–${seeds[seeds.length - 1]}, ${hits} hits`);
});
