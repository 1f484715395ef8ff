// Campaigns and their steps (docs/campaigns.md). Enrollment, scheduled actions and stats live elsewhere.
import { IdParams } from '../schemas.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import {
  createCampaign,
  duplicateCampaign,
  getCampaign,
  getSignals,
  listCampaigns,
  preflight,
  setSignals,
  settingsOf,
  updateCampaign,
} from '../../domain/campaigns/campaigns.js';
import {
  addStep,
  affectedCounts,
  assertAttachable,
  deleteAttachment,
  deleteStep,
  listSteps,
  MAX_STEP_ATTACHMENT_BYTES,
  reorderSteps,
  setAttachment,
  setMessageMode,
  updateStep,
  type StepResult,
} from '../../domain/campaigns/steps.js';
import { changeCampaignStatus } from '../../domain/campaigns/status.js';
import { badRequest } from '../../domain/errors.js';
import { closeIfUnread, readForm } from '../middleware/multipart.js';
import { clearStepWinner, getStepVariants, setStepWinner } from '../../domain/campaigns/variants.js';
import { defineOperation, reply } from '../operation.js';
import {
  AffectedCountsView,
  AppIdParams,
  AttachmentForm,
  CampaignIdParams,
  CampaignPage,
  CampaignView,
  CreateCampaignBody,
  CreateStepBody,
  DeletedStepView,
  DuplicateBody,
  ListCampaignsQuery,
  MessageModeBody,
  PreflightBody,
  PreflightView,
  ReorderBody,
  SignalsBody,
  SignalsView,
  StatusBody,
  StepListView,
  StepParams,
  StepWithVersionView,
  UpdateCampaignBody,
  UpdateStepBody,
  preflightInputOf,
  toAffectedCountsView,
  toCampaignView,
  toPreflightView,
  toSignalsView,
  toStepListView,
  toStepView,
  StepVariantsParams,
  StepVariantsView,
  VariantWinnerParams,
  toStepVariantsView,
} from './schemas.js';

const tag = 'campaigns';
const auth = { 401: ['unauthorized'] };
const read = { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] };
const write = (extra400: string[] = [], extra409: string[] = []): Record<number, string[]> => ({
  400: ['invalid_id', 'invalid_body', 'invalid_user', ...extra400],
  ...auth,
  403: ['not_assigned', 'demo_read_only'],
  404: ['not_found'],
  ...(extra409.length ? { 409: extra409 } : ({} as Record<number, string[]>)),
});

const withVersion = (r: StepResult) => ({
  ...toStepView(r.step, r.campaign.messageMode),
  step_version: r.campaign.stepVersion,
});

/** A variant's id in a step's body (`variants[].id`). */
const VARIANT_OWN_ID = {
  value:
    'a variant’s own id, chosen by the server: given back on an edit, it keeps that variant of the step (an unknown one is a new variant)',
} as const;

export const listCampaignsOp = defineOperation({
  method: 'GET',
  path: '/api/apps/{appId}/campaigns',
  ids: { path: { appId: 'app' } },
  summary: "A product's campaigns, oldest first, optionally of one status",
  tag,
  auth: 'user',
  params: AppIdParams,
  query: ListCampaignsQuery,
  responses: { 200: CampaignPage },
  errors: { ...read, 400: ['invalid_id', 'invalid_query', 'invalid_user'] },
  handler: async ({ em, actor, params, query }) =>
    page(await listCampaigns(em, actor, params.appId, toPageRequest(query), query.status), query.limit, toCampaignView),
});

export const createCampaignOp = defineOperation({
  method: 'POST',
  path: '/api/apps/{appId}/campaigns',
  operationId: 'createCampaign',
  ids: { path: { appId: 'app' }, body: { account_ids: { kind: 'account', missing: [400, 'invalid_account'] } } },
  summary: 'Create a campaign in draft (it sends nothing until activated); counted against the plan',
  tag,
  auth: 'user',
  params: AppIdParams,
  body: CreateCampaignBody,
  responses: { 201: CampaignView },
  errors: {
    ...write(['invalid_time_zone', 'invalid_account']),
    403: ['not_assigned', 'demo_read_only', 'plan_limit_reached'],
  },
  handler: async ({ em, actor, params, body }) =>
    toCampaignView(
      await createCampaign(em, actor, params.appId, { ...settingsOf(body), name: body.name, timeZone: body.time_zone }),
    ),
});

