import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { BookingConnection } from './BookingConnection.js';
import { Contact } from './Contact.js';
import { Lead } from './Lead.js';
import { Workspace } from './Workspace.js';

export const MEETING_STATUSES = ['scheduled', 'canceled'] as const;
export type MeetingStatus = (typeof MEETING_STATUSES)[number];
/** What happened (null: nothing recorded yet). `rescheduled`: it did not take place at this time and is to be moved. */
export const MEETING_OUTCOMES = ['held', 'no_show', 'rescheduled'] as const;
export type MeetingOutcome = (typeof MEETING_OUTCOMES)[number];
export const MEETING_SOURCES = ['manual', 'booking'] as const;
export type MeetingSource = (typeof MEETING_SOURCES)[number];

// A meeting with a lead (docs/meetings.md): logged by hand, or from a booking provider, where the
// provider's booking id (`external_id`, unique per workspace and provider) makes every later event of
// the booking (reschedule, cancellation) update this row. Kept when the provider is disconnected.
export const Meeting = defineEntity({
  name: 'Meeting',
  tableName: 'meetings',
  uniques: [
    { name: 'meetings_workspace_id_provider_external_id_unique', properties: ['workspace', 'provider', 'externalId'] },
  ],
  indexes: [
    { name: 'meetings_workspace_id_starts_at_index', properties: ['workspace', 'startsAt'] },
    { name: 'meetings_lead_id_starts_at_index', properties: ['lead', 'startsAt'] },
  ],
  checks: [{ name: 'meetings_ends_after_starts', expression: '"ends_at" > "starts_at"' }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    lead: p.manyToOne(Lead).ref().deleteRule('cascade'),
    contact: p.manyToOne(Contact).ref().deleteRule('cascade').index(),
    title: p.string().length(300),
    startsAt: p.datetime(),
    endsAt: p.datetime(),
    status: p.enum([...MEETING_STATUSES]).default('scheduled'),
    outcome: p.enum([...MEETING_OUTCOMES]).nullable(),
    /** When the outcome was last set (null with no outcome). */
    outcomeAt: p.datetime().nullable(),
    location: p.string().length(500).nullable(),
    notes: p.text().nullable(),
    source: p.enum([...MEETING_SOURCES]),
    /** The connection it came from; null for manual meetings and once that provider is disconnected. */
    bookingProvider: p.manyToOne(BookingConnection).ref().nullable().deleteRule('set null').index(),
    /** The provider's name (kept after a disconnection) and its booking id. */
    provider: p.string().length(40).nullable(),
    externalId: p.string().length(200).nullable(),
    /** The booking's `updated_at` last applied, and the id of the event that carried it (ties): an older event never overwrites a newer one. */
    externalUpdatedAt: p.datetime().nullable(),
    externalEventId: p.string().length(200).nullable(),
    createdByUserId: p.uuid().nullable(),
    canceledAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IMeeting = InferEntity<typeof Meeting>;
