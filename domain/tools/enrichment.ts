// Enrichment for the Operator: enrich a discovered lead or a contact (a change that costs a credit
// when the provider finds the person, so it needs confirmation).
import { z } from 'zod';
import type { EnrichmentTarget } from '../../db/entities/Enrichment.js';
import { requestEnrichment } from '../enrichment/enrichment.js';
import { defineTool, type ToolContext } from './registry.js';

const run = async ({ em, actor, jobs }: ToolContext, kind: EnrichmentTarget, id: string, refresh?: boolean) => {
  const { enrichment: e, outcome } = await requestEnrichment(em, actor, jobs, kind, id, { refresh });
  return {
    enrichment_id: e.id,
    attempt: e.attempt,
    status: e.status,
    result: outcome,
    fields_filled: e.fieldsFilled,
    promoted: e.promoted,
  };
};

export const enrichmentTools = [
  defineTool({
    name: 'enrich_discovered_lead',
    ids: { discovered_lead_id: 'discovered_lead' },
    domain: 'enrichment',
    description:
      'Enrich a discovered lead (email, phone, title, headline, company…) through the enrichment provider; 1 credit when found. Promotes it (lead.discovered) once it has a name, a company and a channel. refresh runs again after an earlier enrichment.',
    input: z.object({ discovered_lead_id: z.uuid(), refresh: z.boolean().optional() }).strict(),
    risk: 'change',
    run: (ctx, input) => run(ctx, 'discovered-lead', input.discovered_lead_id, input.refresh),
  }),
  defineTool({
    name: 'enrich_contact',
    ids: { contact_id: 'contact' },
    domain: 'enrichment',
    description:
      'Enrich a workspace contact through the enrichment provider (never overwrites fields a person edited); 1 credit when found.',
    input: z.object({ contact_id: z.uuid(), refresh: z.boolean().optional() }).strict(),
    risk: 'change',
    run: (ctx, input) => run(ctx, 'contact', input.contact_id, input.refresh),
  }),
];
