// Shapes of the CSV import routes (docs/imports.md).
import { z } from 'zod';
import { DEDUPE_MODES, LIST_IMPORT_STATUSES, type IListImport } from '../../db/entities/ListImport.js';
import {
  CONTACT_FIELDS,
  MAX_COLUMNS,
  PROBLEM_CODES,
  type Mapping,
  type RowProblem,
} from '../../domain/lists/import-csv.js';
import { MAX_IMPORT_BYTES, type CommitInput, type InvalidRow } from '../../domain/lists/imports.js';
import { badRequest } from '../../domain/errors.js';
import type { FormatChoice } from '../../domain/lists/import-csv.js';
import { DELIMITERS, ENCODINGS, type CsvEncoding, type Delimiter } from '../../lib/csv.js';
import { listImportWorkflowIds } from '../../lib/workflow-ids.js';
import { BINARY } from '../schemas.js';
import { Timestamp, iso, text } from '../schemas.js';

export const ImportParams = z.object({ appId: z.uuid(), importId: z.uuid() });

const Column = z
  .number()
  .int()
  .min(0)
  .max(MAX_COLUMNS - 1);
export const MappingSchema = z
  .object(
    Object.fromEntries(CONTACT_FIELDS.map((f) => [f, Column.nullable().optional()])) as Record<
      (typeof CONTACT_FIELDS)[number],
      z.ZodOptional<z.ZodNullable<typeof Column>>
    >,
  )
  .strict()
  .meta({
    description:
      'Contact field → 0-based column of the file (null or absent: not imported). email or profile_url must be mapped; a column maps to one field at most; a column past the file’s last → 422 invalid_mapping. Columns mapped to no field are not imported.',
  });

const DedupeMode = z.enum(DEDUPE_MODES).meta({
  description:
    'What a row does to a contact that already exists (same normalised email, else same normalised profile URL): skip = leaves it as it is; update_empty = fills its empty fields (default); overwrite = replaces its fields with the row’s non-empty values. An empty cell never clears a field, and an existing email or profile URL is never replaced. In every mode the contact joins the list.',
});
const ListName = text({ min: 1, max: 200, trim: true }).meta({
  description: 'A new list of the product with this name (409 list_name_taken when the product has one, ignoring case)',
});

export const CommitBody = z
  .object({
    mapping: MappingSchema.optional().meta({ description: 'Default: the draft’s suggested_mapping' }),
    dedupe_mode: DedupeMode.optional(),
    list_id: z.uuid().optional().meta({ description: 'An existing list of this product (else 400 invalid_list_id)' }),
    list_name: ListName.optional(),
  })
  .strict()
  .refine((b) => (b.list_id === undefined) !== (b.list_name === undefined), {
    message: 'give exactly one of list_id and list_name',
  })
  // In prose, not as a oneOf of `required` lists: generators make no usable type of that (typescript-fetch
  // loses the properties' types, openapi-generator's python drops the properties).
  .meta({
    description: 'Exactly one of list_id and list_name (400 invalid_body otherwise).',
    examples: [{ list_name: 'Webinar attendees, November', dedupe_mode: 'update_empty' }],
  });

export const toMapping = (m: z.infer<typeof MappingSchema> | undefined): Mapping | undefined =>
  m === undefined
    ? undefined
    : (Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null && v !== undefined)) as Mapping);

export const ImportQuery = z.object({
  invalid_limit: z
    .string()
    .regex(/^[0-9]{1,3}$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(1).max(200))
    .optional()
    .meta({
      jsonSchema: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      description: 'Invalid rows per page (1–200, default 50)',
    }),
  invalid_after: z
    .string()
    .regex(/^[0-9]{1,9}$/, 'must be an integer')
    .transform(Number)
    .optional()
    .meta({
      jsonSchema: { type: 'integer', minimum: 0 },
      description: 'The invalid rows after this row number (the previous page’s invalid_rows.next_after)',
    }),
});

