// People checked by the row rule (import-csv.ts `checkPerson`) applied to the workspace's contacts:
// what a CSV import's chunk (import-run.ts) and `POST /api/lists/{id}/leads` (add-leads.ts) share,
// so that both dedupe the same way (docs/imports.md, "Dedupe and counts"): a person matches a
// contact by normalised email, else by normalised profile URL; people apply in order, so a later
// one meets the contact an earlier one created; the dedupe mode says what a person does to the
// contact they match. Also the lookup of the matching contacts and the lock both take.
import type { DedupeMode } from '../../db/entities/ListImport.js';
import { uuidv7 } from '../../lib/ids.js';
import type { PgClient } from '../../lib/pg-raw.js';
import { DESCRIPTIVE_FIELDS, type CleanRow, type DescriptiveField } from './import-csv.js';

/** A contact as the rows see it: its stored columns, whether this batch creates it, whether a row changed it. */
export type ContactState = {
  id: string;
  isNew: boolean;
  changed: boolean;
  email: string | null;
  email_normalised: string | null;
  profile_url: string | null;
  profile_url_normalised: string | null;
} & Record<DescriptiveField, string | null>;

/** The contacts table's columns a row writes. */
export const CONTACT_COLUMNS = [
  'email',
  'email_normalised',
  'profile_url',
  'profile_url_normalised',
  ...DESCRIPTIVE_FIELDS,
] as const;

/** What a row did: created a contact, changed the one it matched, or matched one and changed nothing. */
export type RowOutcome = 'created' | 'updated' | 'duplicate';

/**
 * Contacts of one workspace are written by one batch at a time (a CSV import's chunk, a JSON add):
 * the advisory lock key, taken with `pg_advisory_xact_lock(hashtext(…))` in the writing transaction,
 * so that their row locks never deadlock and their lookups see each other's contacts.
 */
export const CONTACTS_LOCK_PREFIX = 'contacts-import:';
export const contactsWriteLock = (workspaceId: string): string => `${CONTACTS_LOCK_PREFIX}${workspaceId}`;

/**
 * The contacts matching the rows' emails or profile URLs (one unique-index probe per key), locked in
 * id order. A named statement: run it on a generic plan (`plan_cache_mode = force_generic_plan`, see
 * import-run.ts BEGIN), or a workspace the statistics do not know yet may be planned as a walk of
 * another unique index by its workspace prefix.
 */
export async function lockMatchingContacts(
  c: PgClient,
  workspaceId: string,
  rows: readonly CleanRow[],
): Promise<ContactState[]> {
  if (!rows.length) return [];
  const emails = [...new Set(rows.flatMap((r) => (r.emailKey ? [r.emailKey] : [])))];
  const urls = [...new Set(rows.flatMap((r) => (r.urlKey ? [r.urlKey] : [])))];
  const { rows: found } = await c.query<ContactState>({
    name: 'list-import-contacts',
    text: `select id, ${CONTACT_COLUMNS.join(', ')} from contacts where id in (
             select x.id from unnest($2::text[]) k(v) cross join lateral (select id from contacts where workspace_id = $1 and email_normalised = k.v limit 1) x
             union
             select x.id from unnest($3::text[]) k(v) cross join lateral (select id from contacts where workspace_id = $1 and profile_url_normalised = k.v limit 1) x)
           order by id for update`,
    values: [workspaceId, emails, urls],
  });
  return found;
}

/** Applies a row to a contact it matched, by the dedupe mode; true when a field changed. */
function apply(
  s: ContactState,
  r: CleanRow,
  mode: DedupeMode,
  byEmail: Map<string, ContactState>,
  byUrl: Map<string, ContactState>,
): boolean {
  if (mode === 'skip') return false;
  let changed = false;
  // Identifiers are filled when the contact has none and no other contact holds this one; never replaced.
  if (!s.email_normalised && r.emailKey && !byEmail.has(r.emailKey)) {
    s.email = r.email;
    s.email_normalised = r.emailKey;
    byEmail.set(r.emailKey, s);
    changed = true;
  }
  if (!s.profile_url_normalised && r.urlKey && !byUrl.has(r.urlKey)) {
    s.profile_url = r.profileUrl;
    s.profile_url_normalised = r.urlKey;
    byUrl.set(r.urlKey, s);
    changed = true;
  }
  for (const f of DESCRIPTIVE_FIELDS) {
    const v = r.fields[f];
    if (!v) continue;
    const cur = s[f];
    if (mode === 'update_empty' ? cur === null || cur === '' : cur !== v) {
      s[f] = v;
      changed = true;
    }
  }
  return changed;
}

