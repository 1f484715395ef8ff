// Meetings for the Operator: read the workspace's (or one lead's) meetings and booked-but-unmatched
// bookings; log a meeting or record its outcome (changes: a person confirms).
import { z } from 'zod';
import { MEETING_OUTCOMES, MEETING_STATUSES, type IMeeting } from '../../db/entities/Meeting.js';
import { listUnmatched } from '../booking/events.js';
import { createMeeting, listLeadMeetings, listWorkspaceMeetings, updateMeeting } from '../meetings/meetings.js';
import { defineTool } from './registry.js';

const DAY = 86_400_000;

const summary = (m: IMeeting) => ({
  id: m.id,
  lead_id: m.lead.id,
  title: m.title,
  starts_at: m.startsAt.toISOString(),
  ends_at: m.endsAt.toISOString(),
  status: m.status,
  outcome: m.outcome ?? null,
  source: m.source,
  location: m.location ?? null,
});

const instant = z.iso.datetime({ offset: true });

export const meetingTools = [
  defineTool({
    name: 'list_meetings',
    ids: { lead_id: 'lead' },
    domain: 'meetings',
    description:
      'List meetings with leads: one lead’s (lead_id), or the workspace’s in a time window (default from 7 days ago to 30 days ahead), soonest first, with status (scheduled/canceled) and outcome (held, no_show, rescheduled, or null when not recorded). Also counts booked meetings waiting to be matched to a lead.',
    input: z
      .object({
        lead_id: z.uuid().optional(),
        from: instant.optional(),
        to: instant.optional(),
        status: z.enum(MEETING_STATUSES).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, i) => {
      const limit = i.limit ?? 25;
      const rows = i.lead_id
        ? (await listLeadMeetings(em, actor, i.lead_id, { status: i.status }, { limit })).slice(0, limit)
        : await listWorkspaceMeetings(em, actor, {
            from: i.from ? new Date(i.from) : new Date(Date.now() - 7 * DAY),
            to: i.to ? new Date(i.to) : new Date(Date.now() + 30 * DAY),
            status: i.status,
            limit,
          });
      const unmatched = await listUnmatched(em, actor, { limit: 100 });
      return { meetings: rows.map(summary), unmatched_bookings: unmatched.length >= 101 ? '100+' : unmatched.length };
    },
  }),
  defineTool({
    name: 'log_meeting',
    ids: { meeting_id: 'meeting', lead_id: 'lead' },
    domain: 'meetings',
    description:
      'Log a meeting with a lead (title, start and end as ISO instants; at most 24 hours long), optionally with its outcome when it already took place (held, no_show, rescheduled); or, with meeting_id, record the outcome of an existing meeting (null clears it).',
    input: z
      .object({
        meeting_id: z.uuid().optional(),
        lead_id: z.uuid().optional(),
        title: z.string().trim().min(1).max(300).optional(),
        starts_at: instant.optional(),
        ends_at: instant.optional(),
        outcome: z.enum(MEETING_OUTCOMES).nullable().optional(),
        notes: z.string().max(5000).optional(),
      })
      .strict()
      .refine(
        (i) =>
          i.meeting_id
            ? i.outcome !== undefined || i.notes !== undefined
            : !!(i.lead_id && i.title && i.starts_at && i.ends_at),
        {
          message: 'give meeting_id with an outcome or notes, or lead_id, title, starts_at and ends_at',
        },
      ),
    risk: 'change',
    run: async ({ em, actor }, i) => {
      if (i.meeting_id)
        return summary(await updateMeeting(em, actor, i.meeting_id, { outcome: i.outcome, notes: i.notes }));
      return summary(
        await createMeeting(em, actor, i.lead_id!, {
          title: i.title!,
          startsAt: new Date(i.starts_at!),
          endsAt: new Date(i.ends_at!),
          outcome: i.outcome,
          notes: i.notes ?? null,
        }),
      );
    },
  }),
];
