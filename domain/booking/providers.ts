// Booking-provider connections of a workspace (docs/meetings.md "Booking providers"): `scheduler`
// with an API key checked at the provider before it is saved, OAuth providers through a state bound
// to the user who started (single use, 10 minutes, PKCE), credentials sealed (lib/crypto.ts) and only
// shown masked; a re-check of the stored credentials; our webhook registered at the provider with a
// secret of its own; disconnection (meetings stay). Owners and admins manage them; everyone reads.
import type { EntityManager } from '@mikro-orm/postgresql';
import { BookingConnection, type IBookingConnection } from '../../db/entities/BookingConnection.js';
import { Workspace } from '../../db/entities/Workspace.js';
import {
  BookingError,
  isBookingProvider,
  type BookingCredentials,
  type BookingProvider,
  type BookingProviderName,
  type BookingProviders,
  type ProviderAccount,
} from '../../lib/booking/types.js';
import { decrypt, encrypt, randomSecret } from '../../lib/crypto.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { issuePendingState, requireStillManager, spendPendingState } from '../auth/oauth-pending.js';
import { requireManager } from '../access.js';

/** What the booking domain needs from its process: the providers, the sealing key and our public URL. */
export interface BookingDeps {
  providers: BookingProviders;
  encryptionKey: Buffer;
  publicBaseUrl: string;
}

/** Connections per workspace (each is a provider account; a workspace needs a handful). */
export const MAX_CONNECTIONS = 20;

export const onlyManagers = (actor: Actor) => requireManager(actor, 'booking providers');

/** A secret as the API shows it: its prefix (up to the first `_`, at most 8 characters) and last 4 characters. */
export function maskSecret(secret: string): string {
  const prefix = /^[A-Za-z0-9]{1,7}_/.exec(secret)?.[0] ?? '';
  return `${prefix}…${secret.slice(-4)}`;
}

export const hookUrl = (deps: Pick<BookingDeps, 'publicBaseUrl'>, connectionId: string) =>
  `${deps.publicBaseUrl.replace(/\/+$/, '')}/hooks/booking/${connectionId}`;
export const callbackUrl = (deps: Pick<BookingDeps, 'publicBaseUrl'>, provider: string) =>
  `${deps.publicBaseUrl.replace(/\/+$/, '')}/oauth/booking/${provider}/callback`;

/** The provider's failure as an API error: 502 `provider_unavailable`, with whether a retry may help. */
export function providerUnavailable(err: unknown): never {
  if (err instanceof BookingError) {
    throw new AppError(502, 'provider_unavailable', `the booking provider failed: ${err.message}`, {
      error_class: err.code,
      retryable: err.retryable,
    });
  }
  throw err;
}

const refusedCredentials = () =>
  conflict(
    'provider_not_connected',
    'the provider refused the stored credentials: reconnect it (POST /api/booking-providers/{id}/verify re-checks them)',
  );

function provider(deps: BookingDeps, name: BookingProviderName): BookingProvider {
  const p = deps.providers.get(name);
  if (!p) throw notFound('booking provider');
  return p;
}

export async function requireConnection(em: EntityManager, actor: Actor, id: string): Promise<IBookingConnection> {
  const c = await em.findOne(BookingConnection, { id, workspace: actor.workspaceId });
  if (!c) throw notFound('booking provider');
  return c;
}

export async function listConnections(
  em: EntityManager,
  actor: Actor,
  page: PageRequest,
): Promise<IBookingConnection[]> {
  const k = keyset(page);
  return em.find(BookingConnection, { workspace: actor.workspaceId, ...k.where }, k.options);
}

export function openCredentials(deps: Pick<BookingDeps, 'encryptionKey'>, c: IBookingConnection): BookingCredentials {
  return JSON.parse(decrypt(c.credentialsSealed, deps.encryptionKey)) as BookingCredentials;
}

/** Records that the provider refused the stored credentials (status `invalid_credentials`). */
export async function markRefused(em: EntityManager, c: IBookingConnection, err: BookingError): Promise<void> {
  c.status = 'invalid_credentials';
  c.statusReason = err.message.slice(0, 300);
  c.lastVerifiedAt = new Date();
  await em.flush();
}

