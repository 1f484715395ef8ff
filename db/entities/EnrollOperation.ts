import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Campaign } from './Campaign.js';
import { Workspace } from './Workspace.js';

// A bulk enrollment of a list into a campaign (`enroll:<campaignId>:<operationId>`): exact progress,
// and once finished its receipt (counts, and each skipped lead with its reason in enroll_skips). A
// repeated request with the same client key returns the same operation.
export const EnrollOperation = defineEntity({
  name: 'EnrollOperation',
  tableName: 'enroll_operations',
  uniques: [{ properties: ['campaign', 'clientKey'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade'),
    listId: p.uuid(),
    clientKey: p.string().length(200),
    userId: p.uuid(),
    status: p.string().length(20).default('queued'),
    total: p.integer().default(0),
    processed: p.integer().default(0),
    enrolled: p.integer().default(0),
    skipped: p.integer().default(0),
    /** The last lead id processed (the cursor a resumed activity continues after). */
    cursor: p.uuid().nullable(),
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
export type IEnrollOperation = InferEntity<typeof EnrollOperation>;

// A lead a bulk enrollment skipped, with the reason (the receipt lists them).
export const EnrollSkip = defineEntity({
  name: 'EnrollSkip',
  tableName: 'enroll_skips',
  properties: (p) => ({
    operation: p.manyToOne(EnrollOperation).ref().deleteRule('cascade').primary(),
    leadId: p.uuid().primary(),
    reason: p.string().length(40),
  }),
});
export type IEnrollSkip = InferEntity<typeof EnrollSkip>;
