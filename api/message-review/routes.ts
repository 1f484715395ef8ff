// Message review: the campaign's review policy, its example messages, prices and the one-lead
// preview (docs/message-review.md). Drafts, the review queue and decisions build on these.
import { randomUUID } from 'node:crypto';
import {
  applyPolicyToWaiting,
  approveDraft,
  editDraft,
  reviewQueue,
  rewriteDraft,
} from '../../domain/message-review/review.js';
import { startDraftGeneration } from '../../domain/message-review/generation.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import {
  previewMessage,
  proposeExamples,
  quote,
  saveExamples,
  setPolicy,
  updateExample,
} from '../../domain/message-review/writing.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  DraftOperationView,
  GenerateAllBody,
  GenerateDraftsBody,
  toDraftOperation,
  CampaignIdParams,
  DecidedDraftView,
  DraftParams,
  EditDraftBody,
  QueuePage,
  QueueQuery,
  ReviseBody,
  toDecided,
  toQueueItem,
  ExampleBody,
  ExampleList,
  ExampleParams,
  ExampleView,
  GenerateExamplesBody,
  GenerateMessageBody,
  GeneratedMessageView,
  PolicyBody,
  PolicyView,
  ProposedExamplesView,
  QuoteBody,
  QuoteView,
  SaveExamplesBody,
  toExampleView,
  toGeneratedMessage,
  toPolicy,
  toPolicyView,
  toProposed,
} from './schemas.js';

const tag = 'message-review';
const auth = { 401: ['unauthorized'] };
const write = { 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] };
const model = { 402: ['insufficient_credits'], 502: ['model_unavailable'], 503: ['model_unavailable'] };

export const setReviewPolicyOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{campaignId}/message-review/policy',
  ids: { path: { campaignId: 'campaign' } },
  summary:
    'Set how the campaign’s AI-written drafts are reviewed: all, the first N per step, a sample, or none; blocked phrases, a maximum length and the deadline rule',
  description:
    'Replaces the policy; it applies to drafts not yet decided: under `none` the drafts waiting for review (first attempts) are approved and their sends released, and a draft whose deadline passes follows the policy’s `on_deadline` as it is then. Mode first_n takes `first_n`, sample takes `sample_rate` (400 `invalid_body` without it).',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: PolicyBody,
  responses: { 200: PolicyView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, body, services }) => {
    const policy = await setPolicy(em, actor, params.campaignId, toPolicy(body));
    await applyPolicyToWaiting(em, services.jobs, actor, params.campaignId);
    return toPolicyView(policy);
  },
});

export const quoteDraftsOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/quote',
  ids: {
    path: { campaignId: 'campaign' },
    body: {
      list_id: { within: 'campaignId', child: 'campaign_list' },
      step_id: { within: 'campaignId', child: 'step', missing: [400, 'invalid_step'] },
    },
  },
  summary: 'Price a generation before it runs: drafts × the plan’s credits per draft, against the balance',
  description:
    'Give `drafts`, or `list_id` (its leads × the campaign’s AI-written send steps, or one `step_id`). Nothing is charged. 400 `invalid_step` for a step that is not a send step of the campaign.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: QuoteBody,
  responses: { 200: QuoteView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_step', 'invalid_user'],
    ...auth,
    403: ['not_assigned'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) =>
    quote(
      em,
      actor,
      params.campaignId,
      'drafts' in body ? { drafts: body.drafts } : { listId: body.list_id, stepId: body.step_id },
    ),
});

export const generateMessageOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{id}/generate-message',
  idempotency: true, // charged (a draft's credits): a retry would be charged again
  ids: { path: { id: 'campaign' }, body: { lead_id: 'lead', step_id: { within: 'id', child: 'step' } } },
  summary: 'Write one lead’s message for a send step now, with the model (a preview: nothing is stored or sent)',
  description:
    'Uses the product, the lead’s fields (as edited and enriched), the step’s template as its intent and the campaign’s examples; the result is validated (`valid`, `problems`: empty body or subject, unfilled variables, over the channel’s or policy’s length, blocked phrases). Charged as one draft: 402 `insufficient_credits` before any model call when the balance is short. 400 `invalid_step` / `no_send_step`; 404 for a lead outside the campaign’s product.',
  tag,
  auth: 'user',
  params: IdParams,
  body: GenerateMessageBody,
  responses: { 200: GeneratedMessageView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_step', 'no_send_step', 'invalid_user'],
    ...auth,
    ...write,
    ...model,
  },
  handler: async ({ em, actor, params, body, services }) =>
    toGeneratedMessage(
      await previewMessage(em, services.llm, actor, params.id, {
        leadId: body.lead_id,
        stepId: body.step_id,
        requestId: randomUUID(),
      }),
    ),
});

