// Contacts of a workspace: the filtered list (also what an export pages through), one contact with
// its list memberships and provenance, fit and pin, and a person's edits of a lead's contact
// (docs/contacts.md). Rules:
// - a contact is workspace-wide; a member limited to some products sees the contacts that are a lead
//   of a list of one of those products (another contact is 403 `not_assigned`, as lists answer);
// - an edit marks each field it names in `edited_fields`, which enrichment never overwrites
//   (domain/enrichment/enrichment.ts planFields); email and profile URL stay unique per workspace on their
//   normalised keys (409 `contact_exists` naming the other contact).
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ENRICHABLE_FIELDS, FIELD_COLUMNS, type EnrichableField } from '../../lib/enrichment/types.js';
import { normaliseDomain, normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { keysetSql, type PageRequest } from '../../lib/pagination.js';
import { canonicalTimeZone } from '../accounts/accounts.js';
import { requireApp } from '../apps/apps.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { requireList } from '../lists/lists.js';
import { likeEscape } from '../../lib/sql.js';

export const FIT_LABELS = ['good', 'maybe', 'bad'] as const;
export type FitLabel = (typeof FIT_LABELS)[number];
/** The fit filter: a label, or `none` for contacts without one. */
export type FitFilter = FitLabel | 'none';

export interface ContactFilters {
  listId?: string;
  appId?: string;
  fit?: FitFilter;
  pinned?: boolean;
  q?: string;
}

/** Products a caller sees contacts of: null = every product of the workspace. */
export type Scope = readonly string[] | null;
export const scopeOf = (actor: Actor): Scope => (actor.allApps ? null : [...actor.appIds]);

/** The fields a lead edit may change: API (snake_case) name → entity field, as `edited_fields` stores it. */
export const EDITABLE = {
  first_name: 'firstName',
  last_name: 'lastName',
  full_name: 'fullName',
  title: 'title',
  headline: 'headline',
  company: 'company',
  company_domain: 'companyDomain',
  country: 'country',
  phone: 'phone',
  email: 'email',
  profile_url: 'profileUrl',
} as const satisfies Record<string, EnrichableField>;
export type EditableName = keyof typeof EDITABLE;
const API_NAME = Object.fromEntries(Object.entries(EDITABLE).map(([api, field]) => [field, api])) as Record<
  string,
  string
>;
/** Entity field names (as stored in `edited_fields` / `enriched_fields`) → API names, unknown ones dropped. */
export const apiFieldNames = (fields: readonly string[]): string[] => fields.map((f) => API_NAME[f]).filter(Boolean);

export interface ContactRow {
  id: string;
  email: string | null;
  phone: string | null;
  profile_url: string | null;
  first_name: string | null;
  last_name: string | null;
  full_name: string | null;
  title: string | null;
  headline: string | null;
  company: string | null;
  company_domain: string | null;
  country: string | null;
  /** IANA zone given for the contact (recipient-local sending windows; domain/contacts/time-zone.ts derives one from the country when null). */
  time_zone: string | null;
  fit_score: number | null;
  fit_label: string | null;
  fit_updated_at: Date | string | null;
  pinned_at: Date | string | null;
  unsubscribed_at: Date | string | null;
  email_bounced_at: Date | string | null;
  enriched_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface ContactMembership {
  id: string;
  list_id: string;
  list_name: string;
  app_id: string;
  source: string;
  created_at: Date | string;
}

export interface ContactDetail extends ContactRow {
  edited_fields: string[];
  enriched_fields: string[];
  network_provider_id: string | null;
  leads: ContactMembership[];
}

export const CONTACT_COLUMNS = `c.id, c.email, c.phone, c.profile_url, c.first_name, c.last_name, c.full_name, c.title, c.headline, c.company,
  c.company_domain, c.country, c.time_zone, c.fit_score, c.fit_label, c.fit_updated_at, c.pinned_at, c.unsubscribed_at, c.email_bounced_at, c.enriched_at, c.created_at, c.updated_at`;

/** `%`, `_` and `\` match literally in the search text (ILIKE's default escape is `\`). */
const placeholders = (xs: readonly unknown[]) => xs.map(() => '?').join(', ');

/** `l` (a lead of the contact `c`) is in a list of one of these products. */
function inScope(scope: readonly string[], params: unknown[]): string {
  if (!scope.length) return 'false';
  params.push(...scope);
  return `exists (select 1 from leads l join lead_lists ll on ll.id = l.list_id where l.contact_id = c.id and ll.app_id in (${placeholders(scope)}))`;
}

/**
 * The SQL conditions on `contacts c` for a workspace, a caller's scope and the filters (ids already
 * checked by the caller). `c.id` bounds come from the caller (keyset pages).
 */
export function contactConditions(workspaceId: string, scope: Scope, f: ContactFilters, params: unknown[]): string {
  const where = ['c.workspace_id = ?'];
  params.push(workspaceId);
  if (f.listId) {
    where.push('exists (select 1 from leads l where l.contact_id = c.id and l.list_id = ?)');
    params.push(f.listId);
  }
  if (f.appId) {
    where.push(
      'exists (select 1 from leads l join lead_lists ll on ll.id = l.list_id where l.contact_id = c.id and ll.app_id = ?)',
    );
    params.push(f.appId);
  } else if (scope && !f.listId) where.push(inScope(scope, params)); // a checked list or product is in scope already
  if (f.fit === 'none') where.push('c.fit_label is null');
  else if (f.fit) {
    where.push('c.fit_label = ?');
    params.push(f.fit);
  }
  if (f.pinned !== undefined) where.push(f.pinned ? 'c.pinned_at is not null' : 'c.pinned_at is null');
  if (f.q) {
    const like = `%${likeEscape(f.q)}%`;
    where.push(
      `(c.full_name ilike ? or concat_ws(' ', c.first_name, c.last_name) ilike ? or c.email ilike ? or c.company ilike ? or c.title ilike ?)`,
    );
    params.push(like, like, like, like, like);
  }
  return where.join(' and ');
}

/** Checks the ids the filters name: another workspace's list or product is 404, one the member was not given 403. */
export async function checkFilters(em: EntityManager, actor: Actor, f: ContactFilters): Promise<void> {
  if (f.listId) await requireList(em, actor, f.listId);
  if (f.appId) await requireApp(em, actor, f.appId);
}

/** One page (`limit + 1` rows) of the contacts the caller sees, oldest first. */
export async function listContacts(
  em: EntityManager,
  actor: Actor,
  filters: ContactFilters,
  page: PageRequest,
): Promise<ContactRow[]> {
  await checkFilters(em, actor, filters);
  const params: unknown[] = [];
  const sql = `select ${CONTACT_COLUMNS} from contacts c where ${contactConditions(actor.workspaceId, scopeOf(actor), filters, params)}`;
  const k = keysetSql(page, 'c.id');
  return em.execute(sql + k.sql, [...params, ...k.params]);
}

/** The contact, if the caller may see it: 404 outside the workspace, 403 `not_assigned` outside the member's products. */
async function requireContact(em: EntityManager, actor: Actor, id: string, lock = false): Promise<void> {
  const [row]: { id: string }[] = await em.execute(
    `select id from contacts where id = ? and workspace_id = ?${lock ? ' for update' : ''}`,
    [id, actor.workspaceId],
  );
  if (!row) throw notFound('contact');
  const scope = scopeOf(actor);
  if (!scope) return;
  const params: unknown[] = [];
  const visible: unknown[] = await em.execute(`select 1 from contacts c where c.id = ? and ${inScope(scope, params)}`, [
    id,
    ...params,
  ]);
  if (!visible.length)
    throw new AppError(403, 'not_assigned', 'this contact is in no list of the products you were given');
}

const jsonList = (v: unknown): string[] =>
  Array.isArray(v) ? v : typeof v === 'string' ? (JSON.parse(v) as string[]) : [];

/** The contact with its memberships (of the lists the caller sees) and its field provenance. */
export async function getContact(em: EntityManager, actor: Actor, id: string): Promise<ContactDetail> {
  await requireContact(em, actor, id);
  const [row]: (ContactRow & {
    edited_fields: unknown;
    enriched_fields: unknown;
    network_provider_id: string | null;
  })[] = await em.execute(
    `select ${CONTACT_COLUMNS}, c.edited_fields, c.enriched_fields, c.network_provider_id from contacts c where c.id = ?`,
    [id],
  );
  const scope = scopeOf(actor);
  const leads: ContactMembership[] = await em.execute(
    `select l.id, l.list_id, ll.name as list_name, ll.app_id, l.source, l.created_at
       from leads l join lead_lists ll on ll.id = l.list_id
      where l.contact_id = ?${scope ? (scope.length ? ` and ll.app_id in (${placeholders(scope)})` : ' and false') : ''}
      order by l.id`,
    [id, ...(scope ?? [])],
  );
  return {
    ...row,
    edited_fields: apiFieldNames(jsonList(row.edited_fields)),
    enriched_fields: apiFieldNames(jsonList(row.enriched_fields)),
    leads,
  };
}

/** Sets the score and/or the label (`null` clears one; an absent one is left as it is). */
export async function setFit(
  em: EntityManager,
  actor: Actor,
  id: string,
  fit: { score?: number | null; label?: FitLabel | null },
): Promise<ContactDetail> {
  assertWritable(actor);
  await requireContact(em, actor, id);
  const sets = ['fit_updated_at = now()', 'updated_at = now()'];
  const params: unknown[] = [];
  if (fit.score !== undefined) (sets.push('fit_score = ?'), params.push(fit.score));
  if (fit.label !== undefined) (sets.push('fit_label = ?'), params.push(fit.label));
  await em.execute(`update contacts set ${sets.join(', ')} where id = ?`, [...params, id]);
  return getContact(em, actor, id);
}

/** Pins or unpins the contact; idempotent (pinning again keeps the first `pinned_at`). */
export async function setPinned(em: EntityManager, actor: Actor, id: string, pinned: boolean): Promise<ContactDetail> {
  assertWritable(actor);
  await requireContact(em, actor, id);
  await em.execute(
    pinned
      ? 'update contacts set pinned_at = now(), updated_at = now() where id = ? and pinned_at is null'
      : 'update contacts set pinned_at = null, updated_at = now() where id = ? and pinned_at is not null',
    [id],
  );
  return getContact(em, actor, id);
}

export type LeadPatch = Partial<Record<EditableName, string | null>> & {
  unsubscribed?: boolean;
  time_zone?: string | null;
};

export interface EditedLead {
  id: string;
  list_id: string;
  app_id: string;
  contact_id: string;
  source: string;
  created_at: Date | string;
  contact: ContactDetail;
}

/** A lead of the workspace with its list's product (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireLead(em: EntityManager, actor: Actor, id: string) {
  const [lead]: {
    id: string;
    list_id: string;
    app_id: string;
    contact_id: string;
    source: string;
    created_at: Date;
  }[] = await em.execute(
    `select l.id, l.list_id, ll.app_id, l.contact_id, l.source, l.created_at from leads l join lead_lists ll on ll.id = l.list_id where l.id = ? and l.workspace_id = ?`,
    [id, actor.workspaceId],
  );
  if (!lead) throw notFound('lead');
  return lead;
}

const contactExists = (contactId: string, field: 'email' | 'profile_url') =>
  new AppError(
    409,
    'contact_exists',
    `another contact of the workspace already has this ${field === 'email' ? 'email' : 'profile URL'}`,
    {
      contact_id: contactId,
      field,
    },
  );

async function clash(
  em: EntityManager,
  workspaceId: string,
  contactId: string,
  keys: { email: string | null; profileUrl: string | null },
): Promise<AppError | null> {
  for (const [field, column, key] of [
    ['email', 'email_normalised', keys.email],
    ['profile_url', 'profile_url_normalised', keys.profileUrl],
  ] as const) {
    if (!key) continue;
    const [other]: { id: string }[] = await em.execute(
      `select id from contacts where workspace_id = ? and ${column} = ? and id <> ?`,
      [workspaceId, key, contactId],
    );
    if (other) return contactExists(other.id, field);
  }
  return null;
}

/**
 * Edits the lead's contact (contacts are shared by lists: the edit shows in every list it is in) and
 * marks each field named in the patch as edited, so enrichment keeps it. Changing the first or last
 * name also rewrites a full name that was only their join (or empty), and marks it too. Validation
 * beyond the request schema: the contact must keep an email or a profile URL (400 `invalid_contact`);
 * an email or profile URL another contact has is 409 `contact_exists`; a `time_zone` the runtime does
 * not know is 400 `invalid_time_zone`.
 */
export async function editLead(em: EntityManager, actor: Actor, leadId: string, patch: LeadPatch): Promise<EditedLead> {
  assertWritable(actor);
  const lead = await requireLead(em, actor, leadId);
  const given = Object.entries(patch).filter(([k, v]) => k in EDITABLE && v !== undefined) as [
    EditableName,
    string | null,
  ][];
  if (!given.length && patch.unsubscribed === undefined && patch.time_zone === undefined)
    throw badRequest('invalid_body', 'give at least one field to change');
  // Stored in its canonical spelling, as campaigns store theirs (400 invalid_time_zone otherwise).
  const timeZone = patch.time_zone ? canonicalTimeZone(patch.time_zone) : patch.time_zone;
  const values = new Map<EnrichableField, string | null>(
    given.map(([k, v]) => [EDITABLE[k], typeof v === 'string' ? v.trim() || null : null]),
  );
  let keys = { email: null as string | null, profileUrl: null as string | null };
  try {
    await em.transactional(async (tx) => {
      const [c]: (Record<string, string | null> & { edited_fields: unknown })[] = await tx.execute(
        'select * from contacts where id = ? for update',
        [lead.contact_id],
      );
      if (!c) throw notFound('lead'); // deleted (with its leads) since it was read
      if (values.has('email')) {
        const v = values.get('email');
        if (v && !normaliseEmail(v)) throw badRequest('invalid_email', 'email is not an email address');
      }
      if (values.has('profileUrl')) {
        const v = values.get('profileUrl');
        if (v && !normaliseProfileUrl(v)) throw badRequest('invalid_profile_url', 'profile_url is not an http(s) URL');
      }
      if (values.has('companyDomain') && values.get('companyDomain')) {
        const d = normaliseDomain(values.get('companyDomain'));
        if (!d) throw badRequest('invalid_body', 'company_domain is not a domain name');
        values.set('companyDomain', d);
      }
      const after = (f: EnrichableField) => (values.has(f) ? values.get(f)! : c[FIELD_COLUMNS[f]]);
      keys = {
        email: normaliseEmail(after('email')),
        profileUrl: normaliseProfileUrl(after('profileUrl')),
      };
      if (!keys.email && !keys.profileUrl)
        throw badRequest('invalid_contact', 'a contact needs an email or a profile URL');
      // The unsubscribe record keeps its first time and source; it is not a field enrichment could write.
      if (patch.unsubscribed !== undefined) {
        await tx.execute(
          patch.unsubscribed
            ? `update contacts set unsubscribed_at = coalesce(unsubscribed_at, now()), unsubscribe_source = coalesce(unsubscribe_source, 'user'), updated_at = now() where id = ?`
            : `update contacts set unsubscribed_at = null, unsubscribe_source = null, updated_at = now() where id = ?`,
          [lead.contact_id],
        );
      }
      // Enrichment never writes the time zone, so it is no edited field (as `unsubscribed`).
      if (timeZone !== undefined)
        await tx.execute('update contacts set time_zone = ?, updated_at = now() where id = ?', [
          timeZone,
          lead.contact_id,
        ]);
      if (!values.size) return;
      const taken = await clash(tx, actor.workspaceId, lead.contact_id, {
        email: values.has('email') ? keys.email : null,
        profileUrl: values.has('profileUrl') ? keys.profileUrl : null,
      });
      if (taken) throw taken;
      // A full name that was the join of the old names follows them.
      if (!values.has('fullName') && (values.has('firstName') || values.has('lastName'))) {
        const join = (a: string | null, b: string | null) => [a, b].filter(Boolean).join(' ') || null;
        const old = join(c.first_name, c.last_name);
        if (!c.full_name || c.full_name === old) values.set('fullName', join(after('firstName'), after('lastName')));
      }
      const edited = [...new Set([...jsonList(c.edited_fields), ...values.keys()])];
      const sets: string[] = [];
      const params: unknown[] = [];
      for (const [f, v] of values) (sets.push(`${FIELD_COLUMNS[f]} = ?`), params.push(v));
      if (values.has('email')) (sets.push('email_normalised = ?'), params.push(keys.email));
      // A bounce belongs to the address that bounced: another address clears it.
      if (values.has('email') && keys.email !== c.email_normalised)
        sets.push('email_bounced_at = null', 'email_soft_bounces = 0');
      if (values.has('profileUrl')) (sets.push('profile_url_normalised = ?'), params.push(keys.profileUrl));
      sets.push('edited_fields = ?::jsonb', 'updated_at = now()');
      params.push(JSON.stringify(ENRICHABLE_FIELDS.filter((f) => edited.includes(f))));
      await tx.execute(`update contacts set ${sets.join(', ')} where id = ?`, [...params, lead.contact_id]);
    });
  } catch (err) {
    // A concurrent writer took the email or profile URL between the check and the update.
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
    throw (
      (await clash(em.fork(), actor.workspaceId, lead.contact_id, keys)) ??
      new AppError(409, 'conflict', 'the contact changed concurrently; retry')
    );
  }
  return { ...lead, contact: await getContact(em, actor, lead.contact_id) };
}
