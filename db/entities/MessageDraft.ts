import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Campaign } from './Campaign.js';

export const DRAFT_STATUSES = ['awaiting_review', 'approved', 'failed', 'held', 'expired'] as const;
export type DraftStatus = (typeof DRAFT_STATUSES)[number];

// An AI-written message for one scheduled action (docs/message-review.md): one row per (action,
// attempt); the action's content is the latest draft's text. `review_required` records what the
// policy decided when it was written; `problems` what validation found (a failed draft is never sent
// as it is: a person edits or retries it).
export const MessageDraft = defineEntity({
  name: 'MessageDraft',
  tableName: 'message_drafts',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspaceId: p.uuid(),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade'),
    stepId: p.uuid(),
    actionId: p.uuid(),
    attempt: p.integer().default(1),
    enrollmentId: p.uuid(),
    leadId: p.uuid(),
    channel: p.string().length(20),
    destination: p.string().length(2048).nullable(),
    subject: p.string().length(400).nullable(),
    body: p.text(),
    status: p.string().length(20),
    reviewRequired: p.boolean(),
    autoApproved: p.boolean().default(false),
    problems: p.json<{ code: string; message: string }[]>().default('[]'),
    errorCode: p.string().length(50).nullable(),
    model: p.string().length(100),
    credits: p.integer().default(0),
    /** When its review ends (set when the action goes into review: the policy's hours), null before. */
    deadlineAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
  uniques: [{ properties: ['actionId', 'attempt'] }],
  indexes: [
    { properties: ['campaign', 'status', 'createdAt'] },
    { properties: ['campaign', 'stepId', 'reviewRequired'] },
  ],
});
export type IMessageDraft = InferEntity<typeof MessageDraft>;