export const generateExamplesOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/examples/generate',
  idempotency: true, // charged (credits per example): a retry would be charged again
  ids: {
    path: { campaignId: 'campaign' },
    body: { step_id: { within: 'campaignId', child: 'step' }, lead_id: 'lead' },
  },
  summary: 'Propose example messages for a send step (not stored: keep the good ones with examples/save)',
  description:
    'Written for the lead given, else for a sample person; each is validated like a draft and charged as one. 402 `insufficient_credits` before any model call when the balance is short.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: GenerateExamplesBody,
  responses: { 200: ProposedExamplesView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_step', 'no_send_step', 'invalid_user'],
    ...auth,
    ...write,
    ...model,
  },
  handler: async ({ em, actor, params, body, services }) =>
    toProposed(
      await proposeExamples(em, services.llm, actor, params.campaignId, {
        stepId: body.step_id,
        leadId: body.lead_id,
        count: body.count,
        requestId: randomUUID(),
      }),
    ),
});

export const saveExamplesOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/examples/save',
  ids: { path: { campaignId: 'campaign' }, body: { step_id: { within: 'campaignId', child: 'step' } } },
  summary: 'Keep example messages (written or accepted) for a step or the whole campaign; generation follows them',
  description:
    'At most 50 per campaign (409 `too_many_examples`). 400 `invalid_step` for a step that is not a send step of the campaign.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: SaveExamplesBody,
  responses: { 201: ExampleList },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_step', 'invalid_user'],
    ...auth,
    ...write,
    409: ['too_many_examples'],
  },
  handler: async ({ em, actor, params, body }) =>
    reply(201, {
      items: (await saveExamples(em, actor, params.campaignId, { stepId: body.step_id, items: body.items })).map(
        toExampleView,
      ),
    }),
});

export const updateExampleOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{campaignId}/message-review/examples/{exampleID}',
  ids: { path: { campaignId: 'campaign', exampleID: { within: 'campaignId', child: 'example' } } },
  summary: 'Replace an example message’s text',
  tag,
  auth: 'user',
  params: ExampleParams,
  body: ExampleBody,
  responses: { 200: ExampleView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, body }) =>
    toExampleView(await updateExample(em, actor, params.campaignId, params.exampleID, body)),
});

export const reviewQueueOp = defineOperation({
  method: 'GET',
  path: '/api/campaigns/{campaignId}/message-review',
  ids: { path: { campaignId: 'campaign' }, query: { step_id: { within: 'campaignId', child: 'step' } } },
  summary: 'The review queue: the campaign’s AI-written drafts waiting for a person (or by status), newest first',
  description:
    'One item per action (its latest attempt), with the lead, the channel and the exact destination, the step, the text and its validation problems, the action’s due time and the review deadline. `{items, next_cursor}`.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  query: QueueQuery,
  responses: { 200: QueuePage },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params, query }) => {
    const req = toPageRequest(query);
    return page(
      await reviewQueue(em, actor, params.campaignId, {
        status: query.status,
        stepId: query.step_id,
        limit: req.limit,
        after: req.after,
      }),
      req.limit,
      toQueueItem,
    );
  },
});

const decision = { 409: ['already_decided', 'draft_replaced', 'draft_failed', 'invalid_transition'] };

export const approveDraftOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/drafts/{itemID}/approve',
  ids: { path: { campaignId: 'campaign', itemID: { within: 'campaignId', child: 'review_item' } } },
  summary: 'Approve a draft: its action’s send is released (once)',
  description:
    '409 `already_decided` for a draft decided before, `draft_replaced` for an older attempt, `draft_failed` for a failed draft (edit or retry it first).',
  tag,
  auth: 'user',
  params: DraftParams,
  responses: { 200: DecidedDraftView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write, ...decision },
  handler: async ({ em, actor, params, services }) =>
    toDecided(await approveDraft(em, services.jobs, actor, params.campaignId, params.itemID)),
});

