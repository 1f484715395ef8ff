// Drafts: the AI-written message of one scheduled action (docs/message-review.md). The enrollment
// workflow asks for one right after planning an action of an `ai` or `ai_review` step; the draft
// becomes the action's content, and the campaign's review policy decides whether a person reviews it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Campaign } from '../../db/entities/Campaign.js';
import type { VersionedStep } from '../../db/entities/CampaignStepVersion.js';
import { MessageDraft, type IMessageDraft } from '../../db/entities/MessageDraft.js';
import { writeMessage, type ModelAdapter } from '../../lib/llm/index.js';
import { LlmError } from '../../lib/llm/types.js';
import { AppError } from '../errors.js';
import { debitCredits, HOLD_TTL_MS, holdCredits, releaseCredits } from '../billing/credits.js';
import { expireReview } from '../enrollments/executor.js';
import { notify } from '../notifications/notifications.js';
import {
  leadFields,
  messageInput,
  policyOf,
  quoteDrafts,
  validateMessage,
  type Problem,
  type ReviewPolicy,
} from './writing.js';

export interface DraftOutcome {
  draftId: string;
  /** A person must approve before the send: the policy said so, or the draft failed. */
  review: boolean;
  failed: string | null;
  /** The policy's review deadline (what happens at it is read then: draftDeadline). */
  deadlineMs: number;
  status: string;
  credits: number;
}

const outcome = (d: IMessageDraft, policy: ReviewPolicy): DraftOutcome => ({
  draftId: d.id,
  review: d.reviewRequired || d.status === 'failed',
  failed: d.status === 'failed' ? (d.errorCode ?? 'invalid_message') : null,
  deadlineMs: policy.deadlineHours * 3_600_000,
  status: d.status,
  credits: d.credits,
});

/** A stable number in [0, 1) from the action id: `sample` review picks the same actions on every run. */
const share = (id: string) => parseInt(id.replace(/-/g, '').slice(-8), 16) / 0x1_0000_0000;

/**
 * Whether the policy sends this draft to review. `ai` steps are reviewed only when the campaign
 * requires review for everything; `ai_review` steps follow the policy. `first_n` counts the step's
 * earlier drafts that went to review (under a lock per campaign and step, so concurrent plans agree).
 */
async function reviewed(
  tx: EntityManager,
  mode: string,
  campaign: { id: string; reviewRequired: boolean },
  stepId: string,
  actionId: string,
  policy: ReviewPolicy,
): Promise<boolean> {
  if (campaign.reviewRequired) return true;
  if (mode !== 'ai_review') return false;
  switch (policy.mode) {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'sample':
      return share(actionId) < (policy.sampleRate ?? 0);
    case 'first_n': {
      await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`drafts-first-n:${campaign.id}:${stepId}`]);
      const [{ n }] = await tx.execute<{ n: number }[]>(
        `select count(*)::int as n from message_drafts where campaign_id = ? and step_id = ? and review_required and attempt = 1`,
        [campaign.id, stepId],
      );
      return n < (policy.firstN ?? 0);
    }
  }
}

/**
 * Writes the draft of the action (attempt `attempt`), idempotently: a draft already written for the
 * pair is the answer again, with no second model call or charge. Credits first: the price is held
 * under the debit's key `draft:<actionId>:<attempt>` (docs/plans-and-credits.md, "Holds"); what
 * cannot be covered is a failed draft `insufficient_credits`, with no model call. A model error worth
 * retrying is thrown (the hold is given back; the activity's retry holds again), another one is a
 * failed draft `model_unavailable`; validation problems make a failed draft `invalid_message`. In one
 * transaction: the draft, the action's content, and the debit (which consumes the hold) or the
 * hold's release when nothing is charged.
 */
