// Batch generation of drafts (docs/message-review.md): `drafts/generate` (actions without a usable
// draft) and `generate-all-messages` (every undecided draft written again, e.g. after new examples) run
// on the workflow `drafts:<campaignId>:<operationId>`. The selection is frozen at the start; one long
// activity writes it in batches, each committed with the progress, and a retried attempt resumes at
// the last committed batch (a draft is idempotent per action and attempt, so nothing is written or
// charged twice).
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { VersionedStep } from '../../db/entities/CampaignStepVersion.js';
import { DraftOperation, type IDraftOperation } from '../../db/entities/DraftOperation.js';
import type { ModelAdapter } from '../../lib/llm/index.js';
import { requireCampaign } from '../campaigns/campaigns.js';
import { requireCredits } from '../billing/credits.js';
import { assertWritable } from '../demo/demo.js';
import { writeDraftForAction, type DraftOutcome } from './drafts.js';
import { badRequest } from '../errors.js';
import { isSendStep } from '../enrollments/executor.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { quoteDrafts, sendStepOf } from './writing.js';
import { mapLimit } from '../../lib/concurrency.js';

export const DRAFT_BATCH = 50;
/** Drafts written at once within a batch (each is a model call and a short transaction). */
export const DRAFT_CONCURRENCY = 8;
export type DraftScope = 'missing' | 'all';

/** The AI-written send steps of every version of the campaign (actions keep the version they were planned in). */
async function aiStepIds(em: EntityManager, campaignId: string, campaignMode: string): Promise<string[]> {
  const rows = await em.execute<{ steps: VersionedStep[] }[]>(
    `select steps from campaign_step_versions where campaign_id = ?`,
    [campaignId],
  );
  const ids = new Set<string>();
  for (const r of rows)
    for (const s of r.steps)
      if (isSendStep(s.type) && ['ai', 'ai_review'].includes(s.messageMode ?? campaignMode)) ids.add(s.id);
  return [...ids];
}

/**
 * Starts a generation (202), or returns the operation of the same client key. Selects the pending
 * actions (`planned`, `awaiting_approval`) of the AI-written steps (or the one step): `missing` those
 * without a draft or whose latest draft failed, `all` those whose latest draft is not decided.
 * 402 `insufficient_credits` before anything starts when the balance cannot cover them; 400
 * `invalid_step` / `not_ai_step`.
 */
export async function startDraftGeneration(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
  input: { scope: DraftScope; stepId?: string; clientKey: string },
): Promise<IDraftOperation> {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  const prior = await em.findOne(DraftOperation, { campaign: campaign.id, clientKey: input.clientKey });
  if (prior) return prior;
  let steps = await aiStepIds(em, campaign.id, campaign.messageMode);
  if (input.stepId) {
    await sendStepOf(em, campaign, input.stepId);
    if (!steps.includes(input.stepId))
      throw badRequest('not_ai_step', 'the step is not AI-written (message mode ai or ai_review)');
    steps = [input.stepId];
  }
  const latest = `(select d.status from message_drafts d where d.action_id = a.id order by d.attempt desc limit 1)`;
  const rows = steps.length
    ? await em.execute<{ id: string }[]>(
        `select a.id from scheduled_actions a where a.campaign_id = ? and a.state in ('planned', 'awaiting_approval') and a.step_id = any(?::uuid[])
           and ${input.scope === 'missing' ? `coalesce(${latest}, 'failed') = 'failed'` : `coalesce(${latest}, 'awaiting_review') in ('awaiting_review', 'failed', 'held')`}
         order by a.id`,
        [campaign.id, `{${steps.join(',')}}`],
      )
    : [];
  const q = await quoteDrafts(em, actor.workspaceId, rows.length);
  if (rows.length) await requireCredits(em, actor.workspaceId, q.credits);
  const op = em.create(DraftOperation, {
    workspaceId: actor.workspaceId,
    campaign: campaign.id,
    clientKey: input.clientKey,
    scope: input.scope,
    stepId: input.stepId ?? null,
    actionIds: rows.map((r) => r.id),
    total: rows.length,
    status: rows.length ? 'queued' : 'completed',
    finishedAt: rows.length ? null : new Date(),
  });
  try {
    await em.flush();
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
    return em.fork().findOneOrFail(DraftOperation, { campaign: campaign.id, clientKey: input.clientKey }); // a concurrent twin
  }
  if (rows.length)
    await jobs.start('drafts', {
      operationId: op.id,
      campaignId: campaign.id,
      workspaceId: actor.workspaceId,
      appId: campaign.app.id,
    });
  return op;
}

/**
 * Writes the next batch of the operation and commits its progress (only if no other attempt did:
 * the update is conditional on `processed`). Returns false when everything is processed.
 */
export async function draftGenerationBatch(
  em: EntityManager,
  llm: ModelAdapter,
  operationId: string,
): Promise<boolean> {
  const op = await em.fork().findOneOrFail(DraftOperation, { id: operationId });
  if (op.processed >= op.total) return false;
  const batch = op.actionIds.slice(op.processed, op.processed + DRAFT_BATCH);
  const outcomes = await mapLimit(batch, DRAFT_CONCURRENCY, async (actionId): Promise<DraftOutcome | null> => {
    const e = em.fork();
    // The attempt after those written before the operation began: the same number on every retry.
    const [a] = await e.execute<{ state: string; n: number }[]>(
      `select a.state, (select coalesce(max(d.attempt), 0)::int from message_drafts d where d.action_id = a.id and d.created_at < ?) as n from scheduled_actions a where a.id = ?`,
      [op.createdAt, actionId],
    );
    if (!a || !['planned', 'awaiting_approval'].includes(a.state)) return null; // sent, skipped or canceled meanwhile
    return writeDraftForAction(e, llm, actionId, a.n + 1);
  });
  const written = outcomes.filter((o) => o && o.status !== 'failed').length;
  const failed = outcomes.filter((o) => o?.status === 'failed').length;
  const credits = outcomes.reduce((s, o) => s + (o?.credits ?? 0), 0);
  await em.execute(
    `update draft_operations set status = 'running', started_at = coalesce(started_at, now()), processed = processed + ?, written = written + ?, failed = failed + ?, credits = credits + ?, updated_at = now()
      where id = ? and processed = ?`,
    [batch.length, written, failed, credits, operationId, op.processed],
  );
  return op.processed + batch.length < op.total;
}

export async function finishDraftGeneration(
  em: EntityManager,
  operationId: string,
  status: 'completed' | 'failed',
  message: string | null,
): Promise<IDraftOperation> {
  await em.execute(
    `update draft_operations set status = ?, error_message = ?, finished_at = coalesce(finished_at, now()), updated_at = now() where id = ? and status not in ('completed', 'failed')`,
    [status, message?.slice(0, 500) ?? null, operationId],
  );
  return em.fork().findOneOrFail(DraftOperation, { id: operationId });
}
