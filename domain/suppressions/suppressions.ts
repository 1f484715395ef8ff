// The workspace's suppression list (docs/email.md "Suppression"): addresses and whole domains no
// email is sent to, whatever the campaign. The send-time rule (domain/enrollments/send-rule.ts) and
// the enrollment checks read the table; everything that learns of an address that must not be
// written to (an unsubscribe, a hard bounce, a complaint, a person, an import) adds it here.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SuppressionReason } from '../../db/entities/Suppression.js';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseEmail } from '../../lib/normalise.js';

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
  const inserted = await em.execute<{ id: string }[]>(
    `insert into suppressions (id, workspace_id, kind, value, reason, source, created_by, created_at)
     select v.id, ?, v.kind, v.value, ?, ?, ?, now() from json_to_recordset(?::json) as v(id uuid, kind text, value text)
     on conflict (workspace_id, kind, value) do nothing returning id`,
    [workspaceId, reason, source?.slice(0, 200) ?? null, createdBy, JSON.stringify(rows)],
  );
  return inserted.length;
}

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
