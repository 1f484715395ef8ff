import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Campaign } from './Campaign.js';

// A batch generation of drafts (`drafts:<campaignId>:<operationId>`, docs/message-review.md): the
// pending actions it selected (frozen at the start: `total`), exact progress, and the credits spent.
// A repeated request with the same client key returns the same operation.
export const DraftOperation = defineEntity({
  name: 'DraftOperation',
  tableName: 'draft_operations',
  uniques: [{ properties: ['campaign', 'clientKey'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspaceId: p.uuid(),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade'),
    clientKey: p.string().length(200),
    /** `missing` (actions without a draft or whose draft failed) or `all` (every undecided draft written again). */
    scope: p.string().length(20),
    stepId: p.uuid().nullable(),
    /** The selected actions, in order (ids only). */
    actionIds: p.json<string[]>(),
    status: p.string().length(20).default('queued'),
    total: p.integer().default(0),
    processed: p.integer().default(0),
    written: p.integer().default(0),
    failed: p.integer().default(0),
    credits: p.integer().default(0),
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
export type IDraftOperation = InferEntity<typeof DraftOperation>;
