// The OAuth tokens of mailboxes connected with Google or Microsoft, looked after in one place
// (docs/email.md "Connecting with Google or Microsoft"). The mail connector asks `mailTokenSource`
// for an account's access token before each use (a send, a Sent lookup, the sync's INBOX); the
// answer is the stored token while it has more than REFRESH_AHEAD_MS to live, else a new one.
//
// - **Once across all processes.** The refresh runs in a transaction holding the account's token row
//   (`select … for update`): a second process (or call) waits on the lock, then finds the new token
//   and uses it instead of refreshing again. Microsoft rotates refresh tokens, so two racing refreshes
//   would otherwise spend the same refresh token and one of them would store a dead one.
// - **Stored sealed** (lib/crypto.ts, the service key), like a password mailbox's credentials.
// - **`invalid_grant`** (revoked consent, a changed password, a refresh token expired for good): the
//   row is marked revoked and the account `disconnected` with reason `oauth_revoked` through
//   `applyAccountStatus` (the `account.disconnected` event and notification, sends held `not_connected`
//   by the send-time rule), and MailConnectError `oauth_revoked` is thrown. Reconnecting through the
//   OAuth flow replaces the row.
// - **A network failure, a 5xx or a 429** at the token endpoint is retried (lib/connectors/mailbox/oauth.ts,
//   then by the activity: ConnectorError `unavailable`) and never disconnects.
import type { EntityManager } from '@mikro-orm/postgresql';
import { mailConnectorAccountId } from '../../lib/connectors/mailbox/account.js';
import {
  MailOAuthError,
  type MailAccessToken,
  type MailOAuthClient,
  type MailOAuthProvider,
  type MailOAuthTokens,
  type MailTokenSource,
} from '../../lib/connectors/mailbox/oauth.js';
import { MailConnectError } from '../../lib/connectors/mailbox/settings.js';
import { ConnectorError } from '../../lib/connectors/types.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { logger } from '../../lib/logger.js';
import { applyAccountStatus } from '../accounts/status.js';

/** A token with less than this left (or half its lifetime, when shorter) is replaced before use (a send or a login must not outlive it). */
export const REFRESH_AHEAD_MS = 5 * 60_000;

interface Sealed {
  access_token: string;
  refresh_token: string;
}

interface Row {
  provider: MailOAuthProvider;
  tokens_sealed: string;
  expires_at: string | Date;
  /** When the stored access token was issued (its lifetime: until expires_at). */
  issued_at: string | Date;
  revoked_at: string | Date | null;
}

export interface MailTokenDeps {
  /** A fresh EntityManager per call (the connector is called from anywhere in the process). */
  em: () => EntityManager;
  client: MailOAuthClient;
  encryptionKey: Buffer;
  /** Replace a token with less than this to live (default REFRESH_AHEAD_MS). */
  refreshAheadMs?: number;
}

/** Stores (or replaces) an account's tokens after the OAuth callback's exchange. */
export async function saveMailTokens(
  em: EntityManager,
  encryptionKey: Buffer,
  accountId: string,
  provider: MailOAuthProvider,
  tokens: MailOAuthTokens,
): Promise<void> {
  const sealed = encrypt(
    JSON.stringify({ access_token: tokens.accessToken, refresh_token: tokens.refreshToken ?? '' } satisfies Sealed),
    encryptionKey,
  );
  await em.execute(
    `insert into mailbox_oauth_tokens (account_id, provider, tokens_sealed, expires_at, refreshed_at, refreshes, revoked_at, created_at, updated_at)
     values (?, ?, ?, ?, null, 0, null, now(), now())
     on conflict (account_id) do update set provider = excluded.provider, tokens_sealed = excluded.tokens_sealed,
       expires_at = excluded.expires_at, refreshed_at = null, refreshes = 0, revoked_at = null, updated_at = now()`,
    [accountId, provider, sealed, tokens.expiresAt],
  );
}

const revoked = (accountId: string, why: string) =>
  new MailConnectError(
    'oauth_revoked',
    null,
    `the OAuth grant of mailbox ${accountId} was revoked or has expired (${why}): connect it again with Google or Microsoft`,
  );

