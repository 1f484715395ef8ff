// Cursor pagination over UUIDv7 ids (which sort by creation time): `limit` 1..200 (default 50) and
// an opaque `cursor`; responses are `{items, next_cursor}`.
import { z } from 'zod';

export interface PageRequest {
  limit: number;
  after?: string;
}

/**
 * An integer query parameter: decimal digits only (no `1e2`, `0x10`, spaces or signs, which
 * z.coerce.number() would let through), within [min, max].
 */
function queryInt(opts: { min: number; max: number; default?: number }) {
  const digits = z
    .string()
    .regex(/^[0-9]{1,9}$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(opts.min).max(opts.max));
  const json = { type: 'integer', minimum: opts.min, maximum: opts.max, ...(opts.default === undefined ? {} : { default: opts.default }) };
  return (opts.default === undefined ? digits : digits.default(opts.default)).meta({ jsonSchema: json });
}

/**
 * A cursor is the base64url (unpadded) of the last id's 16 bytes: 22 characters whose last one
 * carries only 2 bits. Every string of that shape decodes to a valid id, so the pattern is the whole
 * rule. An empty cursor means the first page.
 */
const CURSOR = /^(?:[A-Za-z0-9_-]{21}[AQgw])?$/;

const toCursor = (id: string): string => Buffer.from(id.replace(/-/g, ''), 'hex').toString('base64url');
const fromCursor = (c: string): string => {
  const h = Buffer.from(c, 'base64url').toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

export const pageQuery = {
  limit: queryInt({ min: 1, max: 200, default: 50 }),
  cursor: z
    .string()
    .regex(CURSOR, 'invalid cursor')
    .optional()
    .transform((c) => (c ? fromCursor(c) : undefined)),
};

export const toPageRequest = (q: { limit: number; cursor?: string }): PageRequest => ({ limit: q.limit, after: q.cursor });

/** Takes `limit + 1` fetched rows and returns the page plus the cursor of the next one. */
export function page<T extends { id: string }, R>(rows: T[], limit: number, map: (row: T) => R) {
  const items = rows.slice(0, limit);
  const more = rows.length > limit;
  return {
    items: items.map(map),
    next_cursor: more ? toCursor(items[items.length - 1].id) : null,
  };
}

export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.string().regex(CURSOR).nullable() });

/**
 * Keyset cursors for lists ordered by something other than the id (a time, then the id):
 * `<milliseconds since the epoch>_<the id as 32 hex digits>`. The pattern is the whole rule: every
 * string of that shape is a valid position, so the OpenAPI document states exactly what is accepted.
 */
export const keysetQuery = z
  .string()
  .regex(/^(?:[0-9]{1,15}_[0-9a-f]{32})?$/, 'invalid cursor')
  .optional()
  .transform((c) => {
    if (!c) return undefined;
    const [ms, hex] = c.split('_');
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return { at: new Date(Number(ms)), id };
  });

export type Keyset = { at: Date; id: string };

export const toKeyset = (at: Date | string, id: string): string => `${new Date(at).getTime()}_${id.replace(/-/g, '').toLowerCase()}`;

/** Takes `limit + 1` rows ordered by (time, id) and returns the page plus the next keyset cursor. */
export function keysetPage<T extends { id: string }, R>(rows: T[], limit: number, at: (row: T) => Date | string, map: (row: T) => R) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items: items.map(map), next_cursor: rows.length > limit && last ? toKeyset(at(last), last.id) : null };
}

export const keysetPageSchema = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), next_cursor: z.string().regex(/^[0-9]{1,15}_[0-9a-f]{32}$/).nullable() });
