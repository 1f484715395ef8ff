// The browser side of the MCP flows (docs/mcp.md, "Browser sign-in and CSRF"): a signed-in browser
// carries a session JWT of the user (the same sessions as `POST /api/auth/login`, so logout and
// revocation end it) in an HttpOnly, SameSite=Lax cookie scoped to `/oauth/mcp`. Every form carries a
// CSRF token — an HMAC of the session id and what the form does — and a cross-site POST is refused.
import { createHmac } from 'node:crypto';
import type { Context } from 'koa';
import { resolveCredential, type ResolvedCredential } from '../../domain/auth.js';
import { AppError } from '../../domain/errors.js';
import { safeEqual } from '../../lib/crypto.js';
import type { Services } from '../services.js';
import { publicBase } from './base.js';

export const COOKIE = 'mcp_browser';
const COOKIE_PATH = '/oauth/mcp';

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
  typeof given === 'string' && safeEqual(given, csrfToken(services, sessionId, purpose));

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
