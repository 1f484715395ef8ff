import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Workspace } from './Workspace.js';
import { App } from './App.js';
import { DiscoveryAgent } from './DiscoveryAgent.js';

export const RUN_STATUSES = ['running', 'completed', 'canceled', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

// One discovery run (workflow `discovery-run:<agentId>:<runId>`): what it searched and how many
// candidates it qualified, rejected or skipped as already known. A manual launch records the client's
// `launch_id`, unique per workspace, so a repeated launch finds the same row.
export const DiscoveryRun = defineEntity({
  name: 'DiscoveryRun',
  tableName: 'discovery_runs',
  uniques: [{ properties: ['workspace', 'launchId'] }],
  indexes: [
    { name: 'discovery_runs_agent_id_id_index', properties: ['agent', 'id'] },
    { name: 'discovery_runs_workspace_id_id_index', properties: ['workspace', 'id'] },
  ],
  properties: (p) => ({
    id: p.uuid().primary(),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    agent: p.manyToOne(DiscoveryAgent).ref().deleteRule('cascade'),
    /** The client's idempotency key of a manual launch (null for scheduled runs). */
    launchId: p.uuid().nullable(),
    /** The signals searched (keys); all enabled ones when launched without one. */
    signalKeys: p.json<string[]>(),
    trigger: p.string().length(20),
    status: p.enum(() => RUN_STATUSES).default('running'),
    candidates: p.integer().default(0),
    qualified: p.integer().default(0),
    rejected: p.integer().default(0),
    duplicates: p.integer().default(0),
    pages: p.integer().default(0),
    error: p.text().nullable(),
    startedAt: p.datetime().onCreate(() => new Date()),
    finishedAt: p.datetime().nullable(),
  }),
});
export type IDiscoveryRun = InferEntity<typeof DiscoveryRun>;
