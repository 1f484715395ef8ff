import { z } from 'zod';
import type { IMessageExample } from '../../db/entities/MessageExample.js';
import {
  CHANNEL_LIMITS,
  DEADLINE_RULES,
  PROBLEMS,
  REVIEW_MODES,
  SUBJECT_LIMIT,
  type ReviewPolicy,
  type Written,
} from '../../domain/message-review/writing.js';
import { DRAFT_STATUSES, type IMessageDraft } from '../../db/entities/MessageDraft.js';
import type { IDraftOperation } from '../../db/entities/DraftOperation.js';
import type { QueueRow } from '../../domain/message-review/review.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, text } from '../schemas.js';

export const CampaignIdParams = z.object({ campaignId: z.uuid() });
export const ExampleParams = z.object({ campaignId: z.uuid(), exampleID: z.uuid() });

const policyFields = {
  blocked_phrases: z
    .array(text({ max: 100, min: 1, trim: true }))
    .max(100)
    .default([])
    .meta({ description: 'A draft containing one (case-insensitive) fails validation: blocked_phrase' }),
  max_length: z
    .number()
    .int()
    .min(20)
    .max(20_000)
    .nullable()
    .optional()
    .meta({ description: 'Below the channel’s own limit (invitation note 300, message 8,000, email 20,000)' }),
  on_deadline: z
    .enum(DEADLINE_RULES)
    .default('skip')
    .meta({ description: 'An undecided draft at its deadline: skip the action, or hold it and notify' }),
  deadline_hours: z
    .number()
    .int()
    .min(1)
    .max(720)
    .default(168)
    .meta({ description: 'How long a draft waits for a decision' }),
};
/** One variant per mode: first_n needs `first_n`, sample needs `sample_rate`. */
export const PolicyBody = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('all').meta({ description: 'Every draft is reviewed' }), ...policyFields }).strict(),
  z.object({ mode: z.literal('none').meta({ description: 'Drafts are auto-approved' }), ...policyFields }).strict(),
  z
    .object({
      mode: z
        .literal('first_n')
        .meta({ description: 'The first `first_n` drafts of each step are reviewed, the rest auto-approved' }),
      first_n: z.number().int().min(1).max(10_000),
      ...policyFields,
    })
    .strict(),
  z
    .object({
      mode: z
        .literal('sample')
        .meta({ description: 'A `sample_rate` share of the drafts, chosen at random, is reviewed' }),
      sample_rate: z.number().gt(0).max(1),
      ...policyFields,
    })
    .strict(),
]);

export const PolicyView = z.object({
  mode: z.enum(REVIEW_MODES),
  first_n: z.number().int().nullable(),
  sample_rate: z.number().nullable(),
  blocked_phrases: z.array(z.string()),
  max_length: z.number().int().nullable(),
  on_deadline: z.enum(DEADLINE_RULES),
  deadline_hours: z.number().int(),
});
export const toPolicy = (b: z.infer<typeof PolicyBody>): ReviewPolicy => ({
  mode: b.mode,
  firstN: b.mode === 'first_n' ? b.first_n : null,
  sampleRate: b.mode === 'sample' ? b.sample_rate : null,
  blockedPhrases: b.blocked_phrases,
  maxLength: b.max_length ?? null,
  onDeadline: b.on_deadline,
  deadlineHours: b.deadline_hours,
});
export const toPolicyView = (p: ReviewPolicy): z.infer<typeof PolicyView> => ({
  mode: p.mode,
  first_n: p.firstN,
  sample_rate: p.sampleRate,
  blocked_phrases: p.blockedPhrases,
  max_length: p.maxLength,
  on_deadline: p.onDeadline,
  deadline_hours: p.deadlineHours,
});

export const QuoteBody = z.union([
  z
    .object({ drafts: z.number().int().min(1).max(100_000).meta({ description: 'A number of drafts to price' }) })
    .strict(),
  z
    .object({
      list_id: z.uuid().meta({
        description: 'Every lead of this list (of the campaign’s product) × the campaign’s AI-written send steps',
      }),
      step_id: z.uuid().optional().meta({ description: 'One send step only' }),
    })
    .strict(),
]);

export const QuoteView = z.object({
  drafts: z.number().int(),
  leads: z.number().int().nullable(),
  steps: z.number().int(),
  credits_per_draft: z.number().int(),
  credits: z.number().int(),
  balance: z.number().int(),
  sufficient: z.boolean().meta({ description: 'The balance covers it: generation would not be refused with 402' }),
});

