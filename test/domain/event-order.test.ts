// Events about one thing apply in the order they happened (domain/event-order.ts, docs/providers.md
// "Order of events", docs/meetings.md "Booking events"): whatever order, repetition and concurrency
// the deliveries come in, the state derived from them is the state of the newest event.
// Property runs replay with EVENT_ORDER_SEED=<seed> (and EVENT_ORDER_RUNS=<n> for more runs).
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import * as fc from 'fast-check';
import type { EntityManager } from '@mikro-orm/postgresql';
import { BookingConnection } from '../../db/entities/BookingConnection.js';
import { PlatformAccount } from '../../db/entities/PlatformAccount.js';
import { applyAccountStatus } from '../../domain/accounts/status.js';
import { handleBookingEvent, ingestBookingEvent } from '../../domain/booking/events.js';
import { handleConnectorEvent, ingestConnectorEvent } from '../../domain/connectors/events.js';
import { observedAt } from '../../domain/event-order.js';
import type { Jobs } from '../../domain/jobs.js';
import { parseBookingEvent } from '../../lib/booking/wire.js';
import { SandboxNetwork, signInbound } from '../../lib/connectors/index.js';
import { toInboundEvent } from '../../lib/connectors/inbound.js';
import { uuidv7 } from '../../lib/ids.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createTestApp, createUser, listen } from '../helpers/api.js';
import { withStart } from '../helpers/jobs.js';
import { workspaceIdOf } from '../helpers/billing.js';
import { bookingEvent, hookedScheduler, postHook } from '../helpers/booking.js';
import { seedCampaign } from '../helpers/campaigns.js';
import { seedEnrollments } from '../helpers/analytics.js';
import { withLead } from '../helpers/meetings.js';
test.after.always(closeApi);

const SECRET = 'whsec-test-event-order';

/** The in-process API with the sandbox network verifying hooks with SECRET (as CONNECTOR_WEBHOOK_SECRET would). */
let app: Promise<{ base: string; em: () => EntityManager }> | undefined;
function hooked() {
  return (app ??= (async () => {
    const { services } = await api();
    const { base } = await listen({
      ...services,
      connector: new SandboxNetwork(services.config.sources.corpus, services.orm, SECRET),
    });
    return { base, em: () => services.orm.em.fork() as EntityManager };
  })());
}
const em = async () => (await hooked()).em();

async function post(event: Record<string, unknown>) {
  const { base } = await hooked();
  const body = JSON.stringify(event);
  return call('POST', '/hooks/connector', {
    base,
    rawBody: body,
    headers: { 'X-Connector-Signature': signInbound(SECRET, body) },
  });
}

