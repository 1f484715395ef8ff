// The dashboard's "what's next" (docs/follow-ups.md "Next event").
import { z } from 'zod';
import { nextEvent } from '../../domain/follow-ups/follow-ups.js';
import { defineOperation } from '../operation.js';
import { Timestamp } from '../schemas.js';
import { FollowUpView, toFollowUp } from '../follow-ups/schemas.js';

const MeetingSummary = z.object({
  id: z.uuid(),
  lead_id: z.uuid(),
  title: z.string(),
  starts_at: Timestamp,
  ends_at: Timestamp,
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
});

const NextEventView = z.object({
  next: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('meeting'), at: Timestamp, meeting: MeetingSummary }),
      z.object({ type: z.literal('follow_up'), at: Timestamp, follow_up: FollowUpView }),
    ])
    .nullable()
    .meta({
      description:
        'Whichever comes first: the next meeting’s start or the soonest follow-up’s due time (an overdue one is first); null when there is neither',
    }),
  meeting: MeetingSummary.nullable(),
  follow_up: FollowUpView.nullable(),
});

export const nextEventOp = defineOperation({
  method: 'GET',
  path: '/api/dashboard/next-event',
  summary: 'The next meeting or due follow-up of the workspace',
  tag: 'dashboard',
  auth: 'user',
  responses: { 200: NextEventView },
  errors: { 400: ['invalid_user'], 401: ['unauthorized'] },
  handler: async ({ em, actor }) => {
    const now = new Date();
    const e = await nextEvent(em, actor, now);
    const meeting = e.meeting && {
      ...e.meeting,
      starts_at: new Date(e.meeting.starts_at).toISOString(),
      ends_at: new Date(e.meeting.ends_at).toISOString(),
    };
    const followUp = e.follow_up && toFollowUp(e.follow_up, now);
    let next: z.infer<typeof NextEventView>['next'] = null;
    if (meeting && (!followUp || meeting.starts_at < followUp.due_at))
      next = { type: 'meeting', at: meeting.starts_at, meeting };
    else if (followUp) next = { type: 'follow_up', at: followUp.due_at, follow_up: followUp };
    return { next, meeting, follow_up: followUp };
  },
});
