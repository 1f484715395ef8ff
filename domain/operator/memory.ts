// The Operator's memory and notification preferences (docs/operator-tasks.md).
//
// Memory: facts (key → value) one user keeps in one workspace, about one product or about all of
// them (app null). PUT upserts by key within that scope; the turn workflow puts the most recent
// ones in the model's context (`memoryForContext`). Another user's facts, even in the same
// workspace, are not found.
import type { EntityManager } from '@mikro-orm/postgresql';
import { OperatorMemory, ALL_PRODUCTS_SCOPE, type IOperatorMemory } from '../../db/entities/OperatorMemory.js';
import {
  OperatorNotificationPreference,
  type NotificationChannel,
} from '../../db/entities/OperatorNotificationPreference.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { uuidv7 } from '../../lib/ids.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, notFound } from '../errors.js';
import { canAccessApp, type Actor } from '../identity.js';
import { requireOwnedApp } from './threads.js';

export const MAX_KEY = 100;
export const MAX_VALUE = 2000;
/** Facts one PUT may write. */
export const MAX_FACTS_PER_PUT = 50;
/** Facts a user may keep per scope (one product, or all products): 409 `memory_full` above it. */
export const MAX_FACTS_PER_SCOPE = 1000;
/** Facts `memoryForContext` returns: the most recently written ones. */
export const CONTEXT_FACTS = 50;

export interface FactInput {
  appId: string | null;
  key: string;
  value: string;
}

const scopeOf = (appId: string | null) => appId ?? ALL_PRODUCTS_SCOPE;

/**
 * Upserts facts by (scope, key): a new key is inserted, an existing one gets the new value. One
 * transaction; the last write of a key repeated in one request wins. Products are checked like a
 * thread's (403 `app_not_owned` / `not_assigned`).
 */
export async function rememberFacts(em: EntityManager, actor: Actor, facts: FactInput[]): Promise<IOperatorMemory[]> {
  assertWritable(actor);
  for (const appId of new Set(facts.flatMap((f) => (f.appId ? [f.appId] : []))))
    await requireOwnedApp(em, actor, appId);
  // The last value of a (scope, key) repeated in the request wins.
  const byKey = new Map<string, FactInput>();
  for (const f of facts) byKey.set(`${scopeOf(f.appId)}\u0000${f.key}`, f);
  const ids = await em.transactional(async (tx) => {
    // Serialises writers of this user's memory, so the per-scope cap holds under concurrent PUTs.
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [
      `operator-memory:${actor.workspaceId}:${actor.userId}`,
    ]);
    const out: string[] = [];
    for (const f of byKey.values()) {
      const [row]: { id: string }[] = await tx.execute(
        `insert into operator_memories (id, workspace_id, user_id, app_id, scope, key, value, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?, now(), now())
         on conflict (workspace_id, user_id, scope, key) do update set value = excluded.value, updated_at = now()
         returning id`,
        [uuidv7(), actor.workspaceId, actor.userId, f.appId, scopeOf(f.appId), f.key, f.value],
      );
      out.push(row.id);
    }
    const scopes = [...new Set([...byKey.values()].map((f) => scopeOf(f.appId)))];
    const counts: { scope: string; n: number }[] = await tx.execute(
      `select scope, count(*)::int as n from operator_memories where workspace_id = ? and user_id = ? and scope in (${scopes.map(() => '?').join(', ')}) group by scope`,
      [actor.workspaceId, actor.userId, ...scopes],
    );
    const full = counts.find((c) => c.n > MAX_FACTS_PER_SCOPE);
    if (full) {
      throw new AppError(
        409,
        'memory_full',
        `at most ${MAX_FACTS_PER_SCOPE} facts per product (and ${MAX_FACTS_PER_SCOPE} for all products); delete some first`,
      );
    }
    return out;
  });
  const rows = await em.find(OperatorMemory, { id: { $in: ids } }, { refresh: true });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)!);
}

/**
 * One page of the caller's facts, newest first (by id). With `appId`: the facts of that product and
 * those for all products (what the Operator knows when working on it).
 */
export async function listFacts(
  em: EntityManager,
  actor: Actor,
  page: PageRequest,
  appId?: string,
): Promise<IOperatorMemory[]> {
  const where: Record<string, unknown> = { workspace: actor.workspaceId, user: actor.userId };
  if (appId) {
    await requireOwnedApp(em, actor, appId);
    where.scope = { $in: [appId, ALL_PRODUCTS_SCOPE] };
  } else if (!actor.allApps) {
    where.scope = { $in: [...actor.appIds, ALL_PRODUCTS_SCOPE] };
  }
  const k = keyset(page, 'desc');
  return em.find(OperatorMemory, { ...where, ...k.where }, k.options);
}

