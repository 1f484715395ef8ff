// Enrollment and scheduled actions (docs/executor.md).
import { approveAction, enrollLeads, markReplied, reenrollLead, requireAction, skipAction, unenrollLead } from '../../domain/enrollments.js';
import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  CampaignIdParams,
  CampaignLeadParams,
  EnrollBody,
  EnrollmentList,
  EnrollmentView,
  EnrollResultView,
  LeadIdParams,
  ReenrollBody,
  ScheduledActionView,
  toActionView,
  toEnrollmentView,
} from './schemas.js';

const tag = 'campaigns';
const auth = { 401: ['unauthorized'] };
const write = { 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] };

export const enrollLeadsOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/leads',
  summary: 'Enroll leads in a campaign: each is checked and reported; the ones that pass start at once',
  description:
    'Per lead: `enrolled`, or `skipped` with a reason (`not_found`, `already_enrolled`, `no_identity` on the first send step’s channel, `blocked_country`, `in_other_campaign` when the campaign has exclusive leads, `start_failed`). The campaign must be active or paused (409 `invalid_transition`).',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: EnrollBody,
  responses: { 200: EnrollResultView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, body, services }) => {
    const items = await enrollLeads(em, services.jobs, actor, params.campaignId, body.lead_ids);
    return { items, enrolled: items.filter((i) => i.status === 'enrolled').length, skipped: items.filter((i) => i.status === 'skipped').length };
  },
});

export const unenrollLeadOp = defineOperation({
  method: 'DELETE',
  path: '/api/campaigns/{campaignId}/leads/{leadId}',
  summary: 'Remove a lead from a campaign: its enrollment stops and its unsent actions are canceled',
  tag,
  auth: 'user',
  params: CampaignLeadParams,
  responses: { 200: EnrollmentView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, services }) => toEnrollmentView(await unenrollLead(em, services.jobs, actor, params.campaignId, params.leadId)),
});

export const reenrollLeadOp = defineOperation({
  method: 'POST',
  path: '/api/leads/{leadId}/reenroll',
  summary: 'Start a lead’s ended enrollment again, from the first step or a given one',
  description: 'A new run of `enrollment:<campaignId>:<leadId>`; 409 `invalid_transition` while the enrollment still runs or when the campaign is not active or paused.',
  tag,
  auth: 'user',
  params: LeadIdParams,
  body: ReenrollBody,
  responses: { 200: EnrollmentView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'], 503: ['unavailable'] },
  handler: async ({ em, actor, params, body, services }) =>
    toEnrollmentView(await reenrollLead(em, services.jobs, actor, params.leadId, { campaignId: body.campaign_id, stepId: body.step_id })),
});

export const markRepliedOp = defineOperation({
  method: 'POST',
  path: '/api/leads/{leadId}/mark-replied',
  summary: 'Record that the lead replied (outside the connector): its running enrollments get a reply signal',
  tag,
  auth: 'user',
  params: LeadIdParams,
  responses: { 200: EnrollmentList },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, services }) => ({ items: (await markReplied(em, services.jobs, actor, params.leadId)).map(toEnrollmentView) }),
});

export const getScheduledActionOp = defineOperation({
  method: 'GET',
  path: '/api/scheduled-actions/{id}',
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
  summary: 'Approve an action awaiting review (or a planned one ahead of its review)',
  description: '409 `invalid_transition` from any state other than `planned` or `awaiting_approval`.',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ScheduledActionView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, services }) => toActionView(await approveAction(em, services.jobs, actor, params.id)),
});

export const skipScheduledActionOp = defineOperation({
  method: 'POST',
  path: '/api/scheduled-actions/{id}/skip',
  summary: 'Skip an action not yet sent; the enrollment goes on with its next step',
  description: '409 `invalid_transition` once it is executing or has ended.',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ScheduledActionView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, services }) => toActionView(await skipAction(em, services.jobs, actor, params.id)),
});
