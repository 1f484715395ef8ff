// JSON request bodies, read per operation after routing, authentication and rate limiting, so an
// unauthenticated or unknown request is answered without reading up to the body limit. Strict:
// only `application/json` (or `+json`) in UTF-8, valid UTF-8 bytes, no lone surrogates.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../domain/errors.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** True when the request carries a body (a length above 0, or chunked). */
export const hasBody = (ctx: Context): boolean =>
  ctx.req.headers['transfer-encoding'] !== undefined || Number(ctx.req.headers['content-length'] ?? 0) > 0;

export function unsupportedMediaType(type: string | undefined): AppError {
  return new AppError(415, 'unsupported_media_type', `this operation takes application/json${type ? `, not ${type}` : ' (Content-Type is missing)'}`);
}

/** Reads and parses the body of a JSON operation; `undefined` when there is none. */
export async function readJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  const header = ctx.get('content-type');
  const [mime, ...params] = header.split(';').map((s) => s.trim());
  if (!JSON_TYPE.test(mime)) throw unsupportedMediaType(header || undefined);
  const charset = params.find((p) => /^charset=/i.test(p))?.slice(8).replace(/"/g, '');
  if (charset && !/^utf-?8$/i.test(charset)) throw new AppError(415, 'unsupported_media_type', `JSON bodies must be UTF-8, not ${charset}`);
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { limit: limitBytes, length: ctx.req.headers['content-length'] });
  } catch (err) {
    const e = err as { type?: string; status?: number };
    if (e.type === 'entity.too.large' || e.status === 413) throw new AppError(413, 'payload_too_large', `request body larger than ${limitBytes} bytes`);
    if (e.type === 'request.aborted') throw new AppError(400, 'invalid_body', 'request body was not received completely');
    throw new AppError(400, 'invalid_body', 'request body could not be read');
  }
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    throw new AppError(400, 'invalid_body', 'request body is not valid UTF-8');
  }
  // Only an empty body is "no body"; whitespace alone is not a JSON document (400 below).
  if (text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError(400, 'invalid_body', 'malformed JSON body');
  }
  return value;
}

// String.prototype.isWellFormed exists from Node 20 (ES2024); the project's lib setting is ES2023.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * The one text rule shared by every string input (body, query, path): no NUL characters (PostgreSQL
 * cannot store them in text) and no lone UTF-16 surrogates (not text at all). Returns the path of
 * the first offending string, or undefined.
 */
export function findBadString(value: unknown, path: (string | number)[] = [], depth = 0): { path: string; reason: string } | undefined {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) return { path: path.join('.'), reason: 'must not contain NUL (U+0000) characters' };
    if (!isWellFormed(value)) return { path: path.join('.'), reason: 'must not contain unpaired UTF-16 surrogates' };
    return undefined;
  }
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findBadString(value[i], [...path, i], depth + 1);
      if (bad) return bad;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    const badKey = findBadString(k, [...path, k], depth + 1);
    if (badKey) return { path: badKey.path, reason: `key ${badKey.reason}` };
    const bad = findBadString(v, [...path, k], depth + 1);
    if (bad) return bad;
  }
  return undefined;
}