export const preflightOp = defineOperation({
  method: 'POST',
  path: '/api/apps/{appId}/campaigns/preflight',
  ids: {
    path: { appId: 'app' },
    body: {
      campaign_id: 'campaign',
      account_ids: { kind: 'account', missing: [400, 'invalid_account'] },
      'steps[].variants[].id': VARIANT_OWN_ID,
    },
  },
  summary:
    'What blocks or weakens activation of a campaign (by campaign_id, with optional draft overrides) or of draft settings and steps; writes nothing',
  tag,
  auth: 'user',
  params: AppIdParams,
  body: PreflightBody,
  responses: { 200: PreflightView },
  errors: { ...write(['invalid_time_zone', 'invalid_account']), 403: ['not_assigned'] },
  // Reads only: it is allowed in the Demo workspace.
  demo: 'simulate',
  handler: async ({ em, actor, params, body }) =>
    toPreflightView(await preflight(em, actor, params.appId, preflightInputOf(body))),
});

export const getCampaignOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{id}',
  ids: { path: { id: 'campaign' } },
  summary: 'One campaign with its settings, status and step count',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: CampaignView },
  errors: read,
  handler: async ({ em, actor, params }) => toCampaignView(await getCampaign(em, actor, params.id)),
});

export const updateCampaignOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{id}',
  ids: { path: { id: 'campaign' }, body: { account_ids: { kind: 'account', missing: [400, 'invalid_account'] } } },
  summary:
    'Change settings of a campaign (only the fields given; null clears a nullable one); archived campaigns are read-only',
  tag,
  auth: 'user',
  params: IdParams,
  body: UpdateCampaignBody,
  responses: { 200: CampaignView },
  errors: write(['invalid_time_zone', 'invalid_account'], ['campaign_archived']),
  handler: async ({ em, actor, params, body }) =>
    toCampaignView(await updateCampaign(em, actor, params.id, settingsOf(body))),
});

export const duplicateCampaignOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{id}/duplicate',
  ids: { path: { id: 'campaign' } },
  summary: 'Copy a campaign (settings, steps and attachments; not enrollments or signal links) into a new draft',
  tag,
  auth: 'user',
  params: IdParams,
  body: DuplicateBody,
  responses: { 201: CampaignView },
  errors: { ...write(), 403: ['not_assigned', 'demo_read_only', 'plan_limit_reached'] },
  handler: async ({ em, actor, params, body }) =>
    reply(201, toCampaignView(await duplicateCampaign(em, actor, params.id, body.name))),
});

export const setStatusOp = defineOperation({
  method: 'PATCH',
  path: '/api/campaigns/{id}/status',
  ids: { path: { id: 'campaign' } },
  summary:
    'Move a campaign along its lifecycle: draft → active ⇄ paused → completed, any but archived → archived (activation runs the preflight)',
  tag,
  auth: 'user',
  params: IdParams,
  body: StatusBody,
  responses: { 200: CampaignView },
  errors: write([], ['invalid_transition', 'preflight_failed']),
  handler: async ({ em, actor, params, body, services }) => {
    return toCampaignView(await changeCampaignStatus(em, services.jobs, actor, params.id, body.status));
  },
});

export const getSignalsOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{id}/signals',
  ids: { path: { id: 'campaign' } },
  summary: 'The agent signals linked to a campaign (leads approved from them enroll in it)',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: SignalsView },
  errors: read,
  handler: async ({ em, actor, params }) => toSignalsView(params.id, await getSignals(em, actor, params.id)),
});

export const setSignalsOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{id}/signals',
  ids: {
    path: { id: 'campaign' },
    body: { signal_ids: { within: 'id', child: 'campaign_signal', missing: [400, 'invalid_signal'] } },
  },
  summary: 'Replace the agent signals linked to a campaign (signals of agents of the same product)',
  tag,
  auth: 'user',
  params: IdParams,
  body: SignalsBody,
  responses: { 200: SignalsView },
  errors: write(['invalid_signal'], ['campaign_archived']),
  handler: async ({ em, actor, params, body }) =>
    toSignalsView(params.id, await setSignals(em, actor, params.id, body.signal_ids)),
});

// ---- steps ----

const stepWrite = (extra400: string[] = [], extra409: string[] = []) =>
  write(extra400, ['campaign_archived', 'campaign_completed', ...extra409]);

