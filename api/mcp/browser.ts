// The browser side of the MCP flows (docs/mcp.md, "Browser sign-in and CSRF"): a signed-in browser
// carries a session JWT of the user (the same sessions as `POST /api/auth/login`, so logout and
// revocation end it) in an HttpOnly, SameSite=Lax cookie scoped to `/oauth/mcp`. Every form carries a
// CSRF token, and a cross-site POST is refused. Consent and approval forms: an HMAC of the session id
// and what the form does. The sign-in form (no session yet): an HMAC of a random per-browser nonce,
// kept in an HttpOnly, SameSite=Strict cookie, and of the request it returns to (signed double submit).
import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { resolveCredential, type ResolvedCredential } from '../../domain/auth/auth.js';
import { AppError } from '../../domain/errors.js';
import { safeEqual } from '../../lib/crypto.js';
import type { Services } from '../services.js';
import { publicBase } from './base.js';

export const COOKIE = 'mcp_browser';
/** The sign-in form's double-submit cookie: a random nonce, never sent cross-site (SameSite=Strict). */
export const LOGIN_COOKIE = 'mcp_csrf';
const COOKIE_PATH = '/oauth/mcp';
/** The code an error page shows (and tests look for) when a form's CSRF check fails. */
export const CSRF_FAILED = 'csrf_failed';

/** The signed-in browser user (a live session), or null. */
export async function browserUser(ctx: Context, services: Services): Promise<ResolvedCredential | null> {
  const token = ctx.cookies.get(COOKIE);
  if (!token || token.split('.').length !== 3 || token.length > 4096) return null;
  try {
    const c = await resolveCredential(services.orm.em.fork(), services.config, token);
    return c.auth.kind === 'session' ? c : null;
  } catch (err) {
    if (err instanceof AppError && err.status === 401) return null;
    throw err;
  }
}

export function setBrowserSession(ctx: Context, services: Services, accessToken: string, maxAgeSeconds: number): void {
  ctx.cookies.set(COOKIE, accessToken, {
    httpOnly: true,
    sameSite: 'lax',
    path: COOKIE_PATH,
    secure: publicBase(ctx).startsWith('https:'),
    maxAge: maxAgeSeconds * 1000,
    overwrite: true,
  });
}

/** A CSRF token bound to the browser's session and to what the form does (`purpose`). */
export const csrfToken = (services: Services, sessionId: string, purpose: string): string =>
  createHmac('sha256', services.config.jwt.secret).update(`mcp-csrf|${sessionId}|${purpose}`).digest('base64url');

export const csrfValid = (services: Services, sessionId: string, purpose: string, given: unknown): boolean =>
  typeof given === 'string' && given.length <= 256 && safeEqual(given, csrfToken(services, sessionId, purpose));

const NONCE = /^[A-Za-z0-9_-]{43}$/;
const loginToken = (services: Services, nonce: string, returnTo: string): string =>
  createHmac('sha256', services.config.jwt.secret).update(`mcp-login-csrf|${nonce}|${returnTo}`).digest('base64url');

/**
 * The sign-in form's CSRF token, bound to this browser (the nonce of its `mcp_csrf` cookie, set here
 * when it has none, so several tabs share it) and to the pending request the form returns to.
 */
export function loginCsrfToken(ctx: Context, services: Services, returnTo: string): string {
  let nonce = ctx.cookies.get(LOGIN_COOKIE);
  if (!nonce || !NONCE.test(nonce)) {
    nonce = randomBytes(32).toString('base64url');
    ctx.cookies.set(LOGIN_COOKIE, nonce, {
      httpOnly: true,
      sameSite: 'strict',
      path: COOKIE_PATH,
      secure: publicBase(ctx).startsWith('https:'),
      overwrite: true,
    });
  }
  return loginToken(services, nonce, returnTo);
}

/** A sign-in POST is genuine when it carries the cookie and the token of that nonce and `returnTo` (compared in constant time). */
export function loginCsrfValid(ctx: Context, services: Services, returnTo: string, given: unknown): boolean {
  const nonce = ctx.cookies.get(LOGIN_COOKIE);
  return (
    !!nonce &&
    NONCE.test(nonce) &&
    typeof given === 'string' &&
    given.length <= 256 &&
    safeEqual(given, loginToken(services, nonce, returnTo))
  );
}

/**
 * A form POST must come from our own pages: refused when the browser says it is cross-site
 * (`Sec-Fetch-Site`) or names another origin (`Origin`). The CSRF token is checked on top of this.
 */
export function sameOrigin(ctx: Context): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') return false;
  const origin = ctx.get('origin');
  if (!origin || origin === 'null') return !origin;
  return origin === publicBase(ctx) || origin === `${ctx.protocol}://${ctx.host}`;
}
