// Idempotency keys (docs/idempotency.md): the storage behind the router's Idempotency-Key rule
// (api/idempotency.ts). A key belongs to one user in one acting workspace; the first request claims it
// atomically (one `insert … on conflict` statement, so two concurrent requests with a key never both
// run), then stores its 2xx answer for 24 hours; an error answer releases it. No HTTP here: the caller
// computes the fingerprint and seals the body.
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';

/** How long a key answers with its first request's answer (from that request's start). */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;
/**
 * The lease of an in-flight claim, renewed while its request runs (`renewKey`): a claim whose process
 * died mid-request stops refusing the key (409) after this long, and a retry with the same request runs.
 */
export const IN_FLIGHT_LEASE_SECONDS = 60;

export interface KeyScope {
  /** The authenticated user (never the workspace owner acted for). */
  userId: string;
  /** The acting workspace (X-Acting-As decides it): the same key in another workspace is another key. */
  workspaceId: string;
  key: string;
}

export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  /** The sealed JSON body, or null for an answer without one. */
  body: string | null;
}

export type Claim =
  /** This request holds the key: run it, then `completeKey` (2xx) or `releaseKey` (anything else). */
  | { state: 'claimed'; owner: string }
  /** Another request with the key has not answered yet. */
  | { state: 'in_flight' }
  /** The key was used for another request (method, path, query or body) within the TTL. */
  | { state: 'mismatch'; operationId: string }
  /** The same request answered: replay this. */
  | ({ state: 'done' } & StoredAnswer);

interface Row {
  fingerprint: string;
  operation_id: string;
  state: 'in_flight' | 'done';
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
}

const WHERE = `user_id = ? and workspace_id = ? and key = ?`;
const scopeParams = (s: KeyScope) => [s.userId, s.workspaceId, s.key];

/**
 * Claims the key for a request with this fingerprint, or says what holds it. One statement claims: a
 * new key, an expired one (older than the TTL, not purged yet) or an abandoned in-flight claim of the
 * same request (lease run out) is taken; anything else is read and answered.
 */
export async function claimKey(
  em: EntityManager,
  scope: KeyScope,
  fingerprint: string,
  operationId: string,
): Promise<Claim> {
  // A row can vanish between the two statements (its request failed and released it): claim again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const owner = randomUUID();
    const claimed = await em.execute<{ owner: string }[]>(
      `insert into idempotency_keys as k (user_id, workspace_id, key, operation_id, fingerprint, state, owner, locked_until, created_at, expires_at)
       values (?, ?, ?, ?, ?, 'in_flight', ?, now() + make_interval(secs => ?), now(), now() + make_interval(hours => ?))
       on conflict (user_id, workspace_id, key) do update set
         operation_id = excluded.operation_id, fingerprint = excluded.fingerprint, state = 'in_flight', owner = excluded.owner,
         locked_until = excluded.locked_until, status = null, headers = null, body = null,
         created_at = excluded.created_at, expires_at = excluded.expires_at
       where k.expires_at <= now()
          or (k.state = 'in_flight' and k.locked_until <= now() and k.fingerprint = excluded.fingerprint)
       returning owner`,
      [...scopeParams(scope), operationId, fingerprint, owner, IN_FLIGHT_LEASE_SECONDS, IDEMPOTENCY_KEY_TTL_HOURS],
    );
    if (claimed.length) return { state: 'claimed', owner };
    const [row] = await em.execute<Row[]>(
      `select fingerprint, operation_id, state, status, headers, body from idempotency_keys where ${WHERE} and expires_at > now()`,
      scopeParams(scope),
    );
    if (!row) continue;
    if (row.fingerprint !== fingerprint) return { state: 'mismatch', operationId: row.operation_id };
    if (row.state === 'in_flight') return { state: 'in_flight' };
    return { state: 'done', status: row.status!, headers: row.headers ?? {}, body: row.body };
  }
  throw new Error(`claimKey: the Idempotency-Key of user ${scope.userId} stayed contended`);
}

/** Stores the claimed request's 2xx answer for replays (a claim taken over since is left alone). */
export async function completeKey(
  em: EntityManager,
  scope: KeyScope,
  owner: string,
  answer: StoredAnswer,
): Promise<void> {
  await em.execute(
    `update idempotency_keys set state = 'done', status = ?, headers = ?::jsonb, body = ?, locked_until = null
     where ${WHERE} and owner = ? and state = 'in_flight'`,
    [answer.status, JSON.stringify(answer.headers), answer.body, ...scopeParams(scope), owner],
  );
}

/** Forgets the claim (its request answered an error): a corrected retry with the key runs anew. */
export async function releaseKey(em: EntityManager, scope: KeyScope, owner: string): Promise<void> {
  await em.execute(`delete from idempotency_keys where ${WHERE} and owner = ? and state = 'in_flight'`, [
    ...scopeParams(scope),
    owner,
  ]);
}

/** Extends the lease of a claim whose request is still running; false when it is no longer this claim. */
export async function renewKey(em: EntityManager, scope: KeyScope, owner: string): Promise<boolean> {
  const r = await em.execute<{ owner: string }[]>(
    `update idempotency_keys set locked_until = now() + make_interval(secs => ?)
     where ${WHERE} and owner = ? and state = 'in_flight' returning owner`,
    [IN_FLIGHT_LEASE_SECONDS, ...scopeParams(scope), owner],
  );
  return r.length > 0;
}

/** Deletes up to `limit` keys past their TTL (the hourly purge, activities/maintenance.ts, runs it in batches). */
export const PURGE_EXPIRED_KEYS_SQL = `delete from idempotency_keys where (user_id, workspace_id, key) in
  (select user_id, workspace_id, key from idempotency_keys where expires_at < now() limit ?)`;
