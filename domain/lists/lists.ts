// Lead lists of a product, and the one way a contact gets into a list (`addContactToList`), which
// imports and discovery approval call. Rules (docs/lists.md):
// - a list belongs to one product; its name is unique within the product, case-insensitively;
// - a contact is in a list at most once (unique (list, contact)); contacts are per workspace and
//   deduplicated on normalised email, then normalised profile URL;
// - deleting a list deletes its leads (not the contacts) and clears `list` on agents that used it;
//   a list with leads enrolled in a campaign that is not archived is refused (409 `list_in_use`).
import type { EntityManager } from '@mikro-orm/postgresql';
import { App } from '../../db/entities/App.js';
import { DiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { Lead, type ILead } from '../../db/entities/Lead.js';
import { LeadList, type ILeadList } from '../../db/entities/LeadList.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { keyset, keysetSql, type PageRequest } from '../../lib/pagination.js';
import { requireApp } from '../apps/apps.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { likeEscape } from '../../lib/sql.js';

export interface ListWithCount {
  id: string;
  list: ILeadList;
  leadCount: number;
}

/** Loads a list of the actor's workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireList(em: EntityManager, actor: Actor, id: string): Promise<ILeadList> {
  const list = await em.findOne(LeadList, { id, workspace: actor.workspaceId });
  if (!list) throw notFound('list');
  return list;
}

/** Lead counts of the given lists in one grouped query (lists without leads are absent: 0). */
async function leadCounts(em: EntityManager, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const rows: { list_id: string; n: number }[] = await em.execute(
    `select list_id, count(*)::int as n from leads where list_id in (${ids.map(() => '?').join(', ')}) group by list_id`,
    ids,
  );
  return new Map(rows.map((r) => [r.list_id, r.n]));
}

async function withCounts(em: EntityManager, lists: ILeadList[]): Promise<ListWithCount[]> {
  const counts = await leadCounts(
    em,
    lists.map((l) => l.id),
  );
  return lists.map((list) => ({ id: list.id, list, leadCount: counts.get(list.id) ?? 0 }));
}

/**
 * Name uniqueness per product, case-insensitively. There is no unique index on lower(name), so a
 * transaction-scoped advisory lock per product serialises check-then-write against concurrent
 * creates and renames.
 */
async function assertNameFree(tx: EntityManager, appId: string, name: string, exceptId?: string): Promise<void> {
  await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`list-name:${appId}`]);
  const taken: unknown[] = await tx.execute(
    'select 1 from lead_lists where app_id = ? and lower(name) = lower(?) and id <> ? limit 1',
    [appId, name, exceptId ?? '00000000-0000-0000-0000-000000000000'],
  );
  if (taken.length) throw conflict('list_name_taken', `this product already has a list named "${name}"`);
}

export async function createList(
  em: EntityManager,
  actor: Actor,
  appId: string,
  input: { name: string; description?: string | null },
): Promise<ListWithCount> {
  assertWritable(actor);
  const app = await requireApp(em, actor, appId);
  const name = input.name.trim();
  const list = await em.transactional(async (tx) => {
    await assertNameFree(tx, app.id, name);
    const l = tx.create(LeadList, {
      workspace: tx.getReference(Workspace, actor.workspaceId),
      app: tx.getReference(App, app.id),
      name,
      description: input.description ?? null,
    });
    await tx.flush();
    return l;
  });
  return { id: list.id, list, leadCount: 0 };
}

/** One page (`limit + 1` rows) of a product's lists, oldest first. */
export async function listListsOfApp(
  em: EntityManager,
  actor: Actor,
  appId: string,
  page: PageRequest,
): Promise<ListWithCount[]> {
  const app = await requireApp(em, actor, appId);
  const k = keyset(page);
  const lists = await em.find(LeadList, { workspace: actor.workspaceId, app: app.id, ...k.where }, k.options);
  return withCounts(em, lists);
}

/** One page of the workspace's lists across the products the actor may access (optionally one product). */
export async function listLists(
  em: EntityManager,
  actor: Actor,
  page: PageRequest,
  appId?: string,
): Promise<ListWithCount[]> {
  const where: Record<string, unknown> = { workspace: actor.workspaceId };
  if (appId) where.app = (await requireApp(em, actor, appId)).id;
  else if (!actor.allApps) where.app = { $in: actor.appIds };
  const k = keyset(page);
  const lists = await em.find(LeadList, { ...where, ...k.where }, k.options);
  return withCounts(em, lists);
}

