import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';
import { App } from './App.js';
import { LeadList } from './LeadList.js';

export const AGENT_STATUSES = ['draft', 'active', 'paused', 'archived'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

// A discovery agent of a product: what to look for (ICP, signals, sources) and where qualified leads go.
export const DiscoveryAgent = defineEntity({
  name: 'DiscoveryAgent',
  tableName: 'discovery_agents',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    name: p.string().length(200),
    status: p.enum(() => AGENT_STATUSES).default('draft'),
    b2b: p.boolean().default(true),
    icpDescription: p.text().nullable(),
    /** Stored as sent (the spec: shape depends on the agent). */
    icpFilters: p.json<unknown>().nullable(),
    config: p.json<unknown>().nullable(),
    /** Where approved leads go; a list of the same product. Deleting the list clears it. */
    list: p.manyToOne(LeadList).ref().nullable().deleteRule('set null').index(),
    maxSignals: p.integer().nullable(),
    requireCurrentEmployer: p.boolean().default(false),
    /** The last generated keywords (comma-separated), used by keyword signals. */
    keywords: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IDiscoveryAgent = InferEntity<typeof DiscoveryAgent>;
