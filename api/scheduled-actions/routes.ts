// Campaign-level scheduled-action routes, stats and in-flight impact (docs/executor.md "Scheduled
// actions, in bulk"; docs/campaigns.md "Stats and impact").
import {
  batchApprove,
  campaignStats,
  cancelCountryRestricted,
  countryRestrictionImpact,
  inFlightImpact,
  listCampaignActions,
  rescheduleOverdue,
  reschedulePlanned,
  stepReplies,
} from '../../domain/scheduled-actions/scheduled-actions.js';
import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import { CampaignIdParams, toActionView } from '../enrollments/schemas.js';
import {
  ActionListQuery,
  ActionPage,
  BatchApproveBody,
  BatchApproveView,
  CampaignStatsView,
  CountryCancelView,
  CountryImpactView,
  InFlightImpactView,
  ReplanView,
  StepRepliesView,
} from './schemas.js';

const tag = 'campaigns';
const auth = { 401: ['unauthorized'] };
const read = { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] };
const write = { 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] };

export const listCampaignActionsOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/scheduled-actions',
  ids: { path: { campaignId: 'campaign' }, query: { step_id: { within: 'campaignId', child: 'step' } } },
  summary: 'The campaign’s scheduled actions by due time, filtered by state, step and due range',
  description:
    '`due_from` is inclusive, `due_to` exclusive. `{items, next_cursor}`; 400 `invalid_cursor` for a cursor this list did not return.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  query: ActionListQuery,
  responses: { 200: ActionPage },
  errors: { ...read, 400: ['invalid_id', 'invalid_query', 'invalid_cursor', 'invalid_user'] },
  handler: async ({ em, actor, params, query }) => {
    const page = await listCampaignActions(em, actor, params.campaignId, {
      state: query.state,
      stepId: query.step_id,
      dueFrom: query.due_from ? new Date(query.due_from) : undefined,
      dueTo: query.due_to ? new Date(query.due_to) : undefined,
      limit: query.limit,
      cursor: query.cursor,
    });
    return { items: page.items.map(toActionView), next_cursor: page.nextCursor };
  },
});

export const batchApproveOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/scheduled-actions/batch-approve',
  ids: {
    path: { campaignId: 'campaign' },
    body: {
      ids: {
        each: 'campaign_action',
        within: 'campaignId',
        why: 'each action is answered in its own result; one not of this campaign is not_found',
      },
    },
  },
  summary: 'Approve up to 500 actions of the campaign; a result per id',
  description:
    'Each id by the single-action rule: `approved` (and its workflow told), `not_found` (no action of this campaign), or `invalid_state` (not `planned` or `awaiting_approval`; its current state is given).',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: BatchApproveBody,
  responses: { 200: BatchApproveView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, body, services }) => {
    const items = await batchApprove(em, services.jobs, actor, params.campaignId, body.ids);
    const n = (r: string) => items.filter((i) => i.result === r).length;
    return {
      items: items as never,
      approved: n('approved'),
      not_found: n('not_found'),
      invalid_state: n('invalid_state'),
    };
  },
});

export const countryRestrictionImpactOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/scheduled-actions/country-restriction-impact',
  operationId: 'getCountryRestrictionImpact',
  ids: { path: { campaignId: 'campaign' } },
  summary: 'Actions not yet sent to leads whose country the campaign’s country rule now refuses: counts and a sample',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  responses: { 200: CountryImpactView },
  errors: read,
  handler: async ({ em, actor, params }) => (await countryRestrictionImpact(em, actor, params.campaignId)) as never,
});

export const cancelCountryRestrictedOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/scheduled-actions/cancel-country-restricted',
  operationId: 'cancelCountryRestrictedActions',
  ids: { path: { campaignId: 'campaign' } },
  summary: 'Cancel those actions and stop their enrollments',
  description:
    'Actions `canceled` (`error_code = blocked_country`), enrollments `stopped` (`stop_reason = blocked_country`), each workflow told by an `unenroll` signal.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  responses: { 200: CountryCancelView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, services }) =>
    cancelCountryRestricted(em, services.jobs, actor, params.campaignId),
});

export const inFlightImpactOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/in-flight-impact',
  ids: { path: { campaignId: 'campaign' } },
  summary:
    'What pausing or editing the campaign now would affect: enrollments per status, actions per state, actions due in the next 24 h',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  responses: { 200: InFlightImpactView },
  errors: read,
  handler: async ({ em, actor, params }) => (await inFlightImpact(em, actor, params.campaignId)) as never,
});

export const campaignStatsOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{id}/stats',
  ids: { path: { id: 'campaign' } },
  summary:
    'Campaign and per-step counts (enrolled, sent, accepted, replied, reply rate, failed, bounced) and by local day',
  description: 'Days are in the campaign’s time zone. `reply_rate` = replied / sent (0 when nothing was sent).',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: CampaignStatsView },
  errors: read,
  handler: async ({ em, actor, params }) => campaignStats(em, actor, params.id),
});

export const stepRepliesOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{id}/step-replies',
  ids: { path: { id: 'campaign' } },
  summary: 'Replies attributed to the send step that preceded them, with the latest per step',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: StepRepliesView },
  errors: read,
  handler: async ({ em, actor, params }) => stepReplies(em, actor, params.id),
});

export const rescheduleOverdueOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/scheduled-actions/reschedule-overdue',
  operationId: 'rescheduleOverdueActions',
  ids: { path: { campaignId: 'campaign' } },
  summary:
    'Move actions whose due time passed (while the campaign or the enrollment was paused) into the next sending windows, spread under each sender account’s daily caps',
  description:
    'Pending actions (`planned`, `awaiting_approval`, `approved`) of running enrollments due before now, earliest first. Their workflows follow the new due time at their slot request (waiting reason `rescheduled`). 409 `invalid_transition` unless the campaign is active or paused.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  responses: { 200: ReplanView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params }) => rescheduleOverdue(em, actor, params.campaignId),
});

export const reschedulePlannedOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/scheduled-actions/reschedule-planned',
  operationId: 'reschedulePlannedActions',
  ids: { path: { campaignId: 'campaign' } },
  summary:
    'Re-plan the pending actions not yet due into the campaign’s current windows and caps (after a settings change)',
  description:
    'Each action moves to the first fitting time at or after the earliest its step allows (the delay after the previous step): wider windows bring actions earlier, narrower ones push them later. Actions planned before this rule, and first sends under a daily new-lead cap, never move earlier. 409 `invalid_transition` unless the campaign is active or paused.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  responses: { 200: ReplanView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params, services }) => reschedulePlanned(em, services.jobs, actor, params.campaignId),
});
