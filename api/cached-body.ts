// Bodies that never change while the process runs (the OpenAPI document, the docs page and its
// assets): gzipped once when a client first accepts it, each encoding with its own strong ETag (the
// hash of the bytes sent, as RFC 9110 wants a strong validator to differ per content coding), and a
// conditional GET that matches answers 304 with no body.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Context } from 'koa';

interface Encoded {
  body: Buffer;
  etag: string;
}

const encoded = (body: Buffer): Encoded => ({
  body,
  etag: `"${createHash('sha256').update(body).digest('base64url')}"`,
});

export class CachedBody {
  readonly identity: Encoded;
  /** Text and JSON shrink several-fold; an image is compressed already. */
  readonly compressible: boolean;
  private gzipped?: Encoded;

  constructor(
    body: Buffer | string,
    readonly type: string,
  ) {
    this.identity = encoded(Buffer.from(body));
    this.compressible = /^(text\/|application\/(json|javascript)\b)/.test(type);
  }

  /** Compressed on first use: a client that never asks for gzip costs nothing. */
  get gzip(): Encoded {
    return (this.gzipped ??= encoded(gzipSync(this.identity.body, { level: 9 })));
  }
}

/**
 * Answers a GET or HEAD with the body: gzip when the client accepts it (and prefers it to identity),
 * `Cache-Control` as given (the security headers' `no-store` would forbid the revalidation the ETag
 * is for), and 304 when `If-None-Match` names the selected encoding's ETag (`ctx.fresh`).
 */
export function sendCached(ctx: Context, cached: CachedBody, cacheControl = 'no-cache'): void {
  const gzip = cached.compressible && ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
  const chosen = gzip ? cached.gzip : cached.identity;
  ctx.status = 200; // before the freshness check, which only applies to 2xx
  ctx.type = cached.type;
  if (cached.compressible) ctx.vary('Accept-Encoding');
  ctx.set('ETag', chosen.etag);
  ctx.set('Cache-Control', cacheControl);
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  if (gzip) ctx.set('Content-Encoding', 'gzip');
  ctx.body = chosen.body;
}
