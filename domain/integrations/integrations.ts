// Integrations of a workspace (docs/integrations.md): the partner CRM (installed through OAuth with a
// state bound to the user and workspace, PKCE; synced by `partner-sync:<id>`) and generic
// destinations — a Slack-style incoming webhook (`slack_webhook`: URL + optional secret) and a
// signed JSON webhook (`json_webhook`). Credentials are verified before they are saved, sealed
// (lib/crypto.ts) and only shown masked; `test` sends a test record through the guarded outbound
// client (private destinations refused as for webhooks). Owners and admins manage; everyone reads.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Integration, type IIntegration } from '../../db/entities/Integration.js';
import { Workspace } from '../../db/entities/Workspace.js';
import type { Config } from '../../lib/config.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import {
  checkDestination,
  DestinationError,
  postGuarded,
  type OutboundResult,
  type Resolver,
} from '../../lib/outbound-http.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { PartnerError, type PartnerAdapter, type PartnerTokens } from '../../lib/partner/types.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { issuePendingState, requireStillManager, spendPendingState } from '../auth/oauth-pending.js';
import { signatureHeader } from '../webhooks/webhooks.js';
import { requireManager } from '../access.js';

export const GENERIC_KINDS = ['slack_webhook', 'json_webhook'] as const;
export type GenericKind = (typeof GENERIC_KINDS)[number];
export const PARTNER = 'partner';
export const INTEGRATION_KINDS = [PARTNER, ...GENERIC_KINDS] as const;
export const INTEGRATION_STATUSES = ['active', 'disabled', 'invalid_credentials'] as const;
export type IntegrationStatus = (typeof INTEGRATION_STATUSES)[number];

/** Integrations per workspace. */
export const MAX_INTEGRATIONS = 50;
export const DESTINATION_TIMEOUT_MS = 10_000;
export const SIGNATURE_HEADER = 'X-Integration-Signature';

export interface IntegrationDeps {
  partner: PartnerAdapter;
  config: Pick<Config, 'encryptionKey' | 'publicBaseUrl' | 'outboundAllowHosts'>;
  resolver?: Resolver;
  timeoutMs?: number;
}

type WebhookCredentials = { kind: 'webhook'; url: string; secret: string | null };
type PartnerCredentials = {
  kind: 'partner';
  accessToken: string;
  refreshToken: string | null;
  expiresAt: string | null;
};
type Credentials = WebhookCredentials | PartnerCredentials;

export const isGenericKind = (k: string): k is GenericKind => (GENERIC_KINDS as readonly string[]).includes(k);

export const onlyManagers = (actor: Actor) => requireManager(actor, 'integrations');

export const partnerCallbackUrl = (deps: Pick<IntegrationDeps, 'config'>) =>
  `${deps.config.publicBaseUrl.replace(/\/+$/, '')}/oauth/partner/callback`;

const last4 = (s: string) => s.slice(-4);
/** A destination URL as shown: its origin and the last 4 characters (the rest may be a token). */
export const maskUrl = (url: string) => `${new URL(url).origin}/…${last4(url)}`;
const maskToken = (t: string) => `${/^[A-Za-z0-9]{1,7}_/.exec(t)?.[0] ?? ''}…${last4(t)}`;

/** The masked credentials of a row (stored as JSON in `credential_hint`). */
export function maskedCredentials(i: Pick<IIntegration, 'credentialHint'>): {
  url?: string;
  secret?: string | null;
  access_token?: string;
} {
  if (!i.credentialHint) return {};
  try {
    return JSON.parse(i.credentialHint) as never;
  } catch {
    return {};
  }
}

function hint(creds: Credentials): string {
  return JSON.stringify(
    creds.kind === 'webhook'
      ? { url: maskUrl(creds.url), secret: creds.secret ? `****${last4(creds.secret)}` : null }
      : { access_token: maskToken(creds.accessToken) },
  );
}

const open = (deps: Pick<IntegrationDeps, 'config'>, i: IIntegration): Credentials | null =>
  i.credentialsSealed ? (JSON.parse(decrypt(i.credentialsSealed, deps.config.encryptionKey)) as Credentials) : null;

export async function requireIntegration(em: EntityManager, actor: Actor, id: string): Promise<IIntegration> {
  const i = await em.findOne(Integration, { id, workspace: actor.workspaceId });
  if (!i) throw notFound('integration');
  return i;
}

