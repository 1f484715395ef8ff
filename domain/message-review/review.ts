// The review queue of AI-written drafts and the decisions on them (docs/message-review.md): approve,
// edit, revise (the model rewrites with instructions), retry (a failed draft written again). A draft
// is decided once; a revision or a retry is a new attempt of the same action, which replaces it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MessageDraft, type IMessageDraft } from '../../db/entities/MessageDraft.js';
import type { ModelAdapter } from '../../lib/llm/index.js';
import { keysetSql } from '../../lib/pagination.js';
import { requireCampaign } from '../campaigns/campaigns.js';
import { assertWritable } from '../demo/demo.js';
import { writeDraftForAction } from './drafts.js';
import { approveAction } from '../enrollments/enrollments.js';
import { AppError, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { policyOf, validateMessage, type Channel } from './writing.js';

/** Statuses a person can still decide on. */
const OPEN = ['awaiting_review', 'held', 'failed'];

export interface QueueRow {
  id: string;
  action_id: string;
  step_id: string;
  step_position: number;
  lead_id: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  channel: string;
  destination: string | null;
  subject: string | null;
  body: string;
  status: string;
  problems: { code: string; message: string }[];
  error_code: string | null;
  attempt: number;
  review_required: boolean;
  auto_approved: boolean;
  action_state: string;
  due_at: Date;
  deadline_at: Date | null;
  created_at: Date;
}

/**
 * The campaign's latest drafts (one per action: its last attempt), newest first; by status (default:
 * those waiting for a person, `awaiting_review`, `held`, `failed`) and step. `limit + 1` rows.
 */
export async function reviewQueue(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  f: { status?: string[]; stepId?: string; limit: number; after?: string },
): Promise<QueueRow[]> {
  const campaign = await requireCampaign(em, actor, campaignId);
  const params: unknown[] = [campaign.id, `{${(f.status?.length ? f.status : OPEN).join(',')}}`];
  let sql = `select d.id, d.action_id, d.step_id, a.step_position, d.lead_id, c.first_name, c.last_name, c.company, d.channel, d.destination, d.subject, d.body, d.status,
                    d.problems, d.error_code, d.attempt, d.review_required, d.auto_approved, a.state as action_state, a.due_at, d.deadline_at, d.created_at
               from message_drafts d join scheduled_actions a on a.id = d.action_id join leads l on l.id = d.lead_id join contacts c on c.id = l.contact_id
              where d.campaign_id = ? and d.status = any(?::text[])
                and d.attempt = (select max(x.attempt) from message_drafts x where x.action_id = d.action_id)`;
  if (f.stepId) {
    sql += ' and d.step_id = ?';
    params.push(f.stepId);
  }
  const k = keysetSql(f, 'd.id', 'desc');
  return em.execute<QueueRow[]>(sql + k.sql, [...params, ...k.params]);
}

async function requireDraft(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  itemId: string,
): Promise<IMessageDraft> {
  const campaign = await requireCampaign(em, actor, campaignId);
  const d = await em.findOne(MessageDraft, { id: itemId, campaign: campaign.id });
  if (!d) throw notFound('draft');
  const [{ last }] = await em.execute<{ last: number }[]>(
    `select max(attempt)::int as last from message_drafts where action_id = ?`,
    [d.actionId],
  );
  if (d.attempt !== last)
    throw conflict('draft_replaced', 'a newer attempt of this draft replaced it: decide on that one');
  return d;
}

const decided = (d: IMessageDraft) => conflict('already_decided', `this draft is ${d.status}: it was decided already`);

/** Approves the draft and releases its action's send (the action's approve signal). 409 `already_decided`, `draft_failed`. */
export async function approveDraft(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
  itemId: string,
): Promise<IMessageDraft> {
  assertWritable(actor);
  const d = await requireDraft(em, actor, campaignId, itemId);
  if (d.status === 'failed')
    throw conflict('draft_failed', `this draft failed (${d.errorCode}): edit or retry it first`);
  // One transaction: an action that can no longer be approved (409 invalid_transition) leaves the draft undecided.
  await em.transactional(async (tx) => {
    const won = await tx.execute(
      `update message_drafts set status = 'approved', updated_at = now() where id = ? and status in ('awaiting_review', 'held') returning id`,
      [d.id],
    );
    if (!won.length) throw decided(d);
    await approveAction(tx as EntityManager, jobs, actor, d.actionId);
  });
  await em.refresh(d);
  return d;
}

/**
 * Replaces the draft's text (validated: 422 `invalid_message` with the problems) and, with `approve`,
 * approves it; otherwise it stays waiting. Fixes a failed draft. 409 `already_decided` once decided.
 */
export async function editDraft(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
  itemId: string,
  input: { subject?: string | null; body: string; approve: boolean },
): Promise<IMessageDraft> {
  assertWritable(actor);
  const d = await requireDraft(em, actor, campaignId, itemId);
  if (!OPEN.includes(d.status)) throw decided(d);
  const campaign = await requireCampaign(em, actor, campaignId);
  const text = { subject: d.channel === 'email' ? (input.subject ?? d.subject ?? null) : null, body: input.body };
  const problems = validateMessage(d.channel as Channel, text, policyOf(campaign));
  if (problems.length)
    throw new AppError(422, 'invalid_message', problems.map((p) => p.message).join('; '), { problems });
  await em.transactional(async (tx) => {
    const won = await tx.execute(
      `update message_drafts set subject = ?, body = ?, problems = '[]'::jsonb, error_code = null, status = 'awaiting_review', updated_at = now() where id = ? and status = any(?::text[]) returning id`,
      [text.subject, text.body, d.id, `{${OPEN.join(',')}}`],
    );
    if (!won.length) throw decided(d);
    const field =
      d.channel === 'email'
        ? { subject: text.subject, body: text.body }
        : d.channel === 'invitation'
          ? { note: text.body }
          : { body: text.body };
    await tx.execute(
      `update scheduled_actions set content = (content - 'draft_failed' - 'missing_variables') || ?::jsonb, updated_at = now() where id = ?`,
      [JSON.stringify({ ...field, draft_id: d.id, edited: true }), d.actionId],
    );
  });
  if (input.approve) return approveDraft(em, jobs, actor, campaignId, itemId);
  await em.refresh(d);
  return d;
}

/**
 * A new attempt of the draft's action: `revise` (the model rewrites the text following the
 * instructions) or `retry` (a failed draft written again). The new draft waits for a person whatever
 * the policy; it replaces this one. Charged as a draft (402 before any model call).
 */
export async function rewriteDraft(
  em: EntityManager,
  llm: ModelAdapter,
  actor: Actor,
  campaignId: string,
  itemId: string,
  how: { revise?: string },
): Promise<IMessageDraft> {
  assertWritable(actor);
  const d = await requireDraft(em, actor, campaignId, itemId);
  if (how.revise === undefined && d.status !== 'failed')
    throw conflict('not_failed', `only a failed draft is retried; this one is ${d.status} (revise it instead)`);
  if (!OPEN.includes(d.status)) throw decided(d);
  const out = await writeDraftForAction(em, llm, d.actionId, d.attempt + 1, {
    revise: how.revise === undefined ? undefined : { previous: d.body, instructions: how.revise },
    requireCredits: true,
  });
  return em.findOneOrFail(MessageDraft, { id: out.draftId });
}

/**
 * A new policy applies to drafts not yet decided: under `none`, the first attempts waiting for review
 * (not those a person asked to rewrite, nor failed ones) are approved and their sends released, unless
 * the campaign requires review for everything. Returns how many were released.
 */
export async function applyPolicyToWaiting(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
): Promise<number> {
  const campaign = await requireCampaign(em, actor, campaignId);
  // Read from the row: the entity in this context may predate the policy just written.
  const [row] = await em.execute<{ review_policy: Record<string, unknown> | null; review_required: boolean }[]>(
    `select review_policy, review_required from campaigns where id = ?`,
    [campaign.id],
  );
  if (policyOf({ reviewPolicy: row.review_policy }).mode !== 'none' || row.review_required) return 0;
  const waiting = await em.execute<{ id: string; action_id: string }[]>(
    `select d.id, d.action_id from message_drafts d where d.campaign_id = ? and d.status in ('awaiting_review', 'held') and d.attempt = 1
        and not exists (select 1 from message_drafts x where x.action_id = d.action_id and x.attempt > 1)`,
    [campaign.id],
  );
  let released = 0;
  for (const w of waiting) {
    try {
      await em.transactional(async (tx) => {
        const won = await tx.execute(
          `update message_drafts set status = 'approved', auto_approved = true, updated_at = now() where id = ? and status in ('awaiting_review', 'held') returning id`,
          [w.id],
        );
        if (won.length) await approveAction(tx as EntityManager, jobs, actor, w.action_id);
      });
      released++;
    } catch (err) {
      if (!(err instanceof AppError && err.status === 409)) throw err; // decided meanwhile
    }
  }
  return released;
}
