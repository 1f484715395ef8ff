import { z } from 'zod';
import { EXPORT_STATUSES, type IContactExport } from '../../db/entities/ContactExport.js';
import {
  FIT_LABELS,
  EDITABLE,
  type ContactDetail,
  type ContactFilters,
  type ContactRow,
  type EditedLead,
} from '../../domain/contacts/contacts.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { contactExportWorkflowIds } from '../../lib/workflow-ids.js';
import { Timestamp, iso, text } from '../schemas.js';

const isoOf = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

// ---------------------------------------------------------------------------------------------
// Filters (GET /api/contacts query, POST /api/contacts/export body)

const FitFilter = z
  .enum([...FIT_LABELS, 'none'])
  .meta({ description: 'A fit label, or `none` for contacts without one' });
const Q = text({ max: 200, trim: true }).meta({
  description:
    'Case-insensitive substring of the full name, first + last name, email, company or title (% and _ match literally); blank means no filter',
});
const filterDocs = {
  list_id:
    'Contacts that are a lead of this list (404 another workspace’s, 403 not_assigned a product you were not given)',
  app_id: 'Contacts that are a lead of a list of this product (404 / 403 as for list_id)',
};

export const ContactsQuery = z
  .object({
    ...pageQuery,
    list_id: z.uuid().optional().meta({ description: filterDocs.list_id }),
    app_id: z.uuid().optional().meta({ description: filterDocs.app_id }),
    fit: FitFilter.optional(),
    pinned: z
      .enum(['true', 'false'])
      .optional()
      .meta({ description: 'Only pinned (`true`) or only unpinned (`false`) contacts' }),
    q: Q.optional(),
  })
  .strict();

export const ExportBody = z
  .object({
    list_id: z.uuid().optional().meta({ description: filterDocs.list_id }),
    app_id: z.uuid().optional().meta({ description: filterDocs.app_id }),
    fit: FitFilter.optional(),
    pinned: z.boolean().optional().meta({ description: 'Only pinned (true) or only unpinned (false) contacts' }),
    q: Q.optional(),
  })
  .strict();

export const toFilters = (f: {
  list_id?: string;
  app_id?: string;
  fit?: ContactFilters['fit'];
  pinned?: boolean | 'true' | 'false';
  q?: string;
}): ContactFilters => ({
  listId: f.list_id,
  appId: f.app_id,
  fit: f.fit,
  pinned: f.pinned === undefined ? undefined : f.pinned === true || f.pinned === 'true',
  q: f.q || undefined,
});

// ---------------------------------------------------------------------------------------------
// Contacts

const FieldName = z.enum(Object.keys(EDITABLE) as [string, ...string[]]);

