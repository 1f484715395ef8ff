// The scheduler over Cal.com (issue 46, docs/scheduler.md) end to end through the public API: the API
// in this process and a worker process of its own, both configured as a deployment would be
// (BOOKING_SCHEDULER_PROVIDER=calcom, CALCOM_BASE_URL) and pointed at the stand-in (test/helpers/calcom),
// which speaks Cal.com's documented API v2 and sends its documented, signed webhooks to our hook.
//
//   connect with an API key (a refused one first) → register our webhook → BOOKING_CREATED for an
//   enrolled lead's email → the meeting on that lead (not on the contact's newer, unenrolled lead) and
//   its enrollment stopped → BOOKING_RESCHEDULED (a new uid at Cal.com) → the same meeting moves →
//   BOOKING_CANCELLED → it is canceled; a ping is answered and ignored; a forged, tampered or unsigned
//   delivery is 401 and changes nothing; the whole lives of several bookings, their webhooks delivered
//   shuffled and twice (the seed is printed), apply once and in order: one meeting each, at its last
//   version; two versions that got a meeting each before the event linking them are merged into one;
//   a backfill read by the worker page by page waits out a 429; a revoked key is refused.
import test from 'ava';
import { createHmac, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../api/services.js';
import { temporalJobs } from '../../jobs/temporal.js';
import { CalcomBookingProvider, createBookingProviders } from '../../lib/booking/index.js';
import { schedulerSettings, type Config } from '../../lib/config.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createTestApp, listen } from '../helpers/api.js';
import { createOwner, workspaceIdOf } from '../helpers/billing.js';
import { seedCampaign } from '../helpers/campaigns.js';
import { startCalStandIn, type CalBooking, type QueuedDelivery } from '../helpers/calcom/stand-in.js';
import { startOwnWorker } from '../helpers/own-worker.js';

test.after.always(closeApi);

/** A small seeded generator (mulberry32): the shuffles a failing run used are replayed from its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOUR = 3_600_000;
/** An instant `hours` from now, on the minute (Cal.com's slots). */
const inHours = (hours: number) => new Date(Math.floor((Date.now() + hours * HOUR) / 60_000) * 60_000);
/** An instant `minutes` ago: when a change happened at Cal.com (its webhook's createdAt). */
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

test('the scheduler over Cal.com end to end: connect, webhook, booking → meeting and enrollment stopped, reschedule, cancel; shuffled and twice; bad signatures; backfill with a 429; revoked key', async (t) => {
  t.timeout(240_000);
  const seed = Number(process.env.CALCOM_BOOKING_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.log(`seed ${seed} (CALCOM_BOOKING_SEED=${seed} replays the shuffles)`);
  const random = seeded(seed);
  const { services } = await api();
  const standIn = await startCalStandIn();
  t.teardown(() => standIn.close());
  const organizer = standIn.addUser({ name: 'Ada Organizer', email: 'ada@organizer.example' });

  // The process configuration both sides read, from the variables a deployment sets (lib/config.ts).
  const taskQueue = `calcom-booking-${randomUUID()}`;
  const calEnv = { BOOKING_SCHEDULER_PROVIDER: 'calcom', CALCOM_BASE_URL: standIn.url };
  const config: Config = {
    ...services.config,
    booking: { ...services.config.booking, timeoutMs: 5_000, scheduler: schedulerSettings(calEnv) },
  };
  const booking = createBookingProviders(config.booking, config.publicBaseUrl);
  t.teardown(() => booking.close());
  t.true(booking.get('scheduler') instanceof CalcomBookingProvider, 'the scheduler is Cal.com');
  const svc: Services = { ...services, config, booking, jobs: temporalJobs(services.temporal, taskQueue) };
  const { base } = await listen(svc);
  config.publicBaseUrl = base;

  // The worker, started now: it bundles its workflows while the test prepares the workspace.
  const worker = startOwnWorker(t, services.temporal, taskQueue, { ...calEnv, PUBLIC_BASE_URL: base });

  const em = () => services.orm.em.fork() as EntityManager;
  const u = await createOwner();
  const as = (body?: unknown) => ({ base, token: u.accessToken, ...(body === undefined ? {} : { body }) });
  const app = await createTestApp(u, 'Cal.com bookings');
  const newList = async (name: string) => (await call('POST', `/api/apps/${app.id}/lists`, as({ name }))).body.id;
  // One person, a lead of two lists: the enrolled one (A) and a newer one (B).
  const email = `grace-${randomUUID()}@example.test`;
  const addLead = async (listId: string) => {
    const r = await call('POST', `/api/lists/${listId}/leads`, as({ people: [{ email, first_name: 'Grace' }] }));
    t.is(r.status, 200, r.text);
    return r.body.items[0].lead_id as string;
  };
  const leadA = await addLead(await newList('Demo requests'));
  const leadB = await addLead(await newList('Newsletter'));
  const campaign = await seedCampaign(await workspaceIdOf(u.id), {
    appId: app.id,
    accountIds: [],
    steps: [{ type: 'email', config: { subject: 'Hi {{first_name}}', body: 'Shall we talk?' } }],
  });
  const enrolled = await call('POST', `/api/campaigns/${campaign.id}/leads`, as({ lead_ids: [leadA] }));
  t.like(enrolled.body, { enrolled: 1 }, enrolled.text);
  const enrollment = async () =>
    (await call('GET', `/api/campaigns/${campaign.id}/enrollments?lead_id=${leadA}`, as())).body.items[0];
  const meetingsOf = async (leadId: string) =>
    (await call('GET', `/api/leads/${leadId}/meetings?limit=200`, as())).body.items as Record<string, unknown>[];

  // ---------------------------------------------------------------------------------------------
  // 1. Connect with an API key (checked with GET /v2/me; a refused key saves nothing), register our hook.

  const refused = await call(
    'POST',
    '/api/booking-providers/scheduler/api-key',
    as({ api_key: 'cal_live_0123456789abcdef0123' }),
  );
  t.is(refused.status, 422, refused.text);
  t.is(refused.body.error.code, 'invalid_credentials');
  const connected = await call('POST', '/api/booking-providers/scheduler/api-key', as({ api_key: organizer.apiKey }));
  t.is(connected.status, 201, connected.text);
  const providerId = connected.body.id as string;
  t.like(connected.body, {
    provider: 'scheduler',
    auth: 'api_key',
    status: 'connected',
    account: { id: String(organizer.id), name: 'Ada Organizer', email: 'ada@organizer.example' },
    credential_hint: `cal_…${organizer.apiKey.slice(-4)}`,
  });
  t.true(
    standIn.requests.some((r) => r.path === '/me' && r.headers.authorization === `Bearer ${organizer.apiKey}`),
    'the key went to Cal.com as a bearer token',
  );
  const registered = await call('POST', `/api/booking-providers/${providerId}/webhook/register`, as());
  t.is(registered.status, 200, registered.text);
  const secret = registered.body.webhook.secret as string;
  const hookUrl = `${base}/hooks/booking/${providerId}`;
  t.is(registered.body.webhook.url, hookUrl);
  t.deepEqual(
    [...standIn.webhooks.values()].map((w) => ({ ...w, id: '<id>' })),
    [
      {
        id: '<id>',
        userId: organizer.id,
        subscriberUrl: hookUrl,
        triggers: ['BOOKING_CREATED', 'BOOKING_RESCHEDULED', 'BOOKING_CANCELLED'],
        active: true,
        secret,
      },
    ],
  );

  // ---------------------------------------------------------------------------------------------
  // 2. One booking's life, each webhook delivered twice: created → meeting on the enrolled lead and its
  //    enrollment stopped; rescheduled → the same meeting moves; cancelled → it is canceled.

  const first = standIn.book(organizer, {
    start: inHours(26),
    attendees: [{ name: 'Grace Hopper', email: `  ${email.toUpperCase()} ` }],
    at: minutesAgo(90),
  });
  const created = await standIn.deliver({ times: 2 });
  t.deepEqual(
    created.map((r) => [r.status, (r.body as { duplicate?: boolean }).duplicate]),
    [
      [200, false],
      [200, true],
    ],
  );
  await waitFor('the booking’s meeting', async () => (await meetingsOf(leadA)).length === 1, 120_000);
  const [meeting] = await meetingsOf(leadA);
  t.like(meeting, {
    lead_id: leadA,
    source: 'booking',
    provider: 'scheduler',
    booking_provider_id: providerId,
    external_id: first.uid,
    status: 'scheduled',
    title: first.title,
    starts_at: first.start.toISOString(),
    ends_at: first.end.toISOString(),
    location: `https://app.cal.com/video/${first.uid}`,
  });
  t.deepEqual(await meetingsOf(leadB), [], 'the enrolled lead, not the newer one');
  await waitFor('the enrollment stopped', async () => (await enrollment())?.status === 'stopped', 60_000);
  t.like(await enrollment(), { status: 'stopped', stop_reason: 'meeting_booked' });

  const moved = standIn.reschedule(first.uid, { start: inHours(50), minutes: 45, at: minutesAgo(80) });
  t.not(moved.uid, first.uid, 'Cal.com gives the moved booking a new uid');
  t.true((await standIn.deliver({ times: 2 })).every((r) => r.status === 200));
  await waitFor('the meeting moved', async () => (await meetingsOf(leadA))[0]?.starts_at === moved.start.toISOString());
  t.like((await meetingsOf(leadA))[0], {
    id: meeting.id,
    external_id: moved.uid,
    ends_at: moved.end.toISOString(),
    status: 'scheduled',
  });

  standIn.cancel(moved.uid, { at: minutesAgo(70) });
  t.true((await standIn.deliver({ times: 2 })).every((r) => r.status === 200));
  await waitFor('the meeting canceled', async () => (await meetingsOf(leadA))[0]?.status === 'canceled');
  const canceled = await meetingsOf(leadA);
  t.is(canceled.length, 1, 'one meeting for the booking all along');
  t.like(canceled[0], { id: meeting.id, external_id: moved.uid, starts_at: moved.start.toISOString() });
  t.truthy(canceled[0].canceled_at);

  // ---------------------------------------------------------------------------------------------
  // 3. A ping is answered and ignored; a forged, tampered or unsigned delivery is 401 and changes nothing.

  const stored = async () =>
    Number(
      (
        await em().execute<{ n: number }[]>(
          `select count(*)::int as n from booking_provider_events where booking_provider_id = ?`,
          [providerId],
        )
      )[0].n,
    );
  const before = await stored();
  const pingBody = JSON.stringify({ triggerEvent: 'PING', createdAt: new Date().toISOString(), payload: {} });
  const ping = await call('POST', `/hooks/booking/${providerId}`, {
    base,
    rawBody: pingBody,
    headers: { 'x-cal-signature-256': createHmac('sha256', secret).update(pingBody).digest('hex') },
  });
  t.is(ping.status, 200, ping.text);
  t.deepEqual(ping.body, { received: true, duplicate: false });

  const unseen = standIn.book(organizer, {
    start: inHours(30),
    attendees: [{ name: 'Grace Hopper', email }],
    at: minutesAgo(60),
  });
  const [genuine] = standIn.take();
  const forge = (d: QueuedDelivery, change: Partial<QueuedDelivery> & { signature?: string | null }) => {
    const { signature, ...rest } = change;
    const headers = { ...d.headers };
    if (signature === null) delete headers['x-cal-signature-256'];
    else if (signature) headers['x-cal-signature-256'] = signature;
    return { ...d, ...rest, headers };
  };
  const refusedDeliveries = await standIn.deliver({
    deliveries: [
      forge(genuine, { signature: createHmac('sha256', 'whsec_not_ours').update(genuine.body).digest('hex') }),
      forge(genuine, { body: genuine.body.replace(unseen.title, 'Changed in transit') }),
      forge(genuine, { signature: null }),
      forge(genuine, { url: `${base}/hooks/booking/${randomUUID()}` }),
    ],
  });
  t.deepEqual(
    refusedDeliveries.map((r) => [r.status, (r.body as { error?: { code: string } }).error?.code]),
    Array.from({ length: 4 }, () => [401, 'invalid_signature']),
  );
  t.is(await stored(), before, 'nothing stored');
  t.is((await meetingsOf(leadA)).length, 1, 'no meeting');

  // ---------------------------------------------------------------------------------------------
  // 4. Four bookings' whole lives (created, rescheduled once or twice, one cancelled): their webhooks
  //    held, then delivered shuffled, each twice, three at a time. Each is stored once and applied in
  //    order: one meeting per booking, at its last version, whatever order they came in.

  const lives: { last: CalBooking; canceled: boolean; uids: string[] }[] = [];
  for (let i = 0; i < 4; i++) {
    const b0 = standIn.book(organizer, {
      start: inHours(72 + 24 * i),
      attendees: [{ name: 'Grace Hopper', email }],
      guests: i === 1 ? ['colleague@example.org'] : [],
      at: minutesAgo(50 - i),
    });
    const b1 = standIn.reschedule(b0.uid, { start: inHours(80 + 24 * i), at: minutesAgo(40 - i) });
    const b2 = i % 2 === 0 ? standIn.reschedule(b1.uid, { start: inHours(84 + 24 * i), at: minutesAgo(30 - i) }) : b1;
    const last = i === 3 ? standIn.cancel(b2.uid, { at: minutesAgo(20 - i) }) : b2;
    lives.push({ last, canceled: i === 3, uids: [...new Set([b0.uid, b1.uid, b2.uid])] });
  }
  const held = standIn.take();
  t.is(held.length, 4 + 4 + 2 + 1);
  const shuffled = await standIn.deliver({ deliveries: held, random, times: 2, parallel: 3 });
  t.true(
    shuffled.every((r) => r.status === 200),
    JSON.stringify(shuffled.filter((r) => r.status !== 200).map((r) => r.body)),
  );
  t.is(
    shuffled.filter((r) => (r.body as { duplicate: boolean }).duplicate === false).length,
    held.length,
    'each event stored once',
  );
  const settled = () =>
    waitFor(
      'every event handled',
      async () =>
        Number(
          (
            await em().execute<{ n: number }[]>(
              `select count(*)::int as n from booking_provider_events where booking_provider_id = ? and state = 'received'`,
              [providerId],
            )
          )[0].n,
        ) === 0,
      60_000,
    );
  await settled();
  const meetings = await meetingsOf(leadA);
  t.is(meetings.length, 1 + lives.length, JSON.stringify(meetings.map((m) => [m.external_id, m.starts_at])));
  for (const life of lives) {
    const m = meetings.filter((x) => life.uids.includes(x.external_id as string));
    t.is(m.length, 1, `one meeting for the booking ${life.uids.join(' → ')}`);
    t.like(m[0], {
      external_id: life.last.uid,
      starts_at: life.last.start.toISOString(),
      ends_at: life.last.end.toISOString(),
      status: life.canceled ? 'canceled' : 'scheduled',
    });
  }

  // The order that gives two versions of one booking a meeting each before the event linking them
  // arrives (a reschedule carries no iCalUID, as in Cal.com's example): the second move, then the
  // creation, then the first move, each handled before the next. They become one meeting again, at
  // the last version, keeping the notes written on the one that goes.
  const c0 = standIn.book(organizer, {
    start: inHours(200),
    attendees: [{ name: 'Grace Hopper', email }],
    at: minutesAgo(15),
  });
  const c1 = standIn.reschedule(c0.uid, { start: inHours(210), at: minutesAgo(14) });
  const c2 = standIn.reschedule(c1.uid, { start: inHours(220), at: minutesAgo(13) });
  const [createdC0, movedC1, movedC2] = standIn.take();
  const count = (await meetingsOf(leadA)).length;
  for (const d of [movedC2, createdC0]) {
    t.is((await standIn.deliver({ deliveries: [d] }))[0].status, 200);
    await settled();
  }
  const apart = (await meetingsOf(leadA)).filter((m) => [c0.uid, c2.uid].includes(m.external_id as string));
  t.is(apart.length, 2, 'not linked yet: a meeting each');
  const goes = apart.find((m) => m.external_id === c0.uid)!;
  const noted = await call('PATCH', `/api/meetings/${goes.id}`, as({ notes: 'Asked about pricing' }));
  t.is(noted.status, 200, noted.text);
  t.is((await standIn.deliver({ deliveries: [movedC1] }))[0].status, 200);
  await settled();
  const merged = (await meetingsOf(leadA)).filter((m) => [c0.uid, c1.uid, c2.uid].includes(m.external_id as string));
  t.is(merged.length, 1, 'one meeting for the booking again');
  t.is((await meetingsOf(leadA)).length, count + 1);
  t.like(merged[0], {
    id: apart.find((m) => m.external_id === c2.uid)!.id,
    external_id: c2.uid,
    starts_at: c2.start.toISOString(),
    status: 'scheduled',
    notes: 'Asked about pricing',
  });

  // ---------------------------------------------------------------------------------------------
  // 5. A backfill of the last 20 days, read by the worker (GET /v2/bookings, take 50, skip as our
  //    cursor): the first call is a 429, whose reset the key waits out before the job goes on.

  for (let i = 0; i < 3; i++)
    standIn.book(organizer, {
      start: inHours(-24 * (i + 2)),
      attendees: [{ name: 'Grace Hopper', email }],
      at: minutesAgo(60 * 24 * (i + 4)),
    });
  for (let i = 0; i < 55; i++)
    standIn.book(organizer, {
      start: inHours(-24 * 5 - i),
      attendees: [{ name: `Guest ${i}`, email: `guest-${i}-${randomUUID()}@example.org` }],
      at: minutesAgo(60 * 24 * 10),
    });
  standIn.take(); // never delivered (our downtime): the backfill finds them
  const since = new Date(Date.now() - 20 * 24 * HOUR);
  const listed = standIn.bookings.filter((b) => b.start >= since && !b.rescheduledToUid);
  standIn.failNext({ status: 429, resetSeconds: 2, path: '/bookings' });
  const started = await call(
    'POST',
    `/api/booking-providers/${providerId}/backfill`,
    as({ since: since.toISOString(), client_key: 'first-import' }),
  );
  t.is(started.status, 202, started.text);
  let last: Record<string, unknown> | null = null;
  await waitFor(
    'the backfill to finish',
    async () => {
      const r = await call('GET', '/api/booking-providers', as());
      last = r.body.items.find((c: { id: string }) => c.id === providerId)?.last_backfill ?? null;
      return last?.status === 'completed' || last?.status === 'failed';
    },
    120_000,
  );
  t.like(last, {
    status: 'completed',
    progress: {
      pages: 2,
      bookings: listed.length,
      created: 4, // the lead's three past bookings, and the one whose webhook was refused above
      updated: 0,
      unchanged: 1 + lives.length + 1, // the versions the webhooks applied
      unmatched: 55,
      invalid: 0,
    },
  });
  const reads = standIn.requests.filter((r) => r.path === '/bookings');
  t.deepEqual(
    reads.map((r) => [r.status, r.query.get('skip'), r.query.get('take'), r.headers['cal-api-version']]),
    [
      [429, '0', '50', '2024-08-13'],
      [200, '0', '50', '2024-08-13'],
      [200, '50', '50', '2024-08-13'],
    ],
  );
  t.true(reads[1].at - reads[0].at >= 2_000, 'the key waited for the reset');
  t.true(
    (await meetingsOf(leadA)).some((m) => m.external_id === unseen.uid),
    'the booking whose webhook was refused came in by the backfill',
  );

  // ---------------------------------------------------------------------------------------------
  // 6. The key is revoked at Cal.com: verify says so and the connection shows it.

  standIn.revoke(organizer.apiKey);
  const verify = await call('POST', `/api/booking-providers/${providerId}/verify`, as());
  t.is(verify.status, 200, verify.text);
  t.like(verify.body, { verification: { ok: false }, booking_provider: { status: 'invalid_credentials' } });
  t.regex(verify.body.verification.error, /Invalid API Key/);
});
