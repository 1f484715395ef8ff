// The OAuth 2.1 authorization server behind the MCP endpoint (docs/mcp.md): dynamic client
// registration (public clients), authorization codes with PKCE (S256 only), short-lived access
// tokens and rotating refresh tokens. Every secret is stored as SHA-256 only. These tokens
// authenticate `/mcp` and nothing else: `/api` resolves only PATs and session JWTs.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { McpClient, type IMcpClient } from '../../db/entities/McpClient.js';
import { McpGrant } from '../../db/entities/McpGrant.js';
import { McpToken } from '../../db/entities/McpToken.js';
import { randomSecret, safeEqual, sha256Hex } from '../../lib/crypto.js';
import { runtimeSettings } from '../../lib/config.js';
import { isUuid } from '../../lib/ids.js';

export const MCP_SCOPE = 'mcp';
export const ACCESS_PREFIX = 'mcp_at_';
export const REFRESH_PREFIX = 'mcp_rt_';
const CODE_PREFIX = 'mcp_code_';
const CODE_TTL_MS = 60_000;
const MAX_REDIRECT_URIS = 10;

/** Access tokens: 1 hour unless MCP_ACCESS_TOKEN_TTL_SECONDS; refresh tokens: 30 days unless MCP_REFRESH_TOKEN_TTL_SECONDS. */
export const accessTtlSeconds = runtimeSettings.mcpAccessTokenTtlSeconds;
export const refreshTtlSeconds = runtimeSettings.mcpRefreshTokenTtlSeconds;

/** An OAuth error response (RFC 6749 §5.2 / RFC 7591 §3.2.2): `{error, error_description}`. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    description: string,
  ) {
    super(description);
  }
}

// ---------------------------------------------------------------------------------------------
// Dynamic client registration

/**
 * Redirect URIs a public client may register (RFC 8252 / OAuth 2.1): https, http only on a loopback
 * host, or a private-use scheme of a native app (`cursor://…`); never a fragment, never
 * `javascript:`/`data:`/`file:`-like schemes.
 */
export function checkRedirectUri(raw: string): boolean {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  if (raw.length > 2048 || u.hash) return false;
  const scheme = u.protocol.slice(0, -1);
  if (scheme === 'https') return !!u.hostname;
  if (scheme === 'http') return ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  if (['javascript', 'data', 'file', 'blob', 'vbscript', 'about', 'ftp', 'ws', 'wss'].includes(scheme)) return false;
  return /^[a-z][a-z0-9+.-]*$/.test(scheme);
}

export interface ClientMetadataInput {
  redirect_uris?: unknown;
  client_name?: unknown;
  client_uri?: unknown;
  token_endpoint_auth_method?: unknown;
  grant_types?: unknown;
  response_types?: unknown;
  scope?: unknown;
}

export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  client_uri?: string;
  redirect_uris: string[];
  token_endpoint_auth_method: 'none';
  grant_types: string[];
  response_types: string[];
  scope: string;
}

const invalidMetadata = (m: string) => new OAuthError(400, 'invalid_client_metadata', m);

