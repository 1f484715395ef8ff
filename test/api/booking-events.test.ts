// Inbound booking events (docs/meetings.md "Booking events"): signed and verified, stored once per
// event id, handled by `booking-event:<id>`; matched to leads by tracking lead id or attendee email;
// a reschedule or cancellation updates the same meeting; unmatched bookings are attached or dismissed.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { signBookingEvent } from '../../lib/booking/wire.js';
import { bookingWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, closeApi, createTestApp, type TestUser } from '../helpers/api.js';
import { em } from '../helpers/billing.js';
import { bookingEvent, connectScheduler, deliver, hookedScheduler, postHook } from '../helpers/booking.js';
import { seedContacts } from '../helpers/contacts.js';
import { at, withLead } from '../helpers/meetings.js';
import { replayFixture } from '../helpers/replay.js';
import { addMemberViaInvite } from '../helpers/team.js';
test.after.always(closeApi);

const meetingsOf = async (u: TestUser, leadId: string) =>
  (await call('GET', `/api/leads/${leadId}/meetings`, { token: u.accessToken })).body.items;
const storedEvents = async (providerId: string) =>
  Number(
    (
      await (
        await em()
      ).execute(`select count(*)::int as n from booking_provider_events where booking_provider_id = ?`, [providerId])
    )[0].n,
  );

test('a booking by a lead’s email creates its meeting; a reschedule and a cancellation update that same meeting; a redelivery is stored once; replays', async (t) => {
  const { services } = await api();
  const { u, leadId, contactId, email } = await withLead();
  const hook = await hookedScheduler(u);
  const bookingId = `bk_${randomUUID()}`;
  // The attendee's address as typed by the lead: case and spaces differ from the contact's.
  const created = bookingEvent('booking.created', {
    bookingId,
    startsAt: at(24),
    endsAt: at(25),
    attendees: [{ email: `  ${email.toUpperCase()} `, name: 'Grace' }],
    updatedAt: at(-1),
  });
  const first = await deliver(hook.id, hook.secret, created);
  t.deepEqual(first.response.body, { received: true, duplicate: false });
  t.like(first.result, { state: 'matched', effect: 'created' });
  const [meeting] = await meetingsOf(u, leadId);
  t.like(meeting, {
    id: first.result.meetingId,
    lead_id: leadId,
    contact_id: contactId,
    source: 'booking',
    status: 'scheduled',
    booking_provider_id: hook.id,
    provider: 'scheduler',
    external_id: bookingId,
    title: 'Intro call',
  });
  t.is(meeting.starts_at, created.data.booking.start_time);

  const again = await postHook(hook.id, JSON.stringify(created), hook.secret);
  t.deepEqual(again.body, { received: true, duplicate: true });
  t.is(await storedEvents(hook.id), 1);

  const moved = bookingEvent('booking.rescheduled', {
    bookingId,
    title: 'Intro call (moved)',
    startsAt: at(48),
    endsAt: at(48.5),
    attendees: [{ email }],
    updatedAt: at(0),
  });
  const second = await deliver(hook.id, hook.secret, moved);
  t.like(second.result, { state: 'matched', effect: 'updated', meetingId: meeting.id });
  const afterMove = await meetingsOf(u, leadId);
  t.is(afterMove.length, 1, 'the same meeting, not a second one');
  t.like(afterMove[0], {
    id: meeting.id,
    title: 'Intro call (moved)',
    starts_at: moved.data.booking.start_time,
    ends_at: moved.data.booking.end_time,
    status: 'scheduled',
  });

  // A late delivery of an older version changes nothing.
  const late = bookingEvent('booking.rescheduled', {
    bookingId,
    startsAt: at(30),
    endsAt: at(31),
    attendees: [{ email }],
    updatedAt: at(-0.5),
  });
  t.like((await deliver(hook.id, hook.secret, late)).result, { state: 'matched', effect: 'stale' });
  t.is((await meetingsOf(u, leadId))[0].starts_at, moved.data.booking.start_time);

  const canceled = bookingEvent('booking.canceled', {
    bookingId,
    startsAt: at(48),
    endsAt: at(48.5),
    attendees: [{ email }],
    updatedAt: new Date(Date.now() + 1000).toISOString(),
  });
  t.like((await deliver(hook.id, hook.secret, canceled)).result, { state: 'matched', effect: 'updated' });
  const [after] = await meetingsOf(u, leadId);
  t.like(after, { id: meeting.id, status: 'canceled' });
  t.truthy(after.canceled_at);

  const handle = services.temporal.workflow.getHandle(bookingWorkflowIds.event(first.eventRowId));
  const [{ workspace_id }] = await (
    await em()
  ).execute(`select workspace_id from booking_providers where id = ?`, [hook.id]);
  t.deepEqual((await handle.describe()).searchAttributes.WorkspaceId, [workspace_id]);
  await replayFixture(services.temporal, 'handleBookingEvent', bookingWorkflowIds.event(first.eventRowId));
});

