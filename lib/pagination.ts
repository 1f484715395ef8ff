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
  const json = {
    type: 'integer',
    minimum: opts.min,
    maximum: opts.max,
    ...(opts.default === undefined ? {} : { default: opts.default }),
  };
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

export const toPageRequest = (q: { limit: number; cursor?: string }): PageRequest => ({
  limit: q.limit,
  after: q.cursor,
});

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

export const toKeyset = (at: Date | string, id: string): string =>
  `${new Date(at).getTime()}_${id.replace(/-/g, '').toLowerCase()}`;

/** Takes `limit + 1` rows ordered by (time, id) and returns the page plus the next keyset cursor. */
export function keysetPage<T extends { id: string }, R>(
  rows: T[],
  limit: number,
  at: (row: T) => Date | string,
  map: (row: T) => R,
) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items: items.map(map), next_cursor: rows.length > limit && last ? toKeyset(at(last), last.id) : null };
}

export const keysetPageSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    next_cursor: z
      .string()
      .regex(/^[0-9]{1,15}_[0-9a-f]{32}$/)
      .nullable(),
  });

// ---------------------------------------------------------------------------------------------
// The query of one page: the rows after the cursor, in the list's order, `limit + 1` of them (the
// extra row tells `page()` / `keysetPage()` that a next page exists). On the first page (no cursor)
// there is no cursor condition.

export type Order = 'asc' | 'desc';

/**
 * For em.find over ids: spread `where` into the filter (`id > after` ascending, `id < after`
 * descending, nothing on the first page) and pass `options` (or spread them next to others such as
 * `populate`): `orderBy: { id }` and `limit: limit + 1`.
 */
export function keyset(
  p: { limit: number; after?: string },
  order: Order = 'asc',
): { where: { id?: { $gt: string } | { $lt: string } }; options: { orderBy: { id: Order }; limit: number } } {
  return {
    where: p.after ? { id: order === 'asc' ? { $gt: p.after } : { $lt: p.after } } : {},
    options: { orderBy: { id: order }, limit: p.limit + 1 },
  };
}

/**
 * For em.find over (`by`, id), a time then the id: `where` holds `$or: [by > at, (by = at and id > id)]`
 * (`<` descending), `options` orders by `by` then id, both in `order`, and asks for `limit + 1` rows.
 */
export function keysetBy<K extends string>(
  by: K,
  p: { limit: number; after?: { at: Date; id: string } },
  order: Order = 'asc',
): {
  where: { $or?: [Record<K, Record<string, Date>>, Record<K, Date> & { id: Record<string, string> }] };
  options: { orderBy: Record<K | 'id', Order>; limit: number };
} {
  const op = order === 'asc' ? '$gt' : '$lt';
  const a = p.after;
  return {
    where: a
      ? {
          $or: [
            { [by]: { [op]: a.at } } as Record<K, Record<string, Date>>,
            { [by]: a.at, id: { [op]: a.id } } as Record<K, Date> & { id: Record<string, string> },
          ],
        }
      : {},
    options: { orderBy: { [by]: order, id: order } as Record<K | 'id', Order>, limit: p.limit + 1 },
  };
}

/**
 * For SQL: `sql` goes right after the query's WHERE conditions (at least one) and ends the query:
 * ` and <column> > ?` (`<` descending; absent on the first page), then
 * ` order by <column>[ desc] limit ?`; `params` are its values, in that order. With two columns
 * `[time, id]` the cursor is a Keyset, compared as a row: ` and (time, id) > (?, ?)`.
 */
export function keysetSql(
  p: { limit: number; after?: string },
  column: string,
  order?: Order,
): { sql: string; params: unknown[] };
export function keysetSql(
  p: { limit: number; after?: Keyset },
  columns: [string, string],
  order?: Order,
): { sql: string; params: unknown[] };
export function keysetSql(
  p: { limit: number; after?: string | Keyset },
  columns: string | [string, string],
  order: Order = 'asc',
): { sql: string; params: unknown[] } {
  const cols = typeof columns === 'string' ? [columns] : columns;
  const after = !p.after ? [] : typeof p.after === 'string' ? [p.after] : [p.after.at, p.after.id];
  const row = (xs: string[]) => (xs.length === 1 ? xs[0] : `(${xs.join(', ')})`);
  const where = after.length ? ` and ${row(cols)} ${order === 'asc' ? '>' : '<'} ${row(cols.map(() => '?'))}` : '';
  return {
    sql: `${where} order by ${cols.map((c) => (order === 'asc' ? c : `${c} desc`)).join(', ')} limit ?`,
    params: [...after, p.limit + 1],
  };
}
