// Connecting an email account with Google or Microsoft (docs/email.md "Connecting with Google or
// Microsoft"): the start answers the provider's authorization URL (authorization code + PKCE S256);
// the callback exchanges the code, reads the address the grant belongs to, checks SMTP and IMAP with
// XOAUTH2, seals the settings and the tokens, and marks the account connected on the mail connector.
//
// The `state` is signed and expires after 10 minutes (lib/oauth.ts `signState`): it names the account,
// its workspace and the user who started, and carries the PKCE verifier sealed with the service key, so
// nothing is stored before the callback. The user must still manage the workspace when the browser
// comes back; a second callback with the same state meets the connected account (409).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PlatformAccount, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { MAIL_CONNECTOR, mailConnectorAccountId } from '../../lib/connectors/mailbox/account.js';
import {
  MAIL_OAUTH_PROVIDERS,
  MailOAuthError,
  missingMailOAuthSettings,
  oauthMailCredentials,
  type MailOAuthClient,
  type MailOAuthProvider,
} from '../../lib/connectors/mailbox/oauth.js';
import { MailConnectError, parseOAuthMailSettings, type MailSettings } from '../../lib/connectors/mailbox/settings.js';
import { decrypt, encrypt, randomSecret } from '../../lib/crypto.js';
import { readSignedState, signState, type StateKeys } from '../../lib/oauth.js';
import { pkceChallenge } from '../../lib/oauth-pkce.js';
import { requireManager } from '../access.js';
import { requireAccount } from '../accounts/accounts.js';
import { requireStillManager } from '../auth/oauth-pending.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { observedAt } from '../event-order.js';
import type { Actor } from '../identity.js';
import { saveMailTokens } from './oauth-tokens.js';

const PURPOSE = 'mailbox-oauth-state';
const NAMES: Record<MailOAuthProvider, string> = { google: 'Google', microsoft: 'Microsoft' };

export interface MailOAuthDeps {
  client: MailOAuthClient;
  /** The session JWT keys: they sign the state. */
  stateKeys: StateKeys;
  encryptionKey: Buffer;
  /** Checks SMTP and IMAP with the new token before anything is stored (the mail connector's `verifyOAuth`). */
  verify: (accountId: string, settings: MailSettings) => Promise<void>;
}

export const isMailOAuthProvider = (p: string): p is MailOAuthProvider =>
  (MAIL_OAUTH_PROVIDERS as readonly string[]).includes(p);

/** 400 `oauth_not_configured` naming the variables to set, when `provider` has no client. */
export function requireConfigured(client: MailOAuthClient, provider: MailOAuthProvider): void {
  const missing = missingMailOAuthSettings(client.config, provider);
  if (missing.length)
    throw badRequest(
      'oauth_not_configured',
      `connecting a mailbox with ${NAMES[provider]} is not configured on this server: set ${missing.join(' and ')} (docs/email.md "Connecting with Google or Microsoft")`,
      { provider, missing },
    );
}

export interface MailOAuthStart {
  authorizationUrl: string;
  state: string;
  redirectUri: string;
  expiresAt: Date;
}

/**
 * The authorization URL for connecting the email account `accountId` with `provider`. 400
 * `not_email_account` for a network account, `oauth_not_configured` without the provider's client;
 * 409 `already_connected`.
 */
export async function startMailOAuth(
  em: EntityManager,
  actor: Actor,
  deps: MailOAuthDeps,
  accountId: string,
  provider: MailOAuthProvider,
  loginHint?: string | null,
): Promise<MailOAuthStart> {
  assertWritable(actor);
  requireManager(actor, 'sender accounts');
  const account = await requireAccount(em, actor, accountId);
  if (account.channel !== 'email')
    throw badRequest('not_email_account', 'only an email account connects a mailbox with Google or Microsoft');
  requireConfigured(deps.client, provider);
  if (account.status === 'connected')
    throw conflict(
      'already_connected',
      'the account is connected; delete it or wait for a disconnection to connect again',
    );
  const verifier = randomSecret('', 48);
  const { state, expiresAt } = await signState(deps.stateKeys, PURPOSE, {
    provider,
    account_id: account.id,
    workspace_id: actor.workspaceId,
    user_id: actor.userId,
    verifier: encrypt(verifier, deps.encryptionKey),
  });
  return {
    authorizationUrl: deps.client.authorizationUrl(provider, {
      state,
      codeChallenge: pkceChallenge(verifier),
      loginHint: loginHint ?? account.address ?? null,
    }),
    state,
    redirectUri: deps.client.provider(provider).redirectUri,
    expiresAt,
  };
}

