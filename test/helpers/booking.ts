// Booking-provider tests: connecting the local scheduler, registering its webhook, and signed events
// posted to our hook as a provider would send them (docs/meetings.md "Inbound events").
import { randomUUID } from 'node:crypto';
import { signBookingEvent } from '../../lib/booking/wire.js';
import { bookingWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, type TestUser } from './api.js';
import { em } from './billing.js';
import { whenStarted } from './workflows.js';

/** A key the local scheduler accepts (any key not starting with `invalid`). */
export const schedulerKey = () => `sch_${randomUUID().replace(/-/g, '')}`;

export async function connectScheduler(
  u: TestUser,
  apiKey = schedulerKey(),
): Promise<{ id: string; apiKey: string; accountId: string }> {
  const r = await call('POST', '/api/booking-providers/scheduler/api-key', {
    token: u.accessToken,
    body: { api_key: apiKey },
  });
  if (r.status !== 201) throw new Error(`connect failed: ${r.status} ${r.text}`);
  return { id: r.body.id, apiKey, accountId: r.body.account.id };
}

/** A connected scheduler with our webhook registered: its id and signing secret. */
export async function hookedScheduler(u: TestUser): Promise<{ id: string; secret: string; accountId: string }> {
  const c = await connectScheduler(u);
  const r = await call('POST', `/api/booking-providers/${c.id}/webhook/register`, { token: u.accessToken });
  if (r.status !== 200) throw new Error(`register failed: ${r.status} ${r.text}`);
  return { id: c.id, secret: r.body.webhook.secret, accountId: c.accountId };
}

export interface BookingSpec {
  bookingId?: string;
  status?: 'scheduled' | 'canceled';
  title?: string;
  startsAt: string;
  endsAt: string;
  attendees: { email: string; name?: string | null }[];
  trackingLeadId?: string | null;
  updatedAt?: string;
}

export function bookingEvent(
  type: 'booking.created' | 'booking.rescheduled' | 'booking.canceled',
  b: BookingSpec,
  eventId = `evt_${randomUUID()}`,
) {
  return {
    id: eventId,
    type,
    created_at: new Date().toISOString(),
    data: {
      booking: {
        id: b.bookingId ?? `bk_${randomUUID()}`,
        status: b.status ?? (type === 'booking.canceled' ? 'canceled' : 'scheduled'),
        title: b.title ?? 'Intro call',
        start_time: b.startsAt,
        end_time: b.endsAt,
        location: 'https://meet.example.test/room',
        attendees: b.attendees,
        tracking: b.trackingLeadId ? { lead_id: b.trackingLeadId } : null,
        updated_at: b.updatedAt ?? new Date().toISOString(),
      },
    },
  };
}

/** Posts a body to the provider's hook, signed with `secret` (or with the given signature header). */
export async function postHook(
  providerId: string,
  body: string,
  secret: string | null,
  opts: { at?: Date; signature?: string } = {},
) {
  const signature = opts.signature ?? (secret ? signBookingEvent(secret, body, opts.at) : undefined);
  return call('POST', `/hooks/booking/${providerId}`, {
    rawBody: body,
    headers: signature ? { 'X-Booking-Signature': signature } : {},
  });
}

/** Posts a signed event and waits for its workflow `booking-event:<id>`; returns the hook's answer and the handling. */
export async function deliver(providerId: string, secret: string, event: ReturnType<typeof bookingEvent>) {
  const r = await postHook(providerId, JSON.stringify(event), secret);
  if (r.status !== 200) throw new Error(`hook refused: ${r.status} ${r.text}`);
  const [row] = await (
    await em()
  ).execute<{ id: string }[]>(`select id from booking_provider_events where booking_provider_id = ? and event_id = ?`, [
    providerId,
    event.id,
  ]);
  const handle = (await api()).services.temporal.workflow.getHandle(bookingWorkflowIds.event(row.id));
  const result = (await (await whenStarted(handle)).result()) as {
    state: string;
    effect: string | null;
    meetingId: string | null;
  };
  return { response: r, eventRowId: row.id, result };
}
