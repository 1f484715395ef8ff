import { z } from 'zod';
import { ENRICHMENT_STATUSES, ENRICHMENT_TARGETS, type IEnrichment } from '../../db/entities/Enrichment.js';
import { apiFieldNames } from '../../domain/contacts/contacts.js';
import type { RequestOutcome } from '../../domain/enrichment/enrichment.js';
import type { ResolveOutcome } from '../../domain/enrichment/network-profiles.js';
import { enrichmentWorkflowIds } from '../../lib/workflow-ids.js';
import { Timestamp, iso } from '../schemas.js';

export const EnrichBody = z
  .object({
    refresh: z.boolean().optional().meta({
      description: 'Run a new attempt even if the target was enriched before (a running attempt is joined either way)',
    }),
  })
  .strict();

export const EnrichmentView = z.object({
  id: z.uuid(),
  target_kind: z.enum(ENRICHMENT_TARGETS),
  target_id: z.uuid(),
  attempt: z.number().int().positive(),
  status: z.enum(ENRICHMENT_STATUSES),
  result: z.enum(['started', 'joined', 'already_enriched']).meta({
    description:
      'What this request did: started an attempt, joined the one in flight, or answered the last completed one',
  }),
  provider: z.string().nullable(),
  found: z.boolean(),
  fields_filled: z.array(z.string()),
  fields_kept: z.array(z.string()).meta({ description: 'Found, but left as they are because a person edited them' }),
  credits_charged: z.number().int().nonnegative(),
  promoted: z.boolean().meta({ description: 'This attempt promoted the discovered lead and emitted lead.discovered' }),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  workflow_id: z.string(),
  requested_by: z.uuid().nullable(),
  created_at: Timestamp,
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
});

export const toEnrichmentView = (e: IEnrichment, result: RequestOutcome): z.infer<typeof EnrichmentView> => ({
  id: e.id,
  target_kind: e.targetKind as z.infer<typeof EnrichmentView>['target_kind'],
  target_id: e.targetId,
  attempt: e.attempt,
  status: e.status as z.infer<typeof EnrichmentView>['status'],
  result,
  provider: e.provider ?? null,
  found: e.found,
  fields_filled: apiFieldNames(e.fieldsFilled),
  fields_kept: apiFieldNames(e.fieldsKept),
  credits_charged: e.creditsCharged,
  promoted: e.promoted,
  error: e.errorCode ? { code: e.errorCode, message: e.errorMessage ?? '' } : null,
  workflow_id: enrichmentWorkflowIds.target(e.targetKind, e.targetId),
  requested_by: e.requestedBy ?? null,
  created_at: e.createdAt.toISOString(),
  started_at: iso(e.startedAt),
  finished_at: iso(e.finishedAt),
});

export const ResolveView = z.object({
  target_kind: z.enum(['discovered-lead', 'list-member']),
  target_id: z.uuid(),
  contact_id: z.uuid().nullable().meta({ description: "The list member's contact (null for a discovered lead)" }),
  connector: z.string(),
  stored: z.boolean().meta({ description: 'The profile is the target’s now (stored, or it already had this one)' }),
  reason: z.enum(['no_match', 'different_profile_set', 'profile_in_use']).nullable(),
  profile: z
    .object({
      profile_url: z.string(),
      provider_id: z.string(),
      full_name: z.string(),
      first_name: z.string().nullable(),
      last_name: z.string().nullable(),
      headline: z.string().nullable(),
      title: z.string().nullable(),
      company: z.string().nullable(),
      country: z.string().nullable(),
    })
    .nullable(),
});

export const toResolveView = (r: ResolveOutcome): z.infer<typeof ResolveView> => ({
  target_kind: r.targetKind,
  target_id: r.targetId,
  contact_id: r.contactId,
  connector: r.connector,
  stored: r.stored,
  reason: r.reason,
  profile: r.profile && {
    profile_url: r.profile.profileUrl,
    provider_id: r.profile.providerId,
    full_name: r.profile.fullName,
    first_name: r.profile.firstName,
    last_name: r.profile.lastName,
    headline: r.profile.headline,
    title: r.profile.title,
    company: r.profile.company,
    country: r.profile.country,
  },
});
