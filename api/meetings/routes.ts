// Meetings with leads (docs/meetings.md).
import { createMeeting, listLeadMeetings, updateMeeting } from '../../domain/meetings/meetings.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  CreateMeetingBody,
  LeadIdParams,
  ListMeetingsQuery,
  MeetingPage,
  MeetingView,
  UpdateMeetingBody,
  toMeetingView,
} from './schemas.js';

const tag = 'meetings';
const auth = { 401: ['unauthorized'] };
/** Blank text clears a field. */
const orNull = (s: string | null | undefined) => (s === undefined ? undefined : s || null);

export const listLeadMeetingsOp = defineOperation({
  method: 'GET',
  path: '/api/leads/{leadId}/meetings',
  ids: { path: { leadId: 'lead' } },
  summary: 'The lead’s meetings (manual and booked), by start time',
  tag,
  auth: 'user',
  params: LeadIdParams,
  query: ListMeetingsQuery,
  responses: { 200: MeetingPage },
  errors: {
    400: ['invalid_id', 'invalid_query', 'invalid_cursor', 'invalid_user'],
    ...auth,
    403: ['not_assigned'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, query }) =>
    page(
      await listLeadMeetings(em, actor, params.leadId, { status: query.status }, toPageRequest(query)),
      query.limit,
      toMeetingView,
    ),
});

export const createMeetingOp = defineOperation({
  method: 'POST',
  path: '/api/leads/{leadId}/meetings',
  ids: { path: { leadId: 'lead' } },
  summary: 'Log a meeting with the lead by hand (a past one may carry its outcome)',
  tag,
  auth: 'user',
  params: LeadIdParams,
  body: CreateMeetingBody,
  responses: { 201: MeetingView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_time_range', 'invalid_outcome', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) => {
    const m = await createMeeting(em, actor, params.leadId, {
      title: body.title,
      startsAt: body.starts_at,
      endsAt: body.ends_at,
      location: orNull(body.location),
      notes: orNull(body.notes),
      outcome: body.outcome,
    });
    return reply(201, toMeetingView(m));
  },
});

export const updateMeetingOp = defineOperation({
  method: 'PATCH',
  path: '/api/meetings/{id}',
  ids: { path: { id: 'meeting' } },
  summary: 'Change a meeting: its outcome, time, title, status, location or notes',
  description:
    'Outcome transitions (docs/meetings.md): `held` and `no_show` need a scheduled meeting that has started, `rescheduled` a scheduled one, and a canceled meeting has no outcome (409 `invalid_transition`). A meeting a connected booking provider manages changes its time, title, status and location only at the provider (409 `booking_managed`).',
  tag,
  auth: 'user',
  params: IdParams,
  body: UpdateMeetingBody,
  responses: { 200: MeetingView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_time_range', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['invalid_transition', 'booking_managed'],
  },
  handler: async ({ em, actor, params, body }) =>
    toMeetingView(
      await updateMeeting(em, actor, params.id, {
        title: body.title,
        startsAt: body.starts_at,
        endsAt: body.ends_at,
        status: body.status,
        outcome: body.outcome,
        location: orNull(body.location),
        notes: orNull(body.notes),
      }),
    ),
});
