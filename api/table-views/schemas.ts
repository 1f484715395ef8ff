import { z } from 'zod';
import { VIEW_TABLES } from '../../db/entities/TableView.js';
import type { TableViewRow } from '../../domain/table-views/table-views.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, text } from '../schemas.js';

/** Serialized layouts above this many bytes are refused (400 invalid_body). */
export const LAYOUT_MAX_BYTES = 16 * 1024;

const Key = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_.:-]{0,99}$/, 'a column key: a letter, then letters, digits, _ . : - (at most 100)')
  .meta({ description: 'A column of the table, as the client names it (e.g. `email`, `custom.industry`)' });
const Scalar = z.union([text({ max: 500 }), z.number(), z.boolean(), z.null()]);

export const FILTER_OPS = [
  'eq',
  'neq',
  'lt',
  'lte',
  'gt',
  'gte',
  'in',
  'not_in',
  'contains',
  'starts_with',
  'between',
  'is_null',
  'is_not_null',
] as const;

const Column = z
  .object({
    key: Key,
    width: z.number().int().min(20).max(2000).optional().meta({ description: 'Pixels' }),
    hidden: z.boolean().optional(),
    pinned: z.enum(['left', 'right']).nullable().optional(),
  })
  .strict();
const Filter = z
  .object({
    field: Key,
    op: z.enum(FILTER_OPS),
    value: z
      .union([Scalar, z.array(Scalar).max(100)])
      .optional()
      .meta({ description: 'A value, or up to 100 for in/not_in/between; none for is_null/is_not_null' }),
  })
  .strict();
const Sort = z.object({ field: Key, direction: z.enum(['asc', 'desc']) }).strict();

export const Layout = z
  .object({
    columns: z
      .array(Column)
      .max(100)
      .default([])
      .meta({ description: 'Shown columns in order (at most 100, keys unique)' }),
    filters: z.array(Filter).max(50).default([]),
    sort: z
      .array(Sort)
      .max(5)
      .default([])
      .meta({ description: 'Sort keys in priority order (at most 5, fields unique)' }),
    page_size: z.number().int().min(1).max(200).optional(),
  })
  .strict()
  .superRefine((l, ctx) => {
    const dup = (keys: string[]) => keys.find((k, i) => keys.indexOf(k) !== i);
    const col = dup(l.columns.map((c) => c.key));
    if (col) ctx.addIssue({ code: 'custom', path: ['columns'], message: `column "${col}" appears twice` });
    const s = dup(l.sort.map((x) => x.field));
    if (s) ctx.addIssue({ code: 'custom', path: ['sort'], message: `sort field "${s}" appears twice` });
    if (Buffer.byteLength(JSON.stringify(l)) > LAYOUT_MAX_BYTES)
      ctx.addIssue({ code: 'custom', message: `the layout is larger than ${LAYOUT_MAX_BYTES} bytes` });
  })
  .meta({
    description: `Columns, filters and sort; at most ${LAYOUT_MAX_BYTES} bytes as JSON; column keys and sort fields unique`,
  });

export const TableViewsQuery = z
  .object({
    ...pageQuery,
    table: z.enum(VIEW_TABLES).optional().meta({ description: 'Only the views of this table' }),
  })
  .strict();

export const SaveViewBody = z
  .object({
    table: z.enum(VIEW_TABLES),
    name: text({ max: 100, min: 1, trim: true }).meta({
      description: 'Unique per table for the caller, case-insensitively: saving an existing name replaces its layout',
    }),
    layout: Layout,
  })
  .strict();

export const TableViewView = z.object({
  id: z.uuid(),
  table: z.enum(VIEW_TABLES),
  name: z.string(),
  layout: z.record(z.string(), z.unknown()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toTableView = (v: TableViewRow): z.infer<typeof TableViewView> => ({
  id: v.id,
  table: v.table,
  name: v.name,
  layout: v.layout,
  created_at: new Date(v.created_at).toISOString(),
  updated_at: new Date(v.updated_at).toISOString(),
});

export const TableViewPage = pageSchema(TableViewView);
