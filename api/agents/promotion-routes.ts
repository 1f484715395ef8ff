// Signal preview and promotion of rejected profiles, alone or in bulk (docs/discovery.md, "Preview
// and promotion").
import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineOperation, reply } from '../operation.js';
import { uuidv7 } from '../../lib/ids.js';
import { COMPANY_SIZES, SENIORITIES } from '../../lib/sources/types.js';
import { requireAgent, SIGNAL_KINDS, SOURCES } from '../../domain/agents/agents.js';
import { PREVIEW_DEFAULT, PREVIEW_MAX, previewSignal } from '../../domain/agents/signal-preview.js';
import {
  MAX_PROMOTE_IDS,
  operationRowCounts,
  promoteOne,
  promoterLabel,
  promotionState,
  requireRejectedProfile,
  selectForPromotion,
  type PromotionSelection,
  type PromotionState,
} from '../../domain/agents/promotion.js';
import type { IDiscoveredLead } from '../../db/entities/DiscoveredLead.js';
import { promotionWorkflowIds } from '../../lib/workflow-ids.js';
import type { Jobs } from '../../domain/jobs.js';
import { Timestamp, iso, text } from '../schemas.js';

const tag = 'discovery';
const common = { 401: ['unauthorized'], 403: ['not_assigned'], 404: ['not_found'] };
const AgentParams = z.object({ agentId: z.uuid() });
const RawParams = z.object({ agentId: z.uuid(), rawId: z.uuid() });

// ---------------------------------------------------------------------------------------------
// Preview

const Term = text({ min: 1, max: 100, trim: true });
/** Source filters (lib/sources), snake_case; the same shape a saved signal's `filters` is read with. */
const Filters = z
  .object({
    titles: z.array(Term).max(50).optional(),
    seniorities: z.array(z.enum(SENIORITIES)).max(SENIORITIES.length).optional(),
    industries: z.array(Term).max(50).optional(),
    countries: z
      .array(z.string().regex(/^[A-Za-z]{2}$/))
      .max(250)
      .optional(),
    company_sizes: z.array(z.enum(COMPANY_SIZES)).max(COMPANY_SIZES.length).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
const OTHER_KINDS = [
  'people_search',
  'job_change',
  'hiring',
  'funding',
  'company_event',
] as const satisfies readonly (typeof SIGNAL_KINDS)[number][];
/** An unsaved signal: a post_keywords one needs keywords (as PUT /signals requires). */
const InlineSignal = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('post_keywords'), keywords: z.array(Term).min(1).max(50), filters: Filters.optional() })
    .strict(),
  z
    .object({ kind: z.enum(OTHER_KINDS), keywords: z.array(Term).max(50).optional(), filters: Filters.optional() })
    .strict(),
]);
const limit = z
  .number()
  .int()
  .min(1)
  .max(PREVIEW_MAX)
  .optional()
  .describe(`candidates to return (default ${PREVIEW_DEFAULT})`);
/** Exactly one of `signal_id` (a signal of the agent) or `signal` (inline): `oneOf` in the document. */
const PreviewBody = z.xor([
  z.object({ signal_id: z.uuid(), limit }).strict(),
  z.object({ signal: InlineSignal, limit }).strict(),
]);

const PreviewView = z.object({
  signal: z.object({
    id: z.uuid().nullable(),
    key: z.string().nullable(),
    kind: z.enum(SIGNAL_KINDS),
    keywords: z.array(z.string()),
    filters: z.record(z.string(), z.unknown()),
    sources: z.array(z.enum(SOURCES)),
  }),
  candidates: z.array(
    z.object({
      name: z.string(),
      title: z.string().nullable(),
      company: z.string().nullable(),
      country: z.string().nullable(),
      profile_url: z.string().nullable(),
      evidence: z.object({ kind: z.string(), text: z.string(), url: z.string().nullable(), date: z.string() }),
      known: z.boolean().describe('the workspace already has this person (no qualification then)'),
      score: z.number().int().nullable(),
      verdict: z.enum(['qualified', 'rejected']).nullable(),
      reasons: z.array(z.string()),
    }),
  ),
});

