// The workspace's suppression list (docs/email.md "Suppression"): addresses and whole domains no
// email is sent to, whatever the campaign. The send-time rule (domain/enrollments/send-rule.ts) and
// the enrollment checks read the table; everything that learns of an address that must not be
// written to (an unsubscribe, a hard bounce, a complaint, a person, an import) adds it here.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SuppressionReason } from '../../db/entities/Suppression.js';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseEmail } from '../../lib/normalise.js';
import { keysetSql, type PageRequest } from '../../lib/pagination.js';
import { likeEscape } from '../../lib/sql.js';
import { requireManager } from '../access.js';
import { assertWritable } from '../demo/demo.js';
import { badRequest, notFound } from '../errors.js';
import type { Actor } from '../identity.js';

export type SuppressionKind = 'address' | 'domain';
export interface SuppressionEntry {
  kind: SuppressionKind;
  value: string;
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/**
 * An address (`name@example.com`) or a domain (`example.com` or `@example.com`), normalised; null
 * when it is neither.
 */
export function suppressionEntry(raw: string): SuppressionEntry | null {
  const v = raw.trim().toLowerCase();
  if (!v || v.length > 320) return null;
  if (v.startsWith('@') || !v.includes('@')) {
    const d = v.replace(/^@/, '').replace(/\.$/, '');
    return DOMAIN.test(d) ? { kind: 'domain', value: d } : null;
  }
  const email = normaliseEmail(v);
  return email ? { kind: 'address', value: email } : null;
}

/**
 * Adds entries (set-based, one statement; an entry already there keeps its first reason and source).
 * Returns how many were new.
 */
export async function addSuppressions(
  em: EntityManager,
  workspaceId: string,
  entries: SuppressionEntry[],
  reason: SuppressionReason,
  source: string | null,
  createdBy: string | null = null,
): Promise<number> {
  if (!entries.length) return 0;
  const rows = entries.map((e) => ({ id: uuidv7(), kind: e.kind, value: e.value }));
  return em.transactional(async (tx) => {
    // A stop like any other (docs/executor.md "The send-time rule"): held until commit, so a send's
    // claim (which takes this lock shared, last) either commits before it or sees the new entries.
    await tx.execute(`select pg_advisory_xact_lock(${SUPPRESSION_LOCK})`, [workspaceId]);
    const inserted = await tx.execute<{ id: string }[]>(
      `insert into suppressions (id, workspace_id, kind, value, reason, source, created_by, created_at)
       select v.id, ?, v.kind, v.value, ?, ?, ?, now() from json_to_recordset(?::json) as v(id uuid, kind text, value text)
       on conflict (workspace_id, kind, value) do nothing returning id`,
      [workspaceId, reason, source?.slice(0, 200) ?? null, createdBy, JSON.stringify(rows)],
    );
    return inserted.length;
  });
}

/** The advisory lock key of a workspace's suppression list (one `?`: the workspace id). */
export const SUPPRESSION_LOCK = `hashtextextended('suppressions:' || ?::text, 0)`;

/** Whether an email to `address` is suppressed in the workspace (the address itself or its domain). */
export async function isSuppressed(em: EntityManager, workspaceId: string, address: string): Promise<boolean> {
  const email = normaliseEmail(address);
  if (!email) return false;
  const [r] = await em.execute<{ hit: boolean }[]>(
    `select exists (select 1 from suppressions where workspace_id = ? and ((kind = 'address' and value = ?) or (kind = 'domain' and value = ?))) as hit`,
    [workspaceId, email, email.split('@')[1]],
  );
  return !!r?.hit;
}

// ---- The list as people manage it (api/suppressions, docs/email.md "Suppression") --------------
// Workspace-wide, not per product: an address that must not be written to must not be written to by
// any campaign. Everyone in the workspace reads it; anyone who may write adds to it (suppressing is
// always safe); only owners and admins remove an entry (that lets email reach someone again).

export interface SuppressionRow {
  id: string;
  kind: SuppressionKind;
  value: string;
  reason: SuppressionReason;
  source: string | null;
  created_by: string | null;
  created_at: Date;
}

const COLUMNS = 'id, kind, value, reason, source, created_by, created_at';

export interface SuppressionFilter {
  reason?: SuppressionReason;
  kind?: SuppressionKind;
  /** A prefix of the value (compared lower-cased, as values are stored). */
  q?: string;
}

/** The workspace's entries, newest first (UUIDv7 ids), filtered; `limit + 1` rows for `page()`. */
export function listSuppressions(
  em: EntityManager,
  actor: Actor,
  f: SuppressionFilter,
  p: PageRequest,
): Promise<SuppressionRow[]> {
  const params: unknown[] = [actor.workspaceId];
  let sql = `select ${COLUMNS} from suppressions where workspace_id = ?`;
  if (f.reason) {
    sql += ' and reason = ?';
    params.push(f.reason);
  }
  if (f.kind) {
    sql += ' and kind = ?';
    params.push(f.kind);
  }
  if (f.q) {
    sql += ` and value like ? escape '\\'`;
    params.push(`${likeEscape(f.q.trim().toLowerCase())}%`);
  }
  const k = keysetSql(p, 'id', 'desc');
  return em.execute<SuppressionRow[]>(sql + k.sql, [...params, ...k.params]);
}

/**
 * Adds one address or domain by hand (`reason` manual or complaint, source `api`). An entry already
 * on the list is returned as it is (its first reason kept), with `created: false`. 400
 * `invalid_suppression` when the value is neither an address nor a domain.
 */
export async function addSuppression(
  em: EntityManager,
  actor: Actor,
  raw: string,
  reason: 'manual' | 'complaint',
): Promise<{ row: SuppressionRow; created: boolean }> {
  assertWritable(actor);
  const entry = suppressionEntry(raw);
  if (!entry)
    throw badRequest(
      'invalid_suppression',
      'value must be an email address (name@example.com) or a domain (example.com or @example.com)',
    );
  const created = (await addSuppressions(em, actor.workspaceId, [entry], reason, 'api', actor.userId)) === 1;
  const [row] = await em.execute<SuppressionRow[]>(
    `select ${COLUMNS} from suppressions where workspace_id = ? and kind = ? and value = ?`,
    [actor.workspaceId, entry.kind, entry.value],
  );
  // Removed between the insert and the read by a concurrent delete: the caller may simply try again.
  if (!row) throw notFound('suppression');
  return { row, created };
}

/** Removes one entry (owners and admins). The contact of an unsubscribed address stays unsubscribed. */
export async function deleteSuppression(em: EntityManager, actor: Actor, id: string): Promise<void> {
  assertWritable(actor);
  requireManager(actor, 'the suppression list (removing an entry lets email reach it again)');
  const gone = await em.execute<{ id: string }[]>(
    `delete from suppressions where id = ? and workspace_id = ? returning id`,
    [id, actor.workspaceId],
  );
  if (!gone.length) throw notFound('suppression');
}