export async function writeDraftForAction(
  em: EntityManager,
  llm: ModelAdapter,
  actionId: string,
  attempt = 1,
  extra: { revise?: { previous: string; instructions: string }; requireCredits?: boolean } = {},
): Promise<DraftOutcome> {
  const [a] = await em.execute<
    {
      workspace_id: string;
      campaign_id: string;
      enrollment_id: string;
      lead_id: string;
      step_id: string;
      step_version: number;
      content: Record<string, unknown>;
    }[]
  >(
    `select workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_version, content from scheduled_actions where id = ?`,
    [actionId],
  );
  if (!a) throw new Error(`action ${actionId} not found`);
  const campaign = await em.findOneOrFail(Campaign, { id: a.campaign_id });
  const policy = policyOf(campaign);
  const prior = await em.findOne(MessageDraft, { actionId, attempt });
  if (prior) return outcome(prior, policy);

  const [v] = await em.execute<{ steps: VersionedStep[] }[]>(
    `select steps from campaign_step_versions where campaign_id = ? and version = ?`,
    [a.campaign_id, a.step_version],
  );
  const step = v.steps.find((s) => s.id === a.step_id)!;
  const mode = step.messageMode ?? campaign.messageMode;
  const input = await messageInput(em, campaign, step, await leadFields(em, campaign, a.lead_id), {
    variant: attempt - 1,
    ...(extra.revise ? { revise: extra.revise } : {}),
  });
  const price = await quoteDrafts(em, a.workspace_id, 1);
  const hold = { key: `draft:${actionId}:${attempt}`, reason: 'AI-written message draft', ttlMs: HOLD_TTL_MS };

  let written: { subject: string | null; body: string } = { subject: null, body: '' };
  let problems: Problem[] = [];
  let errorCode: string | null = null;
  try {
    if (price.credits > 0) await holdCredits(em, a.workspace_id, price.credits, hold);
  } catch (err) {
    // A person's revise or retry is refused (402) rather than written as a failed draft.
    if (!(err instanceof AppError && err.code === 'insufficient_credits') || extra.requireCredits) throw err;
    errorCode = 'insufficient_credits';
  }
  if (!errorCode) {
    try {
      const { value } = await writeMessage(llm, input);
      written = { subject: input.channel === 'email' ? value.subject : null, body: value.body };
      problems = validateMessage(input.channel, written, policy);
      if (problems.length) errorCode = 'invalid_message';
    } catch (err) {
      if (err instanceof LlmError && err.retryable) {
        await releaseCredits(em, a.workspace_id, hold.key);
        throw err;
      }
      errorCode = 'model_unavailable';
    }
  }

  return em.transactional(async (tx) => {
    const again = await tx.findOne(MessageDraft, { actionId, attempt });
    if (again) return outcome(again, policy);
    // A later attempt (a person's revise or retry) always waits for that person; it keeps the deadline.
    const review = attempt > 1 || (await reviewed(tx as EntityManager, mode, campaign, step.id, actionId, policy));
    const [previous] =
      attempt > 1
        ? await tx.execute<{ deadline_at: Date | null }[]>(
            `select deadline_at from message_drafts where action_id = ? and attempt = ?`,
            [actionId, attempt - 1],
          )
        : [];
    const charged = (errorCode === null || errorCode === 'invalid_message') && price.credits > 0;
    if (charged)
      await debitCredits(tx as EntityManager, a.workspace_id, price.credits, { key: hold.key, reason: hold.reason });
    else await releaseCredits(tx as EntityManager, a.workspace_id, hold.key);
    const draft = tx.create(MessageDraft, {
      workspaceId: a.workspace_id,
      campaign: campaign.id,
      stepId: step.id,
      actionId,
      attempt,
      enrollmentId: a.enrollment_id,
      leadId: a.lead_id,
      channel: input.channel,
      destination: (a.content?.recipient as string | null) ?? null,
      subject: written.subject,
      body: written.body,
      status: errorCode ? 'failed' : review ? 'awaiting_review' : 'approved',
      reviewRequired: review,
      autoApproved: !errorCode && !review,
      problems,
      errorCode,
      model: llm.model,
      credits: charged ? price.credits : 0,
      deadlineAt: previous?.deadline_at ?? null,
    });
    await tx.flush();
    // The action sends the draft: its text replaces the template's (the recipient stays). A failed
    // draft marks the action so that neither an approval nor the send can use the template's text.
    const text =
      input.channel === 'email'
        ? { subject: written.subject, body: written.body }
        : input.channel === 'invitation'
          ? { note: written.body }
          : { body: written.body };
    const content = errorCode
      ? { ...a.content, draft_id: draft.id, draft_failed: errorCode }
      : { recipient: a.content?.recipient ?? null, ...text, draft_id: draft.id };
    await tx.execute(`update scheduled_actions set content = ?::jsonb, updated_at = now() where id = ?`, [
      JSON.stringify(content),
      actionId,
    ]);
    return outcome(draft, policy);
  });
}

/**
 * A draft's review deadline passed: the campaign's policy as it is now decides. `hold`: the action
 * keeps waiting (`held`); `skip`: the action is skipped (`skipped`). Otherwise the action's state
 * (a person decided meanwhile).
 */
export async function draftDeadline(em: EntityManager, actionId: string): Promise<string> {
  const [c] = await em.execute<{ review_policy: Partial<ReviewPolicy> | null }[]>(
    `select c.review_policy from scheduled_actions a join campaigns c on c.id = a.campaign_id where a.id = ?`,
    [actionId],
  );
  if (policyOf({ reviewPolicy: c?.review_policy ?? null }).onDeadline === 'hold') {
    const state = await holdReview(em, actionId);
    return state === 'awaiting_approval' ? 'held' : state;
  }
  return expireReview(em, actionId, true);
}

/** The review deadline passed under `hold`: the action keeps waiting for a person (`review_held`), the draft is held, the workspace is told once. */
async function holdReview(em: EntityManager, actionId: string): Promise<string> {
  return em.transactional(async (tx) => {
    const [r] = await tx.execute<{ state: string; workspace_id: string; campaign_id: string; lead_id: string }[]>(
      `update scheduled_actions set waiting_reason = case when state = 'awaiting_approval' then 'review_held' else waiting_reason end, updated_at = now()
        where id = ? returning state, workspace_id, campaign_id, lead_id`,
      [actionId],
    );
    if (r?.state !== 'awaiting_approval') return r?.state ?? 'gone';
    const held = await tx.execute(
      `update message_drafts set status = 'held', updated_at = now() where action_id = ? and status in ('awaiting_review', 'failed') returning id`,
      [actionId],
    );
    if (held.length) {
      await notify(tx as EntityManager, r.workspace_id, {
        kind: 'draft_review_overdue',
        title: 'A message is waiting for review past its deadline',
        body: 'An AI-written message passed its review deadline; the campaign holds it until someone approves, edits or skips it.',
        data: { action_id: actionId, campaign_id: r.campaign_id, lead_id: r.lead_id },
      });
    }
    return r.state;
  });
}
