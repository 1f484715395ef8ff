// Message review: the campaign's review policy, its example messages, prices and the one-lead
// preview (docs/message-review.md). Drafts, the review queue and decisions build on these.
import { randomUUID } from 'node:crypto';
import { previewMessage, proposeExamples, quote, saveExamples, setPolicy, updateExample } from '../../domain/message-writing.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  CampaignIdParams,
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
  summary: 'Set how the campaign’s AI-written drafts are reviewed: all, the first N per step, a sample, or none; blocked phrases, a maximum length and the deadline rule',
  description: 'Replaces the policy; it applies to drafts not yet decided. Mode first_n takes `first_n`, sample takes `sample_rate` (400 `invalid_body` without it).',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: PolicyBody,
  responses: { 200: PolicyView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, body }) => toPolicyView(await setPolicy(em, actor, params.campaignId, toPolicy(body))),
});

export const quoteDraftsOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/quote',
  summary: 'Price a generation before it runs: drafts × the plan’s credits per draft, against the balance',
  description: 'Give `drafts`, or `list_id` (its leads × the campaign’s AI-written send steps, or one `step_id`). Nothing is charged. 400 `invalid_step` for a step that is not a send step of the campaign.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: QuoteBody,
  responses: { 200: QuoteView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_step', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params, body }) =>
    quote(em, actor, params.campaignId, 'drafts' in body ? { drafts: body.drafts } : { listId: body.list_id, stepId: body.step_id }),
});

export const generateMessageOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{id}/generate-message',
  summary: 'Write one lead’s message for a send step now, with the model (a preview: nothing is stored or sent)',
  description:
    'Uses the product, the lead’s fields (as edited and enriched), the step’s template as its intent and the campaign’s examples; the result is validated (`valid`, `problems`: empty body or subject, unfilled variables, over the channel’s or policy’s length, blocked phrases). Charged as one draft: 402 `insufficient_credits` before any model call when the balance is short. 400 `invalid_step` / `no_send_step`; 404 for a lead outside the campaign’s product.',
  tag,
  auth: 'user',
  params: IdParams,
  body: GenerateMessageBody,
  responses: { 200: GeneratedMessageView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_step', 'no_send_step', 'invalid_user'], ...auth, ...write, ...model },
  handler: async ({ em, actor, params, body, services }) =>
    toGeneratedMessage(await previewMessage(em, services.llm, actor, params.id, { leadId: body.lead_id, stepId: body.step_id, requestId: randomUUID() })),
});

export const generateExamplesOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/examples/generate',
  summary: 'Propose example messages for a send step (not stored: keep the good ones with examples/save)',
  description: 'Written for the lead given, else for a sample person; each is validated like a draft and charged as one. 402 `insufficient_credits` before any model call when the balance is short.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: GenerateExamplesBody,
  responses: { 200: ProposedExamplesView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_step', 'no_send_step', 'invalid_user'], ...auth, ...write, ...model },
  handler: async ({ em, actor, params, body, services }) =>
    toProposed(await proposeExamples(em, services.llm, actor, params.campaignId, { stepId: body.step_id, leadId: body.lead_id, count: body.count, requestId: randomUUID() })),
});

export const saveExamplesOp = defineOperation({
  method: 'POST',
  path: '/api/campaigns/{campaignId}/message-review/examples/save',
  summary: 'Keep example messages (written or accepted) for a step or the whole campaign; generation follows them',
  description: 'At most 50 per campaign (409 `too_many_examples`). 400 `invalid_step` for a step that is not a send step of the campaign.',
  tag,
  auth: 'user',
  params: CampaignIdParams,
  body: SaveExamplesBody,
  responses: { 201: ExampleList },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_step', 'invalid_user'], ...auth, ...write, 409: ['too_many_examples'] },
  handler: async ({ em, actor, params, body }) => reply(201, { items: (await saveExamples(em, actor, params.campaignId, { stepId: body.step_id, items: body.items })).map(toExampleView) }),
});

export const updateExampleOp = defineOperation({
  method: 'PUT',
  path: '/api/campaigns/{campaignId}/message-review/examples/{exampleID}',
  summary: 'Replace an example message’s text',
  tag,
  auth: 'user',
  params: ExampleParams,
  body: ExampleBody,
  responses: { 200: ExampleView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, body }) => toExampleView(await updateExample(em, actor, params.campaignId, params.exampleID, body)),
});