const ProblemView = z.object({ code: z.enum(PROBLEMS), message: z.string() });
const WrittenView = z.object({
  subject: z.string().nullable(),
  body: z.string(),
  valid: z.boolean().meta({ description: 'No problems: it could be sent as it is' }),
  problems: z.array(ProblemView),
  credits: z.number().int().meta({ description: 'Credits this draft cost' }),
});
const toWritten = (w: Written): z.infer<typeof WrittenView> => ({
  subject: w.subject,
  body: w.body,
  valid: w.problems.length === 0,
  problems: w.problems,
  credits: w.credits,
});

export const GenerateMessageBody = z
  .object({
    lead_id: z.uuid(),
    step_id: z.uuid().optional().meta({ description: 'A send step; default: the first one' }),
  })
  .strict();
export const GeneratedMessageView = WrittenView.extend({
  step_id: z.uuid(),
  channel: z.enum(['email', 'invitation', 'message']),
  model: z.string(),
});
export const toGeneratedMessage = (w: Written & { step_id: string; channel: 'email' | 'invitation' | 'message' }) => ({
  ...toWritten(w),
  step_id: w.step_id,
  channel: w.channel,
  model: w.model,
});

export const GenerateExamplesBody = z
  .object({
    step_id: z.uuid().optional().meta({ description: 'A send step; default: the first one' }),
    lead_id: z.uuid().optional().meta({ description: 'Write them for this lead; default: a sample person' }),
    count: z.number().int().min(1).max(5).default(3),
  })
  .strict();
export const ProposedExamplesView = z.object({
  step_id: z.uuid(),
  channel: z.enum(['email', 'invitation', 'message']),
  items: z.array(WrittenView),
});
export const toProposed = (r: { step_id: string; channel: 'email' | 'invitation' | 'message'; items: Written[] }) => ({
  step_id: r.step_id,
  channel: r.channel,
  items: r.items.map(toWritten),
});

const ExampleText = {
  subject: text({ max: SUBJECT_LIMIT, trim: true }).nullable().optional().meta({ description: 'For email steps' }),
  body: text({ max: CHANNEL_LIMITS.email, min: 1, trim: true }),
};
export const SaveExamplesBody = z
  .object({
    step_id: z
      .uuid()
      .nullable()
      .optional()
      .meta({ description: 'The send step they are for; null or absent: the whole campaign' }),
    items: z
      .array(
        z
          .object({
            ...ExampleText,
            source: z
              .enum(['user', 'generated'])
              .default('user')
              .meta({ description: 'generated: a proposal of examples/generate that was accepted' }),
          })
          .strict(),
      )
      .min(1)
      .max(20),
  })
  .strict();
export const ExampleBody = z.object(ExampleText).strict();

