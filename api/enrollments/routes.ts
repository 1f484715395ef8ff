// Enrollment and scheduled actions (docs/executor.md).
import type { z } from 'zod';
import {
  approveAction,
  enrollLeads,
  markReplied,
  reenrollLead,
  requireAction,
  skipAction,
  unenrollLead,
} from '../../domain/enrollments/enrollments.js';
import {
  enrollmentPreview,
  operationReceipt,
  requireOperation,
  startListEnrollment,
} from '../../domain/enrollments/bulk.js';
import { getEnrollmentView, listEnrollmentViews } from '../../domain/enrollments/view.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  CampaignIdParams,
  CampaignLeadParams,
  EnrollBody,
  EnrollListBody,
  EnrollmentPreviewView,
  EnrollOperationView,
  EnrollReceiptView,
  OperationParams,
  PreviewParams,
  PreviewQuery,
  ReceiptParams,
  ReceiptQuery,
  toEnrollOperationView,
  EnrollmentDetailPage,
  EnrollmentDetailView,
  EnrollmentList,
  EnrollmentListQuery,
  EnrollmentView,
  EnrollResultView,
  LeadIdParams,
  ReenrollBody,
  ScheduledActionView,
  toActionView,
  toEnrollmentDetailView,
  toEnrollmentView,
} from './schemas.js';

const tag = 'campaigns';
const auth = { 401: ['unauthorized'] };
const write = { 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] };

export const enrollLeadsOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/leads',
  operationId: 'addCampaignLeads',
  idempotency: true, // starts enrollments; a retry would answer already_enrolled instead
  ids: {
    path: { campaignId: 'campaign' },
    body: {
      lead_ids: {
        each: 'lead',
        why: 'each lead is checked by enrollment and answered in its own result; one the caller may not see is skipped not_found',
      },
    },
  },
  summary: 'Enroll leads in a campaign: each is checked and reported; the ones that pass start at once',
  description:
    'Per lead: `enrolled`, or `skipped` with a reason (`not_found`, `already_enrolled`, `unsubscribed`, `no_identity` on the first send step’s channel, `email_bounced` (the contact’s address bounced; email first send), `suppressed` (the address or its domain is on the workspace’s suppression list; email first send), `blocked_country`, `in_other_campaign` when the campaign has exclusive leads, `start_failed`). The campaign must be active or paused (409 `invalid_transition`).',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: EnrollBody,
  responses: { 200: EnrollResultView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, body, services, refused }) => {
    const items = await enrollLeads(em, services.jobs, actor, params.campaignId, body.lead_ids, refused);
    return {
      items,
      enrolled: items.filter((i) => i.status === 'enrolled').length,
      skipped: items.filter((i) => i.status === 'skipped').length,
    };
  },
});

export const unenrollLeadOp = defineOperation({
  method: 'DELETE',
  path: '/api/campaigns/{campaignId}/leads/{leadId}',
  ids: { path: { campaignId: 'campaign', leadId: 'lead' } },
  summary: 'Remove a lead from a campaign: its enrollment stops and its unsent actions are canceled',
  tag,
  auth: 'user',
  params: CampaignLeadParams,
  responses: { 200: EnrollmentView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, services }) =>
    toEnrollmentView(await unenrollLead(em, services.jobs, actor, params.campaignId, params.leadId)),
});

export const reenrollLeadOp = defineOperation({
  method: 'POST',
  path: '/api/leads/{leadId}/reenroll',
  idempotency: true, // starts a new run; a retry would be 409 invalid_transition
  ids: {
    path: { leadId: 'lead' },
    body: { campaign_id: 'campaign', step_id: { within: 'campaign_id', child: 'step' } },
  },
  summary: 'Start a lead’s ended enrollment again, from the first step or a given one',
  description:
    'A new run of `enrollment:<campaignId>:<leadId>`; 409 `invalid_transition` while the enrollment still runs or when the campaign is not active or paused.',
  tag,
  auth: 'user',
  params: LeadIdParams,
  body: ReenrollBody,
  responses: { 200: EnrollmentView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    ...write,
    409: ['invalid_transition'],
    503: ['unavailable'],
  },
  handler: async ({ em, actor, params, body, services }) =>
    toEnrollmentView(
      await reenrollLead(em, services.jobs, actor, params.leadId, {
        campaignId: body.campaign_id,
        stepId: body.step_id,
      }),
    ),
});