export async function registerClient(em: EntityManager, input: ClientMetadataInput): Promise<RegisteredClient> {
  const uris = input.redirect_uris;
  if (uris === undefined)
    throw new OAuthError(
      400,
      'invalid_redirect_uri',
      'redirect_uris is required: the URIs the authorization server may send the browser back to',
    );
  if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string'))
    throw new OAuthError(400, 'invalid_redirect_uri', 'redirect_uris must be an array of strings');
  if (uris.length === 0 || uris.length > MAX_REDIRECT_URIS)
    throw new OAuthError(
      400,
      'invalid_redirect_uri',
      `redirect_uris must hold 1 to ${MAX_REDIRECT_URIS} URIs (got ${uris.length})`,
    );
  const bad = (uris as string[]).find((u) => !checkRedirectUri(u));
  if (bad !== undefined)
    throw new OAuthError(
      400,
      'invalid_redirect_uri',
      `not an allowed redirect URI (https, http on a loopback host, or a native app's scheme): ${bad.slice(0, 200)}`,
    );
  const method = input.token_endpoint_auth_method ?? 'none';
  if (method !== 'none')
    throw invalidMetadata(
      'only public clients are supported: token_endpoint_auth_method must be "none" (PKCE protects the code)',
    );
  const grants = input.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!Array.isArray(grants) || !grants.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
    throw invalidMetadata('grant_types may contain only authorization_code and refresh_token');
  }
  const responses = input.response_types ?? ['code'];
  if (!Array.isArray(responses) || !responses.every((r) => r === 'code'))
    throw invalidMetadata('response_types may contain only code');
  if (input.scope !== undefined && input.scope !== MCP_SCOPE && input.scope !== '')
    throw new OAuthError(400, 'invalid_client_metadata', `the only scope is "${MCP_SCOPE}"`);
  const name =
    typeof input.client_name === 'string' && input.client_name.trim()
      ? input.client_name.trim().slice(0, 200)
      : 'Unnamed MCP client';
  let clientUri: string | null = null;
  if (input.client_uri !== undefined) {
    if (
      typeof input.client_uri !== 'string' ||
      !/^https?:\/\//.test(input.client_uri) ||
      input.client_uri.length > 2048 ||
      !URL.canParse(input.client_uri)
    ) {
      throw invalidMetadata('client_uri must be an http(s) URL');
    }
    clientUri = input.client_uri;
  }
  const client = em.create(McpClient, { clientName: name, clientUri, redirectUris: uris as string[] });
  await em.flush();
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    client_name: name,
    ...(clientUri ? { client_uri: clientUri } : {}),
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: 'none',
    grant_types: grants as string[],
    response_types: ['code'],
    scope: MCP_SCOPE,
  };
}

export async function findClient(em: EntityManager, clientId: unknown): Promise<IMcpClient | null> {
  return typeof clientId === 'string' && isUuid(clientId) ? em.findOne(McpClient, clientId.toLowerCase()) : null;
}

// ---------------------------------------------------------------------------------------------
// Authorization requests

export interface AuthorizationRequest {
  client: IMcpClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  scope: string;
  resource: string;
}

/**
 * Validates an authorization request. Problems with the client or its redirect URI are `fatal` (shown
 * to the user, never redirected: an unverified redirect is an open redirector); the others are sent
 * back to the client's redirect URI as `error=…`.
 */
export async function checkAuthorizationRequest(
  em: EntityManager,
  q: Record<string, string | undefined>,
  resourceUrl: string,
): Promise<
  | { ok: AuthorizationRequest }
  | { fatal: string }
  | { redirect: string; error: string; description: string; state?: string }
> {
  if (!q.client_id)
    return { fatal: 'The request has no client_id: the application must register and send its client_id.' };
  const client = await findClient(em, q.client_id);
  if (!client)
    return {
      fatal:
        'Unknown client_id: no application is registered under it (it may have been registered with another server). Register it first.',
    };
  if (q.redirect_uri === undefined && client.redirectUris.length !== 1) {
    return {
      fatal: 'The request has no redirect_uri, and the client registered several: it must say which one to return to.',
    };
  }
  const redirectUri = q.redirect_uri ?? client.redirectUris[0];
  if (!client.redirectUris.includes(redirectUri))
    return { fatal: 'The redirect_uri does not exactly match any redirect URI the client registered.' };
  const back = (error: string, description: string) => ({ redirect: redirectUri, error, description, state: q.state });
  if (q.response_type !== 'code') {
    return q.response_type
      ? back(
          'unsupported_response_type',
          `response_type ${JSON.stringify(q.response_type.slice(0, 100))} is not supported: only code`,
        )
      : back('invalid_request', 'response_type is required (code)');
  }
  if (!q.code_challenge) return back('invalid_request', 'code_challenge (PKCE) is required');
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(q.code_challenge))
    return back(
      'invalid_request',
      'code_challenge must be 43-128 characters of A-Z a-z 0-9 . _ ~ - (the base64url SHA-256 of the verifier)',
    );
  if (q.code_challenge_method === undefined)
    return back('invalid_request', 'code_challenge_method is required and must be S256');
  if (q.code_challenge_method !== 'S256')
    return back(
      'invalid_request',
      `code_challenge_method ${JSON.stringify(q.code_challenge_method.slice(0, 100))} is not supported: only S256`,
    );
  const scopes = (q.scope ?? '').split(' ').filter(Boolean);
  if (scopes.some((s) => s !== MCP_SCOPE)) return back('invalid_scope', `the only scope is "${MCP_SCOPE}"`);
  if (q.resource !== undefined && q.resource.replace(/\/+$/, '') !== resourceUrl)
    return back('invalid_target', `resource must be ${resourceUrl}`);
  if (q.state !== undefined && q.state.length > 1000)
    return back('invalid_request', `state is longer than 1000 characters (${q.state.length})`);
  return {
    ok: {
      client,
      redirectUri,
      state: q.state,
      codeChallenge: q.code_challenge,
      scope: MCP_SCOPE,
      resource: resourceUrl,
    },
  };
}