export async function listIntegrations(
  em: EntityManager,
  actor: Actor,
  page: PageRequest & { kind?: string },
): Promise<IIntegration[]> {
  const k = keyset(page);
  return em.find(
    Integration,
    { workspace: actor.workspaceId, ...(page.kind ? { provider: page.kind } : {}), ...k.where },
    k.options,
  );
}

// ---------------------------------------------------------------------------------------------
// Verification

export interface Verification {
  valid: boolean;
  statusCode: number | null;
  errorClass: string | null;
  error: string | null;
  account: { id: string; name: string | null } | null;
}

function checkUrl(url: string, deps: IntegrationDeps): string {
  try {
    return checkDestination(url, { allowHosts: deps.config.outboundAllowHosts }).url.toString();
  } catch (err) {
    if (err instanceof DestinationError) throw badRequest(err.code, err.message);
    throw err;
  }
}

/** One POST to a generic destination, signed when it has a secret (`X-Integration-Signature: sha256=<hex HMAC of the body>`). */
async function postToDestination(
  deps: IntegrationDeps,
  kind: GenericKind,
  creds: WebhookCredentials,
  payload: { text: string; type: string; data: Record<string, unknown> },
): Promise<OutboundResult> {
  const body = JSON.stringify(
    kind === 'slack_webhook'
      ? { text: payload.text }
      : { type: payload.type, sent_at: new Date().toISOString(), data: payload.data },
  );
  const headers: Record<string, string> = { 'X-Integration-Event': payload.type };
  if (creds.secret) headers[SIGNATURE_HEADER] = signatureHeader(creds.secret, body);
  return postGuarded(creds.url, body, headers, {
    allowHosts: deps.config.outboundAllowHosts,
    resolver: deps.resolver,
    timeoutMs: deps.timeoutMs ?? DESTINATION_TIMEOUT_MS,
  });
}

const fromOutbound = (r: OutboundResult): Verification => ({
  valid: r.success,
  statusCode: r.statusCode,
  errorClass: r.errorClass,
  error: r.error,
  account: null,
});

/** The provider's failure as an API error: 502 `provider_unavailable`. */
function partnerUnavailable(err: unknown): never {
  if (err instanceof PartnerError)
    throw new AppError(502, 'provider_unavailable', `the partner CRM failed: ${err.message}`, {
      error_class: err.code,
      retryable: err.retryable,
    });
  throw err;
}

async function verifyDestination(
  deps: IntegrationDeps,
  kind: GenericKind,
  creds: WebhookCredentials,
): Promise<Verification> {
  return fromOutbound(
    await postToDestination(deps, kind, creds, {
      type: 'integration.verification',
      text: 'Outreach: this destination is being connected (verification message).',
      data: {},
    }),
  );
}

async function verifyPartnerToken(deps: IntegrationDeps, accessToken: string): Promise<Verification> {
  try {
    const a = await deps.partner.account(accessToken);
    return { valid: true, statusCode: null, errorClass: null, error: null, account: { id: a.accountId, name: a.name } };
  } catch (err) {
    if (err instanceof PartnerError && err.code === 'auth')
      return {
        valid: false,
        statusCode: err.details.status ?? null,
        errorClass: 'auth',
        error: err.message,
        account: null,
      };
    partnerUnavailable(err);
  }
}

export type VerifyInput =
  { kind: GenericKind; url: string; secret?: string | null } | { kind: 'partner'; access_token: string };

/** POST /api/integrations/verify: checks the credentials as create would, saves nothing. */
export async function verifyCredentials(
  actor: Actor,
  deps: IntegrationDeps,
  input: VerifyInput,
): Promise<Verification> {
  assertWritable(actor);
  if (input.kind === PARTNER) return verifyPartnerToken(deps, input.access_token);
  const url = checkUrl(input.url, deps);
  return verifyDestination(deps, input.kind, { kind: 'webhook', url, secret: input.secret ?? null });
}

const failedVerification = (v: Verification) =>
  new AppError(
    422,
    'verification_failed',
    `the destination did not accept the verification request: ${v.error ?? 'refused'}`,
    { status_code: v.statusCode, error_class: v.errorClass },
  );

// ---------------------------------------------------------------------------------------------
// Generic integrations: create, update, delete