export const ContactView = z.object({
  id: z.uuid(),
  name: z
    .string()
    .nullable()
    .meta({ description: 'The full name, else first and last name joined; null when none is known' }),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  full_name: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  title: z.string().nullable(),
  headline: z.string().nullable(),
  company: z.string().nullable(),
  company_domain: z.string().nullable(),
  country: z.string().nullable(),
  time_zone: z.string().nullable().meta({
    description:
      'Beyond the spec. The IANA time zone given for the contact (PATCH /api/leads/{id}, a list import); null: a campaign whose sending windows follow the recipient uses the country’s zone when it has a single one, else the campaign’s',
  }),
  profile_url: z.string().nullable(),
  fit_score: z.number().int().min(0).max(100).nullable(),
  fit_label: z.enum(FIT_LABELS).nullable(),
  fit_updated_at: Timestamp.nullable(),
  pinned: z.boolean(),
  pinned_at: Timestamp.nullable(),
  unsubscribed_at: Timestamp.nullable().meta({
    description:
      'Set when the contact asked not to be contacted (PATCH /api/leads/{id} `unsubscribed`): no campaign enrolls it and running enrollments stop before their next send',
  }),
  email_bounced_at: Timestamp.nullable().meta({
    description:
      'Set when a campaign email to this address bounced: campaigns whose first send is an email skip it (`email_bounced`) and its running enrollments send no more email; a new email address clears it',
  }),
  enriched_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toContactView = (r: ContactRow): z.infer<typeof ContactView> => ({
  id: r.id,
  name: r.full_name ?? ([r.first_name, r.last_name].filter(Boolean).join(' ') || null),
  first_name: r.first_name,
  last_name: r.last_name,
  full_name: r.full_name,
  email: r.email,
  phone: r.phone,
  title: r.title,
  headline: r.headline,
  company: r.company,
  company_domain: r.company_domain,
  country: r.country,
  time_zone: r.time_zone,
  profile_url: r.profile_url,
  fit_score: r.fit_score,
  fit_label: r.fit_label as z.infer<typeof ContactView>['fit_label'],
  fit_updated_at: isoOf(r.fit_updated_at),
  pinned: r.pinned_at !== null,
  pinned_at: isoOf(r.pinned_at),
  unsubscribed_at: isoOf(r.unsubscribed_at),
  email_bounced_at: isoOf(r.email_bounced_at),
  enriched_at: isoOf(r.enriched_at),
  created_at: new Date(r.created_at).toISOString(),
  updated_at: new Date(r.updated_at).toISOString(),
});

export const ContactPage = pageSchema(ContactView);

export const ContactDetailView = ContactView.extend({
  edited_fields: z
    .array(FieldName)
    .meta({ description: 'Fields a person edited (PATCH /api/leads/{id}): enrichment never overwrites them' }),
  enriched_fields: z.array(FieldName).meta({ description: 'Fields enrichment wrote' }),
  network_provider_id: z.string().nullable(),
  leads: z
    .array(
      z.object({
        id: z
          .uuid()
          .meta({ description: 'The lead (membership) id: PATCH /api/leads/{id}, `lead_id` of webhook events' }),
        list_id: z.uuid(),
        list_name: z.string(),
        app_id: z.uuid(),
        source: z.string(),
        created_at: Timestamp,
      }),
    )
    .meta({ description: 'Its memberships of the lists you can see, oldest first' }),
});

export const toContactDetailView = (c: ContactDetail): z.infer<typeof ContactDetailView> => ({
  ...toContactView(c),
  edited_fields: c.edited_fields,
  enriched_fields: c.enriched_fields,
  network_provider_id: c.network_provider_id,
  leads: c.leads.map((l) => ({
    id: l.id,
    list_id: l.list_id,
    list_name: l.list_name,
    app_id: l.app_id,
    source: l.source,
    created_at: new Date(l.created_at).toISOString(),
  })),
});

export const FitBody = z
  .object({
    score: z.number().int().min(0).max(100).nullable().optional().meta({ description: '0..100; null clears it' }),
    label: z.enum(FIT_LABELS).nullable().optional().meta({ description: 'null clears it' }),
  })
  .strict()
  .refine((b) => b.score !== undefined || b.label !== undefined, { message: 'give score and/or label' })
  .meta({ minProperties: 1 });

// ---------------------------------------------------------------------------------------------
// Lead edits. Each pattern is the whole rule the server applies (the document states it exactly):
// whatever matches it normalises to a dedupe key (lib/normalise.ts) that fits its column.

/** A DNS label (no `xn--` A-labels: they must be valid punycode), and a last label of letters (never read as IPv4). */
const LABEL = '(?![xX][nN]--)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const TOP = '[a-zA-Z]{2,63}';
const HOST = `(?:${LABEL}\\.)+${TOP}`;
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
/** An ASCII address: dot-separated atoms (a local part of at most 64 characters) @ a DNS name. */
const EMAIL_PATTERN = `^(?=[^@]{1,64}@)${ATOM}(?:\\.${ATOM})*@${HOST}$`;
/** Names lib/outbound-http.ts treats as local: not a public profile host. */
const ci = (w: string) => w.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`).replace(/\./g, '\\.');
const LOCAL = `(?:${['localhost', 'local', 'localdomain', 'internal', 'home.arpa'].map(ci).join('|')})`;
const PORT = '(?::(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?';
const HEX = '[0-9A-Fa-f]';
const CONT = '%[89aAbB][0-9A-Fa-f]';
/** A percent-escape sequence that decodes to one UTF-8 character (decodeURIComponent refuses anything else). */
const PCT = `%(?:[0-7]${HEX}|[cC][2-9a-fA-F]${CONT}|[dD]${HEX}${CONT}|[eE]0%[aAbB]${HEX}${CONT}|[eE][1-9a-cA-CefEF]${CONT}${CONT}|[eE][dD]%[89]${HEX}${CONT}|[fF]0%(?:9${HEX}|[aAbB]${HEX})${CONT}${CONT}|[fF][1-3]${CONT}${CONT}${CONT}|[fF]4%8${HEX}${CONT}${CONT})`;
/** No whitespace or control characters, and `%` only in a valid escape. */
const CHAR = '[^%\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';
/**
 * http(s), a public DNS host, a path of at most 140 characters or escapes (so that its normalised
 * form, escapes re-encoded, fits the 2048 characters of the dedupe key), then any query or fragment.
 */
const PROFILE_URL_PATTERN = `^${ci('http')}[sS]?://(?!(?:[a-zA-Z0-9-]+\\.)*${LOCAL}(?:[:/?#]|$))${HOST}${PORT}(?:/(?:(?![?#])(?:${CHAR}|${PCT})){0,140})?(?:[?#](?:${CHAR}|${PCT})*)?$`;
/** Digits with the usual separators: an optional +, an optional (, a digit first and a digit last. */
const PHONE_PATTERN = '^\\+?\\(?[0-9][0-9 ().\\/-]*[0-9]$';

const field = (max: number, description?: string) =>
  text({ max, min: 1, trim: true })
    .nullable()
    .optional()
    .meta({ description: `${description ? `${description}; ` : ''}null clears it` });
const patterned = (max: number, pattern: string, message: string, description: string) =>
  z
    .string()
    .max(max)
    .regex(new RegExp(pattern), message)
    .nullable()
    .optional()
    .meta({ description: `${description}; null clears it` });

export const LeadPatchBody = z
  .object({
    first_name: field(200),
    last_name: field(200),
    full_name: field(400, 'Set on its own; changing first or last name rewrites a full name that was their join'),
    title: field(300),
    headline: field(300),
    company: field(300),
    company_domain: z
      .string()
      .max(253)
      .regex(new RegExp(`^${HOST}$`), 'company_domain must be a domain name such as example.com')
      .nullable()
      .optional()
      .meta({ description: 'A domain name (stored lower-case, without www.); null clears it' }),
    country: field(100),
    phone: patterned(
      40,
      PHONE_PATTERN,
      'phone must be digits with + ( ) . / - or spaces',
      'Digits with + ( ) . / - or spaces',
    ),
    email: patterned(
      254,
      EMAIL_PATTERN,
      'email must be an email address',
      'Unique in the workspace once normalised (409 contact_exists)',
    ),
    profile_url: patterned(
      2048,
      PROFILE_URL_PATTERN,
      'profile_url must be an http(s) URL with a public host name',
      'Unique in the workspace once normalised (409 contact_exists)',
    ),
    time_zone: z.string().min(1).max(64).nullable().optional().meta({
      description:
        'Beyond the spec. An IANA time zone name (e.g. Europe/Berlin), stored in its canonical spelling; an unknown one is 400 invalid_time_zone; null clears it (the country’s zone is used when it has a single one). Not an edited field',
    }),
    unsubscribed: z.boolean().optional().meta({
      description:
        'true records that the contact asked not to be contacted (kept for the whole workspace): enrollment skips it (`unsubscribed`) and its running enrollments stop before their next send; false clears the record. Not an edited field',
    }),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'give at least one field' })
  .meta({ minProperties: 1 });

export const EditedLeadView = z.object({
  id: z.uuid(),
  list_id: z.uuid(),
  app_id: z.uuid(),
  contact_id: z.uuid(),
  source: z.string(),
  created_at: Timestamp,
  contact: ContactDetailView,
});

export const toEditedLeadView = (l: EditedLead): z.infer<typeof EditedLeadView> => ({
  id: l.id,
  list_id: l.list_id,
  app_id: l.app_id,
  contact_id: l.contact_id,
  source: l.source,
  created_at: new Date(l.created_at).toISOString(),
  contact: toContactDetailView(l.contact),
});

// ---------------------------------------------------------------------------------------------
// Exports

export const ExportQuery = z
  .object({
    ...pageQuery,
    id: z.uuid().optional().meta({
      description: 'Download this export’s CSV file instead of listing (text/csv; 409 until it is completed)',
    }),
  })
  .strict();

export const ExportView = z.object({
  id: z.uuid(),
  status: z.enum(EXPORT_STATUSES),
  filters: z.object({
    list_id: z.uuid().nullable(),
    app_id: z.uuid().nullable(),
    fit: FitFilter.nullable(),
    pinned: z.boolean().nullable(),
    q: z.string().nullable(),
  }),
  row_count: z
    .number()
    .int()
    .nonnegative()
    .meta({ description: 'Contacts written so far (all of them once completed)' }),
  byte_count: z.number().int().nonnegative().meta({ description: 'Size of the file written so far' }),
  file_name: z.string(),
  download_url: z
    .string()
    .nullable()
    .meta({ description: 'Where to download the CSV once completed (GET, same credentials)' }),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  workflow_id: z.string(),
  requested_by: z.uuid(),
  created_at: Timestamp,
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
});

export const exportFileName = (e: IContactExport) =>
  `contacts-${e.createdAt.toISOString().slice(0, 10)}-${e.id.slice(-12)}.csv`;

export const toExportView = (e: IContactExport): z.infer<typeof ExportView> => ({
  id: e.id,
  status: e.status as z.infer<typeof ExportView>['status'],
  filters: {
    list_id: e.filters.listId ?? null,
    app_id: e.filters.appId ?? null,
    fit: (e.filters.fit as z.infer<typeof FitFilter> | undefined) ?? null,
    pinned: e.filters.pinned ?? null,
    q: e.filters.q ?? null,
  },
  row_count: e.rowCount,
  byte_count: Number(e.byteCount),
  file_name: exportFileName(e),
  download_url: e.status === 'completed' ? `/api/contacts/export?id=${e.id}` : null,
  error: e.errorCode ? { code: e.errorCode, message: e.errorMessage ?? '' } : null,
  workflow_id: contactExportWorkflowIds.export(e.id),
  requested_by: e.requestedBy,
  created_at: e.createdAt.toISOString(),
  started_at: iso(e.startedAt),
  finished_at: iso(e.finishedAt),
});

export const ExportPage = pageSchema(ExportView);

export const Csv = z.string().meta({
  description:
    'The CSV file (RFC 4180, UTF-8 with a byte order mark, CRLF records; header: id, name, first_name, last_name, email, phone, title, headline, company, company_domain, country, time_zone, profile_url, fit_score, fit_label, pinned, lists, created_at, updated_at). Cells starting with = + - @ tab or CR are prefixed with an apostrophe.',
});