/** The access token source the mail connector is given (lib/providers.ts `mailTokens`). */
export function mailTokenSource(deps: MailTokenDeps): MailTokenSource {
  const ahead = deps.refreshAheadMs ?? REFRESH_AHEAD_MS;
  const unseal = (row: Row) => JSON.parse(decrypt(row.tokens_sealed, deps.encryptionKey)) as Sealed;
  const fresh = (row: Row, rejected?: string): MailAccessToken | null => {
    const expiresAt = new Date(row.expires_at);
    // Replaced with REFRESH_AHEAD_MS left, or half its lifetime for a token that lives shorter.
    const lifetime = expiresAt.getTime() - new Date(row.issued_at).getTime();
    if (expiresAt.getTime() - Date.now() <= Math.min(ahead, lifetime / 2)) return null;
    const { access_token } = unseal(row);
    return access_token === rejected ? null : { accessToken: access_token, expiresAt };
  };
  const read = async (em: EntityManager, accountId: string, lock: boolean): Promise<Row> => {
    const [row] = await em.execute<Row[]>(
      `select provider, tokens_sealed, expires_at, coalesce(refreshed_at, updated_at) as issued_at, revoked_at from mailbox_oauth_tokens where account_id = ?${lock ? ' for update' : ''}`,
      [accountId],
    );
    if (!row) throw revoked(accountId, 'no tokens stored');
    if (row.revoked_at) throw revoked(accountId, 'found revoked before');
    return row;
  };

  return async (accountId, opts = {}) => {
    const em = deps.em();
    // The common case: the stored token has time left; no lock, no request.
    const current = fresh(await read(em, accountId, false), opts.rejected);
    if (current) return current;

    let gone: MailOAuthError | null = null;
    const out = await em.transactional(async (tx) => {
      // Bounded: a refresh that hangs holds the lock for at most the token request's deadline.
      await tx.execute(`set local lock_timeout = '60s'`);
      const row = await read(tx as EntityManager, accountId, true);
      // Another process refreshed while this one waited for the lock: its token is the answer.
      const refreshed = fresh(row, opts.rejected);
      if (refreshed) return refreshed;
      const sealed = unseal(row);
      let t: MailOAuthTokens;
      try {
        t = await deps.client.refresh(row.provider, sealed.refresh_token);
      } catch (err) {
        if (err instanceof MailOAuthError && err.kind === 'invalid_grant') {
          await tx.execute(
            `update mailbox_oauth_tokens set revoked_at = now(), updated_at = now() where account_id = ?`,
            [accountId],
          );
          gone = err;
          return null;
        }
        // Never a disconnection: retried (here up to 3 times, then by the caller's activity).
        const message = err instanceof Error ? err.message : String(err);
        logger.warn({ accountId, err: message }, 'mail oauth: the access token was not refreshed');
        throw new ConnectorError('mail', 'unavailable', `the access token could not be refreshed: ${message}`);
      }
      // A rotated refresh token replaces the old one in the same commit; without one, the old one stays.
      const next: Sealed = { access_token: t.accessToken, refresh_token: t.refreshToken ?? sealed.refresh_token };
      await tx.execute(
        `update mailbox_oauth_tokens set tokens_sealed = ?, expires_at = ?, refreshed_at = now(), refreshes = refreshes + 1, updated_at = now() where account_id = ?`,
        [encrypt(JSON.stringify(next), deps.encryptionKey), t.expiresAt, accountId],
      );
      return { accessToken: t.accessToken, expiresAt: t.expiresAt };
    });
    if (out) return out;
    // The grant is gone: the account is disconnected (transition only: one event however many callers).
    await applyAccountStatus(
      deps.em(),
      {
        connectorAccountId: mailConnectorAccountId(accountId),
        state: 'disconnected',
        reason: 'oauth_revoked',
        address: null,
      },
      'check',
    );
    throw revoked(accountId, gone ? (gone as MailOAuthError).message : 'invalid_grant');
  };
}