async function networkAccount(workspaceId: string, status = 'connected', statusReason: string | null = null) {
  const e = await em();
  const a = e.create(PlatformAccount, {
    workspace: workspaceId,
    channel: 'network',
    displayName: 'Ada (network)',
    timeZone: 'Europe/London',
    workingHours: { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
    connector: 'sandbox',
    connectorAccountId: `sbx_acc_${randomUUID()}`,
    status,
    statusReason,
    connectedAt: new Date(),
  });
  await e.flush();
  return { id: a.id, connectorAccountId: a.connectorAccountId! };
}

const statusEvent = (
  connectorAccountId: string,
  state: 'connected' | 'disconnected',
  at: Date | null,
  id = `evt_${randomUUID()}`,
  reason: string | null = state === 'disconnected' ? 'checkpoint' : null,
) => ({
  id,
  type: 'account.status',
  account_id: connectorAccountId,
  ...(at ? { created_at: at.toISOString() } : {}),
  data: { state, reason },
});

/** A time read with a raw query (a string) as ISO, for comparing with ours. */
const iso = (v: unknown) => (v == null ? null : new Date(v as string).toISOString());

const handled = async (eventIds: string[]) =>
  Number(
    (
      await (
        await em()
      ).execute(`select count(*) as n from connector_events where event_id in (?) and handled_at is not null`, [
        eventIds,
      ])
    )[0].n,
  ) === eventIds.length;
const accountRow = async (id: string) =>
  (
    await (
      await em()
    ).execute(
      `select status, status_reason, status_event_at, status_event_id, updated_at from platform_accounts where id = ?`,
      [id],
    )
  )[0] as {
    status: string;
    status_reason: string | null;
    status_event_at: string | null;
    status_event_id: string | null;
    updated_at: string;
  };

/** The property runs' seed: EVENT_ORDER_SEED replays a failure (fast-check prints the seed and the shrunk case). */
function seedFor(t: ExecutionContext): { seed: number; numRuns: number } {
  const seed = process.env.EVENT_ORDER_SEED
    ? Number(process.env.EVENT_ORDER_SEED)
    : Math.floor(Math.random() * 2 ** 31);
  t.log(`seed ${seed} (replay: EVENT_ORDER_SEED=${seed})`);
  return { seed, numRuns: Number(process.env.EVENT_ORDER_RUNS ?? 40) };
}

/** Every item once, some of them again (`again` picks by index), in the order `keys` sorts them to. */
function deliveries<T>(items: T[], again: number[], keys: number[]): T[] {
  const all = [...items, ...again.map((i) => items[i % items.length])];
  return all
    .map((item, i) => ({ item, key: keys[i % keys.length] + i / 1000 }))
    .sort((a, b) => a.key - b.key)
    .map((d) => d.item);
}

/** The hand-offs of the ingest functions, run in-process: the handling the workflows' activities do. */
function inlineJobs(): Jobs {
  const fresh = () => em();
  const none = {} as Jobs;
  const jobs: Jobs = withStart(
    withStart(none, 'connector-event', async ({ eventId }) => handleConnectorEvent(await fresh(), eventId, jobs)),
    'booking-event',
    async ({ eventId }) => handleBookingEvent(await fresh(), eventId),
  );
  return jobs;
}

test('connected then disconnected 3 s later, delivered in one batch or newest first: the account ends disconnected (hook and workflows)', async (t) => {
  const ws = await workspaceIdOf((await createUser()).id);
  const at = Date.now() - 60_000;
  // Pairs posted all at once (more events than the worker has database connections), and one pair newest first.
  const batch = await Promise.all([...Array(6)].map(() => networkAccount(ws)));
  const pairs = batch.map((a) => [
    statusEvent(a.connectorAccountId, 'connected', new Date(at)),
    statusEvent(a.connectorAccountId, 'disconnected', new Date(at + 3000)),
  ]);
  for (const r of await Promise.all(pairs.flat().map(post))) t.is(r.status, 200, r.text);
  const reversed = await networkAccount(ws);
  const [connected, disconnected] = [
    statusEvent(reversed.connectorAccountId, 'connected', new Date(at)),
    statusEvent(reversed.connectorAccountId, 'disconnected', new Date(at + 3000)),
  ];
  t.is((await post(disconnected)).status, 200);
  await waitFor('the disconnection handled', () => handled([disconnected.id]), 30_000);
  t.is((await post(connected)).status, 200);
  await waitFor('every event handled', () => handled([...pairs.flat(), connected].map((e) => e.id)), 30_000);
  for (const [i, a] of [...batch, reversed].entries()) {
    const newest = i < batch.length ? pairs[i][1] : disconnected;
    t.like(
      await accountRow(a.id),
      { status: 'disconnected', status_reason: 'checkpoint', status_event_id: newest.id },
      a.connectorAccountId,
    );
  }
});

test('a connector event or a booking said to happen more than 5 minutes from now is 400 invalid_body, and nothing is stored', async (t) => {
  const u = await createUser();
  const a = await networkAccount(await workspaceIdOf(u.id));
  const future = statusEvent(a.connectorAccountId, 'disconnected', new Date(Date.now() + 10 * 60_000));
  const r = await post(future);
  t.is(r.status, 400, r.text);
  t.is(r.body.error.code, 'invalid_body');
  t.regex(r.body.error.message, /created_at/);
  t.is(
    Number(
      (await (await em()).execute(`select count(*) as n from connector_events where event_id = ?`, [future.id]))[0].n,
    ),
    0,
  );
  // A little ahead of our clock (within the signature window) is accepted.
  t.is((await post(statusEvent(a.connectorAccountId, 'disconnected', new Date(Date.now() + 60_000)))).status, 200);

  const hook = await hookedScheduler(u);
  const at = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
  const booking = bookingEvent('booking.created', {
    startsAt: at(24),
    endsAt: at(25),
    attendees: [{ email: 'ada@example.test' }],
    updatedAt: at(1),
  });
  const b = await postHook(hook.id, JSON.stringify(booking), hook.secret);
  t.is(b.status, 400, b.text);
  t.is(b.body.error.code, 'invalid_body');
  t.regex(b.body.error.message, /updated_at/);
});

test('our own reads are ordered with the events: a read older than the last event changes nothing, a newer one applies', async (t) => {
  const ws = await workspaceIdOf((await createUser()).id);
  const a = await networkAccount(ws);
  const e = await em();
  const event = { at: new Date(Date.now() - 10_000), id: `evt_${randomUUID()}` };
  const down = {
    connectorAccountId: a.connectorAccountId,
    state: 'disconnected' as const,
    reason: 'revoked',
    address: null,
  };
  const up = { ...down, state: 'connected' as const, reason: null };
  t.is(await applyAccountStatus(e, down, 'inbound', event), 'disconnected');
  // A reconciliation that asked before the event happened, answering after it was applied.
  t.is(
    await applyAccountStatus(e, up, 'reconcile', observedAt(new Date(event.at.getTime() - 1000), 'reconcile')),
    'unchanged',
  );
  t.like(await accountRow(a.id), { status: 'disconnected', status_event_id: event.id });
  const before = await accountRow(a.id);
  t.is(await applyAccountStatus(e, down, 'inbound', event), 'unchanged', 'a repeat');
  t.deepEqual(await accountRow(a.id), before);
  t.is(await applyAccountStatus(e, up, 'reconcile', observedAt(new Date(), 'reconcile')), 'connected');
  // Pending says nothing about the connection: not applied, not ordered.
  t.is(
    await applyAccountStatus(e, { ...down, state: 'pending', reason: null }, 'inbound', {
      at: new Date(),
      id: `evt_${randomUUID()}`,
    }),
    'unchanged',
  );
  t.like(await accountRow(a.id), { status: 'connected', status_event_id: '~reconcile' });
});

// ---- Properties --------------------------------------------------------------------------------

const MINUTE = 60_000;

/** One account's events: status reports (times in whole seconds, so ties happen; a few undated), acceptances and opens. */
const connectorScenario = fc.record({
  initial: fc.constantFrom('connected', 'disconnected'),
  statuses: fc.array(
    fc.record({
      second: fc.integer({ min: 0, max: 8 }),
      state: fc.constantFrom('connected' as const, 'disconnected' as const),
      reason: fc.option(fc.constantFrom('checkpoint', 'credentials_expired', 'revoked'), { nil: null }),
      // Undated: the sender gave no created_at, so the time we received it counts.
      dated: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  accepted: fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 3 }),
  opened: fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 3 }),
  again: fc.array(fc.nat(), { maxLength: 6 }),
  keys: fc.array(fc.nat({ max: 1000 }), { minLength: 18, maxLength: 18 }),
});