export async function createIntegration(
  em: EntityManager,
  actor: Actor,
  deps: IntegrationDeps,
  input: { kind: string; name: string; url: string; secret?: string | null },
): Promise<IIntegration> {
  assertWritable(actor);
  onlyManagers(actor);
  if (!isGenericKind(input.kind))
    throw badRequest(
      'oauth_required',
      'the partner CRM is installed through OAuth: POST /api/integrations/partner/install',
    );
  const creds: WebhookCredentials = { kind: 'webhook', url: checkUrl(input.url, deps), secret: input.secret ?? null };
  const v = await verifyDestination(deps, input.kind, creds);
  if (!v.valid) throw failedVerification(v);
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`integrations:${actor.workspaceId}`]);
    if ((await tx.count(Integration, { workspace: actor.workspaceId })) >= MAX_INTEGRATIONS) {
      throw conflict(
        'integration_limit_reached',
        `a workspace has at most ${MAX_INTEGRATIONS} integrations: delete one first`,
      );
    }
    const i = tx.create(Integration, {
      workspace: tx.getReference(Workspace, actor.workspaceId),
      provider: input.kind,
      name: input.name,
      status: 'active',
      credentialsSealed: encrypt(JSON.stringify(creds), deps.config.encryptionKey),
      credentialHint: hint(creds),
      createdByUserId: actor.userId,
      lastVerifiedAt: new Date(),
    });
    await tx.flush();
    return i;
  });
}

/**
 * PUT: renames, enables/disables, and (generic kinds) replaces the URL and/or secret — verified
 * against the destination before anything is saved (`secret: null` removes it).
 */
export async function updateIntegration(
  em: EntityManager,
  actor: Actor,
  deps: IntegrationDeps,
  id: string,
  input: { name?: string; enabled?: boolean; url?: string; secret?: string | null },
): Promise<IIntegration> {
  assertWritable(actor);
  onlyManagers(actor);
  const i = await requireIntegration(em, actor, id);
  const changesCreds = input.url !== undefined || input.secret !== undefined;
  if (changesCreds) {
    if (!isGenericKind(i.provider))
      throw badRequest(
        'invalid_field',
        'url and secret apply to webhook integrations only; reinstall the partner CRM to replace its tokens',
      );
    const prev = open(deps, i) as WebhookCredentials | null;
    const url = input.url !== undefined ? checkUrl(input.url, deps) : prev?.url;
    if (!url) throw badRequest('invalid_field', 'url is required');
    const creds: WebhookCredentials = {
      kind: 'webhook',
      url,
      secret: input.secret !== undefined ? input.secret : (prev?.secret ?? null),
    };
    const v = await verifyDestination(deps, i.provider, creds);
    if (!v.valid) throw failedVerification(v);
    i.credentialsSealed = encrypt(JSON.stringify(creds), deps.config.encryptionKey);
    i.credentialHint = hint(creds);
    i.lastVerifiedAt = new Date();
    if (i.status === 'invalid_credentials') i.status = 'active';
  }
  if (input.name !== undefined) i.name = input.name;
  if (input.enabled === false) {
    i.status = 'disabled';
    i.statusReason = null;
  } else if (input.enabled === true && i.status === 'disabled') {
    i.status = 'active';
  }
  await em.flush();
  return i;
}

/**
 * DELETE: the integration, its sealed credentials and (partner) its cursors, pushes and events go.
 * Webhook subscriptions that referenced it are kept and go on delivering, detached
 * (`integration_id` becomes null); their number is returned.
 */
export async function deleteIntegration(
  em: EntityManager,
  actor: Actor,
  id: string,
): Promise<{ id: string; detachedWebhookSubscriptions: number }> {
  assertWritable(actor);
  onlyManagers(actor);
  const i = await requireIntegration(em, actor, id);
  return em.transactional(async (tx) => {
    const detached = await tx.execute<{ id: string }[]>(
      `update webhook_subscriptions set integration_id = null, updated_at = now() where integration_id = ? returning id`,
      [i.id],
    );
    await tx.execute('delete from integrations where id = ? and workspace_id = ?', [i.id, actor.workspaceId]);
    return { id: i.id, detachedWebhookSubscriptions: detached.length };
  });
}

// ---------------------------------------------------------------------------------------------
// Test

export interface TestOutcome {
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  errorClass: string | null;
  error: string | null;
}

/**
 * POST /api/integrations/{id}/test: a generic destination gets a test record through the guarded
 * client (a URL that now resolves to a private address is refused: `blocked_destination`); the
 * partner CRM is asked who its tokens belong to. The outcome is returned and kept on the row.
 */