/** The user said yes: a single-use authorization code (60 s) bound to the client, redirect URI and PKCE challenge. */
export async function issueCode(
  em: EntityManager,
  req: AuthorizationRequest,
  user: { userId: string; workspaceId: string },
): Promise<string> {
  const code = randomSecret(CODE_PREFIX);
  em.create(McpGrant, {
    client: req.client.id,
    user: user.userId,
    workspace: user.workspaceId,
    scope: req.scope,
    resource: req.resource,
    redirectUri: req.redirectUri,
    codeHash: sha256Hex(code),
    codeChallenge: req.codeChallenge,
    codeExpiresAt: new Date(Date.now() + CODE_TTL_MS),
  });
  await em.flush();
  return code;
}

// ---------------------------------------------------------------------------------------------
// Token endpoint

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

async function issueTokens(em: EntityManager, grantId: string): Promise<TokenResponse> {
  const access = randomSecret(ACCESS_PREFIX);
  const refresh = randomSecret(REFRESH_PREFIX);
  const now = Date.now();
  em.create(McpToken, {
    grant: grantId,
    kind: 'access',
    tokenHash: sha256Hex(access),
    expiresAt: new Date(now + accessTtlSeconds() * 1000),
  });
  em.create(McpToken, {
    grant: grantId,
    kind: 'refresh',
    tokenHash: sha256Hex(refresh),
    expiresAt: new Date(now + refreshTtlSeconds() * 1000),
  });
  await em.flush();
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: accessTtlSeconds(),
    refresh_token: refresh,
    scope: MCP_SCOPE,
  };
}