test('property: connector events delivered shuffled, repeated and concurrently leave the state of the newest (status) and the earliest (acceptance, open)', async (t) => {
  const u = await createUser();
  const ws = await workspaceIdOf(u.id);
  const appId = (await createTestApp(u)).id;
  const campaign = await seedCampaign(ws, {
    appId,
    accountIds: [],
    steps: [{ type: 'invitation' }, { type: 'email' }],
  });
  const jobs = inlineJobs();
  const { seed, numRuns } = seedFor(t);

  await fc.assert(
    fc.asyncProperty(connectorScenario, async (s) => {
      const account = await networkAccount(ws, s.initial, s.initial === 'disconnected' ? 'revoked' : null);
      const seeded = await seedEnrollments(ws, appId, campaign, 1, [
        { enrollment: 0, step: 0, executedAt: new Date() },
        { enrollment: 0, step: 1, executedAt: new Date() },
      ]);
      const [invitationId, messageId] = [`sbx_inv_${randomUUID()}`, `sbx_msg_${randomUUID()}`];
      await (
        await em()
      ).execute(
        `update scheduled_actions set account_id = ?, type = case when id = ? then 'invitation' else 'email' end, connector_message_id = case when id = ? then ? else ? end where id in (?, ?)`,
        [
          account.id,
          seeded.actions[0],
          seeded.actions[0],
          invitationId,
          messageId,
          seeded.actions[0],
          seeded.actions[1],
        ],
      );
      const base = Date.now() - 60 * MINUTE;
      const run = uuidv7();
      const second = (n: number) => new Date(base + n * 1000);
      const events: Record<string, unknown>[] = [
        ...s.statuses.map((x, i) =>
          statusEvent(
            account.connectorAccountId,
            x.state,
            x.dated ? second(x.second) : null,
            `evt_${run}_s${i}`,
            x.reason,
          ),
        ),
        ...s.accepted.map((n, i) => ({
          id: `evt_${run}_a${i}`,
          type: 'invitation.accepted',
          account_id: account.connectorAccountId,
          created_at: second(n).toISOString(),
          data: {
            invitation_id: invitationId,
            recipient: 'https://pronet.example/in/grace',
            accepted_at: second(n).toISOString(),
          },
        })),
        ...s.opened.map((n, i) => ({
          id: `evt_${run}_o${i}`,
          type: 'message.opened',
          account_id: account.connectorAccountId,
          created_at: second(n).toISOString(),
          data: { message_id: messageId, opened_at: second(n).toISOString() },
        })),
      ];
      const deliver = async (wire: Record<string, unknown>) =>
        ingestConnectorEvent(await em(), jobs, 'sandbox', toInboundEvent('sandbox', wire), wire);
      await Promise.all(deliveries(events, s.again, s.keys).map(deliver));

      // The newest status report, by its time (the sender's, else when it was received) and then its id.
      const [newest] = await (
        await em()
      ).execute<{ event_id: string; state: string; reason: string | null }[]>(
        `select event_id, payload->'data'->>'state' as state, payload->'data'->>'reason' as reason from connector_events
          where connector_account_id = ? and type = 'account.status'
          order by date_trunc('milliseconds', coalesce((payload->>'created_at')::timestamptz, received_at)) desc, event_id collate "C" desc limit 1`,
        [account.connectorAccountId],
      );
      const after = await accountRow(account.id);
      const expected = {
        status: newest.state,
        status_reason: newest.state === 'connected' ? null : (newest.reason ?? 'unknown'),
        status_event_id: newest.event_id,
      };
      if (
        after.status !== expected.status ||
        after.status_reason !== expected.status_reason ||
        after.status_event_id !== expected.status_event_id
      ) {
        throw new Error(`account ${JSON.stringify(after)} is not the newest report's ${JSON.stringify(expected)}`);
      }
      const [actions] = await (
        await em()
      ).execute<{ accepted_at: string | null; opened_at: string | null }[]>(
        `select max(accepted_at) as accepted_at, max(opened_at) as opened_at from scheduled_actions where id in (?, ?)`,
        seeded.actions,
      );
      const earliest = (ns: number[]) => (ns.length ? second(Math.min(...ns)).toISOString() : null);
      if (iso(actions.accepted_at) !== earliest(s.accepted) || iso(actions.opened_at) !== earliest(s.opened)) {
        throw new Error(
          `actions ${JSON.stringify(actions)}: expected accepted ${earliest(s.accepted)}, opened ${earliest(s.opened)}`,
        );
      }

      // Delivered all over again: nothing changes (not even updated_at).
      const snapshot = async () =>
        (await em()).execute(
          `select (select row_to_json(p)::text from platform_accounts p where id = ?) as account, (select json_agg(a order by a.id)::text from scheduled_actions a where id in (?, ?)) as actions`,
          [account.id, ...seeded.actions],
        );
      const before = await snapshot();
      await Promise.all(deliveries(events, [], s.keys).map(deliver));
      const unchanged = await snapshot();
      if (JSON.stringify(before) !== JSON.stringify(unchanged)) throw new Error('a redelivery changed the rows');
    }),
    { seed, numRuns, includeErrorInReport: true },
  );
  t.pass();
});

