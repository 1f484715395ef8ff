// JSON request bodies, parsed by koa-body per operation after routing, authentication and rate
// limiting (api/router.ts), so an unauthenticated or unknown request is answered without reading up
// to the body limit. Strict: only `application/json` (or `+json`) in UTF-8, valid UTF-8 bytes, no
// lone surrogates. Multipart uploads are streamed by busboy instead (multipart.ts).
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { AppError } from '../../domain/errors.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/** True when the request carries a body (a length above 0, or chunked). */
export const hasBody = (ctx: Context): boolean =>
  ctx.req.headers['transfer-encoding'] !== undefined || Number(ctx.req.headers['content-length'] ?? 0) > 0;

export function unsupportedMediaType(type: string | undefined): AppError {
  return new AppError(
    415,
    'unsupported_media_type',
    `this operation takes application/json${type ? `, not ${type}` : ' (Content-Type is missing)'}`,
  );
}

/**
 * Validates the bytes koa-body reads as they arrive: it decodes them leniently (invalid UTF-8
 * becomes U+FFFD), and the rule is to refuse such a body, not to rewrite it. Returns a check to
 * call once the read is over. Attached only once koa-body's reader is flowing: a read it refused
 * up front (Content-Length over the limit) leaves the stream paused, as it should stay.
 */
function watchUtf8(req: IncomingMessage): () => boolean {
  // Not flowing: koa-body refused before reading (its error wins); had it read unseen bytes, fail closed.
  if (!req.readableFlowing) return () => false;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let valid = true;
  const onData = (chunk: Buffer) => {
    if (!valid) return;
    try {
      decoder.decode(chunk, { stream: true });
    } catch {
      valid = false;
    }
  };
  req.on('data', onData);
  return () => {
    req.off('data', onData);
    if (!valid) return false;
    try {
      decoder.decode(); // a sequence cut off at the end is invalid too
      return true;
    } catch {
      return false;
    }
  };
}

/**
 * A reader for JSON operations, built once per operation: parses the body with koa-body and returns
 * it, `undefined` when there is none.
 */
export function jsonBodyReader(limitBytes: number): (ctx: Context) => Promise<unknown> {
  const parse = koaBody({
    json: true,
    urlencoded: false, // JSON operations take JSON only (anything else is 415 below); forms are multipart.ts
    text: false,
    multipart: false,
    jsonLimit: limitBytes,
    jsonStrict: false, // a JSON `null` or scalar is a body (refused by its schema), not a 400 here
    jsonTypes: ['application/json', '+json'],
    parsedMethods: Object.values(HttpMethodEnum), // any method whose operation declares a body
    patchNode: false,
  });
  const next = () => Promise.resolve();
  return async (ctx) => {
    if (!hasBody(ctx)) return undefined;
    const header = ctx.get('content-type');
    const [mime, ...params] = header.split(';').map((s) => s.trim());
    if (!JSON_TYPE.test(mime)) throw unsupportedMediaType(header || undefined);
    // koa-body decodes every body as UTF-8 whatever charset it declares; the rule refuses any other.
    const charset = params
      .find((p) => /^charset=/i.test(p))
      ?.slice(8)
      .replace(/"/g, '');
    if (charset && !/^utf-?8$/i.test(charset))
      throw new AppError(415, 'unsupported_media_type', `JSON bodies must be UTF-8, not ${charset}`);
    // koa-body would inflate gzip/deflate/br, and then the bytes watched for UTF-8 below would not be
    // the bytes it parsed: only an uncoded body is taken (as before koa-body, which never inflated).
    const coding = ctx.req.headers['content-encoding'];
    if (coding !== undefined && coding !== 'identity')
      throw new AppError(
        415,
        'unsupported_media_type',
        `Content-Encoding ${coding} is not supported; send the JSON uncompressed`,
      );
    const parsing = parse(ctx, next).then(
      () => undefined,
      (err: Error & { type?: string; status?: number }) => err,
    ); // koa-body attaches its reader synchronously, so the watch below sees every byte
    const utf8 = watchUtf8(ctx.req);
    const e = await parsing;
    const validUtf8 = utf8();
    if (e?.type === 'entity.too.large' || e?.status === 413)
      throw new AppError(413, 'payload_too_large', `request body larger than ${limitBytes} bytes`);
    if (e?.type === 'request.aborted')
      throw new AppError(400, 'invalid_body', 'request body was not received completely');
    if (e && !(e instanceof SyntaxError)) throw new AppError(400, 'invalid_body', 'request body could not be read');
    // Bad bytes before bad JSON: koa-body parsed their U+FFFD rewrite, so its verdict does not count.
    if (!validUtf8) throw new AppError(400, 'invalid_body', 'request body is not valid UTF-8');
    // Also koa-body's refusal of a `__proto__` key (prototype poisoning): a 400 like any bad JSON.
    if (e) throw new AppError(400, 'invalid_body', 'malformed JSON body');
    const body = ctx.request.body;
    // Left unset: koa-body's type check disagreed with ours, so it read nothing; never a silent `{}`.
    if (body === undefined) throw unsupportedMediaType(header);
    // Only an empty body is "no body" (koa-body gives ''); whitespace alone is malformed JSON.
    return body === '' ? undefined : body;
  };
}

// String.prototype.isWellFormed exists from Node 20 (ES2024); the project's lib setting is ES2023.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * The one text rule shared by every string input (body, query, path): no NUL characters (PostgreSQL
 * cannot store them in text) and no lone UTF-16 surrogates (not text at all). Returns the path of
 * the first offending string, or undefined.
 */
export function findBadString(
  value: unknown,
  path: (string | number)[] = [],
  depth = 0,
): { path: string; reason: string } | undefined {
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