export const previewOp = defineOperation({
  method: 'POST',
  path: '/api/agents/{agentId}/preview',
  ids: { path: { agentId: 'agent' }, body: { signal_id: { within: 'agentId', child: 'signal' } } },
  summary:
    'Run one signal (saved: signal_id, or inline: signal — exactly one) against the enabled sources without writing; sample candidates with their qualification',
  tag,
  auth: 'user',
  demo: 'simulate', // a read in spirit: it writes nothing anywhere, so Demo workspaces run it as is
  params: AgentParams,
  body: PreviewBody,
  responses: { 200: PreviewView },
  errors: {
    400: ['invalid_body', 'invalid_id', 'invalid_user', 'no_enabled_source'],
    ...common,
    503: ['source_unavailable', 'model_unavailable'],
    504: ['preview_timeout'],
  },
  handler: ({ em, actor, params, body, services }) =>
    previewSignal(em, actor, services, params.agentId, {
      signalId: 'signal_id' in body ? body.signal_id : undefined,
      signal: 'signal' in body ? body.signal : undefined,
      limit: body.limit ?? PREVIEW_DEFAULT,
    }),
});

// ---------------------------------------------------------------------------------------------
// Promotion of one profile

const LeadView = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  app_id: z.uuid(),
  run_id: z.uuid().nullable(),
  signal_key: z.string(),
  status: z.string(),
  promoted: z.boolean(),
  score: z.number().int(),
  reasons: z.array(z.string()),
  full_name: z.string(),
  title: z.string().nullable(),
  company: z.string().nullable(),
  country: z.string().nullable(),
  profile_url: z.string().nullable(),
  email: z.string().nullable(),
  created_at: Timestamp,
});

const toLeadView = (l: IDiscoveredLead): z.infer<typeof LeadView> => ({
  id: l.id,
  agent_id: l.agent.id,
  app_id: l.app.id,
  run_id: l.runId ?? null,
  signal_key: l.signalKey,
  status: l.status,
  promoted: l.promoted,
  score: l.score,
  reasons: [...l.reasons],
  full_name: l.fullName,
  title: l.title ?? null,
  company: l.company ?? null,
  country: l.country ?? null,
  profile_url: l.profileUrl ?? null,
  email: l.email ?? null,
  created_at: l.createdAt.toISOString(),
});

export const promoteOp = defineOperation({
  method: 'POST',
  path: '/api/agents/{agentId}/rejected-profiles/{rawId}/promote',
  ids: { path: { agentId: 'agent', rawId: { within: 'agentId', child: 'rejected_profile' } } },
  summary: 'Promote one rejected profile to a discovered lead (201); promoting it again returns the same lead (200)',
  tag,
  auth: 'user',
  params: RawParams,
  responses: { 201: LeadView, 200: LeadView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params }) => {
    const { lead, created } = await promoteOne(em, actor, params.agentId, params.rawId);
    return reply(created ? 201 : 200, toLeadView(lead));
  },
});

// ---------------------------------------------------------------------------------------------
// Bulk promotion (a workflow) and the promotion state of one profile

const OPERATION_STATUSES = ['running', 'completed', 'failed', 'canceled', 'terminated', 'unknown'] as const;

const OperationView = z.object({
  operation_id: z.uuid(),
  status: z.enum(OPERATION_STATUSES),
  total: z.number().int(),
  promoted: z.number().int(),
  skipped: z.number().int(),
});

/**
 * An operation's figures: from its `progress` query while it runs, from the rows it selected and
 * promoted once it is done (total from its memo, or the rows when Temporal no longer has it).
 */
async function operationState(
  jobs: Jobs,
  em: EntityManager,
  agentId: string,
  operationId: string,
): Promise<z.infer<typeof OperationView>> {
  const state = await promotionState(jobs, agentId, operationId);
  if (state.progress) return { operation_id: operationId, status: state.status, ...state.progress };
  const rows = await operationRowCounts(em, agentId, operationId);
  const total = state.total ?? rows.selected;
  return {
    operation_id: operationId,
    status: state.status,
    total,
    promoted: rows.promoted,
    skipped: Math.max(0, total - rows.selected),
  };
}