export interface CallbackQuery {
  code?: string;
  state?: string;
  error?: string;
  error_description?: string;
}

/**
 * Finishes a connection at the provider's callback. 400 `invalid_state` (forged, expired, another
 * provider's), `oauth_denied` (the user declined, or the code was refused), a mail check's reason
 * (`auth_failed`, `host_unreachable`, `tls_failed`, `blocked_destination`) with its side; 403
 * `not_assigned` when the user no longer manages the workspace; 404 when the account is gone; 409
 * `already_connected`; 502 `provider_unavailable` when the token endpoint did not answer.
 */
export async function finishMailOAuth(
  em: EntityManager,
  deps: MailOAuthDeps,
  provider: MailOAuthProvider,
  query: CallbackQuery,
): Promise<IPlatformAccount> {
  if (!query.state) throw badRequest('invalid_state', 'the state parameter is missing');
  let claims: Record<string, unknown>;
  try {
    claims = await readSignedState(deps.stateKeys, PURPOSE, query.state);
  } catch {
    throw badRequest('invalid_state', 'the state is not one we issued, or it expired: start again');
  }
  if (claims.provider !== provider) throw badRequest('invalid_state', 'the state was issued for another provider');
  if (query.error)
    throw badRequest(
      'oauth_denied',
      `${NAMES[provider]} did not grant access: ${query.error}${query.error_description ? ` (${query.error_description.slice(0, 300)})` : ''}`,
    );
  if (!query.code) throw badRequest('oauth_denied', `${NAMES[provider]} sent no authorization code`);
  requireConfigured(deps.client, provider);
  const workspaceId = String(claims.workspace_id);
  const { isDemo } = await requireStillManager(em, String(claims.user_id), workspaceId);
  if (isDemo) throw new AppError(403, 'demo_read_only', 'the Demo workspace is read-only');
  const account = await em.findOne(PlatformAccount, { id: String(claims.account_id), workspace: workspaceId });
  if (!account) throw notFound('platform account');
  if (account.status === 'connected')
    throw conflict(
      'already_connected',
      'the account is connected; delete it or wait for a disconnection to connect again',
    );

  const askedAt = observedAt(new Date(), 'connect');
  const tokens = await deps.client
    .exchangeCode(provider, { code: query.code, codeVerifier: decrypt(String(claims.verifier), deps.encryptionKey) })
    .catch((err: unknown) => {
      if (err instanceof MailOAuthError && (err.kind === 'invalid_grant' || err.kind === 'refused'))
        throw badRequest('oauth_denied', err.message);
      if (err instanceof MailOAuthError)
        throw new AppError(502, 'provider_unavailable', err.message, { retryable: err.kind === 'unavailable' });
      throw err;
    });
  const email = tokens.email!;
  const credentials = oauthMailCredentials(deps.client.config, provider, email);
  const settings = parseOAuthMailSettings(credentials);
  const withToken = (e: MailSettings['smtp']) => ({ ...e, accessToken: tokens.accessToken });
  await deps
    .verify(account.id, { ...settings, smtp: withToken(settings.smtp), imap: withToken(settings.imap) })
    .catch((err: unknown) => {
      if (err instanceof MailConnectError) throw new AppError(400, err.reason, err.message, { side: err.side });
      throw err;
    });

  await em.transactional(async (tx) => {
    const a = await tx.findOneOrFail(PlatformAccount, account.id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (a.status === 'connected') throw conflict('already_connected', 'the account was connected meanwhile');
    // Another mailbox behind the same account: its sync starts afresh (UIDs are per mailbox).
    if (a.address && a.address !== email) await tx.execute(`delete from mailbox_cursors where account_id = ?`, [a.id]);
    a.connectorAccountId = mailConnectorAccountId(a.id);
    a.connector = MAIL_CONNECTOR;
    a.status = 'connected';
    a.statusEventAt = askedAt.at;
    a.statusEventId = askedAt.id;
    a.credentialsSealed = encrypt(JSON.stringify(credentials), deps.encryptionKey);
    a.connectedAt = new Date();
    a.disconnectedAt = null;
    a.statusReason = null;
    a.warmupStartedAt ??= a.connectedAt;
    a.address = email;
    await tx.flush();
    await saveMailTokens(tx as EntityManager, deps.encryptionKey, a.id, provider, tokens);
  });
  await em.refresh(account);
  return account;
}
