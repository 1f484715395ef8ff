// Message review for the Operator: preview a lead's AI-written message, set the review policy, keep
// example messages. Each spends credits or changes the campaign, so each waits for confirmation.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { applyPolicyToWaiting, approveDraft, reviewQueue } from '../message-review/review.js';
import { startDraftGeneration } from '../message-review/generation.js';
import { DEADLINE_RULES, previewMessage, REVIEW_MODES, saveExamples, setPolicy } from '../message-review/writing.js';
import { defineTool, toolModel } from './registry.js';

const model = toolModel;

export const messageReviewTools = [
  defineTool({
    name: 'preview_campaign_message',
    ids: { campaign_id: 'campaign', lead_id: 'lead', step_id: { within: 'campaign_id', child: 'step' } },
    domain: 'message-review',
    description:
      'Write one lead’s message for a send step of a campaign with the model (not stored or sent); says whether it passes validation. Costs one draft’s credits.',
    input: z.object({ campaign_id: z.uuid(), lead_id: z.uuid(), step_id: z.uuid().optional() }).strict(),
    risk: 'change',
    run: async (ctx, input) => {
      const w = await previewMessage(ctx.em, model(ctx), ctx.actor, input.campaign_id, {
        leadId: input.lead_id,
        stepId: input.step_id,
        requestId: randomUUID(),
      });
      return {
        step_id: w.step_id,
        channel: w.channel,
        subject: w.subject,
        body: w.body,
        valid: w.problems.length === 0,
        problems: w.problems,
        credits: w.credits,
      };
    },
  }),
  defineTool({
    name: 'set_review_policy',
    ids: { campaign_id: 'campaign' },
    domain: 'message-review',
    description:
      'Set how a campaign’s AI-written drafts are reviewed: all, the first N per step, a random sample, or none; blocked phrases, a maximum length, the deadline and what happens at it (skip or hold).',
    input: z
      .object({
        campaign_id: z.uuid(),
        mode: z.enum(REVIEW_MODES),
        first_n: z.number().int().min(1).max(10_000).nullable().optional(),
        sample_rate: z.number().gt(0).max(1).nullable().optional(),
        blocked_phrases: z.array(z.string().min(1).max(100)).max(100).optional(),
        max_length: z.number().int().min(20).max(20_000).nullable().optional(),
        on_deadline: z.enum(DEADLINE_RULES).optional(),
        deadline_hours: z.number().int().min(1).max(720).optional(),
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, i) => {
      const policy = await setPolicy(em, actor, i.campaign_id, {
        mode: i.mode,
        firstN: i.first_n ?? null,
        sampleRate: i.sample_rate ?? null,
        blockedPhrases: i.blocked_phrases ?? [],
        maxLength: i.max_length ?? null,
        onDeadline: i.on_deadline ?? 'skip',
        deadlineHours: i.deadline_hours ?? 168,
      });
      return { ...policy, released: await applyPolicyToWaiting(em, jobs, actor, i.campaign_id) };
    },
  }),
  defineTool({
    name: 'save_message_examples',
    ids: { campaign_id: 'campaign', step_id: { within: 'campaign_id', child: 'step' } },
    domain: 'message-review',
    description:
      'Keep example messages for a campaign (or one of its send steps); AI-written messages follow their tone and length.',
    input: z
      .object({
        campaign_id: z.uuid(),
        step_id: z.uuid().nullable().optional(),
        items: z
          .array(
            z
              .object({ subject: z.string().max(200).nullable().optional(), body: z.string().min(1).max(20_000) })
              .strict(),
          )
          .min(1)
          .max(20),
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor }, i) => {
      const rows = await saveExamples(em, actor, i.campaign_id, { stepId: i.step_id, items: i.items });
      return {
        saved: rows.map((r) => ({ id: r.id, step_id: r.stepId ?? null, subject: r.subject ?? null, body: r.body })),
      };
    },
  }),
  defineTool({
    name: 'list_message_drafts',
    ids: { campaign_id: 'campaign' },
    domain: 'message-review',
    description:
      'The review queue of a campaign: AI-written drafts waiting for a person (or with the given statuses), newest first, with lead, destination, text and problems.',
    input: z
      .object({
        campaign_id: z.uuid(),
        status: z
          .array(z.enum(['awaiting_review', 'approved', 'failed', 'held', 'expired']))
          .max(5)
          .optional(),
        limit: z.number().int().min(1).max(50).default(20),
      })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, i) => {
      const rows = await reviewQueue(em, actor, i.campaign_id, { status: i.status, limit: i.limit });
      return {
        items: rows.slice(0, i.limit).map((r) => ({
          id: r.id,
          action_id: r.action_id,
          lead_id: r.lead_id,
          channel: r.channel,
          destination: r.destination,
          subject: r.subject,
          body: r.body,
          status: r.status,
          problems: r.problems,
        })),
        more: rows.length > i.limit,
      };
    },
  }),
  defineTool({
    name: 'approve_message_draft',
    ids: { campaign_id: 'campaign', draft_id: { within: 'campaign_id', child: 'review_item' } },
    domain: 'message-review',
    description: 'Approve an AI-written draft of a campaign: its message is then sent to the lead.',
    input: z.object({ campaign_id: z.uuid(), draft_id: z.uuid() }).strict(),
    risk: 'send',
    run: async ({ em, actor, jobs }, i) => {
      const d = await approveDraft(em, jobs, actor, i.campaign_id, i.draft_id);
      return { id: d.id, action_id: d.actionId, status: d.status };
    },
  }),
  defineTool({
    name: 'generate_message_drafts',
    ids: { campaign_id: 'campaign', step_id: { within: 'campaign_id', child: 'step' } },
    domain: 'message-review',
    description:
      'Write AI drafts ahead for a campaign’s pending AI-written actions, as a job: scope missing (no draft yet, or failed) or all (rewrite every undecided draft). Spends credits per draft; the same client_key returns the same job.',
    input: z
      .object({
        campaign_id: z.uuid(),
        scope: z.enum(['missing', 'all']).default('missing'),
        step_id: z.uuid().optional(),
        client_key: z.string().min(1).max(200),
      })
      .strict(),
    risk: 'spend',
    run: async ({ em, actor, jobs }, i) => {
      const op = await startDraftGeneration(em, jobs, actor, i.campaign_id, {
        scope: i.scope,
        stepId: i.step_id,
        clientKey: i.client_key,
      });
      return {
        operation_id: op.id,
        status: op.status,
        total: op.total,
        processed: op.processed,
        written: op.written,
        failed: op.failed,
      };
    },
  }),
];
