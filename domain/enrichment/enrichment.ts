// Enrichment of contacts and discovered leads (docs/enrichment.md).
//
// A request creates an *attempt* row (`enrichments`, numbered per target) and starts the workflow
// `enrich:<kind>:<id>`, which asks the provider (lib/enrichment) and then applies what it found in
// one transaction: fields written by their provenance rules, one credit debited (key
// `enrich:<kind>:<id>:<attempt>`, only when the provider matched), the attempt completed, and — for a
// discovered lead complete enough for the first time — the promotion and its `lead.discovered` event.
// The credit is held under that key from the request on (docs/plans-and-credits.md, "Holds"), so the
// provider is only asked for attempts that can be paid: the debit consumes the hold, a miss or a
// failure releases it. While an attempt is queued or running, a repeated request joins it; a
// completed target answers its last attempt unless the request is a refresh.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Enrichment, type EnrichmentTarget, type IEnrichment } from '../../db/entities/Enrichment.js';
import {
  ENRICHABLE_FIELDS,
  FIELD_COLUMNS,
  isQueryable,
  type EnrichableField,
  type EnrichedPerson,
  type EnrichmentMatch,
  type EnrichmentQuery,
} from '../../lib/enrichment/types.js';
import { normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { debitCredits, holdCredits, releaseCredits } from '../billing/credits.js';
import { assertWritable } from '../demo/demo.js';
import { requireDiscoveredLead } from '../discovered-leads/discovered-leads.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { emitEvent } from '../webhooks/events.js';
// The port's input, declared with the port (domain/jobs.ts) so that the port imports no slice.
import type { EnrichmentStart } from '../jobs.js';
export type { EnrichmentStart };

/** Credits one enrichment costs when the provider finds the person (nothing when it does not). */
export const ENRICHMENT_COST = 1;

/**
 * How long an attempt's credit hold counts without being settled: a run from prepare to apply takes
 * minutes at most (the provider call's 5 tries with back-off: about 12), and prepare renews it. A
 * hold outlives this only when the attempt's run was lost; the next request joins and re-holds.
 */
export const ENRICHMENT_HOLD_MS = 30 * 60_000;

/** The ledger key of an attempt's charge, and of its hold. */
const chargeKey = (kind: EnrichmentTarget, targetId: string, attempt: number) =>
  `enrich:${kind}:${targetId}:${attempt}`;

const holdFor = (kind: EnrichmentTarget, targetId: string, attempt: number) => ({
  key: chargeKey(kind, targetId, attempt),
  reason: `Enrichment of ${kind} ${targetId}`,
  ttlMs: ENRICHMENT_HOLD_MS,
});

/** The person's identity on a contact (its dedupe keys) and a discovered lead's contact channel: filled when empty, never replaced. */
const IDENTITY: ReadonlySet<EnrichableField> = new Set(['email', 'profileUrl']);

const TABLE: Record<EnrichmentTarget, string> = { contact: 'contacts', 'discovered-lead': 'discovered_leads' };

/** The target in the actor's workspace (404 otherwise; who may touch it was checked before: domain/access.ts) and its product (null for contacts). */
async function requireTarget(
  em: EntityManager,
  actor: Actor,
  kind: EnrichmentTarget,
  id: string,
): Promise<{ appId: string | null; row: TargetRow }> {
  if (kind === 'discovered-lead') await requireDiscoveredLead(em, actor, id);
  const row = await readTarget(em, kind, id, actor.workspaceId);
  if (!row) throw notFound(kind === 'contact' ? 'contact' : 'discovered lead');
  return { appId: row.app_id ?? null, row };
}

type TargetRow = Record<string, unknown> & {
  id: string;
  workspace_id: string;
  app_id?: string;
  edited_fields?: string[] | string;
  enriched_fields: string[] | string;
};

async function readTarget(
  em: EntityManager,
  kind: EnrichmentTarget,
  id: string,
  workspaceId: string,
  lock = false,
): Promise<TargetRow | null> {
  const [row]: TargetRow[] = await em.execute(
    `select * from ${TABLE[kind]} where id = ? and workspace_id = ?${lock ? ' for update' : ''}`,
    [id, workspaceId],
  );
  return row ?? null;
}

const jsonList = (v: unknown): string[] =>
  Array.isArray(v) ? v : typeof v === 'string' ? (JSON.parse(v) as string[]) : [];

export function queryOf(row: TargetRow): EnrichmentQuery {
  const s = (c: string) => (typeof row[c] === 'string' && (row[c] as string).trim() ? (row[c] as string) : null);
  return {
    email: s('email'),
    profileUrl: s('profile_url'),
    fullName: s('full_name'),
    firstName: s('first_name'),
    lastName: s('last_name'),
    company: s('company'),
    companyDomain: s('company_domain'),
  };
}

export async function latestAttempt(
  em: EntityManager,
  kind: EnrichmentTarget,
  targetId: string,
): Promise<IEnrichment | null> {
  return em.findOne(Enrichment, { targetKind: kind, targetId }, { orderBy: { attempt: 'desc' } });
}

export type RequestOutcome = 'started' | 'joined' | 'already_enriched';

/**
 * Enriches the target, or joins the attempt in flight. A completed target answers its last attempt
 * (`already_enriched`) unless `refresh`. A new attempt holds its credit in the transaction that
 * records it: 402 `insufficient_credits` (nothing recorded) when the workspace cannot cover it with
 * what is not already held; 409 `not_enrichable` when the target names nobody a provider could look up.
 */
export async function requestEnrichment(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  kind: EnrichmentTarget,
  targetId: string,
  opts: { refresh?: boolean } = {},
): Promise<{ enrichment: IEnrichment; outcome: RequestOutcome }> {
  assertWritable(actor);
  const { appId, row } = await requireTarget(em, actor, kind, targetId);
  const start = (e: IEnrichment): EnrichmentStart => ({
    enrichmentId: e.id,
    kind,
    targetId,
    workspaceId: actor.workspaceId,
    appId,
  });
  for (let tries = 0; ; tries++) {
    const latest = await latestAttempt(em, kind, targetId);
    if (latest && (latest.status === 'queued' || latest.status === 'running')) {
      await jobs.start('enrichment', start(latest)); // joins the running workflow (or restarts a lost start)
      return { enrichment: latest, outcome: 'joined' };
    }
    if (latest?.status === 'completed' && !opts.refresh) return { enrichment: latest, outcome: 'already_enriched' };
    if (!isQueryable(queryOf(row))) {
      throw new AppError(409, 'not_enrichable', 'enrichment needs an email, a profile URL, or a name with a company');
    }
    const number = (latest?.attempt ?? 0) + 1;
    let attempt: IEnrichment;
    try {
      attempt = await em.transactional(async (tx) => {
        await holdCredits(tx, actor.workspaceId, ENRICHMENT_COST, holdFor(kind, targetId, number));
        const created = tx.create(Enrichment, {
          workspace: actor.workspaceId,
          targetKind: kind,
          targetId,
          attempt: number,
          status: 'queued',
          requestedBy: actor.userId,
        });
        await tx.flush();
        return created;
      });
    } catch (err) {
      // A concurrent request created this attempt first (its hold with it): join it.
      if (!(err instanceof UniqueConstraintViolationException) || tries > 2) throw err;
      em.clear();
      continue;
    }
    await jobs.start('enrichment', start(attempt));
    return { enrichment: attempt, outcome: 'started' };
  }
}

// ---------------------------------------------------------------------------------------------
// The workflow's steps (activities call these)

export type PrepareOutcome = { run: true; query: EnrichmentQuery } | { run: false; status: string };

/**
 * Marks the attempt running and returns what to ask the provider. An attempt already finished (a
 * replayed or repeated workflow) is not run again. Renews the attempt's credit hold (or takes it
 * again if it lapsed): 402 `insufficient_credits` if the workspace cannot cover it, so the provider
 * is never called for an attempt that could not be charged.
 */
export async function prepareEnrichment(em: EntityManager, enrichmentId: string): Promise<PrepareOutcome> {
  const e = await em.findOne(Enrichment, enrichmentId);
  if (!e) return { run: false, status: 'missing' };
  if (e.status === 'completed' || e.status === 'failed') return { run: false, status: e.status };
  const row = await readTarget(em, e.targetKind as EnrichmentTarget, e.targetId, e.workspace.id);
  if (!row) throw new AppError(404, 'not_found', 'the target was deleted');
  await holdCredits(
    em,
    e.workspace.id,
    ENRICHMENT_COST,
    holdFor(e.targetKind as EnrichmentTarget, e.targetId, e.attempt),
  );
  if (e.status === 'queued') {
    e.status = 'running';
    e.startedAt = new Date();
    await em.flush();
  }
  return { run: true, query: queryOf(row) };
}

/** Records the attempt failed and gives its credit hold back. */
export async function failEnrichment(
  em: EntityManager,
  enrichmentId: string,
  code: string,
  message: string,
): Promise<void> {
  await em.transactional(async (tx) => {
    const [e] = await tx.execute<
      { workspace_id: string; target_kind: EnrichmentTarget; target_id: string; attempt: number }[]
    >(
      `update enrichments set status = 'failed', error_code = ?, error_message = ?, finished_at = now() where id = ? and status in ('queued', 'running')
       returning workspace_id, target_kind, target_id, attempt`,
      [code.slice(0, 40), message.slice(0, 500), enrichmentId],
    );
    if (e) await releaseCredits(tx, e.workspace_id, chargeKey(e.target_kind, e.target_id, e.attempt));
  });
}

export interface FieldPlan {
  set: Partial<Record<EnrichableField, string>>;
  /** Found, but a person edited the field: left as it is. */
  kept: EnrichableField[];
}

/**
 * Which found values to write: never a field a person edited (provenance), never an identity field
 * that already has a value (email, profile URL), never a value equal to the current one, never a blank.
 */
export function planFields(
  current: Partial<Record<EnrichableField, string | null>>,
  edited: readonly string[],
  found: EnrichedPerson,
): FieldPlan {
  const plan: FieldPlan = { set: {}, kept: [] };
  for (const f of ENRICHABLE_FIELDS) {
    const v = found[f]?.trim();
    if (!v) continue;
    if (edited.includes(f)) {
      if (current[f] !== v) plan.kept.push(f);
      continue;
    }
    if (IDENTITY.has(f) && current[f]) continue;
    if (current[f] !== v) plan.set[f] = v;
  }
  return plan;
}

export interface ApplyOutcome {
  status: 'completed';
  found: boolean;
  fieldsFilled: string[];
  promoted: boolean;
}

/**
 * Applies the provider's answer in one transaction (see the file comment). Idempotent: an attempt
 * already completed returns what it recorded and changes nothing.
 */
export async function applyEnrichment(
  em: EntityManager,
  enrichmentId: string,
  provider: string,
  match: EnrichmentMatch | null,
): Promise<ApplyOutcome> {
  return em.transactional(async (tx) => {
    const [e]: {
      status: string;
      attempt: number;
      target_kind: EnrichmentTarget;
      target_id: string;
      workspace_id: string;
    }[] = await tx.execute(
      'select status, attempt, target_kind, target_id, workspace_id from enrichments where id = ? for update',
      [enrichmentId],
    );
    if (!e) throw new AppError(404, 'not_found', 'enrichment not found');
    if (e.status === 'completed') {
      const done = await tx.findOneOrFail(Enrichment, enrichmentId);
      return { status: 'completed', found: done.found, fieldsFilled: done.fieldsFilled, promoted: done.promoted };
    }
    const kind = e.target_kind;
    const row = await readTarget(tx, kind, e.target_id, e.workspace_id, true);
    if (!row) throw new AppError(404, 'not_found', 'the target was deleted');
    const current = Object.fromEntries(
      ENRICHABLE_FIELDS.map((f) => [f, (row[FIELD_COLUMNS[f]] as string | null) ?? null]),
    );
    const plan = planFields(current, kind === 'contact' ? jsonList(row.edited_fields) : [], match?.person ?? {});
    if (kind === 'contact') await dropTakenIdentities(tx, e.workspace_id, row.id, plan);

    const filled = Object.keys(plan.set) as EnrichableField[];
    const sets: string[] = [];
    const params: unknown[] = [];
    for (const f of filled) {
      sets.push(`${FIELD_COLUMNS[f]} = ?`);
      params.push(plan.set[f]);
    }
    if (kind === 'contact') {
      // The dedupe keys follow the identity fields they are computed from.
      if (plan.set.email) (sets.push('email_normalised = ?'), params.push(normaliseEmail(plan.set.email)));
      if (plan.set.profileUrl)
        (sets.push('profile_url_normalised = ?'), params.push(normaliseProfileUrl(plan.set.profileUrl)));
    }
    const provenance = [...new Set([...jsonList(row.enriched_fields), ...filled])];
    sets.push('enriched_fields = ?::jsonb', 'enriched_at = now()', 'updated_at = now()');
    params.push(JSON.stringify(provenance));
    await tx.execute(`update ${TABLE[kind]} set ${sets.join(', ')} where id = ?`, [...params, row.id]);

    // A match is charged (the debit consumes the attempt's hold); a miss costs nothing and releases it.
    const charged = match ? ENRICHMENT_COST : 0;
    const key = chargeKey(kind, row.id, e.attempt);
    if (charged) await debitCredits(tx, e.workspace_id, charged, { key, reason: `Enrichment of ${kind} ${row.id}` });
    else await releaseCredits(tx, e.workspace_id, key);
    const promoted = kind === 'discovered-lead' ? await promoteIfComplete(tx, row.id) : false;
    await tx.execute(
      `update enrichments set status = 'completed', provider = ?, found = ?, fields_filled = ?::jsonb, fields_kept = ?::jsonb,
         credits_charged = ?, promoted = ?, finished_at = now(), started_at = coalesce(started_at, now()) where id = ?`,
      [
        provider.slice(0, 40),
        Boolean(match),
        JSON.stringify(filled),
        JSON.stringify(plan.kept),
        charged,
        promoted,
        enrichmentId,
      ],
    );
    return { status: 'completed', found: Boolean(match), fieldsFilled: filled, promoted };
  });
}

/** A contact's email / profile URL must stay unique in the workspace: a value another contact has is not taken. */
async function dropTakenIdentities(
  tx: EntityManager,
  workspaceId: string,
  contactId: string,
  plan: FieldPlan,
): Promise<void> {
  const checks: [EnrichableField, string, string | null][] = [
    ['email', 'email_normalised', normaliseEmail(plan.set.email ?? null)],
    ['profileUrl', 'profile_url_normalised', normaliseProfileUrl(plan.set.profileUrl ?? null)],
  ];
  for (const [field, column, key] of checks) {
    if (!plan.set[field]) continue;
    if (!key) {
      delete plan.set[field];
      continue;
    }
    const taken: unknown[] = await tx.execute(
      `select 1 from contacts where workspace_id = ? and ${column} = ? and id <> ? limit 1`,
      [workspaceId, key, contactId],
    );
    if (taken.length) delete plan.set[field];
  }
}

/**
 * The promotion rule: a discovered lead not rejected, with a first name, a last name, a company and
 * a reachable channel (email or profile URL), is promoted the first time enrichment leaves it so —
 * and `lead.discovered` is emitted in this same transaction. `enrichment_promoted_at` makes it once.
 */
async function promoteIfComplete(tx: EntityManager, id: string): Promise<boolean> {
  const [lead]: {
    id: string;
    workspace_id: string;
    agent_id: string;
    agent_name: string;
    first_name: string;
    last_name: string;
    company: string;
    headline: string | null;
    title: string | null;
    profile_url: string | null;
    signal_key: string;
  }[] = await tx.execute(
    `update discovered_leads d set enrichment_promoted_at = now()
       from discovery_agents a
      where d.id = ? and a.id = d.agent_id and d.enrichment_promoted_at is null and d.status <> 'rejected'
        and coalesce(trim(d.first_name), '') <> '' and coalesce(trim(d.last_name), '') <> '' and coalesce(trim(d.company), '') <> ''
        and (coalesce(trim(d.email), '') <> '' or coalesce(trim(d.profile_url), '') <> '')
      returning d.id, d.workspace_id, d.agent_id, a.name as agent_name, d.first_name, d.last_name, d.company, d.headline, d.title, d.profile_url, d.signal_key`,
    [id],
  );
  if (!lead) return false;
  // Exactly the spec's data fields (no discovered_at: receivers use the envelope timestamp).
  await emitEvent(tx, lead.workspace_id, 'lead.discovered', {
    lead_id: lead.id,
    agent_id: lead.agent_id,
    agent_name: lead.agent_name,
    first_name: lead.first_name,
    last_name: lead.last_name,
    company: lead.company,
    headline: lead.headline ?? lead.title,
    profile_url: lead.profile_url,
    signal_key: lead.signal_key,
  });
  return true;
}