/** Deletes one of the caller's facts: 404 for an unknown one, another user's or another workspace's. */
export async function forgetFact(em: EntityManager, actor: Actor, id: string): Promise<void> {
  assertWritable(actor);
  const fact = await em.findOne(
    OperatorMemory,
    { id, workspace: actor.workspaceId, user: actor.userId },
    { fields: ['id', 'app'] },
  );
  if (!fact || (fact.app && !canAccessApp(actor, fact.app.id))) throw notFound('memory');
  await em.nativeDelete(OperatorMemory, { id: fact.id });
}

/**
 * The facts the Operator sees when working on a product for this user: that product's and those for
 * all products, the `CONTEXT_FACTS` most recently written, newest first.
 */
export async function memoryForContext(
  em: EntityManager,
  actor: Actor,
  appId: string | null,
): Promise<{ key: string; value: string }[]> {
  const scopes = appId ? [appId, ALL_PRODUCTS_SCOPE] : [ALL_PRODUCTS_SCOPE];
  const rows = await em.find(
    OperatorMemory,
    { workspace: actor.workspaceId, user: actor.userId, scope: { $in: scopes } },
    { fields: ['key', 'value'], orderBy: { updatedAt: 'desc', id: 'desc' }, limit: CONTEXT_FACTS },
  );
  return rows.map((r) => ({ key: r.key, value: r.value }));
}

// ---- Notification preferences ----
//
// One channel per topic (domain/notifications/notifications.ts NOTIFICATION_TOPICS says which notification kinds
// each governs): `in_app` (listed under /api/me/notifications), `email` (listed and mailed), `none`.

/** The topics, as API fields (snake_case) → preference fields. */
export const PREFERENCE_FIELDS = {
  task_finished: 'taskFinished',
  confirmation_pending: 'confirmationPending',
  account_disconnected: 'accountDisconnected',
  reply_received: 'replyReceived',
  import_finished: 'importFinished',
  review_overdue: 'reviewOverdue',
} as const;
export type PreferenceField = (typeof PREFERENCE_FIELDS)[keyof typeof PREFERENCE_FIELDS];

export type NotificationPreferences = Record<PreferenceField, NotificationChannel> & { updatedAt: Date | null };

export const DEFAULT_NOTIFICATION_PREFERENCES: NotificationPreferences = {
  taskFinished: 'in_app',
  confirmationPending: 'in_app',
  accountDisconnected: 'in_app',
  replyReceived: 'in_app',
  importFinished: 'in_app',
  reviewOverdue: 'in_app',
  updatedAt: null,
};

const FIELDS = Object.entries(PREFERENCE_FIELDS) as [keyof typeof PREFERENCE_FIELDS, PreferenceField][];

/** The user's preferences (the defaults, `in_app` for every topic, until they set any). */
export async function notificationPreferences(em: EntityManager, userId: string): Promise<NotificationPreferences> {
  const row = await em.findOne(OperatorNotificationPreference, { user: userId });
  if (!row) return { ...DEFAULT_NOTIFICATION_PREFERENCES };
  const out = { updatedAt: row.updatedAt } as NotificationPreferences;
  for (const [, field] of FIELDS) out[field] = row[field] as NotificationChannel;
  return out;
}

/** Sets the given preferences (the others keep their value); an empty change returns the current ones. */
export async function setNotificationPreferences(
  em: EntityManager,
  actor: Actor,
  change: Partial<Record<PreferenceField, NotificationChannel>>,
): Promise<NotificationPreferences> {
  assertWritable(actor);
  const given = FIELDS.filter(([, field]) => change[field] !== undefined);
  if (!given.length) return notificationPreferences(em, actor.userId);
  const d = DEFAULT_NOTIFICATION_PREFERENCES;
  const columns = FIELDS.map(([column]) => column);
  await em.execute(
    `insert into operator_notification_preferences (id, user_id, ${columns.join(', ')}, created_at, updated_at)
     values (?, ?, ${columns.map(() => '?').join(', ')}, now(), now())
     on conflict (user_id) do update set
       ${given.map(([column]) => `${column} = excluded.${column}`).join(',\n       ')},
       updated_at = now()`,
    [uuidv7(), actor.userId, ...FIELDS.map(([, field]) => change[field] ?? d[field])],
  );
  return notificationPreferences(em.fork(), actor.userId);
}