const delimiterNames = { comma: ',', semicolon: ';', tab: '\t', pipe: '|' } as const;
const FORMAT_FIELDS = {
  // A pattern, not an enum: generators name enum members after their values, and a tab names nothing
  // (typescript-fetch writes an empty key; python turns it into a space).
  delimiter: z.string().meta({
    description: 'Overrides the detected delimiter: , ; | or a tab (or the words comma, semicolon, tab, pipe)',
    pattern: `^(?:[,;|\\t]|${Object.keys(delimiterNames).join('|')})$`,
    examples: ['semicolon'],
  }),
  encoding: z.string().meta({ description: 'Overrides the detected encoding', enum: [...ENCODINGS] }),
  has_header: z.string().meta({
    description: 'Overrides the header detection: true when the first row names the columns',
    enum: ['true', 'false'],
  }),
};
const FILE = z.unknown().meta({
  jsonSchema: {
    ...BINARY,
    description: `The CSV file, at most ${MAX_IMPORT_BYTES} bytes (50 MiB; more → 413 file_too_large, refused while it streams): UTF-8 (with or without BOM) or Windows-1252, delimited by , ; tab or |`,
  },
});

/** POST …/import-drafts/preview (multipart/form-data). */
export const PreviewForm = z
  .object({ file: FILE, ...FORMAT_FIELDS })
  .partial({ delimiter: true, encoding: true, has_header: true })
  .strict();

/** POST …/lists/import (multipart/form-data): the preview's fields and the commit's. */
export const ImportForm = z
  .object({
    file: FILE,
    ...FORMAT_FIELDS,
    list_id: z.uuid().meta({ description: 'An existing list of this product (else 400 invalid_list_id)' }),
    list_name: z.string().meta({
      description: 'A new list of the product (1–200 characters; 409 list_name_taken when it has one)',
      minLength: 1,
      maxLength: 200,
    }),
    dedupe_mode: z
      .enum(DEDUPE_MODES)
      .meta({ description: 'skip | update_empty (default) | overwrite: see the commit route' }),
    mapping: z.string().meta({
      description:
        'JSON object: contact field → 0-based column (the commit route’s mapping); default: the suggested mapping',
    }),
  })
  .partial({
    delimiter: true,
    encoding: true,
    has_header: true,
    list_id: true,
    list_name: true,
    dedupe_mode: true,
    mapping: true,
  })
  .strict()
  .meta({ description: 'Exactly one of list_id and list_name.' });

const invalidField = (field: string, message: string) =>
  badRequest('invalid_body', `invalid form field ${field}: ${message}`, [{ path: field, message }]);

/** The format overrides of a form (preview and one-shot import); a bad value is 400 invalid_body naming the field. */
export function formatOf(fields: Record<string, string>): FormatChoice {
  const choice: FormatChoice = {};
  if (fields.delimiter !== undefined) {
    const d = (delimiterNames as Record<string, string>)[fields.delimiter.toLowerCase()] ?? fields.delimiter;
    if (!(DELIMITERS as readonly string[]).includes(d))
      throw invalidField('delimiter', 'one of , ; | or a tab (or comma, semicolon, tab, pipe)');
    choice.delimiter = d as Delimiter;
  }
  if (fields.encoding !== undefined) {
    const e = fields.encoding.toLowerCase();
    if (!(ENCODINGS as readonly string[]).includes(e)) throw invalidField('encoding', `one of ${ENCODINGS.join(', ')}`);
    choice.encoding = e as CsvEncoding;
  }
  if (fields.has_header !== undefined) {
    if (fields.has_header !== 'true' && fields.has_header !== 'false')
      throw invalidField('has_header', 'true or false');
    choice.hasHeader = fields.has_header === 'true';
  }
  return choice;
}

