// Cursor pagination over UUIDv7 ids (which sort by creation time): `limit` 1..200 (default 50) and
// an opaque `cursor`; responses are `{items, next_cursor}`.
import { z } from 'zod';
import { isUuid } from './ids.js';

export interface PageRequest {
  limit: number;
  after?: string;
}

export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .max(200)
    .optional()
    .transform((c, ctx) => {
      if (c === undefined || c === '') return undefined;
      const id = Buffer.from(c, 'base64url').toString('utf8');
      if (!isUuid(id)) {
        ctx.addIssue({ code: 'custom', message: 'invalid cursor' });
        return z.NEVER;
      }
      return id;
    }),
};

export const toPageRequest = (q: { limit: number; cursor?: string }): PageRequest => ({ limit: q.limit, after: q.cursor });

/** Takes `limit + 1` fetched rows and returns the page plus the cursor of the next one. */
export function page<T extends { id: string }, R>(rows: T[], limit: number, map: (row: T) => R) {
  const items = rows.slice(0, limit);
  const more = rows.length > limit;
  return {
    items: items.map(map),
    next_cursor: more ? Buffer.from(items[items.length - 1].id, 'utf8').toString('base64url') : null,
  };
}

export const pageSchema = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), next_cursor: z.string().nullable() });
