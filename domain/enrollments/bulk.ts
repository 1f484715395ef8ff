// Bulk enrollment of a list into a campaign (docs/executor.md, "Bulk enrollment"): an operation row
// with exact progress, a workflow `enroll:<campaignId>:<operationId>` whose activity pages through the
// list's leads by id, and a receipt. The enrollment preview runs the same checks without writing.
import type { EntityManager } from '@mikro-orm/postgresql';
import { EnrollOperation, type IEnrollOperation } from '../../db/entities/EnrollOperation.js';
import { uuidv7 } from '../../lib/ids.js';
import { keysetSql } from '../../lib/pagination.js';
import { assertWritable } from '../demo/demo.js';
import { checkLeadsForCampaign, requireCampaign, type LeadCheck } from './enrollments.js';
import { conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { requireList } from '../lists/lists.js';
// The port's input, declared with the port (domain/jobs.ts) so that the port imports no slice.
import type { BulkEnrollStart } from '../jobs.js';
export type { BulkEnrollStart };

/**
 * Creates the operation (or returns the one with the same client key for this campaign) and starts
 * its workflow (a repeated start is a no-op). 409 unless the campaign is active or paused; the list
 * must be one of the campaign's product.
 */
export async function startListEnrollment(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
  input: { listId: string; clientKey: string },
): Promise<IEnrollOperation> {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  const existing = await em.findOne(EnrollOperation, { campaign: campaign.id, clientKey: input.clientKey });
  if (!existing) {
    if (campaign.status !== 'active' && campaign.status !== 'paused')
      throw conflict(
        'invalid_transition',
        `leads can be enrolled only in an active or paused campaign (this one is ${campaign.status})`,
      );
    const list = await requireList(em, actor, input.listId);
    if (list.app.id !== campaign.app.id) throw notFound('list');
    const [{ n }] = await em.execute<{ n: number }[]>(`select count(*)::int as n from leads where list_id = ?`, [
      list.id,
    ]);
    await em.execute(
      `insert into enroll_operations (id, workspace_id, campaign_id, list_id, client_key, user_id, status, total, processed, enrolled, skipped, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, 'queued', ?, 0, 0, 0, now(), now()) on conflict (campaign_id, client_key) do nothing`,
      [uuidv7(), campaign.workspace.id, campaign.id, list.id, input.clientKey, actor.userId, n],
    );
  }
  const op = await em.fork().findOneOrFail(EnrollOperation, { campaign: campaign.id, clientKey: input.clientKey });
  if (existing && existing.listId !== input.listId)
    throw conflict('client_key_reused', 'this client key was used for another list');
  await jobs.start('bulk-enroll', {
    operationId: op.id,
    campaignId: campaign.id,
    workspaceId: campaign.workspace.id,
    appId: campaign.app.id,
  });
  return op;
}

export async function requireOperation(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  operationId: string,
): Promise<IEnrollOperation> {
  const campaign = await requireCampaign(em, actor, campaignId);
  const op = await em.findOne(EnrollOperation, { id: operationId, campaign: campaign.id });
  if (!op) throw notFound('operation');
  return op;
}

export interface Receipt {
  operation: IEnrollOperation;
  byReason: Record<string, number>;
  /** Up to `limit + 1` skipped leads after the cursor (the extra one says there is a next page). */
  skippedLeads: { lead_id: string; reason: string }[];
}

/** The receipt of a finished operation: counts, counts per skip reason, and the skipped leads (by lead id, paginated). 409 until it finished. */
export async function operationReceipt(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  receiptId: string,
  page: { limit: number; cursor?: string },
): Promise<Receipt> {
  const op = await requireOperation(em, actor, campaignId, receiptId);
  if (op.status !== 'completed')
    throw conflict('operation_not_finished', `the operation is ${op.status}; its receipt exists once it completed`);
  const reasons = await em.execute<{ reason: string; n: number }[]>(
    `select reason, count(*)::int as n from enroll_skips where operation_id = ? group by reason order by reason`,
    [op.id],
  );
  const k = keysetSql({ limit: page.limit, after: page.cursor }, 'lead_id');
  const rows = await em.execute<{ lead_id: string; reason: string }[]>(
    `select lead_id, reason from enroll_skips where operation_id = ?${k.sql}`,
    [op.id, ...k.params],
  );
  return { operation: op, byReason: Object.fromEntries(reasons.map((r) => [r.reason, r.n])), skippedLeads: rows };
}

export interface PageOutcome {
  /** Leads read in this page (0: the list is done). */
  count: number;
  enrolled: number;
  skipped: number;
  /** The last lead id of the page (the committed cursor). */
  last: string | null;
  /** Enrollment ids whose workflow start failed (they stay active and are retried by the next attempt). */
  failed: string[];
}

/**
 * One page of the operation: the next `limit` leads of the list after the committed cursor, checked
 * set-based; enrollments and skips inserted set-based and the progress committed in one transaction
 * (guarded by the cursor, so a page is never counted twice); then the page's enrollment workflows are
 * started in batches. A page a concurrent attempt already committed counts nothing.
 */
export async function enrollNextPage(
  em: EntityManager,
  jobs: Jobs,
  operationId: string,
  limit: number,
): Promise<PageOutcome> {
  const op = await em.findOneOrFail(EnrollOperation, { id: operationId }, { populate: ['campaign'] });
  const campaign = op.campaign.getEntity();
  const leads = await em.execute<{ id: string }[]>(
    `select id from leads where list_id = ? and (?::uuid is null or id > ?::uuid) order by id limit ?`,
    [op.listId, op.cursor, op.cursor, limit],
  );
  if (!leads.length) return { count: 0, enrolled: 0, skipped: 0, last: op.cursor ?? null, failed: [] };
  const checks = await checkLeadsForCampaign(
    em,
    campaign,
    leads.map((l) => l.id),
  );
  const last = leads[leads.length - 1].id;
  const ok = checks.filter((c) => c.ok);
  let started: { id: string; lead_id: string; run: number }[] = [];
  let skips: LeadCheck[] = checks.filter((c) => !c.ok);
  const committed = await em.transactional(async (tx) => {
    const moved = await tx.execute(
      `update enroll_operations set status = 'running', started_at = coalesce(started_at, now()), updated_at = now() where id = ? and cursor is not distinct from ?::uuid returning id`,
      [op.id, op.cursor],
    );
    if (!moved.length) return false; // another attempt committed this page meanwhile
    started = ok.length
      ? await tx.execute<{ id: string; lead_id: string; run: number }[]>(
          `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, operation_id, enrolled_at, created_at, updated_at)
           select gen_random_uuid(), ?, ?, x.lead_id, x.contact_id, 'active', ?, 1, ?, now(), now(), now()
             from unnest(?::uuid[], ?::uuid[]) as x(lead_id, contact_id)
           on conflict (campaign_id, lead_id) do nothing
           returning id, lead_id, run`,
          [
            campaign.workspace.id,
            campaign.id,
            campaign.stepVersion,
            op.id,
            `{${ok.map((c) => c.leadId).join(',')}}`,
            `{${ok.map((c) => c.contactId).join(',')}}`,
          ],
        )
      : [];
    // A lead enrolled meanwhile (a concurrent add) is a skip like any other already enrolled.
    const got = new Set(started.map((s) => s.lead_id));
    skips = [
      ...skips,
      ...ok.filter((c) => !got.has(c.leadId)).map((c) => ({ ...c, ok: false, reason: 'already_enrolled' as const })),
    ];
    if (skips.length) {
      await tx.execute(
        `insert into enroll_skips (operation_id, lead_id, reason) select ?, x.lead_id, x.reason from unnest(?::uuid[], ?::text[]) as x(lead_id, reason) on conflict do nothing`,
        [op.id, `{${skips.map((s) => s.leadId).join(',')}}`, `{${skips.map((s) => s.reason).join(',')}}`],
      );
    }
    await tx.execute(
      `update enroll_operations set processed = processed + ?, enrolled = enrolled + ?, skipped = skipped + ?, cursor = ?, updated_at = now() where id = ?`,
      [leads.length, started.length, skips.length, last, op.id],
    );
    return true;
  });
  if (!committed) return { count: leads.length, enrolled: 0, skipped: 0, last: null, failed: [] };
  const { failed } = await startOperationEnrollments(
    em,
    jobs,
    campaign.id,
    campaign.workspace.id,
    campaign.app.id,
    campaign.stepVersion,
    started,
  );
  return { count: leads.length, enrolled: started.length, skipped: skips.length, last, failed };
}

async function startOperationEnrollments(
  _em: EntityManager,
  jobs: Jobs,
  campaignId: string,
  workspaceId: string,
  appId: string,
  version: number,
  rows: { id: string; lead_id: string; run: number }[],
) {
  return jobs.startEnrollments(
    rows.map((r) => ({ enrollmentId: r.id, campaignId, leadId: r.lead_id, workspaceId, appId, version, run: r.run })),
  );
}

/**
 * After a retried activity: starts again (a no-op for those already running) the workflows of the
 * operation's still-active enrollments whose leads lie after `after` (the last page whose starts the
 * previous attempt reported) up to the committed cursor.
 */
export async function restartCommittedEnrollments(
  em: EntityManager,
  jobs: Jobs,
  operationId: string,
  after: string | null,
): Promise<number> {
  const op = await em.findOneOrFail(EnrollOperation, { id: operationId }, { populate: ['campaign'] });
  if (!op.cursor) return 0;
  const c = op.campaign.getEntity();
  const rows = await em.execute<{ id: string; lead_id: string; run: number; step_version: number }[]>(
    `select id, lead_id, run, step_version from enrollments where operation_id = ? and status = 'active' and (?::uuid is null or lead_id > ?::uuid) and lead_id <= ? order by lead_id`,
    [op.id, after, after, op.cursor],
  );
  await jobs.startEnrollments(
    rows.map((r) => ({
      enrollmentId: r.id,
      campaignId: c.id,
      leadId: r.lead_id,
      workspaceId: c.workspace.id,
      appId: c.app.id,
      version: r.step_version,
      run: r.run,
    })),
  );
  return rows.length;
}

/** Marks the operation completed (or failed with a code). */
export async function finishOperation(
  em: EntityManager,
  operationId: string,
  outcome: { status: 'completed' | 'failed'; errorCode?: string; errorMessage?: string },
) {
  await em.execute(
    `update enroll_operations set status = ?, error_code = ?, error_message = ?, finished_at = coalesce(finished_at, now()), updated_at = now() where id = ? and status not in ('completed', 'failed')`,
    [outcome.status, outcome.errorCode ?? null, outcome.errorMessage?.slice(0, 500) ?? null, operationId],
  );
}

export interface PreviewOutcome {
  total: number;
  would_enroll: number;
  skipped: number;
  skipped_by_reason: Record<string, number>;
  sample: { lead_id: string; reason: string }[];
}

/**
 * The bulk checks on a list (paged like the operation) or on given lead ids, without writing. `refused`:
 * the lead ids the access policy hides from the caller, counted `not_found` like unknown ones.
 */
export async function enrollmentPreview(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  input: { listId?: string; leadIds?: string[]; sample?: number },
  refused: ReadonlySet<string>,
): Promise<PreviewOutcome> {
  const campaign = await requireCampaign(em, actor, campaignId);
  const sampleSize = input.sample ?? 20;
  const out: PreviewOutcome = { total: 0, would_enroll: 0, skipped: 0, skipped_by_reason: {}, sample: [] };
  const add = (checks: LeadCheck[]) => {
    for (const c of checks) {
      out.total++;
      if (c.ok) out.would_enroll++;
      else {
        out.skipped++;
        out.skipped_by_reason[c.reason!] = (out.skipped_by_reason[c.reason!] ?? 0) + 1;
        if (out.sample.length < sampleSize) out.sample.push({ lead_id: c.leadId, reason: c.reason! });
      }
    }
  };
  if (input.listId) {
    const list = await requireList(em, actor, input.listId);
    if (list.app.id !== campaign.app.id) throw notFound('list');
    let cursor: string | null = null;
    for (;;) {
      const page: { id: string }[] = await em.execute<{ id: string }[]>(
        `select id from leads where list_id = ? and (?::uuid is null or id > ?::uuid) order by id limit 1000`,
        [list.id, cursor, cursor],
      );
      if (!page.length) break;
      add(
        await checkLeadsForCampaign(
          em,
          campaign,
          page.map((p) => p.id),
        ),
      );
      cursor = page[page.length - 1].id;
    }
  }
  if (input.leadIds?.length)
    add(await checkLeadsForCampaign(em, campaign, [...new Set(input.leadIds.map((id) => id.toLowerCase()))], refused));
  return out;
}