export const editDraftOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{campaignId}/message-review/drafts/{itemID}/edit',
  ids: { path: { campaignId: 'campaign', itemID: { within: 'campaignId', child: 'review_item' } } },
  summary: 'Replace a draft’s text (validated) and approve it (`approve: true`) or keep it waiting',
  description:
    'Fixes a failed draft too. 422 `invalid_message` with `details.problems` when the text would not pass validation; 409 once decided.',
  tag,
  auth: 'user',
  params: DraftParams,
  body: EditDraftBody,
  responses: { 200: DecidedDraftView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    ...write,
    ...decision,
    422: ['invalid_message'],
  },
  handler: async ({ em, actor, params, body, services }) =>
    toDecided(await editDraft(em, services.jobs, actor, params.campaignId, params.itemID, body)),
});

export const reviseDraftOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/drafts/{itemID}/revise',
  ids: { path: { campaignId: 'campaign', itemID: { within: 'campaignId', child: 'review_item' } } },
  summary: 'Ask the model for a revision with instructions: a new attempt that replaces the draft and waits for review',
  description: 'Charged as a draft (402 `insufficient_credits` before any model call). 409 once decided.',
  tag,
  auth: 'user',
  params: DraftParams,
  body: ReviseBody,
  responses: { 201: DecidedDraftView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    402: ['insufficient_credits'],
    ...write,
    ...decision,
  },
  handler: async ({ em, actor, params, body, services }) =>
    reply(
      201,
      toDecided(
        await rewriteDraft(em, services.llm, actor, params.campaignId, params.itemID, { revise: body.instructions }),
      ),
    ),
});

export const retryDraftOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/drafts/{itemID}/retry',
  ids: { path: { campaignId: 'campaign', itemID: { within: 'campaignId', child: 'review_item' } } },
  summary: 'Write a failed draft again: a new attempt that replaces it and waits for review',
  description:
    'Charged as a draft (402 `insufficient_credits` before any model call). 409 `not_failed` for a draft that did not fail.',
  tag,
  auth: 'user',
  params: DraftParams,
  responses: { 201: DecidedDraftView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...auth,
    402: ['insufficient_credits'],
    ...write,
    409: ['not_failed', 'already_decided', 'draft_replaced'],
  },
  handler: async ({ em, actor, params, services }) =>
    reply(201, toDecided(await rewriteDraft(em, services.llm, actor, params.campaignId, params.itemID, {}))),
});

const generation = {
  400: ['invalid_id', 'invalid_body', 'invalid_step', 'not_ai_step', 'invalid_user'],
  ...auth,
  402: ['insufficient_credits'],
  ...write,
};

export const generateDraftsOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/drafts/generate',
  ids: { path: { campaignId: 'campaign' }, body: { step_id: { within: 'campaignId', child: 'step' } } },
  summary:
    'Write drafts ahead for the campaign’s pending AI-written actions, as a job (workflow drafts:<campaignId>:<operationId>)',
  description:
    'Selects the pending actions (planned or awaiting approval) of the AI-written steps, or one `step_id`: with scope `missing` those without a draft or whose draft failed, with `all` every one whose draft is not decided. 202 with the operation; repeating the request with the same `client_key` returns it with its exact progress. 402 `insufficient_credits` before anything starts when the balance cannot cover the selection; 400 `not_ai_step` for a step in template mode.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: GenerateDraftsBody,
  responses: { 202: DraftOperationView },
  errors: generation,
  handler: async ({ em, actor, params, body, services }) =>
    reply(
      202,
      toDraftOperation(
        await startDraftGeneration(em, services.jobs, actor, params.campaignId, {
          scope: body.scope,
          stepId: body.step_id,
          clientKey: body.client_key,
        }),
      ),
    ),
});

export const generateAllMessagesOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{id}/generate-all-messages',
  ids: { path: { id: 'campaign' }, body: { step_id: { within: 'id', child: 'step' } } },
  summary:
    'Write again every undecided draft of the campaign’s pending AI-written actions (after new examples or a policy change), as a job',
  description:
    'The same job as `message-review/drafts/generate` with scope `all`: 202 with the operation; the same `client_key` returns it with its progress. A rewritten draft waits for review.',
  tag,
  auth: 'user',
  params: IdParams,
  body: GenerateAllBody,
  responses: { 202: DraftOperationView },
  errors: generation,
  handler: async ({ em, actor, params, body, services }) =>
    reply(
      202,
      toDraftOperation(
        await startDraftGeneration(em, services.jobs, actor, params.id, {
          scope: 'all',
          stepId: body.step_id,
          clientKey: body.client_key,
        }),
      ),
    ),
});
