import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { DiscoveryAgent } from './DiscoveryAgent.js';

// A source an agent searches (newsforum, the professional network) with its settings (queries, filters).
export const AgentSource = defineEntity({
  name: 'AgentSource',
  tableName: 'agent_sources',
  uniques: [{ properties: ['agent', 'source'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    agent: p.manyToOne(DiscoveryAgent).ref().deleteRule('cascade'),
    source: p.string().length(40),
    enabled: p.boolean().default(true),
    config: p.json<Record<string, unknown>>().default('{}'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IAgentSource = InferEntity<typeof AgentSource>;
