import { z } from 'zod';
import { BACKFILL_STATUSES, type IBookingBackfill } from '../../db/entities/BookingBackfill.js';
import { BOOKING_CONNECTION_STATUSES, type IBookingConnection } from '../../db/entities/BookingConnection.js';
import { BOOKING_EVENT_STATES, type IBookingProviderEvent } from '../../db/entities/BookingProviderEvent.js';
import { BACKFILL_DAYS } from '../../domain/booking/backfill.js';
import { hookUrl } from '../../domain/booking/providers.js';
import { BOOKING_EVENT_TYPES, BOOKING_PROVIDERS, BOOKING_STATUSES } from '../../lib/booking/types.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { bookingWorkflowIds } from '../../lib/workflow-ids.js';
import { MeetingView } from '../meetings/schemas.js';
import { Timestamp, iso, text } from '../schemas.js';

export const ProviderParams = z.object({
  provider: z.string().max(40).meta({ description: 'An OAuth booking provider: `calendar`' }),
});
export const ListQuery = z.object({ ...pageQuery }).strict();

export const ApiKeyBody = z
  .object({
    api_key: z
      .string()
      .min(16)
      .max(512)
      .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
      .meta({
        description:
          'The scheduler API key: checked at the provider before it is saved; stored encrypted, shown masked afterwards',
      }),
  })
  .strict();

export const OAuthStartBody = z
  .object({
    login_hint: z
      .email()
      .max(320)
      .optional()
      .meta({ description: 'The provider account’s email, passed on as `login_hint`' }),
  })
  .strict();

export const BackfillBody = z
  .object({
    since: z.iso
      .datetime({ offset: true })
      .transform((s) => new Date(s))
      .optional()
      .meta({
        description: `Bookings starting at or after this instant, in the past and at most ${BACKFILL_DAYS.max} days back (400 invalid_since); default ${BACKFILL_DAYS.default} days back. Google Calendar without it, once read before: the changes since the last read (docs/calendar.md)`,
      }),
    client_key: text({ min: 1, max: 200, trim: true })
      .optional()
      .meta({ description: 'Repeating the request with the same key returns the same job with its progress' }),
  })
  .strict();

export const AttachBody = z
  .object({ lead_id: z.uuid().meta({ description: 'A lead of the workspace (400 invalid_lead otherwise)' }) })
  .strict();