/** The commit part of the one-shot import's form, checked as the commit body is. */
export function commitOf(fields: Record<string, string>): CommitInput {
  let mapping: unknown;
  if (fields.mapping !== undefined) {
    try {
      mapping = JSON.parse(fields.mapping);
    } catch {
      throw invalidField('mapping', 'not JSON');
    }
  }
  const body = { mapping, dedupe_mode: fields.dedupe_mode, list_id: fields.list_id, list_name: fields.list_name };
  const r = CommitBody.safeParse(Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
  if (!r.success) {
    const issue = r.error.issues[0];
    const field = issue.path.length ? String(issue.path[0]) : 'list_id';
    // As the commit body: a malformed list_id has its own code.
    if (field === 'list_id' && issue.path.length)
      throw badRequest('invalid_list_id', `invalid form field list_id: ${issue.message}`, [
        { path: 'list_id', message: issue.message },
      ]);
    throw invalidField(field, issue.message);
  }
  return {
    mapping: toMapping(r.data.mapping),
    dedupeMode: r.data.dedupe_mode,
    listId: r.data.list_id,
    listName: r.data.list_name,
  };
}

const Problem = z.object({
  code: z.enum(PROBLEM_CODES).meta({
    description:
      'missing_identifier: neither email nor profile URL; invalid_email; invalid_profile_url; too_long: a value longer than its field (field says which); column_count: more values than the file has columns',
  }),
  field: z.enum(CONTACT_FIELDS).nullable(),
  message: z.string(),
});
const RowProblems = z.object({
  row: z
    .number()
    .int()
    .positive()
    .meta({ description: 'As a spreadsheet numbers it: the first line of the file is row 1' }),
  reasons: z.array(Problem),
});

const Counts = z.object({
  bytes_total: z.number().int().nonnegative(),
  bytes_read: z.number().int().nonnegative().meta({ description: 'The file offset after the last committed row' }),
  percent: z.number().min(0).max(100),
  rows_read: z.number().int().nonnegative().meta({
    description: 'Rows committed (header and blank rows not counted) = created + updated + duplicate + invalid',
  }),
  created: z.number().int().nonnegative().meta({ description: 'Rows that created a contact' }),
  updated: z.number().int().nonnegative().meta({
    description:
      'Rows that changed a contact that existed before them (in the workspace, or from an earlier row of the file)',
  }),
  duplicate: z.number().int().nonnegative().meta({
    description:
      'Rows that matched an existing contact and changed nothing (skip mode, nothing to fill, same values, or a repeat within the file)',
  }),
  invalid: z.number().int().nonnegative().meta({ description: 'Rows not imported; listed in invalid_rows' }),
  leads_added: z
    .number()
    .int()
    .nonnegative()
    .meta({ description: 'Contacts added to the list (a contact already in it is not added again)' }),
});

export const ImportView = z.object({
  id: z.uuid(),
  app_id: z.uuid(),
  status: z.enum(LIST_IMPORT_STATUSES.filter((s) => s !== 'uploading') as [string, ...string[]]).meta({
    description:
      'draft → queued → running → completed | failed; a cancel: draft → canceled, queued/running → canceling → canceled',
  }),
  source: z.enum(['upload', 'attachment']),
  filename: z.string(),
  size_bytes: z.number().int().nonnegative(),
  sha256: z.string().nullable(),
  format: z.object({
    encoding: z.enum(ENCODINGS),
    bom: z.boolean(),
    delimiter: z.enum(DELIMITERS).meta({
      // As the request's field: a pattern rather than an enum with a tab for a member.
      jsonSchema: {
        type: 'string',
        pattern: '^[,;|\\t]$',
        description: 'The delimiter read: , ; | or a tab',
        examples: [','],
      },
    }),
    has_header: z.boolean(),
  }),
  columns: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      header: z.string().nullable(),
      suggested_field: z.enum(CONTACT_FIELDS).nullable(),
      samples: z.array(z.string()).meta({ description: 'Up to 3 non-empty values of the column' }),
    }),
  ),
  suggested_mapping: z.record(z.string(), z.number().int().nonnegative()).meta({
    description: 'Field → column, from the headers (known spellings) and, for email and profile_url, the values',
  }),
  sample: z.object({
    rows: z
      .array(z.array(z.string()))
      .meta({ description: 'The first 20 data rows as read (values cut to 200 characters)' }),
    rows_checked: z.number().int().nonnegative().meta({
      description:
        'Data rows of the file’s start (up to 1,000) checked with the suggested mapping (with the given mapping for a one-shot import)',
    }),
    valid: z.number().int().nonnegative(),
    invalid: z.number().int().nonnegative(),
    existing_contacts: z
      .number()
      .int()
      .nonnegative()
      .meta({ description: 'Valid sample rows matching a contact already in the workspace' }),
    complete: z.boolean().meta({ description: 'The sample is the whole file' }),
    problems: z.array(RowProblems).meta({ description: 'The first 100 invalid sample rows' }),
  }),
  mapping: z.record(z.string(), z.number().int().nonnegative()).nullable(),
  dedupe_mode: z.enum(DEDUPE_MODES).nullable(),
  list_id: z.uuid().nullable(),
  list_name: z.string().nullable().meta({ description: 'The name given when the commit created the list' }),
  progress: Counts,
  error: z
    .object({ code: z.string(), message: z.string() })
    .nullable()
    .meta({ description: 'Why a failed import failed: invalid_csv (with the row), list_deleted, import_failed' }),
  invalid_rows: z.object({
    items: z.array(
      RowProblems.extend({
        values: z.array(z.string()).meta({ description: 'The row’s values as read (each cut to 1,000 characters)' }),
      }),
    ),
    next_after: z
      .number()
      .int()
      .positive()
      .nullable()
      .meta({ description: 'Pass as invalid_after for the next page; null on the last' }),
  }),
  workflow_id: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  committed_at: Timestamp.nullable(),
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
});
export type ImportViewT = z.infer<typeof ImportView>;

