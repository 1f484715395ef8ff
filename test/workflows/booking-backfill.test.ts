// Backfills of past bookings (docs/meetings.md "Backfill"): `booking-backfill:<providerId>:<id>` reads
// the (local) provider page by page, creates the meetings of bookings whose attendee is a lead, leaves
// the rest unmatched, with exact progress; a repeat returns the same job; a failed attempt resumes
// after its last committed page without counting a booking twice. Real Temporal.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { startBackfill } from '../../domain/booking/backfill.js';
import type { Jobs } from '../../domain/jobs.js';
import { resolveActor } from '../../domain/workspaces.js';
import { localBookings } from '../../lib/booking/index.js';
import { bookingWorkflowIds } from '../../lib/workflow-ids.js';
import type { BookingBackfillResult } from '../../workflows/booking.js';
import { api, call, closeApi, createTestApp, type TestUser } from '../helpers/api.js';
import { withStart } from '../helpers/jobs.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { connectScheduler } from '../helpers/booking.js';
import { seedContacts } from '../helpers/contacts.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
test.after.always(closeApi);

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

/** A connected local scheduler whose first `matched` bookings' attendees are leads of a list. */
async function setup(matched: number) {
  const u = await createOwner();
  const c = await connectScheduler(u);
  const bookings = localBookings(c.accountId);
  const app = await createTestApp(u);
  const list = (
    await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: `L ${randomUUID()}` } })
  ).body;
  const contacts = await seedContacts(
    await workspaceIdOf(u.id),
    bookings.slice(0, matched).map((b) => ({ email: b.attendees[0].email, lists: [list.id] })),
  );
  return { u, c, bookings, leadIds: contacts.map((x) => x.leads[list.id]) };
}

const meetingsOf = async (u: TestUser, leadId: string) =>
  (await call('GET', `/api/leads/${leadId}/meetings`, { token: u.accessToken })).body.items;
const backfill = (u: TestUser, providerId: string, body: Record<string, unknown>) =>
  call('POST', `/api/booking-providers/${providerId}/backfill`, { token: u.accessToken, body });

test.serial(
  'a backfill imports the bookings as meetings of their leads, leaves the rest unmatched, with exact progress; a repeat is the same job; replays',
  async (t) => {
    const { services } = await api();
    const { u, c, bookings, leadIds } = await setup(5);
    const started = await backfill(u, c.id, { since: ago(60), client_key: 'first' });
    t.is(started.status, 202, started.text);
    t.like(started.body, {
      booking_provider_id: c.id,
      status: 'queued',
      client_key: 'first',
      workflow_id: `booking-backfill:${c.id}:${started.body.id}`,
    });
    const handle = services.temporal.workflow.getHandle(bookingWorkflowIds.backfill(c.id, started.body.id));
    const result = (await handle.result()) as BookingBackfillResult;
    t.deepEqual(result, {
      status: 'completed',
      pages: 1,
      bookings: 14,
      created: 5,
      updated: 0,
      unchanged: 0,
      unmatched: 9,
    });
    t.deepEqual((await handle.describe()).searchAttributes.JobKind, ['booking-backfill']);

    // Each matched booking is its lead's meeting, canceled ones included (every fifth booking: the 4th).
    for (const [i, leadId] of leadIds.entries()) {
      const [m] = await meetingsOf(u, leadId);
      t.like(m, {
        source: 'booking',
        external_id: bookings[i].bookingId,
        booking_provider_id: c.id,
        status: bookings[i].status,
        starts_at: bookings[i].startsAt.toISOString(),
      });
    }
    const unmatched = await call('GET', '/api/booking-provider-events/unmatched?limit=200', { token: u.accessToken });
    t.deepEqual(
      unmatched.body.items.map((e: { booking: { id: string } }) => e.booking.id).sort(),
      bookings
        .slice(5)
        .map((b) => b.bookingId)
        .sort(),
    );

    const repeat = await backfill(u, c.id, { client_key: 'first' });
    t.is(repeat.status, 200, 'finished: 200 with the same job');
    t.like(repeat.body, {
      id: started.body.id,
      status: 'completed',
      progress: { pages: 1, bookings: 14, created: 5, updated: 0, unchanged: 0, unmatched: 9, invalid: 0 },
    });
    t.truthy(repeat.body.finished_at);
    const reused = await backfill(u, c.id, { client_key: 'first', since: ago(10) });
    t.is(reused.status, 409);
    t.is(reused.body.error.code, 'client_key_reused');
    const listed = await call('GET', '/api/booking-providers', { token: u.accessToken });
    t.is(listed.body.items[0].last_backfill.id, started.body.id);

    // A new job over the same bookings changes nothing: every version was imported already.
    const second = await backfill(u, c.id, { since: ago(60) });
    t.is(second.status, 202);
    t.not(second.body.id, started.body.id);
    t.like(await services.temporal.workflow.getHandle(second.body.workflow_id).result(), {
      status: 'completed',
      bookings: 14,
      created: 0,
      unchanged: 14,
      unmatched: 0,
    });

    t.true((await replayLive(services.temporal, started.body.workflow_id)) > 0);
    await replayFixture(services.temporal, 'bookingBackfill', started.body.workflow_id);
  },
);