test('bad, missing or stale signatures, an unknown provider id, or no registered webhook: 401 invalid_signature, nothing stored', async (t) => {
  const { u, email } = await withLead();
  const hook = await hookedScheduler(u);
  const body = JSON.stringify(
    bookingEvent('booking.created', { startsAt: at(2), endsAt: at(3), attendees: [{ email }] }),
  );
  const now = Date.now();
  const cases: [string, Promise<Awaited<ReturnType<typeof postHook>>>][] = [
    ['no header', postHook(hook.id, body, null)],
    ['wrong secret', postHook(hook.id, body, 'whsec_another')],
    [
      'another body',
      postHook(hook.id, body, null, { signature: signBookingEvent(hook.secret, body.replace('Intro', 'Other')) }),
    ],
    ['stale (6 minutes old)', postHook(hook.id, body, hook.secret, { at: new Date(now - 6 * 60_000) })],
    ['from the future', postHook(hook.id, body, hook.secret, { at: new Date(now + 6 * 60_000) })],
    ['malformed', postHook(hook.id, body, null, { signature: 't=abc,v1=zz' })],
    ['unknown provider id', postHook(randomUUID(), body, hook.secret)],
  ];
  for (const [name, p] of cases) {
    const r = await p;
    t.is(r.status, 401, name);
    t.is(r.body.error.code, 'invalid_signature', name);
  }
  // Connected but never registered: there is no secret to verify with.
  const bare = await connectScheduler(u);
  t.is((await postHook(bare.id, body, hook.secret)).status, 401);
  t.is(await storedEvents(hook.id), 0);
  t.is((await postHook('not-a-uuid', body, hook.secret)).status, 400);
});

test('a signed body that is not a booking event is 400 invalid_body; an oversized one 413; nothing stored', async (t) => {
  const { u } = await withLead();
  const hook = await hookedScheduler(u);
  const valid = bookingEvent('booking.created', {
    startsAt: at(2),
    endsAt: at(3),
    attendees: [{ email: 'x@example.test' }],
  });
  const bodies = [
    'not json',
    JSON.stringify({ ...valid, type: 'booking.deleted' }),
    JSON.stringify({ ...valid, data: { booking: { ...valid.data.booking, end_time: valid.data.booking.start_time } } }),
    JSON.stringify({ ...valid, data: { booking: { ...valid.data.booking, attendees: [] } } }),
    JSON.stringify({ ...valid, id: 'evt with spaces' }),
  ];
  for (const body of bodies) {
    const r = await postHook(hook.id, body, hook.secret);
    t.is(r.status, 400, body.slice(0, 60));
    t.is(r.body.error.code, 'invalid_body');
  }
  const big = JSON.stringify({ ...valid, padding: 'x'.repeat(300 * 1024) });
  const r = await postHook(hook.id, big, hook.secret);
  t.is(r.status, 413);
  t.is(await storedEvents(hook.id), 0);
});