export async function getList(em: EntityManager, actor: Actor, id: string): Promise<ListWithCount> {
  const [one] = await withCounts(em, [await requireList(em, actor, id)]);
  return one;
}

export async function updateList(
  em: EntityManager,
  actor: Actor,
  id: string,
  input: { name?: string; description?: string | null },
): Promise<ListWithCount> {
  assertWritable(actor);
  const list = await em.transactional(async (tx) => {
    const l = await requireList(tx, actor, id);
    if (input.name !== undefined) {
      const name = input.name.trim();
      if (name !== l.name) await assertNameFree(tx, l.app.id, name, l.id);
      l.name = name;
    }
    if (input.description !== undefined) l.description = input.description;
    await tx.flush();
    return l;
  });
  const [one] = await withCounts(em, [list]);
  return one;
}

export interface DeletedList {
  id: string;
  leadsDeleted: number;
  /** Agents whose destination list this was: their `list` is now null (FK `on delete set null`). */
  agentsCleared: string[];
}

/** At most this many campaign ids are named in a `list_in_use` refusal (`details.campaign_count` has them all). */
const IN_USE_IDS = 20;

/**
 * 409 `list_in_use` / `lead_in_use` when a lead of the list (or the lead) has an enrollment, whatever
 * its status, in a campaign that is not archived: deleting the lead would delete those enrollments
 * and their scheduled actions (foreign keys `on delete cascade`), silently taking them out of the
 * campaign's history. Run it after locking the leads `FOR UPDATE` (an enrollment insert takes `FOR
 * KEY SHARE` on its lead, so one in flight is waited for and seen here). The message names up to
 * three campaigns; `details` has up to IN_USE_IDS ids and the count.
 */
async function refuseWhileEnrolled(tx: EntityManager, of: 'list' | 'lead', id: string): Promise<void> {
  const using: { id: string; name: string }[] = await tx.execute(
    `select c.id, c.name from campaigns c
      where c.status <> 'archived' and c.id in (select e.campaign_id from leads l join enrollments e on e.lead_id = l.id where l.${of === 'list' ? 'list_id' : 'id'} = ?)
      order by c.id`,
    [id],
  );
  if (!using.length) return;
  const shown = using
    .slice(0, 3)
    .map((c) => `"${c.name}"`)
    .join(', ');
  const more = using.length > 3 ? ` and ${using.length - 3} more` : '';
  const who = using.length === 1 ? 'a campaign enrolls' : `${using.length} campaigns enroll`;
  const them = using.length === 1 ? 'it' : 'them';
  throw new AppError(
    409,
    `${of}_in_use`,
    of === 'list'
      ? `${who} leads of this list (${shown}${more}): archive ${them} first, since deleting the list would delete their enrollments`
      : `${who} this lead (${shown}${more}): archive ${them} first, since removing the lead from the list would delete its enrollments`,
    { campaign_ids: using.slice(0, IN_USE_IDS).map((c) => c.id), campaign_count: using.length },
  );
}

/**
 * Deletes the list and its leads (contacts stay in the workspace). Agents that delivered into it keep
 * working with no destination list. A list with a lead enrolled in a campaign that is not archived
 * (any enrollment status) is refused with 409 `list_in_use`, since deleting its leads would delete
 * those enrollments and their scheduled actions (docs/lists.md).
 */
export async function deleteList(em: EntityManager, actor: Actor, id: string): Promise<DeletedList> {
  assertWritable(actor);
  return em.transactional(async (tx) => {
    const list = await requireList(tx, actor, id);
    // Lock the row first so the counts reported are the ones deleted.
    await tx.execute('select 1 from lead_lists where id = ? for update', [list.id]);
    // Then its leads, FOR UPDATE: an enrollment insert (the route's or a bulk enroll's) takes FOR KEY
    // SHARE on its lead through the foreign key, so one in flight is waited for and seen by the check
    // below, and one after it waits for this transaction (and finds the lead gone).
    await tx.execute('select 1 from leads where list_id = ? order by id for update', [list.id]);
    await refuseWhileEnrolled(tx, 'list', list.id);
    const agents = await tx.find(DiscoveryAgent, { list: list.id }, { fields: ['id'], orderBy: { id: 'asc' } });
    const leadsDeleted = await tx.count(Lead, { list: list.id });
    await tx.nativeDelete(LeadList, { id: list.id });
    return { id: list.id, leadsDeleted, agentsCleared: agents.map((a) => a.id) };
  });
}