export async function testIntegration(
  em: EntityManager,
  actor: Actor,
  deps: IntegrationDeps,
  id: string,
): Promise<{ integration: IIntegration; outcome: TestOutcome }> {
  assertWritable(actor);
  const i = await requireIntegration(em, actor, id);
  let outcome: TestOutcome;
  if (isGenericKind(i.provider)) {
    const creds = open(deps, i) as WebhookCredentials;
    const r = await postToDestination(deps, i.provider, creds, {
      type: 'integration.test',
      text: `Outreach test record for integration “${i.name}”: a lead Ada Lovelace (ada@example.test) replied.`,
      data: {
        integration_id: i.id,
        record: {
          kind: 'lead',
          id: '00000000-0000-7000-8000-000000000000',
          email: 'ada@example.test',
          full_name: 'Ada Lovelace',
          company: 'Analytical Engines',
        },
      },
    });
    outcome = {
      success: r.success,
      statusCode: r.statusCode,
      durationMs: r.durationMs,
      errorClass: r.errorClass,
      error: r.error,
    };
  } else if (i.provider === PARTNER) {
    const started = performance.now();
    try {
      await deps.partner.account(await usablePartnerToken(em, deps, i));
      outcome = {
        success: true,
        statusCode: null,
        durationMs: Math.round(performance.now() - started),
        errorClass: null,
        error: null,
      };
    } catch (err) {
      if (!(err instanceof PartnerError)) throw err;
      outcome = {
        success: false,
        statusCode: err.details.status ?? null,
        durationMs: Math.round(performance.now() - started),
        errorClass: err.code,
        error: err.message,
      };
    }
  } else {
    throw conflict('test_not_supported', `integrations of provider ${i.provider} cannot be tested here`);
  }
  i.lastTestedAt = new Date();
  i.lastTestOk = outcome.success;
  await em.flush();
  return { integration: i, outcome };
}

// ---------------------------------------------------------------------------------------------
// The partner CRM: install (OAuth with PKCE) and its tokens

/** Marks the partner integration refused by the partner (the sync stops until it is reinstalled). */
async function markRefused(em: EntityManager, i: IIntegration, err: Error): Promise<void> {
  i.status = 'invalid_credentials';
  i.statusReason = err.message.slice(0, 300);
  await em.flush();
}

/**
 * The partner's access token, refreshed (and resealed) when it expires within a minute — or at once
 * with `force` (the partner refused it: a 401). The one place tokens are refreshed; a refused refresh
 * (revoked, uninstalled) marks the integration `invalid_credentials` with the partner's reason.
 */
export async function usablePartnerToken(
  em: EntityManager,
  deps: Pick<IntegrationDeps, 'partner' | 'config'>,
  i: IIntegration,
  now = new Date(),
  opts: { force?: boolean } = {},
): Promise<string> {
  const creds = open(deps, i) as PartnerCredentials | null;
  if (!creds || creds.kind !== 'partner') throw new Error(`integration ${i.id} has no partner tokens`);
  if (opts.force && !creds.refreshToken) {
    const err = new PartnerError('auth', 'the access token was refused and there is no refresh token');
    await markRefused(em, i, err);
    throw err;
  }
  const due = !creds.expiresAt || new Date(creds.expiresAt).getTime() - 60_000 <= now.getTime();
  if (!creds.refreshToken || (!opts.force && (!creds.expiresAt || !due))) return creds.accessToken;
  try {
    const t = await deps.partner.refresh(creds.refreshToken);
    const fresh: PartnerCredentials = {
      kind: 'partner',
      accessToken: t.accessToken,
      refreshToken: t.refreshToken ?? creds.refreshToken,
      expiresAt: t.expiresAt?.toISOString() ?? null,
    };
    i.credentialsSealed = encrypt(JSON.stringify(fresh), deps.config.encryptionKey);
    i.credentialHint = hint(fresh);
    await em.flush();
    return fresh.accessToken;
  } catch (err) {
    if (err instanceof PartnerError && err.code === 'auth') await markRefused(em, i, err);
    throw err;
  }
}

/** Marks the integration refused after the partner refused its token mid-sync. */
export async function markPartnerRefused(em: EntityManager, integrationId: string, err: Error): Promise<void> {
  await em.execute(
    `update integrations set status = 'invalid_credentials', status_reason = ?, updated_at = now() where id = ?`,
    [err.message.slice(0, 300), integrationId],
  );
}

export interface InstallStart {
  authorizationUrl: string;
  state: string;
  redirectUri: string;
  expiresAt: Date;
}

