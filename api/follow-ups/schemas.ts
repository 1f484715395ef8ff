import { z } from 'zod';
import { REMINDER_KINDS } from '../../db/entities/FollowUpReminder.js';
import { NOTE_MAX_CHARS, type NoteRow, type ReminderRow } from '../../domain/follow-ups/follow-ups.js';
import { keysetPageSchema, keysetQuery, pageQuery } from '../../lib/pagination.js';
import { Timestamp, text } from '../schemas.js';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export const FollowUpsQuery = z
  .object({
    state: z.enum(['open', 'completed', 'dismissed']).default('open'),
    kind: z.enum(REMINDER_KINDS).optional(),
    due: z
      .enum(['true', 'false'])
      .optional()
      .meta({ description: '`true`: only reminders already due (what pending-count counts)' }),
    lead_id: z.uuid().optional(),
    limit: pageQuery.limit,
    cursor: keysetQuery,
  })
  .strict();

export const FollowUpView = z.object({
  id: z.uuid(),
  kind: z.enum(REMINDER_KINDS).meta({
    description:
      'reply_waiting: the lead replied and nobody answered; meeting_outcome: a meeting ended without an outcome',
  }),
  state: z.enum(['open', 'completed', 'dismissed']),
  due_at: Timestamp,
  due: z.boolean(),
  summary: z.string(),
  lead: z.object({
    id: z.uuid(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    full_name: z.string().nullable(),
    email: z.string().nullable(),
    company: z.string().nullable(),
  }),
  conversation_id: z.uuid().nullable(),
  meeting_id: z.uuid().nullable(),
  created_at: Timestamp,
  resolved_at: Timestamp.nullable(),
});

export const toFollowUp = (r: ReminderRow, now = new Date()): z.infer<typeof FollowUpView> => ({
  id: r.id,
  kind: r.kind as (typeof REMINDER_KINDS)[number],
  state: r.state as 'open' | 'completed' | 'dismissed',
  due_at: iso(r.due_at)!,
  due: new Date(r.due_at) <= now,
  summary: r.summary,
  lead: {
    id: r.lead_id,
    first_name: r.first_name,
    last_name: r.last_name,
    full_name: r.full_name,
    email: r.email,
    company: r.company,
  },
  conversation_id: r.conversation_id,
  meeting_id: r.meeting_id,
  created_at: iso(r.created_at)!,
  resolved_at: iso(r.resolved_at),
});

export const FollowUpPage = keysetPageSchema(FollowUpView);
export const PendingCountView = z.object({
  total: z.number().int(),
  reply_waiting: z.number().int(),
  meeting_outcome: z.number().int(),
});
export const LeadParams = z.object({ leadId: z.uuid() });
export const DismissView = z.object({ lead_id: z.uuid(), dismissed: z.number().int() });

export const NotesQuery = z.object({ limit: pageQuery.limit, cursor: keysetQuery }).strict();
export const NoteBody = z
  .object({
    body: text({ max: NOTE_MAX_CHARS, min: 1, trim: true }).meta({
      description: `At most ${NOTE_MAX_CHARS} characters`,
    }),
  })
  .strict();
export const NoteView = z.object({
  id: z.uuid(),
  lead_id: z.uuid(),
  author_id: z.uuid(),
  author_name: z.string().nullable(),
  body: z.string(),
  created_at: Timestamp,
});
export const toNote = (n: NoteRow): z.infer<typeof NoteView> => ({ ...n, created_at: iso(n.created_at)! });
export const NotePage = keysetPageSchema(NoteView);
