import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { App } from './App.js';
import { LeadList } from './LeadList.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

export const CDM_STATES = ['searching', 'ready_for_review', 'confirming', 'completed'] as const;
export type CdmState = (typeof CDM_STATES)[number];

// A company decision-maker import (docs/company-imports.md): companies the user named, the roles
// sought there, and the list the approved people go to. Its companies and the people found at them
// are rows of cdm_import_companies / cdm_import_members; the workflow `cdm-import:<id>` searches and
// confirms, one numbered `run` per search, retry or confirm. `review_cursor` is the next batch
// batch-preview shows.
export const CdmImport = defineEntity({
  name: 'CdmImport',
  tableName: 'cdm_imports',
  indexes: [{ properties: ['workspace', 'createdAt'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    /** Null once the list is deleted (confirm then answers 409 list_deleted). */
    list: p.manyToOne(LeadList).ref().nullable().deleteRule('set null').index(),
    createdBy: p.manyToOne(User).ref().nullable().deleteRule('set null').index(),
    state: p.string().length(20).default('searching'),
    run: p.integer().default(1),
    titles: p.json<string[]>().default('[]'),
    seniorities: p.json<string[]>().default('[]'),
    maxPerCompany: p.integer(),
    batchSize: p.integer(),
    companyCount: p.integer(),
    batchCount: p.integer(),
    /** Entries of the request that named a company already in it (same domain or name). */
    duplicatesRemoved: p.integer().default(0),
    reviewCursor: p.integer().default(0),
    creditsCharged: p.integer().default(0),
    /** Why the last confirm stopped (insufficient_credits, list_deleted, start_failed), cleared by the next. */
    errorCode: p.string().length(60).nullable(),
    errorMessage: p.string().length(500).nullable(),
    searchStartedAt: p.datetime().nullable(),
    searchFinishedAt: p.datetime().nullable(),
    confirmStartedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ICdmImport = InferEntity<typeof CdmImport>;