test('matching: the tracking lead id wins; a contact in several lists goes to the lead whose enrollment replied last, else the newest lead', async (t) => {
  const { u, ws, app, leadId: trackedLead } = await withLead();
  const hook = await hookedScheduler(u);
  const email = `multi-${randomUUID()}@example.test`;
  const listA = (
    await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: `A ${randomUUID()}` } })
  ).body.id;
  const listB = (
    await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: `B ${randomUUID()}` } })
  ).body.id;
  const [c] = await seedContacts(ws, [{ email, lists: [listA, listB] }]);
  // Tracking lead id beats the attendee's email.
  const tracked = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.created', {
      startsAt: at(5),
      endsAt: at(6),
      attendees: [{ email }],
      trackingLeadId: trackedLead,
    }),
  );
  t.like(tracked.result, { state: 'matched', effect: 'created' });
  t.is((await meetingsOf(u, trackedLead)).length, 1);
  // A tracking value that is not a lead of the workspace is ignored: the email decides (newest lead: B).
  const byEmail = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.created', {
      startsAt: at(7),
      endsAt: at(8),
      attendees: [{ email: 'stranger@example.test' }, { email }],
      trackingLeadId: randomUUID(),
    }),
  );
  t.like(byEmail.result, { state: 'matched', effect: 'created' });
  t.is(
    (await meetingsOf(u, c.leads[listB])).length,
    1,
    'a guest’s email matches too; the newest lead without enrollments',
  );
  // Lead A's enrollment replied: A wins from now on.
  const e = await em();
  const campaign = (
    await call('POST', `/api/apps/${app.id}/campaigns`, {
      token: u.accessToken,
      body: { name: `C ${randomUUID()}`, time_zone: 'Europe/London' },
    })
  ).body;
  t.truthy(campaign.id, JSON.stringify(campaign));
  await e.execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, replied_at, enrolled_at, created_at, updated_at)
     values (gen_random_uuid(), ?, ?, ?, ?, 'replied', 1, 1, now(), now(), now(), now())`,
    [ws, campaign.id, c.leads[listA], c.id],
  );
  const replied = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.created', { startsAt: at(9), endsAt: at(10), attendees: [{ email }] }),
  );
  t.like(replied.result, { state: 'matched', effect: 'created' });
  t.is((await meetingsOf(u, c.leads[listA])).length, 1);
});

test('unmatched bookings wait to be attached (the meeting is created; later events follow it) or dismissed (later events dismissed too); 409 and 400 invalid_lead; cross-workspace 404', async (t) => {
  const { u, leadId } = await withLead();
  const hook = await hookedScheduler(u);
  const bookingId = `bk_${randomUUID()}`;
  const unknown = `nobody-${randomUUID()}@example.test`;
  const v1 = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.created', {
      bookingId,
      startsAt: at(24),
      endsAt: at(25),
      attendees: [{ email: unknown, name: 'Nobody' }],
      updatedAt: at(-2),
    }),
  );
  t.like(v1.result, { state: 'unmatched', meetingId: null });
  // A newer version of the same booking replaces the older one in the list.
  const newer = bookingEvent('booking.rescheduled', {
    bookingId,
    startsAt: at(26),
    endsAt: at(27),
    attendees: [{ email: unknown, name: 'Nobody' }],
    updatedAt: at(-1),
  });
  const v2 = await deliver(hook.id, hook.secret, newer);
  t.like(v2.result, { state: 'unmatched' });
  const list = await call('GET', '/api/booking-provider-events/unmatched', { token: u.accessToken });
  t.is(list.status, 200);
  t.deepEqual(
    list.body.items.map((e: { id: string }) => e.id),
    [v2.eventRowId],
  );
  t.like(list.body.items[0], {
    booking_provider_id: hook.id,
    provider: 'scheduler',
    type: 'booking.rescheduled',
    state: 'unmatched',
    lead_id: null,
    booking: { id: bookingId, attendees: [{ email: unknown, name: 'Nobody' }] },
  });

  // Another workspace cannot see, attach or dismiss it.
  const other = await withLead();
  t.deepEqual(
    (await call('GET', '/api/booking-provider-events/unmatched', { token: other.u.accessToken })).body.items,
    [],
  );
  t.is(
    (
      await call('POST', `/api/booking-provider-events/${v2.eventRowId}/attach`, {
        token: other.u.accessToken,
        body: { lead_id: other.leadId },
      })
    ).status,
    404,
  );
  t.is(
    (await call('POST', `/api/booking-provider-events/${v2.eventRowId}/dismiss`, { token: other.u.accessToken }))
      .status,
    404,
  );
  const badLead = await call('POST', `/api/booking-provider-events/${v2.eventRowId}/attach`, {
    token: u.accessToken,
    body: { lead_id: other.leadId },
  });
  t.is(badLead.status, 400);
  t.is(badLead.body.error.code, 'invalid_lead');
  t.is(
    (
      await call('POST', `/api/booking-provider-events/${v1.eventRowId}/attach`, {
        token: u.accessToken,
        body: { lead_id: leadId },
      })
    ).body.error.code,
    'invalid_transition',
    'a superseded event',
  );

  const attached = await call('POST', `/api/booking-provider-events/${v2.eventRowId}/attach`, {
    token: u.accessToken,
    body: { lead_id: leadId },
  });
  t.is(attached.status, 200, attached.text);
  t.like(attached.body, {
    event: { state: 'attached', lead_id: leadId },
    meeting: { lead_id: leadId, source: 'booking', external_id: bookingId, starts_at: newer.data.booking.start_time },
  });
  t.is(attached.body.event.meeting_id, attached.body.meeting.id);
  const again = await call('POST', `/api/booking-provider-events/${v2.eventRowId}/attach`, {
    token: u.accessToken,
    body: { lead_id: leadId },
  });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'invalid_transition');
  t.is(
    (await call('POST', `/api/booking-provider-events/${v2.eventRowId}/dismiss`, { token: u.accessToken })).status,
    409,
  );
  t.deepEqual((await call('GET', '/api/booking-provider-events/unmatched', { token: u.accessToken })).body.items, []);
  // The booking's next event follows the attached meeting.
  const v3 = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.canceled', {
      bookingId,
      startsAt: at(26),
      endsAt: at(27),
      attendees: [{ email: unknown }],
      updatedAt: at(0),
    }),
  );
  t.like(v3.result, { state: 'matched', effect: 'updated', meetingId: attached.body.meeting.id });
  t.like((await meetingsOf(u, leadId))[0], { status: 'canceled' });

  // Dismissed: gone from the list, and the booking's later events are dismissed too.
  const other2 = `bk_${randomUUID()}`;
  const d1 = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.created', {
      bookingId: other2,
      startsAt: at(30),
      endsAt: at(31),
      attendees: [{ email: unknown }],
      updatedAt: at(-1),
    }),
  );
  const dismissed = await call('POST', `/api/booking-provider-events/${d1.eventRowId}/dismiss`, {
    token: u.accessToken,
  });
  t.is(dismissed.status, 200);
  t.like(dismissed.body, { state: 'dismissed' });
  t.truthy(dismissed.body.decided_at);
  const d2 = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.rescheduled', {
      bookingId: other2,
      startsAt: at(32),
      endsAt: at(33),
      attendees: [{ email: unknown }],
      updatedAt: at(0),
    }),
  );
  t.like(d2.result, { state: 'dismissed' });
  t.deepEqual((await call('GET', '/api/booking-provider-events/unmatched', { token: u.accessToken })).body.items, []);
  t.is(
    (await call('POST', `/api/booking-provider-events/${randomUUID()}/dismiss`, { token: u.accessToken })).status,
    404,
  );
  t.is(
    (
      await call('POST', `/api/booking-provider-events/${randomUUID()}/attach`, {
        token: u.accessToken,
        body: { lead_id: leadId },
      })
    ).status,
    404,
  );
});

test('a booked meeting changes time, title and status only at the provider (409 booking_managed); after a disconnection it is kept and editable', async (t) => {
  const { u, leadId, email } = await withLead();
  const hook = await hookedScheduler(u);
  const { result } = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.created', { startsAt: at(-3), endsAt: at(-2), attendees: [{ email }] }),
  );
  const id = result.meetingId!;
  const moved = await call('PATCH', `/api/meetings/${id}`, {
    token: u.accessToken,
    body: { starts_at: at(5), ends_at: at(6) },
  });
  t.is(moved.status, 409);
  t.is(moved.body.error.code, 'booking_managed');
  t.is(
    (await call('PATCH', `/api/meetings/${id}`, { token: u.accessToken, body: { status: 'canceled' } })).body.error
      .code,
    'booking_managed',
  );
  const outcome = await call('PATCH', `/api/meetings/${id}`, {
    token: u.accessToken,
    body: { outcome: 'held', notes: 'Good fit' },
  });
  t.is(outcome.status, 200, outcome.text);
  t.like(outcome.body, { outcome: 'held', notes: 'Good fit' });

  t.is((await call('DELETE', `/api/booking-providers/${hook.id}`, { token: u.accessToken })).status, 204);
  const [kept] = await meetingsOf(u, leadId);
  t.like(kept, { id, booking_provider_id: null, provider: 'scheduler', source: 'booking', outcome: 'held' });
  const edited = await call('PATCH', `/api/meetings/${id}`, { token: u.accessToken, body: { title: 'Renamed' } });
  t.is(edited.status, 200);
  // The disconnected provider's hook refuses everything.
  const body = JSON.stringify(
    bookingEvent('booking.created', { startsAt: at(2), endsAt: at(3), attendees: [{ email }] }),
  );
  t.is((await postHook(hook.id, body, hook.secret)).status, 401);
});

test('meetings of another product: an unmatched booking cannot be attached by a member without that product (403 not_assigned)', async (t) => {
  const { u, leadId } = await withLead();
  const hook = await hookedScheduler(u);
  const { eventRowId } = await deliver(
    hook.id,
    hook.secret,
    bookingEvent('booking.created', {
      startsAt: at(2),
      endsAt: at(3),
      attendees: [{ email: `n-${randomUUID()}@example.test` }],
    }),
  );
  const other = await createTestApp(u, 'Other');
  const { user } = await addMemberViaInvite(u, { role: 'member', all_apps: false, app_ids: [other.id] });
  const r = await call('POST', `/api/booking-provider-events/${eventRowId}/attach`, {
    token: user.accessToken,
    headers: { 'x-acting-as': u.id },
    body: { lead_id: leadId },
  });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'not_assigned');
});
