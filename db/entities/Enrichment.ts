import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

export const ENRICHMENT_TARGETS = ['contact', 'discovered-lead'] as const;
export type EnrichmentTarget = (typeof ENRICHMENT_TARGETS)[number];
export const ENRICHMENT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type EnrichmentStatus = (typeof ENRICHMENT_STATUSES)[number];

// One attempt at enriching one target (docs/enrichment.md): the workflow `enrich:<kind>:<id>` runs
// it. `attempt` numbers a target's attempts (1, 2, … each refresh adds one); the credit debit's key
// is `enrich:<kind>:<id>:<attempt>`, so a retried activity never charges twice.
export const Enrichment = defineEntity({
  name: 'Enrichment',
  tableName: 'enrichments',
  uniques: [{ properties: ['targetKind', 'targetId', 'attempt'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    targetKind: p.string().length(20),
    /** The contact or discovered lead (no FK: two kinds of target; rows go with the workspace). */
    targetId: p.uuid(),
    attempt: p.integer(),
    status: p.string().length(20).default('queued'),
    /** 'local' or the service's name (`hunter`). */
    provider: p.string().length(40).nullable(),
    found: p.boolean().default(false),
    /** Fields this attempt wrote; fields it found but left because a person edited them. */
    fieldsFilled: p.json<string[]>().default('[]'),
    fieldsKept: p.json<string[]>().default('[]'),
    creditsCharged: p.integer().default(0),
    /** This attempt promoted the discovered lead (and emitted `lead.discovered`). */
    promoted: p.boolean().default(false),
    errorCode: p.string().length(40).nullable(),
    errorMessage: p.string().length(500).nullable(),
    requestedBy: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  }),
});
export type IEnrichment = InferEntity<typeof Enrichment>;