const BulkBody = z.xor([
  z.object({ ids: z.array(z.uuid()).min(1).max(MAX_PROMOTE_IDS), operation_id: z.uuid().optional() }).strict(),
  z.object({ reason: text({ min: 1, max: 100 }), operation_id: z.uuid().optional() }).strict(),
]);
const BulkView = z.object({
  operation_id: z.uuid(),
  workflow_id: z.string(),
  status: z.enum(OPERATION_STATUSES),
  total: z.number().int(),
});

export const bulkPromoteOp = defineOperation({
  method: 'POST',
  path: '/api/agents/{agentId}/rejected-profiles/bulk-promote',
  ids: {
    path: { agentId: 'agent' },
    body: {
      ids: {
        each: 'rejected_profile',
        within: 'agentId',
        why: 'profiles of the agent are promoted; any other id is counted skipped',
      },
      operation_id: { value: 'an idempotency key chosen by the client, per agent' },
    },
  },
  summary:
    'Promote rejected profiles in bulk — ids (≤ 1,000) or every not-yet-promoted one of a reason, exactly one — as a workflow (202); a repeated operation_id returns the same operation (200)',
  tag,
  auth: 'user',
  params: AgentParams,
  body: BulkBody,
  responses: { 202: BulkView, 200: BulkView },
  errors: {
    400: ['invalid_body', 'invalid_id', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const agent = await requireAgent(em, actor, params.agentId);
    const operationId = body.operation_id ?? uuidv7();
    const workflowId = promotionWorkflowIds.bulk(agent.id, operationId);
    const view = (state: PromotionState) => ({
      operation_id: operationId,
      workflow_id: workflowId,
      status: state.status,
      total: state.total ?? 0,
    });
    const existing = await promotionState(services.jobs, agent.id, operationId);
    if (existing.exists) return reply(200, view(existing));
    const selection: PromotionSelection = 'ids' in body ? { ids: body.ids } : { reason: body.reason };
    const { total, skipped } = await selectForPromotion(em, agent.id, operationId, selection);
    const memo = {
      agent_id: agent.id,
      operation_id: operationId,
      total,
      ...('reason' in selection ? { reason: selection.reason } : { ids: selection.ids.length }),
    };
    const { started } = await services.jobs.start('promote-profiles', {
      agentId: agent.id,
      appId: agent.app.id,
      workspaceId: actor.workspaceId,
      operationId,
      by: await promoterLabel(em, actor.userId),
      total,
      skipped,
      memo,
    });
    if (!started) return reply(200, view(await promotionState(services.jobs, agent.id, operationId)));
    return reply(202, { operation_id: operationId, workflow_id: workflowId, status: 'running', total });
  },
});

export const promoteStatusOp = defineOperation({
  method: 'GET',
  path: '/api/agents/{agentId}/rejected-profiles/{rawId}/promote-status',
  ids: { path: { agentId: 'agent', rawId: { within: 'agentId', child: 'rejected_profile' } } },
  summary:
    'The promotion state of one rejected profile, with the latest bulk operation that selected it (live while it runs)',
  tag,
  auth: 'user',
  params: RawParams,
  responses: {
    200: z.object({
      raw_id: z.uuid(),
      promoted: z.boolean(),
      promoted_at: Timestamp.nullable(),
      lead_id: z.uuid().nullable(),
      operation: OperationView.nullable(),
    }),
  },
  errors: { 400: ['invalid_id', 'invalid_user'], ...common },
  handler: async ({ em, actor, params, services }) => {
    const row = await requireRejectedProfile(em, actor, params.agentId, params.rawId);
    return {
      raw_id: row.id,
      promoted: row.promotedAt != null,
      promoted_at: iso(row.promotedAt),
      lead_id: row.promotedLeadId ?? null,
      operation: row.promoteOperationId
        ? await operationState(services.jobs, em, row.agent.id, row.promoteOperationId)
        : null,
    };
  },
});
