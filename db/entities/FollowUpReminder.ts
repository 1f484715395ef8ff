import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

export const REMINDER_KINDS = ['reply_waiting', 'meeting_outcome'] as const;
export type ReminderKind = (typeof REMINDER_KINDS)[number];

// A follow-up (docs/follow-ups.md): a lead replied and nobody answered in time, or a meeting ended
// without an outcome. open → completed | dismissed.
export const FollowUpReminder = defineEntity({
  name: 'FollowUpReminder',
  tableName: 'follow_up_reminders',
  indexes: [
    { name: 'follow_up_reminders_workspace_state_due_index', properties: ['workspaceId', 'state', 'dueAt', 'id'] },
    { properties: ['leadId', 'state'] },
    // At most one open reply reminder per conversation and one outcome reminder per meeting
    // (partial unique indexes of Migration20261122221915_inbox; domain/follow-ups/follow-ups.ts relies on them).
    {
      name: 'follow_up_reminders_open_reply_unique',
      expression: `create unique index "follow_up_reminders_open_reply_unique" on "follow_up_reminders" ("conversation_id") where "kind" = 'reply_waiting' and "state" = 'open'`,
    },
    {
      name: 'follow_up_reminders_meeting_unique',
      expression: `create unique index "follow_up_reminders_meeting_unique" on "follow_up_reminders" ("meeting_id") where "kind" = 'meeting_outcome'`,
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspaceId: p.uuid(),
    leadId: p.uuid(),
    kind: p.string().length(20),
    conversationId: p.uuid().nullable(),
    meetingId: p.uuid().nullable(),
    state: p.string().length(20).default('open'),
    dueAt: p.datetime(),
    /** What the reminder is about (the reply's first words, the meeting's title). */
    summary: p.string().length(300).default(''),
    resolvedAt: p.datetime().nullable(),
    /** A user, or null when it resolved itself (an answer was sent, an outcome recorded). */
    resolvedBy: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IFollowUpReminder = InferEntity<typeof FollowUpReminder>;
