// What a CSV import reads from a file (docs/imports.md): the contact fields a column can map to,
// the preview's detection (encoding, delimiter, header row, a suggested mapping) and the one row
// check that both the preview's sample and the import itself apply, so that what the preview calls
// a problem is exactly what the import will refuse.
import { CsvSyntaxError, detectDelimiter, readAll, type CsvEncoding, type Delimiter } from '../../lib/csv.js';
import { normaliseDomain, normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { canonicalZone } from '../contacts/time-zone.js';
import { AppError, badRequest } from '../errors.js';

/** The contact fields a column can be mapped onto. Other columns are not imported. */
export const CONTACT_FIELDS = [
  'email',
  'profile_url',
  'first_name',
  'last_name',
  'full_name',
  'title',
  'company',
  'company_domain',
  'country',
  'phone',
  'headline',
  'time_zone',
] as const;
export type ContactField = (typeof CONTACT_FIELDS)[number];
/** The descriptive fields (everything but the two identifiers). */
export const DESCRIPTIVE_FIELDS = [
  'first_name',
  'last_name',
  'full_name',
  'title',
  'company',
  'company_domain',
  'country',
  'phone',
  'headline',
  'time_zone',
] as const;
export type DescriptiveField = (typeof DESCRIPTIVE_FIELDS)[number];
export type Mapping = Partial<Record<ContactField, number>>;

/** Longest value per field, in characters (the contacts table's columns). */
export const FIELD_MAX: Record<ContactField, number> = {
  email: 320,
  profile_url: 2048,
  first_name: 200,
  last_name: 200,
  full_name: 400,
  title: 300,
  company: 300,
  company_domain: 255,
  country: 100,
  phone: 40,
  headline: 300,
  time_zone: 64,
};

/** Most columns a file may have. */
export const MAX_COLUMNS = 200;
/** Records of the file's start the preview checks, and how many it shows. */
export const SAMPLE_ROWS = 1000;
export const SAMPLE_SHOWN = 20;
export const SAMPLE_PROBLEMS_SHOWN = 100;
/** Characters kept of a stored value (sample cells, values of invalid rows). */
export const VALUE_CHARS = 1000;

export const PROBLEM_CODES = [
  'missing_identifier',
  'invalid_email',
  'invalid_profile_url',
  'too_long',
  'column_count',
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];
/** The problems a person given as JSON can have (`checkPerson`): a file's `column_count` cannot happen there. */
export const PERSON_PROBLEM_CODES = ['missing_identifier', 'invalid_email', 'invalid_profile_url', 'too_long'] as const;
export interface RowProblem {
  code: ProblemCode;
  field: ContactField | null;
  message: string;
}

/** Header spellings per field, compared without case, accents, spaces or punctuation. */
const ALIASES: Record<ContactField, string[]> = {
  email: [
    'email',
    'emailaddress',
    'mail',
    'workemail',
    'businessemail',
    'professionalemail',
    'emailaddr',
    'courriel',
    'correo',
    'adresseemail',
    'emailadresse',
  ],
  profile_url: [
    'profileurl',
    'linkedin',
    'linkedinurl',
    'linkedinprofile',
    'linkedinprofileurl',
    'profile',
    'profilelink',
    'personlinkedinurl',
    'pronet',
    'pronetprofile',
    'pronetprofileurl',
    'networkprofile',
    'socialurl',
  ],
  first_name: ['firstname', 'first', 'givenname', 'forename', 'prenom', 'vorname', 'nombre'],
  last_name: ['lastname', 'last', 'surname', 'familyname', 'nom', 'nachname', 'apellido', 'apellidos'],
  full_name: ['fullname', 'name', 'contactname', 'personname', 'contact', 'nomcomplet'],
  title: ['title', 'jobtitle', 'position', 'role', 'jobrole', 'designation', 'poste', 'fonction', 'titre'],
  company: [
    'company',
    'companyname',
    'organization',
    'organisation',
    'account',
    'accountname',
    'employer',
    'entreprise',
    'societe',
    'firma',
    'unternehmen',
    'empresa',
  ],
  company_domain: [
    'companydomain',
    'domain',
    'website',
    'companywebsite',
    'companyurl',
    'websiteurl',
    'web',
    'siteweb',
    'emaildomain',
  ],
  country: ['country', 'countrycode', 'pays', 'land', 'pais', 'locationcountry'],
  phone: [
    'phone',
    'phonenumber',
    'mobile',
    'mobilephone',
    'telephone',
    'tel',
    'cell',
    'cellphone',
    'directphone',
    'workphone',
    'telefon',
    'telefono',
  ],
  headline: ['headline', 'bio', 'summary', 'tagline', 'about'],
  time_zone: ['timezone', 'ianatimezone', 'zonehoraire', 'fuseauhoraire', 'zeitzone', 'zonahoraria'],
};
const ALIAS_TO_FIELD = new Map<string, ContactField>(
  Object.entries(ALIASES).flatMap(([f, names]) => names.map((n) => [n, f as ContactField] as const)),
);

const headerKey = (h: string) =>
  h
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

const looksEmail = (v: string) => v.includes('@') && normaliseEmail(v) !== null;
const looksUrl = (v: string) => /^(https?:\/\/|www\.)\S+$/i.test(v.trim());
const looksProfile = (v: string) => looksUrl(v) && /\/(in|pub|profile|people)\//i.test(v);
const looksNumber = (v: string) => /^[+-]?[\d\s.,()/-]+$/.test(v.trim()) && /\d/.test(v);

/**
 * Whether the first record is a header: not when one of its values is an email address or a URL;
 * yes when one names a known field; otherwise yes when each of its values is non-empty, distinct,
 * and the column below it holds something else (numbers, emails, URLs where the first holds words,
 * or at least never the same word again).
 */
export function detectHeader(records: string[][]): boolean {
  const [first, ...rest] = records;
  if (!first) return false;
  const cells = first.map((v) => v.trim());
  if (cells.some((v) => looksEmail(v) || looksUrl(v))) return false;
  if (cells.some((v) => ALIAS_TO_FIELD.has(headerKey(v)))) return true;
  if (!rest.length) return false;
  if (cells.some((v) => v === '') || new Set(cells.map((v) => v.toLowerCase())).size !== cells.length) return false;
  const below = rest.slice(0, 50);
  for (let i = 0; i < cells.length; i++) {
    if (looksNumber(cells[i])) return false;
    const col = below.map((r) => (r[i] ?? '').trim()).filter(Boolean);
    if (col.some((v) => v.toLowerCase() === cells[i].toLowerCase())) return false;
  }
  // Some column is typed below (numbers, emails, URLs) while its first cell is a word.
  return cells.some((_, i) => {
    const col = below.map((r) => (r[i] ?? '').trim()).filter(Boolean);
    return col.length > 0 && col.filter((v) => looksNumber(v) || looksEmail(v) || looksUrl(v)).length >= col.length / 2;
  });
}

/**
 * A field per column, at most one column per field: by header name first (known spellings), then,
 * for the identifiers still unmapped, by content (a column of which most sample values are email
 * addresses, or profile URLs).
 */
export function suggestMapping(
  headers: (string | null)[],
  rows: string[][],
): { mapping: Mapping; byColumn: (ContactField | null)[] } {
  const byColumn: (ContactField | null)[] = headers.map(() => null);
  const mapping: Mapping = {};
  headers.forEach((h, i) => {
    const f = h ? ALIAS_TO_FIELD.get(headerKey(h)) : undefined;
    if (f && mapping[f] === undefined) {
      mapping[f] = i;
      byColumn[i] = f;
    }
  });
  const share = (i: number, test: (v: string) => boolean) => {
    const col = rows
      .slice(0, 200)
      .map((r) => (r[i] ?? '').trim())
      .filter(Boolean);
    return col.length ? col.filter(test).length / col.length : 0;
  };
  for (const [field, test] of [
    ['email', looksEmail],
    ['profile_url', looksProfile],
  ] as const) {
    if (mapping[field] !== undefined) continue;
    const free = headers.map((_, i) => i).filter((i) => byColumn[i] === null);
    const best = free.map((i) => [i, share(i, test)] as const).sort((a, b) => b[1] - a[1])[0];
    if (best && best[1] >= 0.5) {
      mapping[field] = best[0];
      byColumn[best[0]] = field;
    }
  }
  return { mapping, byColumn };
}

/** Refuses a mapping that cannot be applied: 422 `invalid_mapping`. */
export function checkMapping(mapping: Mapping, columnCount: number): void {
  const used = new Map<number, string>();
  for (const [field, col] of Object.entries(mapping) as [ContactField, number | undefined][]) {
    if (col === undefined || col === null) continue;
    if (!(CONTACT_FIELDS as readonly string[]).includes(field))
      throw new AppError(422, 'invalid_mapping', `unknown field "${field}"`);
    if (!Number.isInteger(col) || col < 0 || col >= columnCount) {
      throw new AppError(
        422,
        'invalid_mapping',
        `${field}: the file has ${columnCount} column(s), numbered from 0; there is no column ${col}`,
      );
    }
    if (used.has(col))
      throw new AppError(422, 'invalid_mapping', `column ${col} is mapped twice (${used.get(col)} and ${field})`);
    used.set(col, field);
  }
  if (mapping.email === undefined && mapping.profile_url === undefined) {
    throw new AppError(
      422,
      'invalid_mapping',
      'map a column to email or to profile_url: a contact is identified by one of them',
    );
  }
}

/** A row that can be imported: its identifiers (as given and normalised) and its descriptive values. */
export interface CleanRow {
  email: string | null;
  emailKey: string | null;
  profileUrl: string | null;
  urlKey: string | null;
  fields: Partial<Record<DescriptiveField, string>>;
}

/** Characters as the database counts them (code points), computed only when it could matter. */
const tooLong = (v: string, max: number) => v.length > max && [...v].length > max;

/**
 * A CSV row's contact, or its problems: the one rule (`checkPerson`) over the row's mapped cells,
 * plus what only a file can get wrong: more values than the file has columns (its values would be
 * shifted). `domains` memoises the company-domain normalisation across the rows of a chunk.
 */
export function checkRow(
  values: string[],
  columnCount: number,
  mapping: Mapping,
  domains?: Map<string, string>,
): { row: CleanRow | null; problems: RowProblem[] } {
  const problems: RowProblem[] = [];
  if (values.length > columnCount) {
    problems.push({
      code: 'column_count',
      field: null,
      message: `the row has ${values.length} values; the file has ${columnCount} columns`,
    });
  }
  return checkPerson(
    (f) => {
      const i = mapping[f];
      return i === undefined ? '' : (values[i] ?? '');
    },
    domains,
    problems,
  );
}

/**
 * The row rule of every way people arrive in a list (a CSV row, a person of `POST
 * /api/lists/{id}/leads`): the person's contact, or their problems. `value(field)` is the field's
 * value as given ('' when absent). Values are trimmed; an empty one is no value. A person needs an
 * email or a profile URL, and each given one must be valid; no value may be longer than its field.
 * The company domain is stored normalised (`acme.com`) when it is a domain or URL, as given
 * otherwise; the time zone in its canonical spelling when it is an IANA name, as given otherwise.
 * `domains` memoises the domain normalisation; `problems` may hold problems found before (the row
 * is then refused with them first).
 */
export function checkPerson(
  value: (field: ContactField) => string,
  domains?: Map<string, string>,
  problems: RowProblem[] = [],
): { row: CleanRow | null; problems: RowProblem[] } {
  const get = (f: ContactField): string => value(f).trim();
  const email = get('email');
  const profileUrl = get('profile_url');
  let emailKey: string | null = null;
  let urlKey: string | null = null;
  if (email) {
    if (tooLong(email, FIELD_MAX.email))
      problems.push({
        code: 'too_long',
        field: 'email',
        message: `email is longer than ${FIELD_MAX.email} characters`,
      });
    else if (!(emailKey = normaliseEmail(email)))
      problems.push({ code: 'invalid_email', field: 'email', message: 'email is not an email address' });
  }
  if (profileUrl) {
    if (tooLong(profileUrl, FIELD_MAX.profile_url))
      problems.push({
        code: 'too_long',
        field: 'profile_url',
        message: `profile_url is longer than ${FIELD_MAX.profile_url} characters`,
      });
    else if (!(urlKey = normaliseProfileUrl(profileUrl)) || urlKey.length > FIELD_MAX.profile_url) {
      urlKey = null;
      problems.push({
        code: 'invalid_profile_url',
        field: 'profile_url',
        message: 'profile_url is not an http(s) URL',
      });
    }
  }
  if (!email && !profileUrl)
    problems.push({
      code: 'missing_identifier',
      field: null,
      message: 'the row has neither an email nor a profile URL',
    });
  const fields: Partial<Record<DescriptiveField, string>> = {};
  for (const f of DESCRIPTIVE_FIELDS) {
    let v = get(f);
    if (!v) continue;
    if (f === 'company_domain') {
      let d = domains?.get(v);
      if (d === undefined) {
        d = normaliseDomain(v) ?? v;
        domains?.set(v, d);
      }
      v = d;
    }
    // An IANA zone in its canonical spelling (as PATCH /api/leads/{id} stores it); anything else as
    // given, like a company domain: the sending rule ignores a zone it does not know.
    if (f === 'time_zone') v = canonicalZone(v) ?? v;
    if (tooLong(v, FIELD_MAX[f]))
      problems.push({ code: 'too_long', field: f, message: `${f} is longer than ${FIELD_MAX[f]} characters` });
    else fields[f] = v;
  }
  if (problems.length) return { row: null, problems };
  return {
    row: { email: emailKey ? email : null, emailKey, profileUrl: urlKey ? profileUrl : null, urlKey, fields },
    problems,
  };
}

export const cutValue = (v: string, max = VALUE_CHARS): string =>
  v.length <= max ? v : /[\ud800-\udbff]$/.test(v.slice(0, max)) ? v.slice(0, max - 1) : v.slice(0, max);
const isBlank = (values: string[]) => values.every((v) => v.trim() === '');

export interface FormatChoice {
  delimiter?: Delimiter;
  encoding?: CsvEncoding;
  hasHeader?: boolean;
}

export interface SampleProblem {
  row: number;
  reasons: RowProblem[];
}

export interface Analysis {
  encoding: CsvEncoding;
  bom: boolean;
  delimiter: Delimiter;
  hasHeader: boolean;
  /** The header's row number (blank lines before it count), 0 without a header. */
  headerRow: number;
  columnCount: number;
  columns: { index: number; header: string | null; suggested_field: ContactField | null; samples: string[] }[];
  suggestedMapping: Mapping;
  sample: {
    rows: string[][];
    rows_checked: number;
    valid: number;
    invalid: number;
    /** The whole file was in the sample. */
    complete: boolean;
    problems: SampleProblem[];
  };
  /** Identifier keys of the sample's valid rows, to count those already in the workspace. */
  keys: { emails: string[]; urls: string[]; rows: { emailKey: string | null; urlKey: string | null }[] };
}

/**
 * The preview of a file from its head (its first bytes; `complete` when that is the whole file):
 * encoding (UTF-8 when every byte of the file is, else Windows-1252), delimiter, header row,
 * columns, a suggested mapping, and the first SAMPLE_ROWS records checked with it (or with
 * `mapping` when one is given). A given `choice` replaces what would be detected.
 * 400 `invalid_file`: no record at all, or more than MAX_COLUMNS columns; 400 `invalid_csv`: the
 * sample is not CSV (an unclosed quote, a record over the size limit).
 */
export function analyse(
  head: Buffer,
  facts: { complete: boolean; utf8: boolean; bom: boolean },
  choice: FormatChoice = {},
  mapping?: Mapping,
): Analysis {
  const encoding: CsvEncoding = choice.encoding ?? (facts.utf8 ? 'utf-8' : 'windows-1252');
  const delimiter = choice.delimiter ?? detectDelimiter(head, encoding, facts.complete);
  let records;
  try {
    records = readAll(head, { delimiter, encoding, complete: facts.complete, maxRecords: SAMPLE_ROWS + 2 });
  } catch (err) {
    if (err instanceof CsvSyntaxError)
      throw badRequest('invalid_csv', `the file is not valid CSV at row ${err.recordsBefore + 1}: ${err.message}`, {
        row: err.recordsBefore + 1,
      });
    throw err;
  }
  // Rows are numbered as a spreadsheet shows them: the first record is row 1, blank ones count.
  const numbered = records.map((r, i) => ({ row: i + 1, values: r.values })).filter((r) => !isBlank(r.values));
  if (!numbered.length) throw badRequest('invalid_file', 'the file has no rows');
  const hasHeader = choice.hasHeader ?? detectHeader(numbered.slice(0, 51).map((r) => r.values));
  const headerRecord = hasHeader ? numbered[0] : undefined;
  const data = hasHeader ? numbered.slice(1) : numbered;
  const columnCount = Math.max(headerRecord?.values.length ?? 0, ...data.slice(0, 200).map((r) => r.values.length));
  if (columnCount > MAX_COLUMNS)
    throw badRequest('invalid_file', `the file has ${columnCount} columns; at most ${MAX_COLUMNS} are read`);
  const headers = Array.from({ length: columnCount }, (_, i) => {
    const h = headerRecord?.values[i]?.trim();
    return h ? cutValue(h, 200) : null;
  });
  const suggested = suggestMapping(
    headers,
    data.map((r) => r.values),
  );
  const use = mapping ?? suggested.mapping;
  const checked = data.slice(0, SAMPLE_ROWS);
  const problems: SampleProblem[] = [];
  const keys: Analysis['keys'] = { emails: [], urls: [], rows: [] };
  let valid = 0;
  const domains = new Map<string, string>();
  const identifiable = use.email !== undefined || use.profile_url !== undefined;
  for (const r of checked) {
    if (!identifiable) break;
    const { row, problems: reasons } = checkRow(r.values, columnCount, use, domains);
    if (row) {
      valid++;
      if (row.emailKey) keys.emails.push(row.emailKey);
      if (row.urlKey) keys.urls.push(row.urlKey);
      keys.rows.push({ emailKey: row.emailKey, urlKey: row.urlKey });
    } else if (problems.length < SAMPLE_PROBLEMS_SHOWN) problems.push({ row: r.row, reasons });
  }
  return {
    encoding,
    bom: encoding === 'utf-8' && facts.bom,
    delimiter,
    hasHeader,
    headerRow: headerRecord?.row ?? 0,
    columnCount,
    columns: headers.map((header, index) => ({
      index,
      header,
      suggested_field: suggested.byColumn[index],
      samples: data
        .map((r) => (r.values[index] ?? '').trim())
        .filter(Boolean)
        .slice(0, 3)
        .map((v) => cutValue(v, 200)),
    })),
    suggestedMapping: suggested.mapping,
    sample: {
      rows: data.slice(0, SAMPLE_SHOWN).map((r) => r.values.map((v) => cutValue(v, 200))),
      rows_checked: identifiable ? checked.length : 0,
      valid,
      invalid: identifiable ? checked.length - valid : 0,
      complete: facts.complete && records.length < SAMPLE_ROWS + 2 && data.length <= SAMPLE_ROWS,
      problems,
    },
    keys,
  };
}