/**
 * The connection's credentials, ready to use: an expired OAuth access token is refreshed first (and
 * the new tokens sealed); `force` refreshes one the provider just refused before its expiry (a
 * revoked or replaced token: the refresh tells which). A refused refresh marks the connection
 * `invalid_credentials` and throws the BookingError.
 */
export async function usableCredentials(
  em: EntityManager,
  deps: BookingDeps,
  c: IBookingConnection,
  now = new Date(),
  opts: { force?: boolean } = {},
): Promise<BookingCredentials> {
  const creds = openCredentials(deps, c);
  if (
    creds.kind !== 'oauth' ||
    !creds.refreshToken ||
    (!opts.force && (!creds.expiresAt || new Date(creds.expiresAt).getTime() - 60_000 > now.getTime()))
  )
    return creds;
  const p = provider(deps, c.provider as BookingProviderName);
  try {
    const t = await p.refresh!(creds.refreshToken);
    const fresh: BookingCredentials = {
      kind: 'oauth',
      accessToken: t.accessToken,
      refreshToken: t.refreshToken ?? creds.refreshToken,
      expiresAt: t.expiresAt?.toISOString() ?? null,
    };
    c.credentialsSealed = encrypt(JSON.stringify(fresh), deps.encryptionKey);
    await em.flush();
    return fresh;
  } catch (err) {
    if (err instanceof BookingError && err.code === 'auth') await markRefused(em, c, err);
    throw err;
  }
}

/**
 * Saves the verified account's connection: a new row, or (the same provider account again) the
 * existing one with the new credentials. One writer per workspace at a time, so the limit holds.
 */
async function saveConnection(
  em: EntityManager,
  workspaceId: string,
  userId: string,
  name: BookingProviderName,
  account: ProviderAccount,
  creds: BookingCredentials,
  deps: BookingDeps,
): Promise<{ connection: IBookingConnection; created: boolean }> {
  const sealed = encrypt(JSON.stringify(creds), deps.encryptionKey);
  const hint = maskSecret(creds.kind === 'api_key' ? creds.apiKey : creds.accessToken);
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`booking-providers:${workspaceId}`]);
    const existing = await tx.findOne(BookingConnection, {
      workspace: workspaceId,
      provider: name,
      accountId: account.accountId,
    });
    const fields = {
      credentialsSealed: sealed,
      credentialHint: hint,
      accountName: account.name?.slice(0, 200) ?? null,
      accountEmail: account.email?.slice(0, 320) ?? null,
      status: 'connected' as const,
      statusReason: null,
      lastVerifiedAt: new Date(),
    };
    if (existing) {
      Object.assign(existing, fields);
      await tx.flush();
      return { connection: existing, created: false };
    }
    if ((await tx.count(BookingConnection, { workspace: workspaceId })) >= MAX_CONNECTIONS) {
      throw conflict(
        'provider_limit_reached',
        `a workspace connects at most ${MAX_CONNECTIONS} booking provider accounts: disconnect one first`,
      );
    }
    const connection = tx.create(BookingConnection, {
      workspace: tx.getReference(Workspace, workspaceId),
      provider: name,
      authKind: creds.kind,
      accountId: account.accountId,
      connectedByUserId: userId,
      ...fields,
    });
    await tx.flush();
    return { connection, created: true };
  });
}

/**
 * Connects `scheduler` with an API key, checked against the provider first (nothing is saved for a
 * refused key: 422 `invalid_credentials`; an unreachable provider: 502).
 */
export async function connectApiKey(
  em: EntityManager,
  actor: Actor,
  deps: BookingDeps,
  apiKey: string,
): Promise<{ connection: IBookingConnection; created: boolean }> {
  assertWritable(actor);
  onlyManagers(actor);
  const creds: BookingCredentials = { kind: 'api_key', apiKey };
  let account: ProviderAccount;
  try {
    account = await provider(deps, 'scheduler').account(creds);
  } catch (err) {
    if (err instanceof BookingError && err.code === 'auth')
      throw new AppError(422, 'invalid_credentials', 'the provider refused this API key');
    providerUnavailable(err);
  }
  return saveConnection(em, actor.workspaceId, actor.userId, 'scheduler', account, creds, deps);
}

