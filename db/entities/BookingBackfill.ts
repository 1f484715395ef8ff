import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { BookingConnection } from './BookingConnection.js';
import { Workspace } from './Workspace.js';

export const BACKFILL_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type BackfillStatus = (typeof BACKFILL_STATUSES)[number];

// An import of a provider's past bookings (`booking-backfill:<providerId>:<operationId>`,
// docs/meetings.md): the provider's cursor after the last committed page, so a retried activity
// resumes there, and exact counts. A repeat with the same client key, or while one runs, is this job.
export const BookingBackfill = defineEntity({
  name: 'BookingBackfill',
  tableName: 'booking_backfills',
  uniques: [{ properties: ['bookingProvider', 'clientKey'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    bookingProvider: p.manyToOne(BookingConnection).ref().deleteRule('cascade').index(),
    clientKey: p.string().length(200).nullable(),
    userId: p.uuid(),
    since: p.datetime(),
    status: p.enum([...BACKFILL_STATUSES]).default('queued'),
    /** The provider's cursor of the next page (null: from the start, or, with pages > 0, nothing left). */
    cursor: p.string().length(1000).nullable(),
    pages: p.integer().default(0),
    /** Bookings read; of them meetings created, updated, unchanged (already imported or older), unmatched, and invalid items. */
    bookings: p.integer().default(0),
    created: p.integer().default(0),
    updated: p.integer().default(0),
    unchanged: p.integer().default(0),
    unmatched: p.integer().default(0),
    invalid: p.integer().default(0),
    errorCode: p.string().length(60).nullable(),
    errorMessage: p.string().length(500).nullable(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IBookingBackfill = InferEntity<typeof BookingBackfill>;
