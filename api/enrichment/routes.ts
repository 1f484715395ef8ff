// Enrichment of contacts and discovered leads, and network-profile resolution (docs/enrichment.md).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EnrichmentTarget } from '../../db/entities/Enrichment.js';
import { requestEnrichment } from '../../domain/enrichment/enrichment.js';
import type { Actor } from '../../domain/identity.js';
import type { Jobs } from '../../domain/jobs.js';
import { resolveDiscoveredLeadProfile, resolveListMemberProfile } from '../../domain/enrichment/network-profiles.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import { EnrichBody, EnrichmentView, ResolveView, toEnrichmentView, toResolveView } from './schemas.js';

const tag = 'enrichment';
const errors = {
  400: ['invalid_id', 'invalid_body', 'invalid_user'],
  401: ['unauthorized'],
  402: ['insufficient_credits'],
  403: ['not_assigned', 'demo_read_only'],
  404: ['not_found'],
  409: ['not_enrichable', 'enrichment_busy'],
};
const responses = { 202: EnrichmentView, 200: EnrichmentView };

/** 202 while the attempt is queued or running, 200 once it has finished. */
export async function enrich(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  kind: EnrichmentTarget,
  id: string,
  refresh: boolean,
) {
  const { enrichment, outcome } = await requestEnrichment(em, actor, jobs, kind, id, { refresh });
  const finished = enrichment.status === 'completed' || enrichment.status === 'failed';
  return reply(finished ? 200 : 202, toEnrichmentView(enrichment, outcome));
}

export const enrichContactOp = defineOperation({
  method: 'POST',
  path: '/api/enrichment/contacts/{id}',
  operationId: 'enrichContact',
  ids: { path: { id: 'contact' } },
  summary:
    'Enrich a contact (workflow enrich:contact:<id>): fills what the provider finds, never a field a person edited; 1 credit when found',
  tag,
  auth: 'user',
  params: IdParams,
  body: EnrichBody,
  responses,
  errors,
  handler: ({ em, actor, services, params, body }) =>
    enrich(em, actor, services.jobs, 'contact', params.id, body.refresh ?? false),
});

export const enrichDiscoveredLeadOp = defineOperation({
  method: 'POST',
  path: '/api/enrichment/discovered-leads/{id}',
  operationId: 'enrichDiscoveredLead',
  ids: { path: { id: 'discovered_lead' } },
  summary:
    'Enrich a discovered lead (workflow enrich:discovered-lead:<id>); promotes it and emits lead.discovered once it is complete enough',
  tag,
  auth: 'user',
  params: IdParams,
  body: EnrichBody,
  responses,
  errors,
  handler: ({ em, actor, services, params, body }) =>
    enrich(em, actor, services.jobs, 'discovered-lead', params.id, body.refresh ?? false),
});

const resolveErrors = {
  400: ['invalid_id', 'invalid_user'],
  401: ['unauthorized'],
  403: ['not_assigned', 'demo_read_only'],
  404: ['not_found'],
  409: ['not_resolvable'],
  503: ['connector_unavailable'],
};

export const resolveDiscoveredLeadProfileOp = defineOperation({
  method: 'POST',
  path: '/api/enrichment/discovered-leads/{id}/resolve-network-profile',
  operationId: 'resolveDiscoveredLeadNetworkProfile',
  ids: { path: { id: 'discovered_lead' } },
  summary:
    "Find the discovered lead's professional-network profile through the connector and store it (filled when empty, never replaced)",
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ResolveView },
  errors: resolveErrors,
  handler: async ({ em, actor, services, params }) =>
    toResolveView(await resolveDiscoveredLeadProfile(em, actor, services.connector, params.id)),
});

export const resolveListMemberProfileOp = defineOperation({
  method: 'POST',
  path: '/api/enrichment/list-members/{id}/resolve-network-profile',
  operationId: 'resolveListMemberNetworkProfile',
  ids: { path: { id: 'lead' } },
  summary:
    "Find a list member's (lead's) professional-network profile through the connector and store it on its contact",
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ResolveView },
  errors: resolveErrors,
  handler: async ({ em, actor, services, params }) =>
    toResolveView(await resolveListMemberProfile(em, actor, services.connector, params.id)),
});