/** An OAuth provider by its path name: 404 for an unknown name, 400 `oauth_not_supported` for an API-key provider. */
function oauthProvider(
  deps: BookingDeps,
  name: string,
): BookingProvider & Required<Pick<BookingProvider, 'authorizationUrl' | 'exchangeCode'>> {
  const key = name.toLowerCase();
  if (!isBookingProvider(key) || !deps.providers.get(key)) throw notFound('booking provider');
  const p = provider(deps, key);
  if (p.auth !== 'oauth' || !p.authorizationUrl || !p.exchangeCode) {
    throw badRequest(
      'oauth_not_supported',
      `${key} connects with an API key: POST /api/booking-providers/${key}/api-key`,
    );
  }
  return p as never;
}

export interface OAuthStart {
  provider: BookingProviderName;
  authorizationUrl: string;
  state: string;
  redirectUri: string;
  expiresAt: Date;
}

/**
 * Starts an OAuth connection: a pending state (domain/auth/oauth-pending.ts) bound to the user and
 * workspace that started it, with a PKCE verifier when the provider uses PKCE, and the provider's
 * authorization URL to open.
 */
export async function startOAuthConnection(
  em: EntityManager,
  actor: Actor,
  deps: BookingDeps,
  name: string,
  input: { loginHint?: string },
  now = new Date(),
): Promise<OAuthStart> {
  assertWritable(actor);
  onlyManagers(actor);
  const p = oauthProvider(deps, name);
  const redirectUri = callbackUrl(deps, p.name);
  const { state, codeChallenge, expiresAt } = await issuePendingState(
    em,
    'booking_oauth_states',
    {
      workspaceId: actor.workspaceId,
      userId: actor.userId,
      provider: p.name,
      redirectUri,
      encryptionKey: deps.encryptionKey,
      pkce: p.pkce,
    },
    now,
  );
  const authorizationUrl = p.authorizationUrl({
    state,
    redirectUri,
    codeChallenge,
    loginHint: input.loginHint ?? null,
  });
  return { provider: p.name, authorizationUrl, state, redirectUri, expiresAt };
}

/**
 * Finishes an OAuth connection at the callback: the state must be one we issued for this provider,
 * unused and unexpired (400 `invalid_state`; it is spent either way); the user who started must still
 * manage the workspace (403 `not_assigned`); the code is exchanged with the PKCE verifier (400
 * `oauth_denied` when the provider refuses or the user declined; 502 when it is unreachable).
 */
export async function finishOAuthConnection(
  em: EntityManager,
  deps: BookingDeps,
  name: string,
  q: { code?: string; state?: string; error?: string },
): Promise<{ connection: IBookingConnection; created: boolean }> {
  const p = oauthProvider(deps, name);
  const pending = await spendPendingState(em, 'booking_oauth_states', q.state, p.name, deps.encryptionKey);
  if (q.error) throw badRequest('oauth_denied', `the provider did not authorise the connection: ${q.error}`);
  if (!q.code) throw badRequest('oauth_denied', 'the provider sent no authorization code');
  const { isDemo } = await requireStillManager(em, pending.userId, pending.workspaceId);
  assertWritable({ isDemo });
  let creds: BookingCredentials;
  let account: ProviderAccount;
  try {
    const t = await p.exchangeCode({
      code: q.code,
      redirectUri: pending.redirectUri,
      codeVerifier: pending.codeVerifier,
    });
    creds = {
      kind: 'oauth',
      accessToken: t.accessToken,
      refreshToken: t.refreshToken,
      expiresAt: t.expiresAt?.toISOString() ?? null,
    };
    account = await p.account(creds);
  } catch (err) {
    if (err instanceof BookingError && err.code === 'auth')
      throw badRequest('oauth_denied', err.message.replace(/^[^:]+: [^:]+: /, ''));
    providerUnavailable(err);
  }
  return saveConnection(em, pending.workspaceId, pending.userId, p.name, account, creds, deps);
}

/**
 * Re-checks the stored credentials at the provider: `connected` when accepted (the account's name and
 * email refreshed), `invalid_credentials` with the reason when refused. 502 when it cannot be asked.
 */