/** Versions of one booking: minutes apart (ties happen), each scheduled or canceled at some time. */
const bookingScenario = fc.record({
  versions: fc.array(
    fc.record({
      minute: fc.integer({ min: 0, max: 6 }),
      status: fc.constantFrom('scheduled' as const, 'canceled' as const),
      title: fc.constantFrom('Intro call', 'Demo', 'Follow-up'),
      startHour: fc.integer({ min: 1, max: 96 }),
      minutes: fc.constantFrom(30, 45, 60),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  again: fc.array(fc.nat(), { maxLength: 5 }),
  keys: fc.array(fc.nat({ max: 1000 }), { minLength: 10, maxLength: 10 }),
});

test('property: booking events delivered shuffled, repeated and concurrently leave the meeting at the newest version', async (t) => {
  const { u, ws, email } = await withLead();
  const hook = await hookedScheduler(u);
  const connection = await (await em()).findOneOrFail(BookingConnection, hook.id);
  const jobs = inlineJobs();
  const { seed, numRuns } = seedFor(t);
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;

  await fc.assert(
    fc.asyncProperty(bookingScenario, async (s) => {
      const bookingId = `bk_${randomUUID()}`;
      const run = uuidv7();
      const updated = (m: number) => new Date(hour - 24 * 3_600_000 + m * MINUTE);
      const events = s.versions.map((v, i) =>
        bookingEvent(
          v.status === 'canceled' ? 'booking.canceled' : 'booking.rescheduled',
          {
            bookingId,
            status: v.status,
            title: v.title,
            startsAt: new Date(hour + v.startHour * 3_600_000).toISOString(),
            endsAt: new Date(hour + v.startHour * 3_600_000 + v.minutes * MINUTE).toISOString(),
            attendees: [{ email }],
            updatedAt: updated(v.minute).toISOString(),
          },
          `evt_${run}_v${i}`,
        ),
      );
      const deliver = async (wire: (typeof events)[number]) => {
        const parsed = parseBookingEvent(wire);
        if ('error' in parsed) throw new Error(parsed.error);
        return ingestBookingEvent(await em(), jobs, connection, parsed.event);
      };
      await Promise.all(deliveries(events, s.again, s.keys).map(deliver));

      const newest = events.reduce((a, b) => {
        const [ta, tb] = [a.data.booking.updated_at, b.data.booking.updated_at].map((x) => new Date(x).getTime());
        return tb > ta || (tb === ta && b.id > a.id) ? b : a;
      });
      const [m] = await (
        await em()
      ).execute<Record<string, unknown>[]>(
        `select title, starts_at, ends_at, status, canceled_at, external_updated_at, external_event_id from meetings where workspace_id = ? and provider = 'scheduler' and external_id = ?`,
        [ws, bookingId],
      );
      const b = newest.data.booking;
      const expected = {
        title: b.title,
        starts_at: new Date(b.start_time).toISOString(),
        ends_at: new Date(b.end_time).toISOString(),
        status: b.status,
        canceled_at: b.status === 'canceled' ? new Date(b.updated_at).toISOString() : null,
        external_updated_at: new Date(b.updated_at).toISOString(),
        external_event_id: newest.id,
      };
      const times = new Set(['starts_at', 'ends_at', 'canceled_at', 'external_updated_at']);
      const got = m && Object.fromEntries(Object.entries(m).map(([k, v]) => [k, times.has(k) ? iso(v) : v]));
      if (JSON.stringify(got) !== JSON.stringify(expected))
        throw new Error(`meeting ${JSON.stringify(got)} is not the newest version ${JSON.stringify(expected)}`);
      const [{ n }] = await (
        await em()
      ).execute<{ n: number }[]>(
        `select count(*)::int as n from booking_provider_events where workspace_id = ? and booking_id = ? and state = 'received'`,
        [ws, bookingId],
      );
      if (n !== 0) throw new Error(`${n} events left unhandled`);
    }),
    { seed, numRuns, includeErrorInReport: true },
  );
  t.pass();
});