/** POST /api/integrations/partner/install: the partner's authorization URL with a state bound to this user and workspace, and a PKCE (S256) challenge. */
export async function startPartnerInstall(
  em: EntityManager,
  actor: Actor,
  deps: IntegrationDeps,
): Promise<InstallStart> {
  assertWritable(actor);
  onlyManagers(actor);
  const redirectUri = partnerCallbackUrl(deps);
  const s = await issuePendingState(em, 'partner_oauth_states', {
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    provider: PARTNER,
    redirectUri,
    encryptionKey: deps.config.encryptionKey,
  });
  return {
    authorizationUrl: deps.partner.authorizationUrl({ state: s.state, redirectUri, codeChallenge: s.codeChallenge }),
    state: s.state,
    redirectUri,
    expiresAt: s.expiresAt,
  };
}

/**
 * GET /oauth/partner/callback: spends the state (400 `invalid_state`), checks the user still manages
 * the workspace (403 `not_assigned`), exchanges the code with the PKCE verifier (400 `oauth_denied`
 * when refused or declined; 502 when the partner cannot be reached), stores the tokens sealed, and
 * creates the integration — or, for a workspace that installed it before, replaces its tokens — then
 * starts `partner-sync:<id>`.
 */
export async function finishPartnerInstall(
  em: EntityManager,
  deps: IntegrationDeps,
  jobs: Jobs,
  q: { code?: string; state?: string; error?: string },
): Promise<{ integration: IIntegration; created: boolean; sync: { workflowId: string; runId: string | null } }> {
  const pending = await spendPendingState(em, 'partner_oauth_states', q.state, PARTNER, deps.config.encryptionKey);
  if (q.error) throw badRequest('oauth_denied', `the partner did not authorise the installation: ${q.error}`);
  if (!q.code) throw badRequest('oauth_denied', 'the partner sent no authorization code');
  const { isDemo } = await requireStillManager(em, pending.userId, pending.workspaceId);
  assertWritable({ isDemo });
  let tokens: PartnerTokens;
  let account: { accountId: string; name: string | null };
  try {
    tokens = await deps.partner.exchangeCode({
      code: q.code,
      redirectUri: pending.redirectUri,
      codeVerifier: pending.codeVerifier ?? '',
    });
    account = await deps.partner.account(tokens.accessToken);
  } catch (err) {
    if (err instanceof PartnerError && err.code === 'auth')
      throw badRequest('oauth_denied', err.message.replace(/^[^:]+: [^:]+: /, ''));
    partnerUnavailable(err);
  }
  const creds: PartnerCredentials = {
    kind: 'partner',
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresAt: tokens.expiresAt?.toISOString() ?? null,
  };
  const saved = await em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`integrations:${pending.workspaceId}`]);
    const fields = {
      credentialsSealed: encrypt(JSON.stringify(creds), deps.config.encryptionKey),
      credentialHint: hint(creds),
      accountId: account.accountId.slice(0, 200),
      accountName: account.name?.slice(0, 300) ?? null,
      status: 'active',
      statusReason: null,
      lastVerifiedAt: new Date(),
    };
    const existing = await tx.findOne(Integration, { workspace: pending.workspaceId, provider: PARTNER });
    if (existing) {
      // Another partner account starts from scratch: its cursors and pushes were about the old one.
      if (existing.accountId !== fields.accountId) {
        await tx.execute('delete from partner_sync_cursors where integration_id = ?', [existing.id]);
        await tx.execute('delete from partner_pushes where integration_id = ?', [existing.id]);
      }
      Object.assign(existing, fields);
      await tx.flush();
      return { integration: existing, created: false };
    }
    if ((await tx.count(Integration, { workspace: pending.workspaceId })) >= MAX_INTEGRATIONS) {
      throw conflict(
        'integration_limit_reached',
        `a workspace has at most ${MAX_INTEGRATIONS} integrations: delete one first`,
      );
    }
    const integration = tx.create(Integration, {
      workspace: tx.getReference(Workspace, pending.workspaceId),
      provider: PARTNER,
      name: deps.partner.label,
      createdByUserId: pending.userId,
      ...fields,
    });
    await tx.flush();
    return { integration, created: true };
  });
  const { workflowId, runId } = await jobs.start('partner-sync', {
    integrationId: saved.integration.id,
    workspaceId: pending.workspaceId,
  });
  return { ...saved, sync: { workflowId, runId } };
}
