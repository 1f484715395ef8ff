// Review of discovered leads: list, counts, read, approve/reject (one and in batches), sequence (docs/discovered-leads.md).
import { defineOperation } from '../operation.js';
import { enrich } from '../enrichment/routes.js';
import { EnrichmentView } from '../enrichment/schemas.js';
import { IdParams, iso } from '../schemas.js';
import { contactActions, PENDING_STATES } from '../../domain/scheduled-actions/scheduled-actions.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import {
  approveDiscoveredLead,
  approveDiscoveredLeads,
  countDiscoveredLeads,
  getDiscoveredLeadContact,
  listDiscoveredLeads,
  rejectDiscoveredLead,
  rejectDiscoveredLeads,
  requireDiscoveredLead,
} from '../../domain/discovered-leads/discovered-leads.js';
import {
  ApprovalView,
  ApproveBody,
  BatchApproveBody,
  BatchRejectBody,
  BatchResults,
  CountsQuery,
  CountsView,
  DiscoveredLeadPage,
  DiscoveredLeadView,
  ListQuery,
  RejectBody,
  RejectionView,
  SequenceView,
  toCountsView,
  toDiscoveredLeadView,
} from './schemas.js';

const tag = 'discovered-leads';
const auth = { 401: ['unauthorized'] };
const filterOf = (q: {
  app_id?: string;
  agent_id?: string;
  status?: 'new' | 'approved' | 'rejected';
  signal_key?: string;
  q?: string;
}) => ({
  app_id: q.app_id,
  agent_id: q.agent_id,
  status: q.status,
  signal_key: q.signal_key || undefined,
  q: q.q || undefined,
});

export const listDiscoveredLeadsOp = defineOperation({
  method: 'GET',
  path: '/api/discovered-leads',
  ids: { query: { app_id: 'app', agent_id: 'agent' } },
  summary:
    'Discovered leads of the products the caller can access, newest first, filtered by product, agent, status, signal and text',
  tag,
  auth: 'user',
  query: ListQuery,
  responses: { 200: DiscoveredLeadPage },
  // app_id / agent_id name resources the way a path id does: another workspace's is 404, one the member was not given 403.
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, query }) =>
    page(
      await listDiscoveredLeads(em, actor, filterOf(query), toPageRequest(query)),
      query.limit,
      toDiscoveredLeadView,
    ),
});

export const countDiscoveredLeadsOp = defineOperation({
  method: 'GET',
  path: '/api/discovered-leads/counts',
  ids: { query: { app_id: 'app', agent_id: 'agent' } },
  summary: 'Counts of discovered leads per status and per agent, with the same filters as the list (so they agree)',
  tag,
  auth: 'user',
  query: CountsQuery,
  responses: { 200: CountsView },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, query }) => toCountsView(await countDiscoveredLeads(em, actor, filterOf(query))),
});

export const getDiscoveredLeadOp = defineOperation({
  method: 'GET',
  path: '/api/discovered-leads/{id}',
  ids: { path: { id: 'discovered_lead' } },
  summary: 'One discovered lead',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: DiscoveredLeadView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toDiscoveredLeadView(await requireDiscoveredLead(em, actor, params.id)),
});

export const approveDiscoveredLeadOp = defineOperation({
  method: 'POST',
  path: '/api/discovered-leads/{id}/approve',
  ids: { path: { id: 'discovered_lead' }, body: { list_id: { kind: 'list', missing: [400, 'invalid_list_id'] } } },
  summary:
    "Approve into a list (the body's list of the same product, else the agent's list): creates or reuses the contact and adds the lead once",
  tag,
  auth: 'user',
  params: IdParams,
  body: ApproveBody,
  responses: { 200: ApprovalView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user', 'invalid_list_id', 'no_list'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['invalid_transition'],
  },
  handler: async ({ em, actor, params, body }) => {
    const a = await approveDiscoveredLead(em, actor, params.id, body.list_id);
    const row = await requireDiscoveredLead(em, actor, params.id);
    return {
      ...toDiscoveredLeadView(row),
      list_id: a.listId ?? row.approved_list_id!,
      lead_id: a.leadId ?? row.approved_lead_id!,
      contact_id: a.contactId ?? (await getDiscoveredLeadContact(em, row))!,
      created: a.created ?? false,
      result: a.result as 'approved' | 'already_approved',
    };
  },
});