export const markRepliedOp = defineOperation({
  method: 'POST',
  path: '/api/leads/{leadId}/mark-replied',
  ids: { path: { leadId: 'lead' } },
  summary: 'Record that the lead replied (outside the connector): its running enrollments get a reply signal',
  tag,
  auth: 'user',
  params: LeadIdParams,
  responses: { 200: EnrollmentList },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, services }) => ({
    items: (await markReplied(em, services.jobs, actor, params.leadId)).map(toEnrollmentView),
  }),
});

export const getScheduledActionOp = defineOperation({
  method: 'GET',
  path: '/api/scheduled-actions/{id}',
  ids: { path: { id: 'action' } },
  summary: 'A scheduled action: its state, due time, content and why it is not done yet',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ScheduledActionView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toActionView(await requireAction(em, actor, params.id)),
});

export const approveScheduledActionOp = defineOperation({
  method: 'POST',
  path: '/api/scheduled-actions/{id}/approve',
  ids: { path: { id: 'action' } },
  summary: 'Approve an action awaiting review (or a planned one ahead of its review)',
  description:
    '409 `invalid_transition` from any state other than `planned` or `awaiting_approval`; 409 `draft_failed` when the action’s AI-written draft failed (edit or retry it first).',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ScheduledActionView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition', 'draft_failed'] },
  handler: async ({ em, actor, params, services }) =>
    toActionView(await approveAction(em, services.jobs, actor, params.id)),
});

export const skipScheduledActionOp = defineOperation({
  method: 'POST',
  path: '/api/scheduled-actions/{id}/skip',
  ids: { path: { id: 'action' } },
  summary: 'Skip an action not yet sent; the enrollment goes on with its next step',
  description: '409 `invalid_transition` once it is executing or has ended.',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ScheduledActionView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, services }) =>
    toActionView(await skipAction(em, services.jobs, actor, params.id)),
});

export const enrollListOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/enroll-list-contacts',
  ids: { path: { campaignId: 'campaign' }, body: { list_id: { within: 'campaignId', child: 'campaign_list' } } },
  summary: 'Enroll a whole list in a campaign, as a job with exact progress and a receipt',
  description:
    'Creates an operation and starts workflow `enroll:<campaignId>:<operationId>`, which pages through the list’s leads, checks each as `POST .../leads` does and enrolls the ones that pass. 202 with the operation; repeating the request with the same `client_key` returns the same operation (and starts nothing new). The list must belong to the campaign’s product (404 otherwise). 409 `invalid_transition` unless the campaign is active or paused; 409 `client_key_reused` when the key was used for another list.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: EnrollListBody,
  responses: { 202: EnrollOperationView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    ...write,
    409: ['invalid_transition', 'client_key_reused'],
  },
  handler: async ({ em, actor, params, body, services }) =>
    reply(
      202,
      toEnrollOperationView(
        await startListEnrollment(em, services.jobs, actor, params.campaignId, {
          listId: body.list_id,
          clientKey: body.client_key,
        }),
      ),
    ),
});

export const enrollListOperationOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/enroll-list-contacts/operations/{operationId}',
  ids: { path: { campaignId: 'campaign', operationId: { within: 'campaignId', child: 'enroll_operation' } } },
  summary: 'Exact progress of a bulk enrollment (committed with each page of 500 leads)',
  tag,
  auth: 'user',
  params: OperationParams,
  responses: { 200: EnrollOperationView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) =>
    toEnrollOperationView(await requireOperation(em, actor, params.campaignId, params.operationId)),
});

export const enrollListReceiptOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/enroll-list-contacts/receipts/{receiptId}',
  ids: { path: { campaignId: 'campaign', receiptId: { within: 'campaignId', child: 'enroll_operation' } } },
  summary: 'The receipt of a finished bulk enrollment: counts, skips per reason and the skipped leads',
  description: 'The receipt id is the operation id. 409 `operation_not_finished` until the operation completed.',
  tag,
  auth: 'user',
  params: ReceiptParams,
  query: ReceiptQuery,
  responses: { 200: EnrollReceiptView },
  errors: {
    400: ['invalid_id', 'invalid_query', 'invalid_user'],
    ...auth,
    403: ['not_assigned'],
    404: ['not_found'],
    409: ['operation_not_finished'],
  },
  handler: async ({ em, actor, params, query }) => {
    const r = await operationReceipt(em, actor, params.campaignId, params.receiptId, {
      limit: query.limit,
      cursor: query.cursor,
    });
    const o = r.operation;
    return {
      receipt_id: o.id,
      operation_id: o.id,
      campaign_id: o.campaign.id,
      list_id: o.listId,
      status: 'completed' as const,
      processed: o.processed,
      enrolled: o.enrolled,
      skipped: o.skipped,
      skipped_by_reason: r.byReason,
      finished_at: o.finishedAt ? o.finishedAt.toISOString() : null,
      skipped_leads: page(
        r.skippedLeads.map((x) => ({ id: x.lead_id, reason: x.reason })),
        query.limit,
        (x) => ({
          lead_id: x.id,
          reason: x.reason as z.infer<typeof EnrollReceiptView>['skipped_leads']['items'][number]['reason'],
        }),
      ),
    };
  },
});

