// The local booking providers' pieces (the offline default): the inbound envelope's signature and
// parsing (the local providers' hook, api/booking/hook-routes.ts), and the local provider's
// deterministic bookings. Cal.com and Google Calendar have their own tests (booking-calcom,
// booking-google-calendar).
import test from 'ava';
import { localBookings } from '../../lib/booking/index.js';
import { checkBookingSignature, parseBookingEvent, signBookingEvent } from '../../lib/booking/wire.js';

const T0 = '2026-11-20T10:00:00.000Z';
const T1 = '2026-11-20T10:30:00.000Z';

test('inbound signature: constant-time HMAC over "<t>.<body>", 5-minute window, rotation-friendly (any v1 may match)', (t) => {
  const body = Buffer.from('{"id":"evt_1"}');
  const now = new Date('2026-11-20T10:00:00Z');
  const good = signBookingEvent('whsec_a', body, now);
  t.regex(good, /^t=\d+,v1=[0-9a-f]{64}$/);
  t.deepEqual(checkBookingSignature('whsec_a', body, good, now), { ok: true });
  t.deepEqual(checkBookingSignature('whsec_a', body, `${good},v1=${'0'.repeat(64)}`, now), { ok: true });
  t.like(checkBookingSignature('whsec_b', body, good, now), { ok: false, reason: 'signature does not match' });
  t.like(checkBookingSignature('whsec_a', Buffer.from('{"id":"evt_2"}'), good, now), { ok: false });
  t.deepEqual(checkBookingSignature('whsec_a', body, good, new Date(now.getTime() + 301_000)), {
    ok: false,
    reason: 'signature timestamp outside the 5-minute window',
  });
  t.like(checkBookingSignature('whsec_a', body, undefined, now), { ok: false, reason: 'signature header missing' });
  t.like(checkBookingSignature('whsec_a', body, 'v1=abc', now), { ok: false, reason: 'signature header malformed' });
});

test('inbound events: parsed into bookings (clipped title, tracking lead id checked); malformed ones name the first problem', (t) => {
  const booking = {
    id: 'bk-1',
    status: 'canceled',
    title: `  ${'T'.repeat(400)}  `,
    start_time: '2026-11-20T11:00:00+01:00',
    end_time: T1,
    attendees: [{ email: 'grace@example.test' }],
    updated_at: T0,
  };
  const ok = parseBookingEvent({ id: 'evt_1', type: 'booking.canceled', data: { booking } });
  if (!('event' in ok)) return t.fail(ok.error);
  t.like(ok.event, {
    eventId: 'evt_1',
    type: 'booking.canceled',
    createdAt: null,
    booking: { bookingId: 'bk-1', status: 'canceled', startsAt: new Date(T0), location: null, trackingLeadId: null },
  });
  t.is(ok.event.booking.title.length, 300);
  t.deepEqual(ok.event.booking.attendees, [{ email: 'grace@example.test', name: null }]);
  const problem = (json: unknown) => {
    const r = parseBookingEvent(json);
    return 'error' in r ? r.error : '';
  };
  t.is(
    problem({
      id: 'evt_1',
      type: 'booking.canceled',
      data: { booking: { ...booking, end_time: '2026-11-20T09:00:00Z' } },
    }),
    'not a booking event: data.booking.end_time: end_time must be after start_time',
  );
  t.regex(problem({ id: 'evt_1', type: 'booking.moved', data: { booking } }), /^not a booking event: type: /);
  t.regex(problem([]), /^not a booking event: \(root\)/);
});

test('the local provider is deterministic per account: 14 bookings over the ISO week, 12 past and 2 ahead, every fifth canceled', (t) => {
  const now = new Date('2026-11-19T12:00:00Z'); // a Thursday
  const a = localBookings('scheduler_abc', now);
  t.deepEqual(a, localBookings('scheduler_abc', new Date('2026-11-22T23:00:00Z')), 'same week, same bookings');
  t.is(a.length, 14);
  t.is(a.filter((b) => b.startsAt < now).length, 12);
  t.deepEqual(
    a.filter((b) => b.status === 'canceled').map((b) => b.bookingId),
    ['scheduler_abc-bk-4', 'scheduler_abc-bk-9', 'scheduler_abc-bk-14'],
  );
  t.notDeepEqual(
    a.map((b) => b.attendees[0].email),
    localBookings('scheduler_other', now).map((b) => b.attendees[0].email),
  );
});
