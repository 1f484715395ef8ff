// The CSV file of a contacts export (docs/contacts.md): its columns, one page of rows at a time, with
// csv-stringify (RFC 4180: CRLF records, fields quoted when they hold a comma, quote, CR or LF, quotes
// doubled). Spreadsheet formula injection is neutralised: a cell starting with = + - @ tab or CR (or
// their full-width forms) gets a leading apostrophe, so Excel, LibreOffice, Sheets and Numbers show
// it as text instead of evaluating it. The file starts with a UTF-8 byte order mark, which Excel
// needs to read UTF-8 (other readers skip it).
import { stringify } from 'csv-stringify/sync';

/** One contact as the export query returns it (column names of `contacts`, plus its list names). */
export interface ExportContactRow {
  id: string;
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  title: string | null;
  headline: string | null;
  company: string | null;
  company_domain: string | null;
  country: string | null;
  /** IANA zone (docs/contacts.md "Time zone"); absent from rows written before it existed. */
  time_zone?: string | null;
  profile_url: string | null;
  fit_score: number | null;
  fit_label: string | null;
  pinned_at: Date | string | null;
  lists: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export const EXPORT_COLUMNS = [
  'id',
  'name',
  'first_name',
  'last_name',
  'email',
  'phone',
  'title',
  'headline',
  'company',
  'company_domain',
  'country',
  'time_zone',
  'profile_url',
  'fit_score',
  'fit_label',
  'pinned',
  'lists',
  'created_at',
  'updated_at',
] as const;

const OPTIONS = { record_delimiter: '\r\n', quote_record_delimiter: true, escape_formulas: true } as const;
const iso = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString();

/** The first bytes of every export: the byte order mark and the header record. */
export function csvHeader(): Buffer {
  return Buffer.from(`\ufeff${stringify([[...EXPORT_COLUMNS]], OPTIONS)}`, 'utf8');
}

/** One page of records (no header), as the bytes of the file. */
export function csvRecords(rows: readonly ExportContactRow[]): Buffer {
  const records = rows.map((r) => [
    r.id,
    r.full_name ?? ([r.first_name, r.last_name].filter(Boolean).join(' ') || null),
    r.first_name,
    r.last_name,
    r.email,
    r.phone,
    r.title,
    r.headline,
    r.company,
    r.company_domain,
    r.country,
    r.time_zone ?? null,
    r.profile_url,
    r.fit_score,
    r.fit_label,
    r.pinned_at ? 'true' : 'false',
    r.lists,
    iso(r.created_at),
    iso(r.updated_at),
  ]);
  return Buffer.from(stringify(records, OPTIONS), 'utf8');
}
