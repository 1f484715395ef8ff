import { z } from 'zod';
import {
  DISCOVERED_LEAD_STATUSES,
  MAX_BATCH,
  MAX_REASON,
  type Counts,
  type DiscoveredLeadRow,
} from '../../domain/discovered-leads/discovered-leads.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { apiFieldNames } from '../../domain/contacts/contacts.js';
import { Timestamp, iso, text } from '../schemas.js';

export const DiscoveredLeadView = z.object({
  id: z.uuid(),
  app_id: z.uuid(),
  agent_id: z.uuid(),
  run_id: z.uuid().nullable(),
  signal_key: z.string(),
  source: z.string(),
  external_id: z.string(),
  profile_url: z.string().nullable(),
  email: z.string().nullable(),
  full_name: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  title: z.string().nullable(),
  headline: z.string().nullable(),
  phone: z.string().nullable(),
  company: z.string().nullable(),
  company_domain: z.string().nullable(),
  country: z.string().nullable(),
  evidence: z.record(z.string(), z.unknown()),
  score: z.number().int(),
  reasons: z.array(z.string()),
  status: z.enum(DISCOVERED_LEAD_STATUSES),
  promoted: z.boolean().meta({ description: 'Came from the agent’s rejections, promoted by a person' }),
  approved_lead_id: z.uuid().nullable(),
  approved_list_id: z.uuid().nullable(),
  reviewed_at: Timestamp.nullable(),
  reviewed_by: z.uuid().nullable(),
  reject_reason: z.string().nullable(),
  enriched_fields: z.array(z.string()).meta({ description: 'Fields enrichment filled (provenance)' }),
  enriched_at: Timestamp.nullable(),
  network_provider_id: z.string().nullable(),
  enrichment_promoted_at: Timestamp.nullable().meta({
    description: 'When enrichment found it complete enough and emitted lead.discovered (once)',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toDiscoveredLeadView = (r: DiscoveredLeadRow): z.infer<typeof DiscoveredLeadView> => ({
  id: r.id,
  app_id: r.app_id,
  agent_id: r.agent_id,
  run_id: r.run_id,
  signal_key: r.signal_key,
  source: r.source,
  external_id: r.external_id,
  profile_url: r.profile_url,
  email: r.email,
  full_name: r.full_name,
  first_name: r.first_name,
  last_name: r.last_name,
  title: r.title,
  headline: r.headline,
  phone: r.phone,
  company: r.company,
  company_domain: r.company_domain,
  country: r.country,
  evidence: r.evidence ?? {},
  score: r.score,
  reasons: r.reasons ?? [],
  status: r.status,
  promoted: r.promoted,
  approved_lead_id: r.approved_lead_id,
  approved_list_id: r.approved_list_id,
  reviewed_at: iso(r.reviewed_at),
  reviewed_by: r.reviewed_by,
  reject_reason: r.reject_reason,
  enriched_fields: apiFieldNames(r.enriched_fields ?? []),
  enriched_at: iso(r.enriched_at),
  network_provider_id: r.network_provider_id,
  enrichment_promoted_at: iso(r.enrichment_promoted_at),
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export const DiscoveredLeadPage = pageSchema(DiscoveredLeadView);

const filters = {
  app_id: z.uuid().optional(),
  agent_id: z.uuid().optional(),
  status: z.enum(DISCOVERED_LEAD_STATUSES).optional(),
  signal_key: text({ max: 100, trim: true })
    .optional()
    .meta({ description: 'Exact signal key; blank means no filter' }),
  q: text({ max: 200, trim: true }).optional().meta({
    description:
      'Case-insensitive substring of the name, title or company (% and _ match literally); blank means no filter',
  }),
};
export const ListQuery = z.object({ ...pageQuery, ...filters });
export const CountsQuery = z.object(filters);

const StatusCounts = z.object({
  new: z.number().int().nonnegative(),
  approved: z.number().int().nonnegative(),
  rejected: z.number().int().nonnegative(),
});
export const CountsView = z.object({
  total: z.number().int().nonnegative(),
  by_status: StatusCounts,
  by_agent: z.array(z.object({ agent_id: z.uuid(), total: z.number().int().nonnegative(), by_status: StatusCounts })),
});
export const toCountsView = (c: Counts): z.infer<typeof CountsView> => c;

export const ApproveBody = z.object({ list_id: z.uuid().optional() }).strict();
export const ApprovalView = DiscoveredLeadView.extend({
  list_id: z.uuid(),
  lead_id: z.uuid(),
  contact_id: z.uuid(),
  created: z.boolean(),
  result: z.enum(['approved', 'already_approved']),
});

const Reason = text({ min: 1, max: MAX_REASON, trim: true }).meta({
  description: 'Why it was rejected; counted in the agent’s rejection breakdown under this reason',
});
export const RejectBody = z.object({ reason: Reason }).strict();
export const RejectionView = DiscoveredLeadView.extend({ result: z.enum(['rejected', 'already_rejected']) });

const Ids = z
  .array(z.uuid())
  .min(1)
  .max(MAX_BATCH)
  .meta({ description: `1..${MAX_BATCH} discovered lead ids (400 above the maximum); repeats count once` });
export const BatchApproveBody = z.object({ ids: Ids, list_id: z.uuid().optional() }).strict();
export const BatchRejectBody = z.object({ ids: Ids, reason: Reason }).strict();
export const BatchResults = z.object({
  results: z.array(
    z.object({
      id: z.uuid(),
      result: z.enum([
        'approved',
        'already_approved',
        'rejected',
        'already_rejected',
        'not_found',
        'invalid_transition',
      ]),
    }),
  ),
});

export const SequenceView = z.object({
  discovered_lead_id: z.uuid(),
  contact_id: z.uuid().nullable(),
  steps: z
    .array(
      z.object({
        kind: z.string().meta({ description: 'The action type: email, invitation, message' }),
        status: z.string().meta({ description: 'The scheduled action state' }),
        scheduled_at: Timestamp.nullable(),
        action_id: z.uuid(),
        campaign_id: z.uuid(),
        campaign_name: z.string(),
        enrollment_id: z.uuid(),
        lead_id: z.uuid(),
        step_id: z.uuid(),
        step_position: z.number().int(),
        executed_at: Timestamp.nullable(),
        accepted_at: Timestamp.nullable(),
        replied_at: Timestamp.nullable(),
        waiting_reason: z.string().nullable(),
        error_code: z.string().nullable(),
        planned: z
          .boolean()
          .meta({ description: 'Not sent yet and may still be (planned, awaiting approval, approved)' }),
      }),
    )
    .meta({ description: "The contact's scheduled actions across campaigns, planned and past, by due time" }),
  planned_count: z.number().int(),
  past_count: z.number().int(),
});