export const listStepsOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/steps',
  ids: { path: { campaignId: 'campaign' } },
  summary: "A campaign's steps in order, with its current step version",
  tag,
  auth: 'user',
  params: CampaignIdParams,
  responses: { 200: StepListView },
  errors: read,
  handler: async ({ em, actor, params }) => toStepListView(await listSteps(em, actor, params.campaignId)),
});

export const addStepOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/steps',
  ids: { path: { campaignId: 'campaign' }, body: { 'variants[].id': VARIANT_OWN_ID } },
  summary: 'Add a step (appended, or at position); templates are checked; creates a new step version',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: CreateStepBody,
  responses: { 201: StepWithVersionView },
  errors: stepWrite(['invalid_template'], ['step_limit_reached']),
  handler: async ({ em, actor, params, body }) =>
    reply(201, withVersion(await addStep(em, actor, params.campaignId, body))),
});

export const reorderStepsOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{campaignId}/steps/reorder',
  ids: {
    path: { campaignId: 'campaign' },
    body: { step_ids: { within: 'campaignId', child: 'step', missing: [400, 'invalid_order'] } },
  },
  summary: 'Put the steps in a new order: the full list of step ids (a permutation); creates a new step version',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: ReorderBody,
  responses: { 200: StepListView },
  errors: stepWrite(['invalid_order']),
  handler: async ({ em, actor, params, body }) =>
    toStepListView(await reorderSteps(em, actor, params.campaignId, body.step_ids)),
});

export const messageModeOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{campaignId}/steps/message-mode',
  ids: { path: { campaignId: 'campaign' }, body: { step_id: { within: 'campaignId', child: 'step' } } },
  summary: 'Set the message mode (template, ai, ai_review) campaign-wide or for one send step',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: MessageModeBody,
  responses: { 200: StepListView },
  errors: stepWrite(['invalid_step']),
  handler: async ({ em, actor, params, body }) =>
    toStepListView(
      await setMessageMode(em, actor, params.campaignId, {
        messageMode: body.message_mode,
        stepId: body.step_id,
        resetSteps: body.reset_steps,
      }),
    ),
});

export const updateStepOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{campaignId}/steps/{stepId}',
  ids: {
    path: { campaignId: 'campaign', stepId: { within: 'campaignId', child: 'step' } },
    body: { 'variants[].id': VARIANT_OWN_ID },
  },
  summary:
    "Replace a step's type, config and message mode (id and position stay); templates are checked; creates a new step version",
  tag,
  auth: 'user',
  params: StepParams,
  body: UpdateStepBody,
  responses: { 200: StepWithVersionView },
  errors: stepWrite(['invalid_template'], ['attachment_not_supported']),
  handler: async ({ em, actor, params, body }) =>
    withVersion(await updateStep(em, actor, params.campaignId, params.stepId, body)),
});

export const deleteStepOp = defineOperation({
  method: 'DELETE',
  path: '/api/campaigns/{campaignId}/steps/{stepId}',
  ids: { path: { campaignId: 'campaign', stepId: { within: 'campaignId', child: 'step' } } },
  summary: 'Delete a step (and its attachment); the later steps move up; creates a new step version',
  tag,
  auth: 'user',
  params: StepParams,
  responses: { 200: DeletedStepView },
  errors: { ...stepWrite(), 400: ['invalid_id', 'invalid_user'] },
  handler: async ({ em, actor, params }) => {
    const r = await deleteStep(em, actor, params.campaignId, params.stepId);
    return { id: r.id, deleted: true as const, step_version: r.campaign.stepVersion };
  },
});

export const affectedCountsOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/steps/{stepId}/affected-counts',
  ids: { path: { campaignId: 'campaign', stepId: { within: 'campaignId', child: 'step' } } },
  summary:
    'Active and paused enrollments before, on and after a step, and what an edit or deletion would do to each group',
  tag,
  auth: 'user',
  params: StepParams,
  responses: { 200: AffectedCountsView },
  errors: read,
  handler: async ({ em, actor, params }) =>
    toAffectedCountsView(await affectedCounts(em, actor, params.campaignId, params.stepId)),
});

