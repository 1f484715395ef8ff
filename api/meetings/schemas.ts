import { z } from 'zod';
import { MEETING_OUTCOMES, MEETING_SOURCES, MEETING_STATUSES, type IMeeting } from '../../db/entities/Meeting.js';
import { MEETING_LIMITS } from '../../domain/meetings/meetings.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, iso, text } from '../schemas.js';

export const LeadIdParams = z.object({ leadId: z.uuid() });

/** An instant with its offset (`2026-03-02T10:00:00+01:00` or `…Z`). */
const instant = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .transform((s) => new Date(s))
    .meta({ description });

const TIME_RULE = `ends_at after starts_at, at most ${MEETING_LIMITS.maxDurationMs / 3_600_000} hours later; starts_at within ${MEETING_LIMITS.pastYears} years back and ${MEETING_LIMITS.futureYears} ahead (400 invalid_time_range)`;
const title = text({ min: 1, max: 300, trim: true });
const location = text({ max: 500, trim: true })
  .nullable()
  .meta({ description: 'A place or a meeting link; blank clears it' });
const notes = text({ max: 5000 }).nullable();
const outcome = z.enum(MEETING_OUTCOMES).nullable().meta({
  description: '`held` and `no_show` only once the meeting has started; null: nothing recorded (docs/meetings.md)',
});

export const ListMeetingsQuery = z.object({ ...pageQuery, status: z.enum(MEETING_STATUSES).optional() }).strict();

export const CreateMeetingBody = z
  .object({
    title,
    starts_at: instant(`When it starts. ${TIME_RULE}`),
    ends_at: instant('When it ends'),
    location: location.optional(),
    notes: notes.optional(),
    outcome: outcome.optional().meta({
      description:
        'For a meeting that already took place: `held`, `no_show` or `rescheduled` (400 invalid_outcome for a meeting not started yet)',
    }),
  })
  .strict();

export const UpdateMeetingBody = z
  .object({
    title: title.optional(),
    starts_at: instant(`New start. ${TIME_RULE}`).optional(),
    ends_at: instant('New end').optional(),
    status: z.enum(MEETING_STATUSES).optional().meta({ description: '`canceled` or back to `scheduled`' }),
    outcome: outcome.optional(),
    location: location.optional(),
    notes: notes.optional(),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'give at least one field to change' })
  .meta({
    minProperties: 1,
    description:
      'At least one field. The rules hold for the meeting as it would be after the change; a provider-managed meeting changes only its outcome and notes here (409 booking_managed)',
  });

export const MeetingView = z.object({
  id: z.uuid(),
  lead_id: z.uuid(),
  contact_id: z.uuid(),
  title: z.string(),
  starts_at: Timestamp,
  ends_at: Timestamp,
  status: z.enum(MEETING_STATUSES),
  outcome: z.enum(MEETING_OUTCOMES).nullable(),
  outcome_at: Timestamp.nullable(),
  location: z.string().nullable(),
  notes: z.string().nullable(),
  source: z.enum(MEETING_SOURCES),
  booking_provider_id: z
    .uuid()
    .nullable()
    .meta({ description: 'The connection managing it; null for manual meetings and after a disconnection' }),
  provider: z.string().nullable(),
  external_id: z.string().nullable().meta({ description: 'The provider’s booking id' }),
  canceled_at: Timestamp.nullable(),
  created_by_user_id: z.uuid().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toMeetingView = (m: IMeeting): z.infer<typeof MeetingView> => ({
  id: m.id,
  lead_id: m.lead.id,
  contact_id: m.contact.id,
  title: m.title,
  starts_at: m.startsAt.toISOString(),
  ends_at: m.endsAt.toISOString(),
  status: m.status as z.infer<typeof MeetingView>['status'],
  outcome: (m.outcome ?? null) as z.infer<typeof MeetingView>['outcome'],
  outcome_at: iso(m.outcomeAt),
  location: m.location ?? null,
  notes: m.notes ?? null,
  source: m.source as z.infer<typeof MeetingView>['source'],
  booking_provider_id: m.bookingProvider?.id ?? null,
  provider: m.provider ?? null,
  external_id: m.externalId ?? null,
  canceled_at: iso(m.canceledAt),
  created_by_user_id: m.createdByUserId ?? null,
  created_at: m.createdAt.toISOString(),
  updated_at: m.updatedAt.toISOString(),
});

export const MeetingPage = pageSchema(MeetingView);
