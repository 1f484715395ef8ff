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
  indexes: [
    { name: 'discovered_leads_workspace_id_id_index', properties: ['workspace', 'id'] },
    // Review counts group by (status, agent) within a workspace; the agent's breakdown by status.
    { name: 'discovered_leads_workspace_id_status_agent_id_index', properties: ['workspace', 'status', 'agent'] },
    { name: 'discovered_leads_agent_id_status_index', properties: ['agent', 'status'] },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
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
    headline: p.string().length(300).nullable(),
    phone: p.string().length(40).nullable(),
    company: p.string().length(300).nullable(),
    companyDomain: p.string().length(255).nullable(),
    country: p.string().length(100).nullable(),
    evidence: p.json<Record<string, unknown>>(),
    score: p.integer(),
    reasons: p.json<string[]>(),
    /** new → approved | rejected; rejected → new | approved (docs/discovered-leads.md). */
    status: p.string().length(20).default('new'),
    /** Set on approval: the list lead it became and its list (no FK: the list may be deleted later). */
    approvedLeadId: p.uuid().nullable(),
    approvedListId: p.uuid().nullable(),
    reviewedAt: p.datetime().nullable(),
    /** The user who approved or rejected it. */
    reviewedBy: p.uuid().nullable(),
    /** The reviewer's reason (rejections), counted in the agent's rejection breakdown. */
    rejectReason: p.string().length(200).nullable(),
    /** Came from the rejections, promoted by a person (domain/agents/promotion.ts). */
    promoted: p.boolean().default(false),
    /** Enrichment (docs/enrichment.md): the fields it filled, when it last completed, the connector's id of the profile. */
    enrichedFields: p.json<string[]>().default('[]'),
    enrichedAt: p.datetime().nullable(),
    networkProviderId: p.string().length(200).nullable(),
    /** When enrichment promoted it (complete enough) and emitted `lead.discovered`: once, ever. */
    enrichmentPromotedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IDiscoveredLead = InferEntity<typeof DiscoveredLead>;