/**
 * Removes a lead from its list (beyond the spec: `DELETE /api/lists/{id}/leads/{leadId}`): the lead
 * row goes, as when its list is deleted (docs/lists.md "Deleting"): its enrollments in archived
 * campaigns and its meetings with it (foreign keys), while its contact stays in the workspace and in
 * its other lists. A lead enrolled in a campaign that is not archived is refused with 409
 * `lead_in_use`, as `deleteList` refuses its list. 404 for a lead that is not in this list.
 */
export async function removeLeadFromList(
  em: EntityManager,
  actor: Actor,
  listId: string,
  leadId: string,
): Promise<void> {
  assertWritable(actor);
  await em.transactional(async (tx) => {
    const list = await requireList(tx, actor, listId);
    // Locked first: an enrollment insert in flight is waited for and seen by the check.
    const lead: unknown[] = await tx.execute('select 1 from leads where id = ? and list_id = ? for update', [
      leadId,
      list.id,
    ]);
    if (!lead.length) throw notFound('lead');
    await refuseWhileEnrolled(tx, 'lead', leadId);
    await tx.execute('delete from leads where id = ?', [leadId]);
  });
}

export interface LeadRow {
  id: string;
  list_id: string;
  contact_id: string;
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  title: string | null;
  company: string | null;
  email: string | null;
  profile_url: string | null;
  country: string | null;
  source: string;
  created_at: Date | string;
}

/** `%`, `_` and `\` match literally in the search text (ILIKE's default escape is `\`). */

/** One page (`limit + 1` rows) of a list's leads with their contacts, by lead id; `q` searches name, email and company. */
export async function listLeads(
  em: EntityManager,
  actor: Actor,
  listId: string,
  page: PageRequest,
  q?: string,
): Promise<LeadRow[]> {
  const list = await requireList(em, actor, listId);
  const params: unknown[] = [list.id];
  let sql = `select l.id, l.list_id, l.contact_id, l.source, l.created_at,
      c.full_name, c.first_name, c.last_name, c.title, c.company, c.email, c.profile_url, c.country
    from leads l join contacts c on c.id = l.contact_id
    where l.list_id = ?`;
  if (q) {
    const like = `%${likeEscape(q)}%`;
    sql += ` and (c.full_name ilike ? or concat_ws(' ', c.first_name, c.last_name) ilike ? or c.email ilike ? or c.company ilike ?)`;
    params.push(like, like, like, like);
  }
  const k = keysetSql(page, 'l.id');
  return em.execute(sql + k.sql, [...params, ...k.params]);
}

/** How a lead got into its list: `api` is `POST /api/lists/{id}/leads` (domain/lists/add-leads.ts). */
export type LeadSource = 'discovery' | 'import' | 'manual' | 'api';

export interface ContactInput {
  email?: string | null;
  profileUrl?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  fullName?: string | null;
  title?: string | null;
  company?: string | null;
  companyDomain?: string | null;
  country?: string | null;
}

/** Descriptive fields: filled on an existing contact only where it has none (never overwritten). */
const FIELDS = {
  firstName: ['first_name', 200],
  lastName: ['last_name', 200],
  fullName: ['full_name', 400],
  title: ['title', 300],
  company: ['company', 300],
  companyDomain: ['company_domain', 255],
  country: ['country', 100],
} as const;
type Field = keyof typeof FIELDS;

const EMAIL = /^[^\s@]+@[^\s@]+$/;

function contactKeys(input: ContactInput) {
  const email = input.email?.trim() || null;
  const profileUrl = input.profileUrl?.trim() || null;
  const emailKey = normaliseEmail(email);
  const urlKey = normaliseProfileUrl(profileUrl);
  if (email && (!emailKey || !EMAIL.test(emailKey) || email.length > 320))
    throw badRequest('invalid_contact', 'email is not an email address');
  if (profileUrl && (!urlKey || profileUrl.length > 2048))
    throw badRequest('invalid_contact', 'profile_url is not an http(s) URL');
  if (!emailKey && !urlKey) throw badRequest('invalid_contact', 'a contact needs an email or a profile URL');
  const fields: Partial<Record<Field, string>> = {};
  for (const [k, [, max]] of Object.entries(FIELDS) as [Field, (typeof FIELDS)[Field]][]) {
    const v = input[k]?.trim();
    if (!v) continue;
    if (v.length > max) throw badRequest('invalid_contact', `${k} is longer than ${max} characters`);
    fields[k] = v;
  }
  return { email, profileUrl, emailKey, urlKey, fields };
}