export const uploadAttachmentOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/steps/{stepId}/attachment',
  ids: { path: { campaignId: 'campaign', stepId: { within: 'campaignId', child: 'step' } } },
  summary: `Attach a file (multipart field "file", at most ${MAX_STEP_ATTACHMENT_BYTES} bytes) to an email or message step, replacing its attachment; creates a new step version`,
  tag,
  auth: 'user',
  params: StepParams,
  form: AttachmentForm,
  responses: { 200: StepWithVersionView },
  errors: {
    400: ['invalid_id', 'invalid_user', 'invalid_upload', 'missing_file', 'invalid_file'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['campaign_archived', 'campaign_completed', 'attachment_not_supported'],
    413: ['file_too_large', 'invalid_upload'],
  },
  handler: async ({ em, actor, ctx, params }) => {
    try {
      // The step is checked before the body is read: a refused upload does not transfer the file.
      await assertAttachable(em, actor, params.campaignId, params.stepId);
      const form = await readForm(ctx, { file: 'file', fields: [], fileBytes: MAX_STEP_ATTACHMENT_BYTES });
      if (!form.file)
        throw badRequest(
          'missing_file',
          form.fileAsText ? 'the file field must be a file part (with a filename)' : 'the file field is required',
        );
      return withVersion(await setAttachment(em, actor, params.campaignId, params.stepId, form.file));
    } catch (err) {
      closeIfUnread(ctx);
      throw err;
    }
  },
});

export const deleteAttachmentOp = defineOperation({
  method: 'DELETE',
  path: '/api/campaigns/{campaignId}/steps/{stepId}/attachment',
  ids: { path: { campaignId: 'campaign', stepId: { within: 'campaignId', child: 'step' } } },
  summary: "Remove a step's attachment (404 when it has none); creates a new step version",
  tag,
  auth: 'user',
  params: StepParams,
  responses: { 200: StepWithVersionView },
  errors: { ...stepWrite(), 400: ['invalid_id', 'invalid_user'] },
  handler: async ({ em, actor, params }) =>
    withVersion(await deleteAttachment(em, actor, params.campaignId, params.stepId)),
});

// ---- A/B variants (beyond the spec; docs/campaigns.md "A/B variants") ----

const VARIANT_ID = {
  value: 'a variant of the step (its `variants[].id`), checked in domain/campaigns/variants.ts: another step’s is 404',
} as const;

export const stepVariantsOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/steps/{stepId}/variants',
  ids: { path: { campaignId: 'campaign', stepId: { within: 'campaignId', child: 'step' } } },
  summary:
    "A step's A/B variants with their statistics (human and machine opens and clicks, replies, rates), its winner and where its winner rule stands",
  description: 'Beyond the spec. A step without variants answers with an empty list.',
  tag,
  beyondSpec: true,
  auth: 'user',
  params: StepVariantsParams,
  responses: { 200: StepVariantsView },
  errors: read,
  handler: async ({ em, actor, params }) =>
    toStepVariantsView(await getStepVariants(em, actor, params.campaignId, params.stepId)),
});

export const setVariantWinnerOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/steps/{stepId}/variants/{variantId}/winner',
  ids: { path: { campaignId: 'campaign', stepId: { within: 'campaignId', child: 'step' }, variantId: VARIANT_ID } },
  summary:
    "Choose a step's winning variant by hand (replacing an earlier choice): new sends of the step use it; sends already planned keep theirs",
  description: 'Beyond the spec. Idempotent: choosing the current winner again answers the same.',
  tag,
  beyondSpec: true,
  auth: 'user',
  params: VariantWinnerParams,
  responses: { 200: StepVariantsView },
  errors: { ...write(), 409: ['campaign_archived'] },
  handler: async ({ em, actor, params }) =>
    toStepVariantsView(await setStepWinner(em, actor, params.campaignId, params.stepId, params.variantId)),
});

export const clearVariantWinnerOp = defineOperation({
  method: 'DELETE',
  path: '/api/campaigns/{campaignId}/steps/{stepId}/variants/winner',
  ids: { path: { campaignId: 'campaign', stepId: { within: 'campaignId', child: 'step' } } },
  summary: "Clear a step's winner: new sends split by weight again (the winner rule, if any, may choose again)",
  description: 'Beyond the spec. Idempotent.',
  tag,
  beyondSpec: true,
  auth: 'user',
  params: StepVariantsParams,
  responses: { 200: StepVariantsView },
  errors: { ...write(), 409: ['campaign_archived'] },
  handler: async ({ em, actor, params }) =>
    toStepVariantsView(await clearStepWinner(em, actor, params.campaignId, params.stepId)),
});
