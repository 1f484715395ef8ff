// The OAuth endpoints the MCP authorization specification requires, outside `/api` (docs/mcp.md):
// protected-resource metadata (RFC 9728), authorization-server metadata (RFC 8414), dynamic client
// registration (RFC 7591), the authorization endpoint with its sign-in and consent pages, the token
// endpoint (authorization_code with PKCE S256, rotating refresh_token), and the approval page.
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { login } from '../../domain/auth/auth.js';
import { AppError } from '../../domain/errors.js';
import { approve, effectiveStatus, requireApproval } from '../../domain/mcp/approvals.js';
import {
  checkAuthorizationRequest,
  exchangeCode,
  issueCode,
  MCP_SCOPE,
  OAuthError,
  refreshTokens,
  registerClient,
  type AuthorizationRequest,
} from '../../domain/mcp/oauth.js';
import { resolveActor } from '../../domain/workspaces.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { findTool } from '../../domain/tools/index.js';
import { isUuid } from '../../lib/ids.js';
import type { Services } from '../services.js';
import { mcpResource, publicBase } from './base.js';
import {
  browserUser,
  CSRF_FAILED,
  csrfToken,
  csrfValid,
  loginCsrfToken,
  loginCsrfValid,
  sameOrigin,
  setBrowserSession,
} from './browser.js';
import { approvalPage, consentPage, errorPage, loginPage } from './pages.js';

const FORM_LIMIT = 64 * 1024;
const PERIOD_MS = 60_000;

/** CORS for what browser-based MCP clients call directly (no cookies involved: bearer tokens and public metadata). */
function cors(ctx: Context): boolean {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set(
    'Access-Control-Allow-Headers',
    'Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID',
  );
  ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version');
  ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
  if (ctx.method !== 'OPTIONS') return false;
  ctx.status = 204;
  return true;
}

function methodNotAllowed(ctx: Context, allow: string): void {
  ctx.set('Allow', allow);
  throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: ${allow}`);
}

function oauthError(ctx: Context, e: OAuthError): void {
  ctx.status = e.status;
  ctx.body = { error: e.error, error_description: e.message };
}

/** Reads a form (`application/x-www-form-urlencoded`) or JSON body into a flat string map; null when it is neither. */
async function readParams(ctx: Context): Promise<Record<string, string | undefined> | null> {
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
  let raw: string;
  try {
    raw = (await getRawBody(ctx.req, {
      limit: FORM_LIMIT,
      length: ctx.req.headers['content-length'],
      encoding: 'utf8',
    })) as string;
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large')
      throw new OAuthError(400, 'invalid_request', `the body is larger than ${FORM_LIMIT} bytes`);
    throw new OAuthError(
      400,
      'invalid_request',
      'the body could not be read (the request was cut short or its Content-Length is wrong)',
    );
  }
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(raw));
  if (type === 'application/json') {
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      throw new OAuthError(400, 'invalid_request', 'the body is not valid JSON');
    }
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, string | undefined>;
    throw new OAuthError(400, 'invalid_request', 'the JSON body must be an object of parameters');
  }
  return null;
}

/** Unauthenticated entry points share the `public` group: per IP, RATE_LIMIT_PUBLIC_PER_MINUTE. */
async function publicLimit(ctx: Context, services: Services): Promise<boolean> {
  const limit = services.config.rateLimit.publicPerMinute;
  const d = await services.rateLimiter.check(`rl:public:ip:${ctx.ip}`, limit, PERIOD_MS);
  ctx.set('RateLimit-Policy', `"public";q=${limit};w=60`);
  ctx.set('RateLimit', `"public";r=${d.remaining};t=${d.reset}`);
  if (d.allowed) return true;
  ctx.set('Retry-After', String(d.retryAfter));
  ctx.status = 429;
  ctx.body = {
    error: 'rate_limited',
    error_description: `too many requests: ${limit} per minute; retry after ${d.retryAfter} s`,
  };
  return false;
}

// ---------------------------------------------------------------------------------------------
// Metadata

export function resourceMetadata(ctx: Context) {
  const base = publicBase(ctx);
  return {
    resource: mcpResource(ctx),
    authorization_servers: [base],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'outreach-api MCP',
    resource_documentation: `${base}/docs`,
  };
}

export function authorizationServerMetadata(ctx: Context) {
  const base = publicBase(ctx);
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/mcp/authorize`,
    token_endpoint: `${base}/oauth/mcp/token`,
    registration_endpoint: `${base}/oauth/mcp/register`,
    scopes_supported: [MCP_SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    service_documentation: `${base}/docs`,
  };
}

// ---------------------------------------------------------------------------------------------
// Registration and tokens

async function register(ctx: Context, services: Services): Promise<void> {
  if (!(await publicLimit(ctx, services))) return;
  try {
    const json = /^application\/json\s*(;|$)/i.test(ctx.get('content-type'));
    const body = json ? await readParams(ctx) : null;
    if (!body)
      throw new OAuthError(400, 'invalid_client_metadata', 'the body must be application/json client metadata');
    ctx.status = 201;
    ctx.body = await registerClient(services.orm.em.fork(), body);
  } catch (err) {
    if (err instanceof OAuthError) return oauthError(ctx, err);
    throw err;
  }
}

