// Schemas shared across domains, and builders for rules that zod's JSON Schema output would not show
// on its own: every rule a validator applies must appear in the OpenAPI document (api/openapi.ts).
import { z } from 'zod';

/** The error envelope every error answers with: components.schemas.ApiError (one type for clients to catch). */
export const ErrorBody = z
  .object({
    error: z
      .object({
        code: z.string().meta({ description: 'Stable, machine-readable: the operation lists the codes it answers' }),
        message: z.string().meta({ description: 'For people: what went wrong and what to do' }),
        details: z.unknown().optional(),
        request_id: z.string().optional(),
      })
      .meta({ id: 'ApiErrorDetail' }),
  })
  .meta({ id: 'ApiError' });
export const Uuid = z.uuid();
export const IdParams = z.object({ id: z.uuid() });
export const Timestamp = z.iso.datetime();
export { ClockEnd, ClockTime } from '../lib/time-of-day.js';
/** A file part of a multipart form (`.meta({ jsonSchema: BINARY })`): any bytes, sent as a file. */
export const BINARY = { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' };
export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
/**
 * Any JSON value (zod's `z.json()`, spelled out to carry an id). The document states it once, as
 * `components.schemas.JsonValue`, and without recursion: a recursive schema breaks client generators
 * (openapi-typescript's output fails tsc with TS2502; openapi-python-client drops the responses).
 */
export const JsonValue: z.ZodType<Json> = z
  .lazy(() =>
    z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
  )
  .meta({
    id: 'JsonValue',
    jsonSchema: { description: 'Any JSON value: string, number, boolean, null, array or object.' },
  });

/** Code points, as JSON Schema's minLength/maxLength count them (JS `.length` counts UTF-16 units). */
const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** The characters String.prototype.trim() removes (ECMAScript WhiteSpace and LineTerminator), spelled out so that every regex engine agrees. */
const TRIMMED = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** At least one character that trimming keeps (and no NUL anywhere, the router's shared rule). */
const NOT_BLANK = `^[^\\u0000]*[^${TRIMMED}\\u0000][^\\u0000]*$`;

/**
 * A string of at most `max` (and at least `min`) code points. With `trim`, surrounding whitespace is
 * removed after the length check and `min` applies to what is left, which the document states as a
 * pattern requiring a non-whitespace character.
 */
export function text(opts: { max: number; min?: number; trim?: boolean }) {
  const { max, min = 0, trim = false } = opts;
  let s = z.string().refine((v) => codePoints(v) <= max, `at most ${max} characters`);
  if (!trim) {
    if (min > 0) s = s.refine((v) => codePoints(v) >= min, `at least ${min} characters`);
    return s.meta({ maxLength: max, ...(min > 0 ? { minLength: min } : {}) });
  }
  if (min > 1) throw new Error('text(): trim supports min 0 or 1');
  const t = s.trim();
  return (min === 1 ? t.refine((v) => v.length > 0, 'must not be blank') : t).meta({
    maxLength: max,
    ...(min === 1 ? { minLength: 1, pattern: NOT_BLANK } : {}),
  });
}

/** Case-insensitive spelling of a literal, for patterns (JSON Schema has no flags). */
const ci = (word: string) => word.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`).replace(/\./g, '\\.');
const LABEL = '(?![xX][nN]--)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
/** The last label starts with a letter: a numeric one would make the URL parser read an IPv4 address. */
const TOP_LABEL = '(?![xX][nN]--)[a-zA-Z](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
/** Names lib/outbound-http.ts treats as local (isBlockedHostname), matched at the end of the host. */
const LOCAL_SUFFIX = `(?:${['localhost', 'local', 'localdomain', 'internal', 'home.arpa'].map(ci).join('|')})`;
const PORT = '(?::(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?';
/** Path, query and fragment: no whitespace or control characters (the URL parser would strip or encode them). */
const REST =
  '(?:[/?#][^\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]*)?';

/**
 * An absolute http(s) URL whose host is a public DNS name (no IP literal, no credentials, no local or
 * single-label name), as a pattern that JavaScript and the document's readers evaluate alike.
 */
export const urlPattern = (scheme: 'https' | 'http(s)') => {
  const s = scheme === 'https' ? ci('https') : `${ci('http')}[sS]?`;
  return `^${s}://(?!(?:[a-zA-Z0-9-]+\\.)*${LOCAL_SUFFIX}(?:[:/?#]|$))(?:${LABEL}\\.)+${TOP_LABEL}${PORT}${REST}$`;
};
