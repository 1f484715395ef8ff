import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';
import { App } from './App.js';
import { DiscoveryAgent } from './DiscoveryAgent.js';

// A candidate a discovery run qualified (or a person promoted from the rejections): reviewed later
// (approve into a list / reject). One per agent and person (`dedupe_key`).
export const DiscoveredLead = defineEntity({
  name: 'DiscoveredLead',
  tableName: 'discovered_leads',
  uniques: [{ properties: ['agent', 'dedupeKey'] }],
  indexes: [{ name: 'discovered_leads_workspace_id_id_index', properties: ['workspace', 'id'] }],
  properties: (p) => ({
    id: p.uuid().primary().onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    agent: p.manyToOne(DiscoveryAgent).ref().deleteRule('cascade'),
    /** The run that found it (no FK: runs may be purged while leads stay). */
    runId: p.uuid().nullable().index(),
    signalKey: p.string().length(100),
    /** The source's key of the evidence (stable across runs). */
    evidenceKey: p.string().length(64),
    source: p.string().length(40),
    externalId: p.string().length(200),
    dedupeKey: p.string().length(2048),
    profileUrl: p.string().length(2048).nullable(),
    email: p.string().length(320).nullable(),
    fullName: p.string().length(400),
    firstName: p.string().length(200).nullable(),
    lastName: p.string().length(200).nullable(),
    title: p.string().length(300).nullable(),
    company: p.string().length(300).nullable(),
    companyDomain: p.string().length(255).nullable(),
    country: p.string().length(100).nullable(),
    evidence: p.json<Record<string, unknown>>(),
    score: p.integer(),
    reasons: p.json<string[]>(),
    /** new → approved | rejected (the review issue extends this). */
    status: p.string().length(20).default('new'),
    promoted: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});
export type IDiscoveredLead = InferEntity<typeof DiscoveredLead>;
