import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Campaign } from './Campaign.js';
import { Contact } from './Contact.js';
import { Lead } from './Lead.js';
import { Workspace } from './Workspace.js';

export const ENROLLMENT_STATUSES = [
  'active',
  'paused',
  'completed',
  'replied',
  'stopped',
  'removed',
  'failed',
] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

// A lead in a campaign. Its workflow is `enrollment:<campaignId>:<leadId>` (one at a time; a
// re-enrollment starts a new run under the same id once the previous one closed). The row mirrors the
// workflow's progress for lists and counts; the workflow's query is the live truth.
export const Enrollment = defineEntity({
  name: 'Enrollment',
  tableName: 'enrollments',
  uniques: [{ properties: ['campaign', 'lead'] }],
  indexes: [
    { properties: ['campaign', 'status'] },
    { properties: ['workspace', 'contact', 'status'] },
    // A workspace's first reply (onboarding progress, domain/onboarding/onboarding.ts): replied enrollments only.
    {
      name: 'enrollments_replied_index',
      expression:
        'create index "enrollments_replied_index" on "enrollments" ("workspace_id", "replied_at") where "replied_at" is not null',
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade'),
    lead: p.manyToOne(Lead).ref().deleteRule('cascade').index(),
    // No foreign key on contact_id (Migration20261122174154_campaigns never created one): the row
    // still goes with its contact, through lead_id's cascade (leads.contact_id cascades).
    contact: p.manyToOne(Contact).ref().createForeignKeyConstraint(false),
    status: p.string().length(20).default('active'),
    /** The step version the enrollment runs (moves forward only at a step boundary). */
    stepVersion: p.integer(),
    /** Position of the step in progress (0-based) and its id; null before the first and after the last. */
    currentPosition: p.integer().nullable(),
    currentStepId: p.uuid().nullable(),
    /** The sender account a sticky rotation keeps for this lead. */
    accountId: p.uuid().nullable(),
    /** The bulk operation that enrolled it, if any. */
    operationId: p.uuid().nullable(),
    /** Incremented by each re-enrollment (the workflow run it belongs to). */
    run: p.integer().default(1),
    stopReason: p.string().length(60).nullable(),
    repliedAt: p.datetime().nullable(),
    /** One of its sends bounced: the gate before the next send ends it `stopped` / `bounced`. */
    bouncedAt: p.datetime().nullable(),
    enrolledAt: p.datetime().onCreate(() => new Date()),
    finishedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IEnrollment = InferEntity<typeof Enrollment>;