type Sample = ImportViewT['sample'];
const emptySample: Sample = {
  rows: [],
  rows_checked: 0,
  valid: 0,
  invalid: 0,
  existing_contacts: 0,
  complete: false,
  problems: [],
};

export function toImportView(i: IListImport, invalid: { items: InvalidRow[]; next: number | null }): ImportViewT {
  const total = i.sizeBytes;
  return {
    id: i.id,
    app_id: i.app.id,
    status: i.status,
    source: i.source as 'upload' | 'attachment',
    filename: i.filename,
    size_bytes: total,
    sha256: i.sha256 ?? null,
    format: {
      encoding: (i.encoding ?? 'utf-8') as ImportViewT['format']['encoding'],
      bom: i.bom,
      delimiter: (i.delimiter ?? ',') as ImportViewT['format']['delimiter'],
      has_header: i.hasHeader,
    },
    columns: (i.columns ?? []) as ImportViewT['columns'],
    suggested_mapping: (i.suggestedMapping ?? {}) as Record<string, number>,
    sample: { ...emptySample, ...((i.sample ?? {}) as Partial<Sample>) },
    mapping: (i.mapping ?? null) as Record<string, number> | null,
    dedupe_mode: (i.dedupeMode ?? null) as ImportViewT['dedupe_mode'],
    list_id: i.list?.id ?? null,
    list_name: i.listName ?? null,
    progress: {
      bytes_total: total,
      bytes_read: i.cursorBytes,
      percent:
        i.status === 'completed' ? 100 : total ? Math.min(100, Math.round((i.cursorBytes / total) * 1000) / 10) : 0,
      rows_read: i.rowsRead,
      created: i.created,
      updated: i.updated,
      duplicate: i.duplicate,
      invalid: i.invalid,
      leads_added: i.leadsAdded,
    },
    error: i.errorCode ? { code: i.errorCode, message: i.errorMessage ?? '' } : null,
    invalid_rows: {
      items: invalid.items.map((r) => ({
        row: r.row,
        reasons: r.reasons as RowProblem[] as z.infer<typeof Problem>[],
        values: r.values,
      })),
      next_after: invalid.next,
    },
    workflow_id: i.committedAt ? listImportWorkflowIds.run(i.id) : null,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
    committed_at: iso(i.committedAt),
    started_at: iso(i.startedAt),
    finished_at: iso(i.finishedAt),
  };
}