async function token(ctx: Context, services: Services): Promise<void> {
  if (!(await publicLimit(ctx, services))) return;
  try {
    const p = await readParams(ctx);
    if (!p)
      throw new OAuthError(
        400,
        'invalid_request',
        'the body must be application/x-www-form-urlencoded (or application/json)',
      );
    const notString = Object.entries(p).find(([, v]) => v !== undefined && v !== null && typeof v !== 'string');
    if (notString) throw new OAuthError(400, 'invalid_request', `${notString[0].slice(0, 100)} must be a string`);
    const em = services.orm.em.fork();
    if (!p.grant_type)
      throw new OAuthError(400, 'invalid_request', 'grant_type is required (authorization_code or refresh_token)');
    if (p.grant_type === 'authorization_code') ctx.body = await exchangeCode(em, p, mcpResource(ctx));
    else if (p.grant_type === 'refresh_token') ctx.body = await refreshTokens(em, p);
    else
      throw new OAuthError(
        400,
        'unsupported_grant_type',
        `grant_type ${JSON.stringify(p.grant_type.slice(0, 100))} is not supported: use authorization_code or refresh_token`,
      );
    ctx.set('Pragma', 'no-cache');
  } catch (err) {
    if (err instanceof OAuthError) return oauthError(ctx, err);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Authorization: sign-in, consent

const AUTH_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'resource',
] as const;
const pick = (src: Record<string, unknown>) =>
  Object.fromEntries(
    AUTH_PARAMS.map((k) => [k, typeof src[k] === 'string' ? (src[k] as string) : undefined]),
  ) as Record<string, string | undefined>;
const consentPurpose = (r: AuthorizationRequest) => `authorize|${r.client.id}|${r.redirectUri}|${r.codeChallenge}`;

function redirectWith(ctx: Context, uri: string, params: Record<string, string | undefined>): void {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  ctx.status = ctx.method === 'POST' ? 303 : 302;
  ctx.redirect(u.toString());
  ctx.status = ctx.method === 'POST' ? 303 : 302;
}

async function authorize(
  ctx: Context,
  services: Services,
  params: Record<string, string | undefined>,
  form?: Record<string, string | undefined>,
): Promise<void> {
  const em = services.orm.em.fork();
  const checked = await checkAuthorizationRequest(em, params, mcpResource(ctx));
  if ('fatal' in checked) return errorPage(ctx, 400, checked.fatal);
  if ('redirect' in checked)
    return redirectWith(ctx, checked.redirect, {
      error: checked.error,
      error_description: checked.description,
      state: checked.state,
    });
  const req = checked.ok;
  const user = await browserUser(ctx, services);
  if (!user) {
    if (form) return errorPage(ctx, 401, 'Your sign-in expired. Start again from your application.');
    return loginPage(ctx, ctx.url, loginCsrfToken(ctx, services, ctx.url));
  }
  if (!user.workspace) return errorPage(ctx, 403, 'Your account has no workspace.');
  if (!form) {
    const ws = await em.findOneOrFail(Workspace, user.workspace.id);
    return consentPage(ctx, {
      clientName: req.client.clientName,
      clientUri: req.client.clientUri ?? null,
      redirectUri: req.redirectUri,
      userEmail: user.user.email,
      workspaceName: ws.name,
      csrf: csrfToken(services, user.auth.sessionId!, consentPurpose(req)),
      params: { ...params, redirect_uri: req.redirectUri },
    });
  }
  if (!sameOrigin(ctx) || !csrfValid(services, user.auth.sessionId!, consentPurpose(req), form.csrf_token)) {
    return errorPage(
      ctx,
      403,
      'This form did not come from this page (CSRF check failed). Start again from your application.',
      CSRF_FAILED,
    );
  }
  if (form.decision !== 'approve')
    return redirectWith(ctx, req.redirectUri, {
      error: 'access_denied',
      error_description: 'the user denied the request',
      state: req.state,
    });
  const code = await issueCode(em, req, { userId: user.auth.userId, workspaceId: user.workspace.id });
  redirectWith(ctx, req.redirectUri, { code, state: req.state, iss: publicBase(ctx) });
}

/** Only our own pages are places to return to after signing in (no open redirect). */
const safeReturn = (v: unknown): string | null =>
  typeof v === 'string' && /^\/oauth\/mcp\/[^/\\]/.test(v) && v.length <= 8192 ? v : null;

async function signIn(ctx: Context, services: Services): Promise<void> {
  const form = await readParams(ctx).catch(() => null);
  const returnTo = safeReturn(form?.return_to);
  if (!form || !returnTo) return errorPage(ctx, 400, 'Malformed sign-in form.');
  // Login CSRF (signing the victim's browser into someone else's account): the form's token must be
  // the one this browser's sign-in page was given for this very request. Checked before any work.
  if (!sameOrigin(ctx) || !loginCsrfValid(ctx, services, returnTo, form.csrf_token)) {
    return errorPage(
      ctx,
      403,
      'This sign-in form did not come from this page, or it is stale (CSRF check failed). Go back, reload the page and sign in again.',
      CSRF_FAILED,
    );
  }
  if (!(await publicLimit(ctx, services))) return errorPage(ctx, 429, 'Too many attempts; wait a minute.');
  try {
    const issued = await login(
      services.orm.em.fork(),
      services.config,
      { email: String(form.email ?? ''), password: String(form.password ?? '') },
      { userAgent: ctx.get('user-agent'), ip: ctx.ip },
    );
    setBrowserSession(ctx, services, issued.accessToken, issued.expiresIn);
    ctx.redirect(returnTo);
    ctx.status = 303;
  } catch (err) {
    if (err instanceof AppError && err.status === 401)
      return loginPage(ctx, returnTo, loginCsrfToken(ctx, services, returnTo), 'Email or password is incorrect.');
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// The approval page

async function approvalPageRoute(ctx: Context, services: Services, id: string): Promise<void> {
  const user = await browserUser(ctx, services);
  if (!user) {
    if (ctx.method === 'POST') return errorPage(ctx, 401, 'Your sign-in expired. Open the approval link again.');
    return loginPage(ctx, ctx.url, loginCsrfToken(ctx, services, ctx.url));
  }
  const em = services.orm.em.fork();
  const notFoundPage = () => errorPage(ctx, 404, 'No such approval request for you.');
  if (!isUuid(id) || !user.workspace) return notFoundPage();
  const actor = await resolveActor(em, user.auth, undefined);
  let a;
  try {
    a = await requireApproval(em, actor, id.toLowerCase());
  } catch (err) {
    if (err instanceof AppError && err.status === 404) return notFoundPage();
    throw err;
  }
  const purpose = `approve|${a.id}`;
  let notice: string | undefined;
  if (ctx.method === 'POST') {
    const form = await readParams(ctx).catch(() => null);
    if (!sameOrigin(ctx) || !csrfValid(services, user.auth.sessionId!, purpose, form?.csrf_token)) {
      return errorPage(
        ctx,
        403,
        'This form did not come from this page (CSRF check failed). Reload the approval page and approve again.',
        CSRF_FAILED,
      );
    }
    try {
      a = await approve(em, services.jobs, actor, a.id);
      notice = 'Approved. The application gets the result when it calls the tool again.';
    } catch (err) {
      if (err instanceof AppError && err.status === 409) notice = err.message;
      else throw err;
    }
  }
  approvalPage(
    ctx,
    {
      id: a.id,
      status: effectiveStatus(a),
      toolName: a.toolName,
      description: findTool(a.toolName)?.description ?? '',
      risk: a.risk,
      clientName: a.client.getEntity().clientName,
      args: a.args,
      expiresAt: a.expiresAt.toISOString(),
      csrf: csrfToken(services, user.auth.sessionId!, purpose),
      result: a.result,
    },
    notice,
  );
}

// ---------------------------------------------------------------------------------------------
// Dispatch

/** Handles the MCP OAuth paths (exact matches only); everything else goes on to the router. */
export async function handleOAuth(ctx: Context, services: Services): Promise<boolean> {
  const path = ctx.path;
  if (path === '/.well-known/oauth-protected-resource' || path === '/.well-known/oauth-protected-resource/mcp') {
    if (cors(ctx)) return true;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') methodNotAllowed(ctx, 'GET, HEAD, OPTIONS');
    ctx.body = resourceMetadata(ctx);
    return true;
  }
  if (path === '/.well-known/oauth-authorization-server' || path === '/.well-known/oauth-authorization-server/mcp') {
    if (cors(ctx)) return true;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') methodNotAllowed(ctx, 'GET, HEAD, OPTIONS');
    ctx.body = authorizationServerMetadata(ctx);
    return true;
  }
  if (!path.startsWith('/oauth/mcp/')) return false;
  if (path === '/oauth/mcp/register' || path === '/oauth/mcp/token') {
    if (cors(ctx)) return true;
    if (ctx.method !== 'POST') methodNotAllowed(ctx, 'POST, OPTIONS');
    await (path === '/oauth/mcp/register' ? register(ctx, services) : token(ctx, services));
    return true;
  }
  if (path === '/oauth/mcp/authorize') {
    if (ctx.method === 'GET') await authorize(ctx, services, pick(ctx.query as Record<string, unknown>));
    else if (ctx.method === 'POST') {
      const form = await readParams(ctx).catch(() => null);
      if (!form) errorPage(ctx, 400, 'Malformed consent form.');
      else await authorize(ctx, services, pick(form), form);
    } else methodNotAllowed(ctx, 'GET, POST');
    return true;
  }
  if (path === '/oauth/mcp/login') {
    if (ctx.method !== 'POST') methodNotAllowed(ctx, 'POST');
    await signIn(ctx, services);
    return true;
  }
  const m = /^\/oauth\/mcp\/approvals\/([^/]+)$/.exec(path);
  if (m) {
    if (ctx.method !== 'GET' && ctx.method !== 'POST') methodNotAllowed(ctx, 'GET, POST');
    await approvalPageRoute(ctx, services, m[1]);
    return true;
  }
  return false;
}
