import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';
import { App } from './App.js';
import { DiscoveryAgent } from './DiscoveryAgent.js';

// A candidate a run did not qualify, kept with the reasons (the "raw" profile the rejection routes
// show and that can be promoted to a discovered lead). One per agent and person.
export const RejectedProfile = defineEntity({
  name: 'RejectedProfile',
  tableName: 'rejected_profiles',
  uniques: [{ properties: ['agent', 'dedupeKey'] }],
  indexes: [
    { name: 'rejected_profiles_agent_id_id_index', properties: ['agent', 'id'] },
    // A bulk promotion pages through its selection by (operation, id).
    { name: 'rejected_profiles_promote_operation_id_id_index', properties: ['promoteOperationId', 'id'] },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    app: p.manyToOne(App).ref().deleteRule('cascade'),
    agent: p.manyToOne(DiscoveryAgent).ref().deleteRule('cascade'),
    runId: p.uuid().nullable().index(),
    signalKey: p.string().length(100),
    dedupeKey: p.string().length(2048),
    /** The candidate as the source gave it. */
    candidate: p.json<Record<string, unknown>>(),
    score: p.integer(),
    /** The first failed check, for grouping (e.g. `title`, `country`, `former_employer`). */
    primaryReason: p.string().length(100),
    reasons: p.json<string[]>(),
    promotedAt: p.datetime().nullable(),
    promotedLeadId: p.uuid().nullable(),
    /** The latest bulk promotion (`promote-profiles:<agentId>:<id>`) that selected it (docs/discovery.md). */
    promoteOperationId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IRejectedProfile = InferEntity<typeof RejectedProfile>;