type Keys = ReturnType<typeof contactKeys>;

/** The workspace's contact for these keys: by email first, then by profile URL. */
async function findContact(em: EntityManager, workspaceId: string, k: Keys): Promise<string | null> {
  for (const [column, key] of [
    ['email_normalised', k.emailKey],
    ['profile_url_normalised', k.urlKey],
  ] as const) {
    if (!key) continue;
    const [row]: { id: string }[] = await em.execute(
      `select id from contacts where workspace_id = ? and ${column} = ?`,
      [workspaceId, key],
    );
    if (row) return row.id;
  }
  return null;
}

/** Inserts the contact unless a concurrent writer got there first (either unique key): then `null`. */
async function insertContact(em: EntityManager, workspaceId: string, k: Keys): Promise<string | null> {
  const f = k.fields;
  const now = new Date();
  const rows: { id: string }[] = await em.execute(
    `insert into contacts (id, workspace_id, email, email_normalised, profile_url, profile_url_normalised,
       first_name, last_name, full_name, title, company, company_domain, country, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict do nothing returning id`,
    [
      uuidv7(),
      workspaceId,
      k.email,
      k.emailKey,
      k.profileUrl,
      k.urlKey,
      f.firstName ?? null,
      f.lastName ?? null,
      f.fullName ?? null,
      f.title ?? null,
      f.company ?? null,
      f.companyDomain ?? null,
      f.country ?? null,
      now,
      now,
    ],
  );
  return rows[0]?.id ?? null;
}

/** Fills the contact's empty descriptive fields from the input (one statement; no-op when nothing is missing). */
async function fillBlanks(em: EntityManager, contactId: string, fields: Keys['fields']): Promise<void> {
  const given = Object.entries(fields) as [Field, string][];
  if (!given.length) return;
  const sets = given.map(([k]) => `${FIELDS[k][0]} = coalesce(${FIELDS[k][0]}, ?)`).join(', ');
  const blanks = given.map(([k]) => `${FIELDS[k][0]} is null`).join(' or ');
  await em.execute(`update contacts set ${sets}, updated_at = now() where id = ? and (${blanks})`, [
    ...given.map(([, v]) => v),
    contactId,
  ]);
}

/**
 * Creates or reuses the workspace's contact (dedupe on normalised email, then normalised profile URL)
 * and adds it to the list exactly once. Safe under concurrency without a transaction of its own:
 * both inserts are `on conflict do nothing` followed by a re-read, so racing callers all see the one
 * row (and may run inside the caller's transaction). `created` is false when the lead already existed.
 */
export async function addContactToList(
  em: EntityManager,
  actor: Actor,
  listId: string,
  input: ContactInput,
  opts: { source?: LeadSource } = {},
): Promise<{ lead: ILead; created: boolean }> {
  assertWritable(actor);
  const list = await requireList(em, actor, listId);
  const keys = contactKeys(input);
  let contactId = await findContact(em, actor.workspaceId, keys);
  if (contactId) await fillBlanks(em, contactId, keys.fields);
  // A conflicting row seen by the insert is committed by the time the re-read runs; the loop only
  // repeats if that row was deleted in between.
  for (let i = 0; !contactId && i < 3; i++)
    contactId = (await insertContact(em, actor.workspaceId, keys)) ?? (await findContact(em, actor.workspaceId, keys));
  if (!contactId) throw new AppError(409, 'conflict', 'the contact changed concurrently; retry');

  const now = new Date();
  const inserted: { id: string }[] = await em.execute(
    `insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?) on conflict (list_id, contact_id) do nothing returning id`,
    [uuidv7(), actor.workspaceId, list.id, contactId, opts.source ?? 'manual', now, now],
  );
  const lead = inserted[0]
    ? await em.findOneOrFail(Lead, inserted[0].id, { populate: ['contact'], refresh: true })
    : await em.findOneOrFail(Lead, { list: list.id, contact: contactId }, { populate: ['contact'], refresh: true });
  return { lead, created: inserted.length > 0 };
}
