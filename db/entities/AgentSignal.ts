import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { DiscoveryAgent } from './DiscoveryAgent.js';

// What indicates a lead for an agent (keywords in posts, job changes, hiring, funding, company
// events, people matching the ICP). `key` is stable: discovered leads and `lead.discovered` carry it.
export const AgentSignal = defineEntity({
  name: 'AgentSignal',
  tableName: 'agent_signals',
  uniques: [{ properties: ['agent', 'key'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    agent: p.manyToOne(DiscoveryAgent).ref().deleteRule('cascade'),
    key: p.string().length(100),
    kind: p.string().length(40),
    name: p.string().length(200),
    keywords: p.json<string[]>().default('[]'),
    filters: p.json<Record<string, unknown>>().nullable(),
    enabled: p.boolean().default(true),
    /** Order as last set by PUT /signals (ids minted in the same millisecond do not sort by creation). */
    position: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IAgentSignal = InferEntity<typeof AgentSignal>;
