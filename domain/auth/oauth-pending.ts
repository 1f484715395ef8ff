// Pending OAuth authorizations started by a user (booking providers, the partner CRM): a random
// `state` stored as SHA-256 with the user and workspace that started it and the PKCE verifier
// (sealed), single use, short-lived; spent atomically at the callback. Tables of this shape:
// booking_oauth_states, partner_oauth_states (id, workspace_id, user_id, provider, state_hash,
// code_verifier_sealed, redirect_uri, expires_at, used_at, created_at).
import type { EntityManager } from '@mikro-orm/postgresql';
import { decrypt, encrypt, randomSecret, sha256Hex } from '../../lib/crypto.js';
import { uuidv7 } from '../../lib/ids.js';
import { pkceChallenge } from '../../lib/oauth-pkce.js';
import { AppError, badRequest } from '../errors.js';

export type PendingTable = 'booking_oauth_states' | 'partner_oauth_states';

export const PENDING_TTL_MS = 10 * 60_000;

export interface IssuedState<Challenge extends string | null = string> {
  state: string;
  codeChallenge: Challenge;
  expiresAt: Date;
}

/** A challenge whenever the caller may not have turned PKCE off, so PKCE-only callers need no null check. */
type ChallengeOf<Pkce extends boolean> = Pkce extends true ? string : string | null;

/**
 * Stores a new pending authorization and returns its state and PKCE challenge (S256). A provider
 * without PKCE (`pkce: false`) gets no verifier stored and a null challenge.
 */
export async function issuePendingState<Pkce extends boolean = true>(
  em: EntityManager,
  table: PendingTable,
  input: {
    workspaceId: string;
    userId: string;
    provider: string;
    redirectUri: string;
    encryptionKey: Buffer;
    pkce?: Pkce;
  },
  now = new Date(),
): Promise<IssuedState<ChallengeOf<Pkce>>> {
  const state = randomSecret('', 32);
  const verifier = input.pkce === false ? null : randomSecret('', 48);
  const expiresAt = new Date(now.getTime() + PENDING_TTL_MS);
  // Spent and expired states of the workspace are of no use any more.
  await em.execute(`delete from ${table} where workspace_id = ? and (used_at is not null or expires_at < now())`, [
    input.workspaceId,
  ]);
  await em.execute(
    `insert into ${table} (id, workspace_id, user_id, provider, state_hash, code_verifier_sealed, redirect_uri, expires_at, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, now())`,
    [
      uuidv7(),
      input.workspaceId,
      input.userId,
      input.provider,
      sha256Hex(state),
      verifier ? encrypt(verifier, input.encryptionKey) : null,
      input.redirectUri,
      expiresAt,
    ],
  );
  return { state, codeChallenge: (verifier ? pkceChallenge(verifier) : null) as ChallengeOf<Pkce>, expiresAt };
}

export interface SpentState {
  workspaceId: string;
  userId: string;
  codeVerifier: string | null;
  redirectUri: string;
}

/**
 * Spends a state at the callback: one we issued for `provider`, unused and unexpired, else 400
 * `invalid_state`. It is spent whatever happens next.
 */
export async function spendPendingState(
  em: EntityManager,
  table: PendingTable,
  state: string | undefined,
  provider: string,
  encryptionKey: Buffer,
): Promise<SpentState> {
  if (!state) throw badRequest('invalid_state', 'the state parameter is missing');
  const [row] = await em.execute<
    { workspace_id: string; user_id: string; code_verifier_sealed: string | null; redirect_uri: string }[]
  >(
    `update ${table} set used_at = now() where state_hash = ? and provider = ? and used_at is null and expires_at > now()
     returning workspace_id, user_id, code_verifier_sealed, redirect_uri`,
    [sha256Hex(state), provider],
  );
  if (!row) throw badRequest('invalid_state', 'the state is unknown, spent or expired: start again');
  return {
    workspaceId: row.workspace_id,
    userId: row.user_id,
    codeVerifier: row.code_verifier_sealed ? decrypt(row.code_verifier_sealed, encryptionKey) : null,
    redirectUri: row.redirect_uri,
  };
}

/** The user who started must still manage the workspace (owner or admin): else 403 `not_assigned`. Returns whether it is a Demo workspace. */
export async function requireStillManager(
  em: EntityManager,
  userId: string,
  workspaceId: string,
): Promise<{ isDemo: boolean }> {
  const [who] = await em.execute<{ manager: boolean; demo: boolean }[]>(
    `select (w.owner_id = ? or exists (select 1 from team_members m where m.workspace_id = w.id and m.user_id = ? and m.role in ('owner', 'admin'))) as manager, w.is_demo as demo
       from workspaces w where w.id = ?`,
    [userId, userId, workspaceId],
  );
  if (!who?.manager)
    throw new AppError(403, 'not_assigned', 'the user who started this no longer manages the workspace');
  return { isDemo: who.demo };
}