export const rejectDiscoveredLeadOp = defineOperation({
  method: 'POST',
  path: '/api/discovered-leads/{id}/reject',
  ids: { path: { id: 'discovered_lead' } },
  summary: "Reject with a reason (counted in the agent's rejection breakdown); a repeat is 200 already_rejected",
  tag,
  auth: 'user',
  params: IdParams,
  body: RejectBody,
  responses: { 200: RejectionView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['invalid_transition'],
  },
  handler: async ({ em, actor, params, body }) => {
    const result = await rejectDiscoveredLead(em, actor, params.id, body.reason);
    return {
      ...toDiscoveredLeadView(await requireDiscoveredLead(em, actor, params.id)),
      result: result as 'rejected' | 'already_rejected',
    };
  },
});

export const batchApproveOp = defineOperation({
  method: 'POST',
  path: '/api/discovered-leads/batch-approve',
  ids: {
    body: {
      ids: {
        each: 'discovered_lead',
        why: 'each discovered lead is answered in its own result; one the caller may not see is not_found',
      },
      list_id: { kind: 'list', missing: [400, 'invalid_list_id'] },
    },
  },
  summary: 'Approve up to 500 discovered leads in one set-based transaction; a per-id result, idempotent',
  tag,
  auth: 'user',
  body: BatchApproveBody,
  responses: { 200: BatchResults },
  errors: { 400: ['invalid_body', 'invalid_user', 'invalid_list_id', 'no_list'], ...auth, 403: ['demo_read_only'] },
  handler: async ({ em, actor, body, refused }) => ({
    results: (await approveDiscoveredLeads(em, actor, body.ids, body.list_id, refused)).map((a) => ({
      id: a.id,
      result: a.result,
    })),
  }),
});

export const batchRejectOp = defineOperation({
  method: 'POST',
  path: '/api/discovered-leads/batch-reject',
  ids: {
    body: {
      ids: {
        each: 'discovered_lead',
        why: 'each discovered lead is answered in its own result; one the caller may not see is not_found',
      },
    },
  },
  summary: 'Reject up to 500 discovered leads with one reason; a per-id result, idempotent',
  tag,
  auth: 'user',
  body: BatchRejectBody,
  responses: { 200: BatchResults },
  errors: { 400: ['invalid_body', 'invalid_user'], ...auth, 403: ['demo_read_only'] },
  handler: async ({ em, actor, body, refused }) => ({
    results: await rejectDiscoveredLeads(em, actor, body.ids, body.reason, refused),
  }),
});

export const sequenceOp = defineOperation({
  method: 'GET',
  path: '/api/discovered-leads/{id}/sequence',
  ids: { path: { id: 'discovered_lead' } },
  summary: "The planned and past outreach steps of the lead's contact: its scheduled actions across campaigns",
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: SequenceView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    const row = await requireDiscoveredLead(em, actor, params.id);
    const contactId = await getDiscoveredLeadContact(em, row);
    const actions = contactId ? await contactActions(em, actor, contactId) : [];
    const steps = actions.map((a) => ({
      kind: a.type,
      status: a.state,
      scheduled_at: iso(a.due_at),
      action_id: a.id,
      campaign_id: a.campaign_id,
      campaign_name: a.campaign_name,
      enrollment_id: a.enrollment_id,
      lead_id: a.lead_id,
      step_id: a.step_id,
      step_position: a.step_position,
      executed_at: iso(a.executed_at),
      accepted_at: iso(a.accepted_at),
      replied_at: iso(a.replied_at),
      waiting_reason: a.waiting_reason ?? null,
      error_code: a.error_code ?? null,
      planned: (PENDING_STATES as readonly string[]).includes(a.state),
    }));
    return {
      discovered_lead_id: row.id,
      contact_id: contactId,
      steps,
      planned_count: steps.filter((s) => s.planned).length,
      past_count: steps.filter((s) => !s.planned).length,
    };
  },
});

export const refreshDiscoveredLeadOp = defineOperation({
  method: 'POST',
  path: '/api/discovered-leads/{id}/refresh',
  ids: { path: { id: 'discovered_lead' } },
  summary:
    'Re-run its enrichment (a new attempt; one in flight is joined); same answers as POST /api/enrichment/discovered-leads/{id}',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 202: EnrichmentView, 200: EnrichmentView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...auth,
    402: ['insufficient_credits'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['not_enrichable', 'enrichment_busy'],
  },
  handler: ({ em, actor, services, params }) => enrich(em, actor, services.jobs, 'discovered-lead', params.id, true),
});