export const ExampleView = z.object({
  id: z.uuid(),
  campaign_id: z.uuid(),
  step_id: z.uuid().nullable(),
  subject: z.string().nullable(),
  body: z.string(),
  source: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const toExampleView = (e: IMessageExample): z.infer<typeof ExampleView> => ({
  id: e.id,
  campaign_id: e.campaign.id,
  step_id: e.stepId ?? null,
  subject: e.subject ?? null,
  body: e.body,
  source: e.source,
  created_at: e.createdAt.toISOString(),
  updated_at: e.updatedAt.toISOString(),
});
export const ExampleList = z.object({ items: z.array(ExampleView) });

export const DraftParams = z.object({ campaignId: z.uuid(), itemID: z.uuid() });

const csvStatuses = z
  .string()
  .regex(
    new RegExp(`^(${DRAFT_STATUSES.join('|')})(,(${DRAFT_STATUSES.join('|')}))*$`),
    `comma-separated statuses: ${DRAFT_STATUSES.join(', ')}`,
  )
  .transform((v) => [...new Set(v.split(','))])
  .optional()
  .meta({
    description: `Comma-separated: ${DRAFT_STATUSES.join(', ')}; default awaiting_review,held,failed (those waiting for a person)`,
  });
export const QueueQuery = z.object({ status: csvStatuses, step_id: z.uuid().optional(), ...pageQuery }).strict();

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
export const DraftView = z.object({
  id: z.uuid().meta({ description: 'The item id of the decision routes' }),
  action_id: z.uuid(),
  step: z.object({ id: z.uuid(), position: z.number().int() }),
  lead: z.object({ id: z.uuid(), name: z.string().nullable(), company: z.string().nullable() }),
  channel: z.string(),
  destination: z
    .string()
    .nullable()
    .meta({ description: 'Exactly where the send goes: the email address or the profile' }),
  subject: z.string().nullable(),
  body: z.string(),
  status: z.enum(DRAFT_STATUSES),
  problems: z.array(z.object({ code: z.string(), message: z.string() })),
  error_code: z.string().nullable(),
  attempt: z.number().int(),
  review_required: z.boolean(),
  auto_approved: z.boolean(),
  action_state: z.string(),
  due_at: Timestamp,
  deadline_at: Timestamp.nullable().meta({
    description: 'When the review ends (then the policy’s on_deadline); null until the action is due',
  }),
  created_at: Timestamp,
});
export const toQueueItem = (r: QueueRow): z.infer<typeof DraftView> => ({
  id: r.id,
  action_id: r.action_id,
  step: { id: r.step_id, position: r.step_position },
  lead: { id: r.lead_id, name: [r.first_name, r.last_name].filter(Boolean).join(' ') || null, company: r.company },
  channel: r.channel,
  destination: r.destination,
  subject: r.subject,
  body: r.body,
  status: r.status as z.infer<typeof DraftView>['status'],
  problems: r.problems,
  error_code: r.error_code,
  attempt: r.attempt,
  review_required: r.review_required,
  auto_approved: r.auto_approved,
  action_state: r.action_state,
  due_at: iso(r.due_at)!,
  deadline_at: iso(r.deadline_at),
  created_at: iso(r.created_at)!,
});
export const QueuePage = pageSchema(DraftView);

export const DecidedDraftView = z.object({
  id: z.uuid(),
  action_id: z.uuid(),
  status: z.enum(DRAFT_STATUSES),
  subject: z.string().nullable(),
  body: z.string(),
  problems: z.array(z.object({ code: z.string(), message: z.string() })),
  error_code: z.string().nullable(),
  attempt: z.number().int(),
  credits: z.number().int(),
});
export const toDecided = (d: IMessageDraft): z.infer<typeof DecidedDraftView> => ({
  id: d.id,
  action_id: d.actionId,
  status: d.status as z.infer<typeof DraftView>['status'],
  subject: d.subject ?? null,
  body: d.body,
  problems: d.problems,
  error_code: d.errorCode ?? null,
  attempt: d.attempt,
  credits: d.credits,
});

export const EditDraftBody = z
  .object({
    subject: text({ max: SUBJECT_LIMIT, trim: true })
      .nullable()
      .optional()
      .meta({ description: 'Email drafts only; absent keeps the subject' }),
    body: text({ max: CHANNEL_LIMITS.email, min: 1, trim: false }),
    approve: z
      .boolean()
      .default(false)
      .meta({ description: 'true: approve it with the edit (the send is released); false: it stays waiting' }),
  })
  .strict();
export const ReviseBody = z.object({ instructions: text({ max: 2000, min: 1, trim: true }) }).strict();

const clientKey = text({ max: 200, min: 1, trim: true }).meta({
  description: 'Repeating the request with the same key returns the same operation (with its progress)',
});
export const GenerateDraftsBody = z
  .object({
    scope: z.enum(['missing', 'all']).default('missing').meta({
      description:
        'missing: pending actions without a draft, or whose draft failed; all: every pending action whose draft is not decided',
    }),
    step_id: z.uuid().optional().meta({ description: 'One AI-written send step only' }),
    client_key: clientKey,
  })
  .strict();
export const GenerateAllBody = z
  .object({
    step_id: z.uuid().optional().meta({ description: 'One AI-written send step only' }),
    client_key: clientKey,
  })
  .strict();

export const DraftOperationView = z.object({
  operation_id: z.uuid(),
  workflow_id: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed']),
  scope: z.enum(['missing', 'all']),
  step_id: z.uuid().nullable(),
  total: z.number().int().meta({ description: 'Actions selected when it started' }),
  processed: z.number().int(),
  written: z.number().int().meta({ description: 'Drafts that passed validation' }),
  failed: z.number().int().meta({ description: 'Drafts that failed (shown in the review queue with their reason)' }),
  credits: z.number().int(),
  percent: z.number().int(),
  error_message: z.string().nullable(),
  created_at: Timestamp,
  finished_at: Timestamp.nullable(),
});
export const toDraftOperation = (o: IDraftOperation): z.infer<typeof DraftOperationView> => ({
  operation_id: o.id,
  workflow_id: `drafts:${o.campaign.id}:${o.id}`,
  status: o.status as z.infer<typeof DraftOperationView>['status'],
  scope: o.scope as 'missing' | 'all',
  step_id: o.stepId ?? null,
  total: o.total,
  processed: o.processed,
  written: o.written,
  failed: o.failed,
  credits: o.credits,
  percent: o.total ? Math.floor((o.processed / o.total) * 100) : 100,
  error_message: o.errorMessage ?? null,
  created_at: o.createdAt.toISOString(),
  finished_at: o.finishedAt ? o.finishedAt.toISOString() : null,
});