test('since bounds the import; a request while a backfill runs returns it; 400 invalid_since and invalid_body', async (t) => {
  const { services } = await api();
  const { u, c, bookings } = await setup(0);
  const recent = await backfill(u, c.id, { since: ago(20) });
  const result = await services.temporal.workflow.getHandle(recent.body.workflow_id).result();
  const expected = bookings.filter((b) => b.startsAt.getTime() >= Date.parse(recent.body.since)).length;
  t.like(result, { status: 'completed', bookings: expected, unmatched: expected });
  t.true(expected < 14 && expected > 0);

  // One queued or running job per provider: a request meanwhile returns it.
  const [{ id }] = await (
    await em()
  ).execute<{ id: string }[]>(
    `insert into booking_backfills (id, workspace_id, booking_provider_id, user_id, since, status, pages, bookings, created, updated, unchanged, unmatched, invalid, created_at, updated_at)
     select gen_random_uuid(), workspace_id, id, ?, now() - interval '1 day', 'running', 0, 0, 0, 0, 0, 0, 0, now(), now() from booking_providers where id = ? returning id`,
    [u.id, c.id],
  );
  const joined = await backfill(u, c.id, { since: ago(30) });
  t.is(joined.status, 202);
  t.is(joined.body.id, id);
  await services.temporal.workflow.getHandle(joined.body.workflow_id).result();

  for (const since of [new Date(Date.now() + DAY).toISOString(), ago(731)]) {
    const r = await backfill(u, c.id, { since });
    t.is(r.status, 400, since);
    t.is(r.body.error.code, 'invalid_since');
  }
  for (const body of [{ since: 'yesterday' }, { client_key: '  ' }, { limit: 5 }]) {
    const r = await backfill(u, c.id, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
});

test('a failed attempt resumes after its last committed page: every booking counted once, no meeting twice', async (t) => {
  const { services } = await api();
  const { u, c, leadIds } = await setup(5);
  const e = (await em()) as unknown as EntityManager;
  const actor = await resolveActor(e, { userId: u.id, kind: 'session' }, undefined);
  // The operation row only: this test starts its workflow itself, with small pages and a failure.
  const noStart = withStart(services.jobs, 'booking-backfill', async () => {});
  const { backfill: b } = await startBackfill(e, noStart, actor, c.id, { since: new Date(Date.now() - 60 * DAY) });
  const handle = await services.temporal.workflow.start('bookingBackfill', {
    taskQueue: services.config.temporal.taskQueue,
    workflowId: bookingWorkflowIds.backfill(c.id, b.id),
    args: [{ backfillId: b.id, pageSize: 3, failFirstAttemptAfterPages: 2 }],
  });
  t.deepEqual(await handle.result(), {
    status: 'completed',
    pages: 5,
    bookings: 14,
    created: 5,
    updated: 0,
    unchanged: 0,
    unmatched: 9,
  });
  const history = await handle.fetchHistory();
  const attempts = (history.events ?? [])
    .filter((ev) => ev.activityTaskStartedEventAttributes)
    .map((ev) => ev.activityTaskStartedEventAttributes!.attempt);
  t.true(attempts.includes(2), 'the paging activity ran a second attempt');
  for (const leadId of leadIds) t.is((await meetingsOf(u, leadId)).length, 1);
  const [{ n }] = await e.execute<{ n: number }[]>(
    `select count(*)::int as n from booking_provider_events where booking_provider_id = ?`,
    [c.id],
  );
  t.is(n, 14);
});

test.serial(
  'the periodic sweep backfills each connected provider from a day back, once per hour and never beside a running job; replays',
  async (t) => {
    const { services } = await api();
    const { u, c, bookings } = await setup(2);
    const workspaceId = await workspaceIdOf(u.id);
    const sweep = async () => {
      const workflowId = `booking-backfill-sweep-test:${randomUUID()}`;
      const r = (await services.temporal.workflow.execute('bookingBackfillSweep', {
        taskQueue: services.config.temporal.taskQueue,
        workflowId,
        args: [{ workspaceId }],
      })) as { started: number };
      return { ...r, workflowId };
    };
    const first = await sweep();
    t.is(first.started, 1);
    const job = (await call('GET', '/api/booking-providers', { token: u.accessToken })).body.items[0].last_backfill;
    t.regex(job.client_key, /^sweep:\d{4}-\d{2}-\d{2}T\d{2}$/);
    t.true(Math.abs(Date.parse(job.since) - (Date.now() - DAY)) < 120_000, 'from a day back');
    const result = (await services.temporal.workflow.getHandle(job.workflow_id).result()) as BookingBackfillResult;
    const expected = bookings.filter((b) => b.startsAt.getTime() >= Date.parse(job.since)).length;
    t.like(result, { status: 'completed', bookings: expected });
    await replayFixture(services.temporal, 'bookingBackfillSweep', first.workflowId);

    // The same hour: nothing new. A job the user started is never doubled either.
    t.is((await sweep()).started, 0);
    const mine = await backfill(u, c.id, { since: ago(30) });
    t.is(mine.status, 202);
    const during = await sweep();
    t.is(during.started, 0);
    await services.temporal.workflow.getHandle(mine.body.workflow_id).result();
    // A provider whose credentials were refused is skipped.
    await (await em()).execute(`update booking_providers set status = 'invalid_credentials' where id = ?`, [c.id]);
    await (await em()).execute(`update booking_backfills set client_key = null where booking_provider_id = ?`, [c.id]);
    t.is((await sweep()).started, 0);
  },
);
