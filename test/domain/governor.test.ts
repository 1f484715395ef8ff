import test from 'ava';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PlatformAccount, type Caps, type WorkingHours } from '../../db/entities/PlatformAccount.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { AppError } from '../../domain/errors.js';
import {
  CONNECTOR_DEFAULT_CAPS,
  DEFAULT_CAPS,
  defaultCaps,
  effectiveCaps,
  throttleAccount,
  nextWorkingTime,
  rampedCap,
  releaseSlot,
  requestSlot,
  usage,
  validateCaps,
  warmupDay,
} from '../../domain/governor/governor.js';
import { localParts, zonedTime } from '../../domain/governor/time.js';
import { PLANS } from '../../domain/billing/plans.js';
import { uuidv7 } from '../../lib/ids.js';
import { closeApi, createUser } from '../helpers/api.js';
import { em, workspaceIdOf } from '../helpers/billing.js';
test.after.always(closeApi);

const ALWAYS: WorkingHours = { days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00' };
const OFFICE: WorkingHours = { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' };
const FREE = PLANS.free.entitlements.senderCaps;

interface AccountSetup {
  timeZone?: string;
  workingHours?: WorkingHours;
  caps?: Caps;
  minGapSeconds?: number;
  jitterSeconds?: number;
  status?: string;
  warmupStartedAt?: Date | null;
  warmupSkippedAt?: Date | null;
  connector?: string;
}

/** A sender account inserted directly (the account routes are another issue), in a fresh free workspace. */
async function account(setup: AccountSetup = {}) {
  const user = await createUser();
  const m = await em();
  const a = m.create(PlatformAccount, {
    workspace: m.getReference(Workspace, await workspaceIdOf(user.id)),
    channel: 'email',
    displayName: 'Sender',
    connector: setup.connector ?? 'sandbox',
    connectorAccountId: uuidv7(),
    timeZone: setup.timeZone ?? 'UTC',
    workingHours: setup.workingHours ?? ALWAYS,
    status: setup.status ?? 'connected',
    caps: setup.caps ?? {},
    minGapSeconds: setup.minGapSeconds ?? 0,
    jitterSeconds: setup.jitterSeconds ?? 0,
    warmupStartedAt: setup.warmupStartedAt ?? null,
    warmupSkippedAt: setup.warmupSkippedAt ?? null,
  });
  await m.flush();
  return a;
}

const ask = async (
  id: string,
  now: string | Date,
  opts: { action?: 'email' | 'invitation'; random?: () => number } = {},
) =>
  requestSlot((await em()) as EntityManager, id, opts.action ?? 'email', { now: new Date(now), random: opts.random });

const iso = (d: Date | null) => d?.toISOString() ?? null;

test('100 concurrent requests against a daily cap of 10 grant exactly 10', async (t) => {
  const a = await account({ caps: { email: { daily: 10, weekly: 50 } } });
  const now = '2026-11-24T15:00:00Z';
  const answers = await Promise.all(Array.from({ length: 100 }, () => ask(a.id, now)));
  t.is(answers.filter((r) => r.granted).length, 10);
  const refused = answers.filter((r) => !r.granted);
  t.true(refused.every((r) => !r.granted && r.reason === 'cap_daily' && iso(r.retryAt) === '2026-11-25T00:00:00.000Z'));
  const [row]: { count: number }[] = await (
    await em()
  ).execute('select sum(count)::int as count from account_usage where account_id = ?', [a.id]);
  t.is(row.count, 10);
});

test('daily then weekly caps, counted in the local calendar day and ISO week (Asia/Tokyo)', async (t) => {
  const a = await account({ timeZone: 'Asia/Tokyo', workingHours: OFFICE, caps: { email: { daily: 3, weekly: 5 } } });
  // Monday 2026-11-23 10:00 JST = 01:00Z.
  for (let i = 0; i < 3; i++) t.true((await ask(a.id, '2026-11-23T01:00:00Z')).granted);
  const daily = await ask(a.id, '2026-11-23T01:00:00Z');
  t.like(daily, { granted: false, reason: 'cap_daily' });
  t.is(iso(!daily.granted ? daily.retryAt : null), '2026-11-24T00:00:00.000Z'); // Tuesday 09:00 JST
  // Another action type has its own counters.
  t.true((await ask(a.id, '2026-11-23T01:00:00Z', { action: 'invitation' })).granted);
  // Monday 23:30Z is already Tuesday 08:30 JST: a new local day, but before opening.
  t.like(await ask(a.id, '2026-11-23T23:30:00Z'), { granted: false, reason: 'outside_hours' });
  for (let i = 0; i < 2; i++) t.true((await ask(a.id, '2026-11-24T00:00:00Z')).granted);
  const weekly = await ask(a.id, '2026-11-24T00:00:00Z');
  t.like(weekly, { granted: false, reason: 'cap_weekly' });
  t.is(iso(!weekly.granted ? weekly.retryAt : null), '2026-11-30T00:00:00.000Z'); // next Monday 09:00 JST
  t.true((await ask(a.id, '2026-11-30T00:00:00Z')).granted);
});

test('working hours in America/New_York: refused outside with the next local opening, across a weekend and DST', async (t) => {
  const a = await account({ timeZone: 'America/New_York', workingHours: OFFICE });
  const before = await ask(a.id, '2026-11-24T13:00:00Z'); // Tuesday 08:00 EST
  t.like(before, { granted: false, reason: 'outside_hours' });
  t.is(iso(!before.granted ? before.retryAt : null), '2026-11-24T14:00:00.000Z');
  const friday = await ask(a.id, '2026-11-27T22:30:00Z'); // Friday 17:30 EST
  t.like(friday, { granted: false, reason: 'outside_hours' });
  t.is(iso(!friday.granted ? friday.retryAt : null), '2026-11-30T14:00:00.000Z'); // Monday 09:00 EST
  const saturday = await ask(a.id, '2026-11-28T16:00:00Z');
  t.is(iso(!saturday.granted ? saturday.retryAt : null), '2026-11-30T14:00:00.000Z');
  t.true((await ask(a.id, '2026-11-30T14:00:00Z')).granted);
  // The weekend of the spring change: Friday in EST, Monday opens at 09:00 EDT (13:00Z).
  t.is(iso(nextWorkingTime(a, new Date('2026-03-06T23:00:00Z'))), '2026-03-09T13:00:00.000Z');
  // An unknown zone is an error, never UTC.
  t.throws(() => nextWorkingTime({ timeZone: 'Mars/Olympus', workingHours: OFFICE }, new Date()), {
    instanceOf: RangeError,
  });
});

test('working hours ending at 24:00: granted until local midnight, then the next opening; across both DST changes (Europe/Berlin)', async (t) => {
  const a = await account({ timeZone: 'Europe/Berlin', workingHours: { days: [7], start: '22:00', end: '24:00' } });
  // Sunday 2026-10-25, the autumn change (CET, UTC+1, in the evening): open 21:00Z, closed from Monday 00:00 CET = 23:00Z.
  t.like(await ask(a.id, '2026-10-25T20:59:59Z'), { granted: false, reason: 'outside_hours' });
  t.true((await ask(a.id, '2026-10-25T21:00:00Z')).granted);
  t.true((await ask(a.id, '2026-10-25T22:59:59Z')).granted);
  const midnight = await ask(a.id, '2026-10-25T23:00:00Z');
  t.like(midnight, { granted: false, reason: 'outside_hours' });
  t.is(iso(!midnight.granted ? midnight.retryAt : null), '2026-11-01T21:00:00.000Z'); // next Sunday 22:00 CET
  // Sunday 2026-03-29, the spring change (CEST, UTC+2, in the evening): 22:00–24:00 local is 20:00Z–22:00Z.
  t.is(iso(nextWorkingTime(a, new Date('2026-03-29T21:59:59Z'))), '2026-03-29T21:59:59.000Z');
  t.is(iso(nextWorkingTime(a, new Date('2026-03-29T22:00:00Z'))), '2026-04-05T20:00:00.000Z');
  t.is(iso(nextWorkingTime(a, new Date('2026-03-29T12:00:00Z'))), '2026-03-29T20:00:00.000Z');
});

test('the gap: minimum plus injected jitter; the answer names when the next slot opens', async (t) => {
  const a = await account({ minGapSeconds: 90, jitterSeconds: 60 });
  const first = await ask(a.id, '2026-11-24T15:00:00Z', { random: () => 0.5 });
  t.like(first, { granted: true });
  t.is(iso(first.granted ? first.nextEarliestAt : null), '2026-11-24T15:02:00.000Z'); // 90 s + 0.5 × 60 s
  const early = await ask(a.id, '2026-11-24T15:01:00Z');
  t.like(early, { granted: false, reason: 'gap' });
  t.is(iso(!early.granted ? early.retryAt : null), '2026-11-24T15:02:00.000Z');
  // The gap is per account, across action types.
  t.like(await ask(a.id, '2026-11-24T15:01:59Z', { action: 'invitation' }), { granted: false, reason: 'gap' });
  const second = await ask(a.id, '2026-11-24T15:02:00Z', { random: () => 0 });
  t.is(iso(second.granted ? second.nextEarliestAt : null), '2026-11-24T15:03:30.000Z');
});

test('a throttle (the connector answered rate limited): every type refused `throttled` until then, never shortened; usage names it', async (t) => {
  const a = await account({ timeZone: 'America/New_York', workingHours: OFFICE });
  const m = (await em()) as EntityManager;
  const until = await throttleAccount(m, a.id, new Date('2026-11-24T15:30:00Z'));
  t.is(iso(until), '2026-11-24T15:30:00.000Z');
  // An earlier throttle does not shorten it.
  t.is(iso(await throttleAccount(m, a.id, new Date('2026-11-24T15:10:00Z'))), '2026-11-24T15:30:00.000Z');
  for (const action of ['email', 'invitation'] as const) {
    const r = await ask(a.id, '2026-11-24T15:00:00Z', { action });
    t.like(r, { granted: false, reason: 'throttled' });
    t.is(iso(!r.granted ? r.retryAt : null), '2026-11-24T15:30:00.000Z');
  }
  // A throttle that ends after closing time (Tuesday 17:00 EST = 22:00Z) points to the next opening.
  await throttleAccount(m, a.id, new Date('2026-11-24T22:30:00Z'));
  const late = await ask(a.id, '2026-11-24T21:00:00Z');
  t.is(iso(!late.granted ? late.retryAt : null), '2026-11-25T14:00:00.000Z');
  t.like(await ask(a.id, '2026-11-25T14:00:00Z'), { granted: true });
  const u = await usage(m, a, new Date('2026-11-24T21:00:00Z'));
  t.is(iso(u[0].nextSlotAt), '2026-11-25T14:00:00.000Z');
});

test("a connector's defaults: Unipile's accounts get LinkedIn's limits, bounded by the plan; the account's own caps override them", async (t) => {
  t.deepEqual(defaultCaps('sandbox'), DEFAULT_CAPS);
  t.deepEqual(defaultCaps('unipile').invitation, CONNECTOR_DEFAULT_CAPS.unipile.invitation);
  t.deepEqual(defaultCaps('unipile').email, DEFAULT_CAPS.email);
  const at = new Date('2026-11-24T15:00:00Z');
  const linked = { connector: 'unipile', caps: {}, timeZone: 'UTC', warmupStartedAt: null, warmupSkippedAt: null };
  // The free plan bounds invitations at 20 a day and 100 a week: Unipile's default fits; messages are clamped.
  t.deepEqual(effectiveCaps(linked, FREE, at).invitation, { daily: 20, weekly: 100 });
  t.deepEqual(effectiveCaps(linked, FREE, at).message, FREE.message);
  t.deepEqual(effectiveCaps(linked, PLANS.pro.entitlements.senderCaps, at).message, { daily: 80, weekly: 400 });
  t.deepEqual(effectiveCaps({ ...linked, caps: { invitation: { daily: 5, weekly: 25 } } }, FREE, at).invitation, {
    daily: 5,
    weekly: 25,
  });
  // Through the governor: a Unipile account on the free plan gets its 20th invitation of the day, not a 21st.
  const a = await account({ connector: 'unipile' });
  for (let i = 0; i < 20; i++) t.like(await ask(a.id, at, { action: 'invitation' }), { granted: true });
  t.like(await ask(a.id, at, { action: 'invitation' }), { granted: false, reason: 'cap_daily' });
});

test('a gap that ends after closing time points to the next opening', async (t) => {
  const a = await account({ timeZone: 'America/New_York', workingHours: OFFICE, minGapSeconds: 600 });
  const r = await ask(a.id, '2026-11-27T21:55:00Z'); // Friday 16:55 EST
  t.is(iso(r.granted ? r.nextEarliestAt : null), '2026-11-30T14:00:00.000Z');
});

test('the warm-up curve: 20 % on day 1, linear to 100 % on day 14, at least 1', (t) => {
  t.is(rampedCap(50, 1), 10);
  t.is(rampedCap(50, 7), 28);
  t.is(rampedCap(50, 13), 46);
  t.is(rampedCap(50, 14), 50);
  t.is(rampedCap(3, 1), 1);
  const started = new Date('2026-11-23T23:30:00Z'); // Tuesday 08:30 in Tokyo
  const acc = { caps: {}, timeZone: 'Asia/Tokyo', warmupStartedAt: started, warmupSkippedAt: null };
  t.is(warmupDay(acc, new Date('2026-11-24T14:59:00Z')), 1); // 23:59 the same Tokyo day
  t.is(warmupDay(acc, new Date('2026-11-24T15:00:00Z')), 2);
  t.is(warmupDay(acc, new Date('2026-12-07T14:59:00Z')), 14);
  t.is(warmupDay(acc, new Date('2026-12-07T15:00:00Z')), null);
  t.is(effectiveCaps(acc, FREE, new Date('2026-11-24T00:00:00Z')).email.daily, rampedCap(DEFAULT_CAPS.email.daily, 1));
  t.deepEqual(effectiveCaps({ ...acc, warmupSkippedAt: started }, FREE, started), DEFAULT_CAPS);
  t.deepEqual(effectiveCaps({ ...acc, warmupStartedAt: null }, FREE, started), DEFAULT_CAPS);
});

test('warm-up limits requests (reason warmup) until skipped', async (t) => {
  const now = '2026-11-24T15:00:00Z';
  const a = await account({ warmupStartedAt: new Date(now), caps: { email: { daily: 20, weekly: 100 } } });
  for (let i = 0; i < 4; i++) t.true((await ask(a.id, now)).granted); // 20 % of 20
  const r = await ask(a.id, now);
  t.like(r, { granted: false, reason: 'warmup' });
  t.is(iso(!r.granted ? r.retryAt : null), '2026-11-25T00:00:00.000Z');
  const [u] = await usage((await em()) as EntityManager, a, new Date(now));
  t.like(u, {
    action: 'email',
    today: 4,
    week: 4,
    caps: { daily: 4, weekly: 20 },
    fullCaps: { daily: 20, weekly: 100 },
    warmup: { day: 1, of: 14 },
  });
  const m = await em();
  await m.nativeUpdate(PlatformAccount, { id: a.id }, { warmupSkippedAt: new Date(now) });
  t.true((await ask(a.id, now)).granted);
});

test('caps set above the plan are held to the plan; validateCaps refuses out-of-range limits with the allowed range', async (t) => {
  const a = await account({ caps: { invitation: { daily: 500, weekly: 900 } } });
  const [, inv] = await usage((await em()) as EntityManager, a, new Date('2026-11-24T15:00:00Z'));
  t.deepEqual(inv.caps, FREE.invitation);

  t.notThrows(() =>
    validateCaps({ caps: { email: { daily: 50, weekly: 250 } }, minGapSeconds: 30, jitterSeconds: 0 }, FREE),
  );
  const err = t.throws(
    () =>
      validateCaps(
        {
          caps: {
            email: { daily: 51, weekly: 250 },
            message: { daily: 0, weekly: 10 },
            invitation: { daily: 10, weekly: 5 },
          },
          minGapSeconds: 5,
          jitterSeconds: 1801,
        },
        FREE,
      ),
    { instanceOf: AppError },
  );
  t.is(err.status, 400);
  t.is(err.code, 'invalid_limits');
  t.deepEqual(err.details, [
    { path: 'caps.email.daily', message: 'must be an integer from 1 to 50', min: 1, max: 50 },
    { path: 'caps.message.daily', message: 'must be an integer from 1 to 50', min: 1, max: 50 },
    { path: 'caps.invitation.weekly', message: 'must be at least the daily cap', min: 10, max: 100 },
    { path: 'min_gap_seconds', message: 'must be an integer from 30 to 3600', min: 30, max: 3600 },
    { path: 'jitter_seconds', message: 'must be an integer from 0 to 1800', min: 0, max: 1800 },
  ]);
  t.throws(() => validateCaps({ caps: { email: { daily: 1.5, weekly: 10 } } }, FREE), { instanceOf: AppError });
  // A paid plan raises the bounds.
  t.notThrows(() => validateCaps({ caps: { email: { daily: 500, weekly: 2500 } } }, PLANS.pro.entitlements.senderCaps));
});

test('an account that is not connected is refused with not_connected; an unknown one is 404', async (t) => {
  const a = await account({ status: 'disconnected' });
  t.deepEqual(await ask(a.id, '2026-11-24T15:00:00Z'), { granted: false, reason: 'not_connected', retryAt: null });
  const err = await t.throwsAsync(ask(uuidv7(), '2026-11-24T15:00:00Z'), { instanceOf: AppError });
  t.is(err.code, 'not_found');
});

test('releaseSlot gives the count back and lifts the gap the grant started', async (t) => {
  const a = await account({ minGapSeconds: 90 });
  const now = new Date('2026-11-24T15:00:00Z');
  const g = await ask(a.id, now);
  t.true(g.granted);
  await releaseSlot((await em()) as EntityManager, a.id, 'email', now);
  const [u] = await usage((await em()) as EntityManager, a, now);
  t.is(u.today, 0);
  t.is(iso(u.nextSlotAt), now.toISOString());
  t.true((await ask(a.id, now)).granted);
});

test('concurrent first requests on a new account with a gap: one grant, the others refused with gap', async (t) => {
  const a = await account({ minGapSeconds: 90 });
  const now = '2026-11-24T15:00:00Z';
  const answers = await Promise.all(Array.from({ length: 30 }, () => ask(a.id, now, { random: () => 0 })));
  t.is(answers.filter((r) => r.granted).length, 1);
  t.true(answers.every((r) => r.granted || (r.reason === 'gap' && iso(r.retryAt) === '2026-11-24T15:01:30.000Z')));
});

test("inside a caller's transaction a grant is undone by its rollback", async (t) => {
  const a = await account();
  const now = new Date('2026-11-24T15:00:00Z');
  const m = (await em()) as EntityManager;
  await t.throwsAsync(
    m.transactional(async (tx) => {
      t.true((await requestSlot(tx, a.id, 'email', { now })).granted);
      throw new Error('send failed before the connector');
    }),
  );
  const [u] = await usage((await em()) as EntityManager, a, now);
  t.is(u.today, 0);
});

test('local time around DST changes: wall clock, a missing local time, an ambiguous one', (t) => {
  const ny = 'America/New_York';
  t.like(localParts(new Date('2026-03-08T06:59:59Z'), ny), { date: '2026-03-08', minutes: 60 + 59 }); // 01:59 EST
  t.like(localParts(new Date('2026-03-08T07:00:00Z'), ny), { date: '2026-03-08', minutes: 180 }); // 03:00 EDT
  t.like(localParts(new Date('2026-11-23T23:30:00Z'), 'Asia/Kolkata'), {
    date: '2026-11-24',
    minutes: 5 * 60,
    weekday: 2,
  });
  // 02:30 does not exist on 8 March: the window opens after the gap, never before it.
  t.is(zonedTime('2026-03-08', 150, ny).toISOString(), '2026-03-08T07:30:00.000Z');
  // 01:30 happens twice on 1 November: the first one.
  t.is(zonedTime('2026-11-01', 90, ny).toISOString(), '2026-11-01T05:30:00.000Z');
  t.is(zonedTime('2026-11-24', 24 * 60, 'Asia/Tokyo').toISOString(), '2026-11-24T15:00:00.000Z');
});

test('usage: counts, caps and next_slot_at per action type (hours, caps, not connected)', async (t) => {
  const a = await account({
    timeZone: 'Asia/Tokyo',
    workingHours: OFFICE,
    caps: { invitation: { daily: 1, weekly: 5 } },
    minGapSeconds: 60,
  });
  const now = new Date('2026-11-24T01:00:00Z'); // Tuesday 10:00 JST
  t.true((await ask(a.id, now, { action: 'invitation' })).granted);
  const rows = await usage((await em()) as EntityManager, a, now);
  const byType = Object.fromEntries(rows.map((r) => [r.action, r]));
  t.like(byType.invitation, { today: 1, week: 1, caps: { daily: 1, weekly: 5 }, warmup: null });
  t.is(iso(byType.invitation.nextSlotAt), '2026-11-25T00:00:00.000Z'); // daily cap: Wednesday 09:00 JST
  t.is(iso(byType.email.nextSlotAt), '2026-11-24T01:01:00.000Z'); // the gap only
  t.is(iso(byType.email.nextSlotAt), iso((await usage((await em()) as EntityManager, a, now))[0].nextSlotAt));
  const off = await account({ status: 'pending' });
  t.true((await usage((await em()) as EntityManager, off, now)).every((r) => r.nextSlotAt === null));
});
