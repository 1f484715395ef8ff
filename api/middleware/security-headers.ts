import type { Middleware } from 'koa';

/** Conservative headers for a JSON API; the docs page sets its own CSP for its viewer (api/docs-page.ts). */
const HEADERS = Object.entries({
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
});

// Set on the Node response directly (constant strings: Koa's per-call conversions add nothing).
export const securityHeaders = (): Middleware => (ctx, next) => {
  for (const [name, value] of HEADERS) ctx.res.setHeader(name, value);
  return next();
};