export const BackfillView = z.object({
  id: z.uuid(),
  booking_provider_id: z.uuid(),
  workflow_id: z.string(),
  status: z.enum(BACKFILL_STATUSES),
  since: Timestamp,
  client_key: z.string().nullable(),
  progress: z.object({
    pages: z.number().int(),
    bookings: z.number().int().meta({ description: 'Bookings read' }),
    created: z.number().int().meta({ description: 'Meetings created' }),
    updated: z.number().int().meta({ description: 'Meetings brought up to date' }),
    unchanged: z.number().int().meta({ description: 'Already imported, older than the meeting, or dismissed' }),
    unmatched: z.number().int().meta({ description: 'Waiting in GET /api/booking-provider-events/unmatched' }),
    invalid: z.number().int().meta({ description: 'Items of the provider’s pages that were not valid bookings' }),
  }),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toBackfillView = (b: IBookingBackfill): z.infer<typeof BackfillView> => ({
  id: b.id,
  booking_provider_id: b.bookingProvider.id,
  workflow_id: bookingWorkflowIds.backfill(b.bookingProvider.id, b.id),
  status: b.status as z.infer<typeof BackfillView>['status'],
  since: b.since.toISOString(),
  client_key: b.clientKey ?? null,
  progress: {
    pages: b.pages,
    bookings: b.bookings,
    created: b.created,
    updated: b.updated,
    unchanged: b.unchanged,
    unmatched: b.unmatched,
    invalid: b.invalid,
  },
  error: b.errorCode ? { code: b.errorCode, message: b.errorMessage ?? '' } : null,
  started_at: iso(b.startedAt),
  finished_at: iso(b.finishedAt),
  created_at: b.createdAt.toISOString(),
  updated_at: b.updatedAt.toISOString(),
});

export const ProviderView = z.object({
  id: z.uuid(),
  provider: z.enum(BOOKING_PROVIDERS),
  auth: z.enum(['api_key', 'oauth']),
  status: z.enum(BOOKING_CONNECTION_STATUSES).meta({
    description: '`invalid_credentials`: the provider refused them at the last check (reconnect, then verify)',
  }),
  status_reason: z.string().nullable(),
  account: z
    .object({ id: z.string(), name: z.string().nullable(), email: z.string().nullable() })
    .meta({ description: 'Who the credentials belong to at the provider' }),
  credential_hint: z.string().meta({ description: 'The API key or token, masked' }),
  webhook: z.object({
    registered: z.boolean(),
    url: z.string().meta({ description: 'Our inbound route for this connection (POST, signed)' }),
    secret_hint: z
      .string()
      .nullable()
      .meta({ description: 'The signing secret, masked (shown in full only by webhook/register)' }),
    registered_at: Timestamp.nullable(),
  }),
  last_verified_at: Timestamp.nullable(),
  last_backfill: BackfillView.nullable(),
  connected_by_user_id: z.uuid(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toProviderView = (
  c: IBookingConnection,
  publicBaseUrl: string,
  backfill: IBookingBackfill | null = null,
): z.infer<typeof ProviderView> => ({
  id: c.id,
  provider: c.provider as z.infer<typeof ProviderView>['provider'],
  auth: c.authKind as z.infer<typeof ProviderView>['auth'],
  status: c.status as z.infer<typeof ProviderView>['status'],
  status_reason: c.statusReason ?? null,
  account: { id: c.accountId, name: c.accountName ?? null, email: c.accountEmail ?? null },
  credential_hint: c.credentialHint,
  webhook: {
    registered: !!c.webhookRegisteredAt,
    url: hookUrl({ publicBaseUrl }, c.id),
    secret_hint: c.webhookSecretHint ?? null,
    registered_at: iso(c.webhookRegisteredAt),
  },
  last_verified_at: iso(c.lastVerifiedAt),
  last_backfill: backfill ? toBackfillView(backfill) : null,
  connected_by_user_id: c.connectedByUserId,
  created_at: c.createdAt.toISOString(),
  updated_at: c.updatedAt.toISOString(),
});

export const ProviderPage = pageSchema(ProviderView);

export const OAuthStartView = z.object({
  provider: z.enum(BOOKING_PROVIDERS),
  authorization_url: z
    .url()
    .meta({ description: 'Open it in the user’s browser; the provider sends it back to redirect_uri' }),
  state: z.string(),
  redirect_uri: z.url(),
  expires_at: Timestamp,
});

export const VerifyView = z.object({
  booking_provider: ProviderView,
  verification: z.object({ ok: z.boolean(), error: z.string().nullable() }),
});

export const WebhookView = z.object({
  booking_provider: ProviderView,
  webhook: z.object({
    url: z.string(),
    secret: z
      .string()
      .meta({ description: 'The HMAC-SHA256 signing secret (docs/meetings.md "Inbound events"): shown only here' }),
    registered_at: Timestamp,
  }),
});

export const EventView = z.object({
  id: z.uuid(),
  booking_provider_id: z.uuid().nullable().meta({ description: 'Null once that provider was disconnected' }),
  provider: z.string(),
  type: z.enum(BOOKING_EVENT_TYPES),
  state: z.enum(BOOKING_EVENT_STATES),
  booking: z.object({
    id: z.string(),
    status: z.enum(BOOKING_STATUSES),
    title: z.string(),
    starts_at: Timestamp,
    ends_at: Timestamp,
    location: z.string().nullable(),
    attendees: z.array(z.object({ email: z.string(), name: z.string().nullable() })),
    updated_at: Timestamp,
  }),
  lead_id: z.uuid().nullable(),
  meeting_id: z.uuid().nullable(),
  received_at: Timestamp,
  decided_at: Timestamp.nullable(),
});

export const toEventView = (e: IBookingProviderEvent): z.infer<typeof EventView> => {
  const p = e.payload as { location?: string | null; attendees?: { email: string; name?: string | null }[] };
  return {
    id: e.id,
    booking_provider_id: e.bookingProvider?.id ?? null,
    provider: e.provider,
    type: e.type as z.infer<typeof EventView>['type'],
    state: e.state as z.infer<typeof EventView>['state'],
    booking: {
      id: e.bookingId,
      status: e.bookingStatus as z.infer<typeof EventView>['booking']['status'],
      title: e.title,
      starts_at: e.startsAt.toISOString(),
      ends_at: e.endsAt.toISOString(),
      location: p.location ?? null,
      attendees: (p.attendees ?? []).map((a) => ({ email: a.email, name: a.name ?? null })),
      updated_at: e.bookingUpdatedAt.toISOString(),
    },
    lead_id: e.leadId ?? null,
    meeting_id: e.meetingId ?? null,
    received_at: e.receivedAt.toISOString(),
    decided_at: iso(e.decidedAt),
  };
};

export const EventPage = pageSchema(EventView);
export const AttachView = z.object({ event: EventView, meeting: MeetingView });