const invalidGrant = (m: string) => new OAuthError(400, 'invalid_grant', m);
const revokeGrant = (em: EntityManager, grantId: string) =>
  em.nativeUpdate(McpGrant, { id: grantId, revokedAt: null }, { revokedAt: new Date() });

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** authorization_code: the code once, with the verifier of its challenge, for the client and redirect URI it was issued to. */
export async function exchangeCode(
  em: EntityManager,
  p: Record<string, string | undefined>,
  resourceUrl: string,
): Promise<TokenResponse> {
  const missing = (['code', 'code_verifier', 'client_id'] as const).filter((k) => !p[k]);
  if (missing.length)
    throw new OAuthError(
      400,
      'invalid_request',
      `missing parameter${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
    );
  const [code, verifier, clientId] = [p.code!, p.code_verifier!, p.client_id!];
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier))
    throw new OAuthError(400, 'invalid_request', 'code_verifier must be 43-128 characters of A-Z a-z 0-9 . _ ~ -');
  const grant = await em.findOne(McpGrant, { codeHash: sha256Hex(code) });
  if (!grant) throw invalidGrant('unknown authorization code');
  // Claim the code atomically (autocommit): a code presented twice revokes what the first use issued.
  const claimed = await em.nativeUpdate(McpGrant, { id: grant.id, codeUsedAt: null }, { codeUsedAt: new Date() });
  if (claimed === 0) {
    await revokeGrant(em, grant.id);
    throw invalidGrant(
      'the authorization code was already presented once (codes are single use, even after a failed attempt); its grant and any tokens issued from it are revoked',
    );
  }
  if (grant.revokedAt) throw invalidGrant('the authorization code belongs to a revoked grant');
  if (grant.codeExpiresAt <= new Date())
    throw invalidGrant(`the authorization code expired (codes are valid for ${CODE_TTL_MS / 1000} s)`);
  if (grant.client.id !== clientId.toLowerCase())
    throw invalidGrant('the authorization code was issued to another client (client_id differs)');
  if (p.redirect_uri !== undefined && p.redirect_uri !== grant.redirectUri)
    throw invalidGrant('redirect_uri differs from the one of the authorization request');
  if (p.resource !== undefined && p.resource.replace(/\/+$/, '') !== resourceUrl)
    throw new OAuthError(400, 'invalid_target', `resource must be ${resourceUrl}`);
  if (!safeEqual(s256(verifier), grant.codeChallenge))
    throw invalidGrant('code_verifier does not match the code_challenge (PKCE)');
  return issueTokens(em, grant.id);
}

/** refresh_token: single use; the new pair replaces it. Presenting a spent one revokes the grant (token theft). */
export async function refreshTokens(em: EntityManager, p: Record<string, string | undefined>): Promise<TokenResponse> {
  const missing = (['refresh_token', 'client_id'] as const).filter((k) => !p[k]);
  if (missing.length)
    throw new OAuthError(
      400,
      'invalid_request',
      `missing parameter${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
    );
  const refreshToken = p.refresh_token!;
  // A wrong scope is the request's fault, not the token's: refused before the token is spent.
  if (p.scope !== undefined && p.scope !== '' && p.scope !== MCP_SCOPE)
    throw new OAuthError(400, 'invalid_scope', `the only scope is "${MCP_SCOPE}"`);
  const row = await em.findOne(
    McpToken,
    { tokenHash: sha256Hex(refreshToken), kind: 'refresh' },
    { populate: ['grant'] },
  );
  if (!row)
    throw invalidGrant(
      refreshToken.startsWith(ACCESS_PREFIX)
        ? 'that is an access token (mcp_at_…), not a refresh token (mcp_rt_…)'
        : 'unknown refresh token',
    );
  const grant = row.grant.getEntity();
  if (grant.client.id !== p.client_id!.toLowerCase())
    throw invalidGrant('the refresh token was issued to another client (client_id differs)');
  const claimed = await em.nativeUpdate(McpToken, { id: row.id, usedAt: null }, { usedAt: new Date() });
  if (claimed === 0) {
    await revokeGrant(em, grant.id);
    throw invalidGrant('the refresh token was already used; the grant has been revoked');
  }
  if (grant.revokedAt) throw invalidGrant('the grant of this refresh token was revoked; authorize again');
  if (row.expiresAt <= new Date()) throw invalidGrant('the refresh token expired; authorize again');
  return issueTokens(em, grant.id);
}

// ---------------------------------------------------------------------------------------------
// The MCP endpoint's bearer check

export interface McpPrincipal {
  grantId: string;
  clientId: string;
  clientName: string;
  userId: string;
  workspaceId: string;
  ownerId: string;
  expiresAt: Date;
}

const ACCESS_SQL = `
select g.id as grant_id, g.client_id, c.client_name, g.user_id, g.workspace_id, w.owner_id, t.expires_at
from mcp_tokens t join mcp_grants g on g.id = t.grant_id join mcp_clients c on c.id = g.client_id join workspaces w on w.id = g.workspace_id
where t.token_hash = ? and t.kind = 'access' and t.expires_at > now() and g.revoked_at is null`;

/** Resolves an MCP access token (live, of a grant not revoked), or null. One statement. */
export async function resolveMcpToken(em: EntityManager, token: string): Promise<McpPrincipal | null> {
  if (!token.startsWith(ACCESS_PREFIX) || token.length > 200) return null;
  const [r] = (await em.getConnection().execute(ACCESS_SQL, [sha256Hex(token)])) as Record<string, any>[];
  if (!r) return null;
  return {
    grantId: r.grant_id,
    clientId: r.client_id,
    clientName: r.client_name,
    userId: r.user_id,
    workspaceId: r.workspace_id,
    ownerId: r.owner_id,
    expiresAt: new Date(r.expires_at),
  };
}