export interface MatchedRows {
  /** Per row, in order: its contact and what the row did to it. */
  rows: { contact: ContactState; outcome: RowOutcome }[];
  /** Contacts to insert (with every later row's changes applied), in row order. */
  created: ContactState[];
  /** Existing contacts a row changed: to update. */
  changed: ContactState[];
  counts: Record<RowOutcome, number>;
}

/**
 * The rows applied in order to the contacts found (`existing`, from `lockMatchingContacts`) by the
 * dedupe mode, in memory: a row matching no contact creates one (which later rows then match).
 */
export function matchRows(
  rows: readonly CleanRow[],
  existing: readonly Omit<ContactState, 'isNew' | 'changed'>[],
  mode: DedupeMode,
): MatchedRows {
  const counts = { created: 0, updated: 0, duplicate: 0 };
  const byEmail = new Map<string, ContactState>();
  const byUrl = new Map<string, ContactState>();
  for (const e of existing) {
    const s = { ...e, isNew: false, changed: false };
    if (s.email_normalised && !byEmail.has(s.email_normalised)) byEmail.set(s.email_normalised, s);
    if (s.profile_url_normalised && !byUrl.has(s.profile_url_normalised)) byUrl.set(s.profile_url_normalised, s);
  }
  const created: ContactState[] = [];
  const out: MatchedRows['rows'] = [];
  for (const r of rows) {
    let s = (r.emailKey && byEmail.get(r.emailKey)) || (r.urlKey && byUrl.get(r.urlKey)) || undefined;
    let outcome: RowOutcome;
    if (!s) {
      s = {
        id: uuidv7(),
        isNew: true,
        changed: false,
        email: r.email,
        email_normalised: r.emailKey,
        profile_url: r.profileUrl,
        profile_url_normalised: r.urlKey,
      } as ContactState;
      for (const f of DESCRIPTIVE_FIELDS) s[f] = r.fields[f] ?? null;
      if (r.emailKey) byEmail.set(r.emailKey, s);
      if (r.urlKey) byUrl.set(r.urlKey, s);
      created.push(s);
      outcome = 'created';
    } else if (apply(s, r, mode, byEmail, byUrl)) {
      if (!s.isNew) s.changed = true;
      outcome = 'updated';
    } else outcome = 'duplicate';
    counts[outcome]++;
    out.push({ contact: s, outcome });
  }
  const changed = [...new Set([...byEmail.values(), ...byUrl.values()])].filter((s) => s.changed);
  return { rows: out, created, changed, counts };
}

/** A PostgreSQL array literal of text (or uuid) values, as one flat string: cheaper to keep than a JS array until the statement is sent. */
export function textArray(values: (string | null)[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)).join(',')}}`;
}

/** Numbered bind parameters for a statement assembled in parts. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/**
 * `contacts as v(id, <CONTACT_COLUMNS>)`: the states as one `unnest` of flat array parameters, for
 * a statement's `from` (inserting new contacts, updating changed ones).
 */
export const contactRowsSql = (p: Params, states: readonly ContactState[]): string =>
  `unnest(${p.add(textArray(states.map((s) => s.id)))}::uuid[], ${CONTACT_COLUMNS.map((k) => `${p.add(textArray(states.map((s) => s[k])))}::text[]`).join(', ')}) as v(id, ${CONTACT_COLUMNS.join(', ')})`;

/** The CTE updating the changed contacts to their states (`name as (update …)`). */
export const updateContactsCte = (p: Params, name: string, changed: readonly ContactState[]): string =>
  `${name} as (update contacts c set ${CONTACT_COLUMNS.map((k) => `${k} = v.${k}`).join(', ')}, updated_at = now()
        from ${contactRowsSql(p, changed)} where c.id = v.id)`;
