import { z } from 'zod';
import { SUPPRESSION_KINDS, SUPPRESSION_REASONS } from '../../db/entities/Suppression.js';
import { INVALID_SHOWN, MAX_IMPORT_BYTES, MAX_IMPORT_ROWS } from '../../domain/suppressions/import.js';
import type { SuppressionRow } from '../../domain/suppressions/suppressions.js';
import { MAX_FOOTER_CHARS } from '../../domain/suppressions/email-settings.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { BINARY } from '../schemas.js';
import { Timestamp, text } from '../schemas.js';

export const SuppressionView = z.object({
  id: z.uuid(),
  kind: z
    .enum(SUPPRESSION_KINDS)
    .meta({ description: '`address` (one email address) or `domain` (every address at it)' }),
  value: z.string().meta({ description: 'Normalised: a lower-case address, or a domain without a leading @' }),
  reason: z.enum(SUPPRESSION_REASONS),
  source: z
    .string()
    .nullable()
    .meta({ description: 'Where it came from: `api`, `csv`, `one_click`, `link`, `mailto`, `user`, a bounce…' }),
  created_by: z
    .uuid()
    .nullable()
    .meta({ description: 'The user who added it by hand or by import; null when the system did' }),
  created_at: Timestamp,
});

export const toSuppressionView = (r: SuppressionRow): z.infer<typeof SuppressionView> => ({
  id: r.id,
  kind: r.kind,
  value: r.value,
  reason: r.reason,
  source: r.source,
  created_by: r.created_by,
  created_at: new Date(r.created_at).toISOString(),
});

export const SuppressionPage = pageSchema(SuppressionView);

export const ListSuppressionsQuery = z
  .object({
    ...pageQuery,
    reason: z.enum(SUPPRESSION_REASONS).optional(),
    kind: z.enum(SUPPRESSION_KINDS).optional(),
    q: z
      .string()
      .max(320)
      .optional()
      .meta({ description: 'Entries whose value starts with this (case-insensitive; domains are stored without @)' }),
  })
  .strict();

// The whole rule the server applies to `value`, as a pattern (so the document states it exactly, and
// a generator can produce it: no lookarounds): an ASCII address (a local part of up to three dot-separated atoms)
// or a domain (up to six labels, no "--" in a label, so never an `xn--` label that is not valid
// punycode; a last label of letters), optionally written with a leading @. Its bounds keep every match
// within the lengths domain/suppressions/suppressions.ts `suppressionEntry` accepts (a local part of at
// most 64 characters, an address of at most 254, a domain of at most 253), so whatever matches is added.
const A = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const LOCAL = `(?:${A}{1,64}|${A}{1,31}\\.${A}{1,32}|${A}{1,20}\\.${A}{1,20}\\.${A}{1,22})`;
const LABEL = '[a-zA-Z0-9](?:-?[a-zA-Z0-9]){0,15}';
const HOST = `(?:${LABEL}\\.){1,5}[a-zA-Z]{2,20}`;
const VALUE_PATTERN = `^(?:${LOCAL}@${HOST}|@?${HOST})$`;

export const AddSuppressionBody = z
  .object({
    value: z
      .string()
      .max(254)
      .regex(
        new RegExp(VALUE_PATTERN),
        'value must be an email address (name@example.com) or a domain (example.com or @example.com)',
      )
      .meta({
        description:
          'An email address, or a domain (`example.com` or `@example.com`: every address at it). 400 `invalid_suppression` otherwise',
      }),
    reason: z
      .enum(['manual', 'complaint'])
      .default('manual')
      .meta({ description: '`manual` (default) or `complaint` (the person complained)' }),
  })
  .strict();

export const SuppressionImportForm = z
  .object({
    file: z.unknown().meta({
      jsonSchema: {
        ...BINARY,
        description: `A CSV file (UTF-8, delimited by , ; tab or |) of at most ${MAX_IMPORT_BYTES} bytes (20 MiB; more → 413 file_too_large) and ${MAX_IMPORT_ROWS} rows (more → 413 too_many_rows). The column read is the one the first row names email, email_address, e_mail, address, value or domain (that row is then a header), else the first column.`,
      },
    }),
  })
  .strict();

export const ImportResultView = z.object({
  imported: z.number().int().nonnegative().meta({ description: 'Entries new on the list' }),
  already_present: z
    .number()
    .int()
    .nonnegative()
    .meta({ description: 'Valid entries that were already on the list, or repeated in the file' }),
  invalid: z
    .array(
      z.object({
        row: z
          .number()
          .int()
          .positive()
          .meta({ description: 'The row number in the file, the first row (a header or not) being 1' }),
        value: z.string(),
        message: z.string(),
      }),
    )
    .meta({
      description: `The first ${INVALID_SHOWN} rows that are neither an address nor a domain (blank rows are skipped, not invalid)`,
    }),
  invalid_count: z.number().int().nonnegative(),
});

export const EmailSettingsView = z.object({
  footer: z.string().nullable().meta({
    description: 'Appended to every email the workspace sends: its postal address, as anti-spam law asks; null: none',
  }),
});

export const EmailSettingsBody = z
  .object({
    footer: text({ max: MAX_FOOTER_CHARS, trim: true })
      .nullable()
      .meta({ description: `At most ${MAX_FOOTER_CHARS} characters; null or a blank text removes the footer` }),
  })
  .strict();