export async function verifyConnection(
  em: EntityManager,
  actor: Actor,
  deps: BookingDeps,
  id: string,
): Promise<{ connection: IBookingConnection; ok: boolean; error: string | null }> {
  assertWritable(actor);
  const c = await requireConnection(em, actor, id);
  try {
    const account = await provider(deps, c.provider as BookingProviderName).account(
      await usableCredentials(em, deps, c),
    );
    c.status = 'connected';
    c.statusReason = null;
    c.accountName = account.name?.slice(0, 200) ?? c.accountName;
    c.accountEmail = account.email?.slice(0, 320) ?? c.accountEmail;
    c.lastVerifiedAt = new Date();
    await em.flush();
    return { connection: c, ok: true, error: null };
  } catch (err) {
    if (!(err instanceof BookingError) || err.code !== 'auth') providerUnavailable(err);
    await markRefused(em, c, err);
    return { connection: c, ok: false, error: c.statusReason ?? err.message };
  }
}

/**
 * Registers our hook (`/hooks/booking/<id>`) at the provider with a new signing secret; a second call
 * replaces the subscription and rotates the secret at once. The secret is returned here only.
 * 409 `provider_not_connected` when the credentials were refused.
 */
export async function registerBookingWebhook(
  em: EntityManager,
  actor: Actor,
  deps: BookingDeps,
  id: string,
): Promise<{ connection: IBookingConnection; url: string; secret: string }> {
  assertWritable(actor);
  onlyManagers(actor);
  const c = await requireConnection(em, actor, id);
  const p = provider(deps, c.provider as BookingProviderName);
  if (p.calendarSync)
    throw badRequest(
      'webhook_not_supported',
      'this calendar is read by polling with its sync token (docs/calendar.md): there is no webhook to register; POST /api/booking-providers/{id}/backfill reads it now',
    );
  if (c.status !== 'connected') throw refusedCredentials();
  const secret = randomSecret('whsec_', 32);
  const url = hookUrl(deps, c.id);
  try {
    const creds = await usableCredentials(em, deps, c);
    if (c.webhookId) await p.deleteWebhook(creds, c.webhookId).catch(() => undefined); // replaced below either way
    const { webhookId } = await p.registerWebhook(creds, { url, secret });
    c.webhookId = webhookId.slice(0, 200);
  } catch (err) {
    if (err instanceof BookingError && err.code === 'auth') {
      if (c.status === 'connected') await markRefused(em, c, err);
      throw refusedCredentials();
    }
    providerUnavailable(err);
  }
  c.webhookSecretSealed = encrypt(secret, deps.encryptionKey);
  c.webhookSecretHint = maskSecret(secret);
  c.webhookRegisteredAt = new Date();
  await em.flush();
  return { connection: c, url, secret };
}

/**
 * Disconnects: our subscription at the provider is removed (best effort: a provider that refuses or
 * cannot be reached does not keep the connection, and its later deliveries are refused as unsigned),
 * then the connection, its credentials and its backfills are deleted. Meetings stay (no longer
 * updated by the provider; docs/meetings.md "Disconnecting"); unmatched events stay to be attached.
 */
export async function disconnectConnection(
  em: EntityManager,
  actor: Actor,
  deps: BookingDeps,
  id: string,
): Promise<void> {
  assertWritable(actor);
  onlyManagers(actor);
  const c = await requireConnection(em, actor, id);
  if (c.webhookId) {
    const p = provider(deps, c.provider as BookingProviderName);
    const webhookId = c.webhookId;
    await usableCredentials(em, deps, c)
      .then((creds) => p.deleteWebhook(creds, webhookId))
      .catch(() => undefined);
  }
  await em.nativeDelete(BookingConnection, { id: c.id, workspace: actor.workspaceId });
}

/** The connection a hook call names and its webhook secret; null when there is none (unknown id, never registered). */
export async function hookSecret(
  em: EntityManager,
  deps: Pick<BookingDeps, 'encryptionKey'>,
  id: string,
): Promise<{ connection: IBookingConnection; secret: string } | null> {
  const c = await em.findOne(BookingConnection, { id });
  if (!c?.webhookSecretSealed) return null;
  return { connection: c, secret: decrypt(c.webhookSecretSealed, deps.encryptionKey) };
}