export const enrollmentPreviewOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{id}/enrollment-preview',
  ids: {
    path: { id: 'campaign' },
    query: {
      list_id: 'list',
      lead_ids: {
        each: 'lead',
        why: 'each lead is checked by enrollment and answered in its own result; one the caller may not see is skipped not_found',
      },
    },
  },
  summary: 'What enrolling a list (or given leads) would do, without writing: counts per outcome and a sample of skips',
  description:
    'The same checks as the bulk enrollment (`already_enrolled`, `unsubscribed`, `no_identity`, `email_bounced`, `suppressed`, `blocked_country`, `in_other_campaign`, `not_found` for lead ids). Give `list_id` (a list of the campaign’s product) or `lead_ids` (comma-separated).',
  tag,
  auth: 'user',
  params: PreviewParams,
  query: PreviewQuery,
  responses: { 200: EnrollmentPreviewView },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params, query, refused }) => {
    const p = await enrollmentPreview(
      em,
      actor,
      params.id,
      { listId: query.list_id, leadIds: query.lead_ids },
      refused,
    );
    return { ...p, sample: p.sample as z.infer<typeof EnrollmentPreviewView>['sample'] };
  },
});

// The per-lead enrollment view: beyond the spec (docs/executor.md, "Per-lead enrollment view").
const WAITING_RULE =
  '`waiting` says why the next send has not happened yet, read from stored state (no workflow query): an ended enrollment has no reason; else a paused campaign is `campaign_paused`, a paused enrollment `paused`; else the next action’s `waiting_reason`, with `until` = its `waiting_until` when one is recorded (`throttled`: the connector’s rate limit ends then), else its `due_at` for the timed reasons (`waiting_for_window`, `waiting_step_delay`, `daily_new_lead_cap`, `rescheduled`, `gap`, `outside_hours`, `cap_daily`, `cap_weekly`, `warmup`, `out_of_office`: the day after the contact’s out-of-office return date) and null for the others (`awaiting_review`, …); no unsent action: no reason.';

export const listCampaignEnrollmentsOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/enrollments',
  ids: {
    path: { campaignId: 'campaign' },
    query: { step_id: { within: 'campaignId', child: 'step' }, lead_id: 'lead' },
  },
  summary:
    'The campaign’s enrollments (beyond the spec): status, current step, next action and why it has not happened yet',
  description: `Beyond the spec. In enrollment order, filtered by \`status\`, \`step_id\` (the current step) and \`lead_id\`; \`{items, next_cursor}\`. ${WAITING_RULE}`,
  tag,
  beyondSpec: true,
  auth: 'user',
  params: CampaignIdParams,
  query: EnrollmentListQuery,
  responses: { 200: EnrollmentDetailPage },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params, query }) =>
    page(
      await listEnrollmentViews(
        em,
        actor,
        params.campaignId,
        { status: query.status, stepId: query.step_id, leadId: query.lead_id },
        toPageRequest(query),
      ),
      query.limit,
      toEnrollmentDetailView,
    ),
});

export const getEnrollmentOp = defineOperation({
  method: 'GET',
  path: '/api/enrollments/{id}',
  ids: { path: { id: 'enrollment' } },
  summary: 'One enrollment (beyond the spec): status, current step, next action and why it has not happened yet',
  description: `Beyond the spec. ${WAITING_RULE}`,
  tag,
  beyondSpec: true,
  auth: 'user',
  params: IdParams,
  responses: { 200: EnrollmentDetailView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toEnrollmentDetailView(await getEnrollmentView(em, actor, params.id)),
});
