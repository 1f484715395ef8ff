// Finds or creates the contacts of a batch of people in one workspace, with a fixed number of
// statements: what approving discovered leads and confirming a company decision-maker import share.
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from '../../lib/ids.js';
import { AppError } from '../errors.js';

/** A person's dedupe keys (lib/normalise.ts); one with neither gets no contact. */
export interface ContactKeys {
  emailKey: string | null;
  urlKey: string | null;
}

/** What a new contact is created with, and what fills the empty fields of an existing one. */
export interface ContactFields {
  email: string | null;
  profile_url: string | null;
  first_name: string | null;
  last_name: string | null;
  full_name: string | null;
  title: string | null;
  company: string | null;
  company_domain: string | null;
  country: string | null;
}

interface ContactRow {
  id: string;
  email_normalised: string | null;
  profile_url_normalised: string | null;
}

const texts = 'array(select json_array_elements_text(?::json))';

const descriptive = (p: ContactFields) => ({
  first_name: p.first_name,
  last_name: p.last_name,
  full_name: p.full_name,
  title: p.title,
  company: p.company,
  company_domain: p.company_domain,
  country: p.country,
});

/**
 * Each person's contact, by normalised email first, then normalised profile URL: an existing one has
 * its empty descriptive fields filled (never overwritten); a missing one is inserted (one per identity
 * within the batch). A contact a concurrent writer inserted first is read back; one still missing
 * after that is 409 `conflict`. Returns the lookup (undefined for a person without keys) and the ids
 * of the contacts this call created.
 */
export async function upsertContacts(
  tx: EntityManager,
  workspaceId: string,
  people: (ContactKeys & ContactFields)[],
): Promise<{ contactOf: (p: ContactKeys) => string | undefined; created: Set<string> }> {
  const byEmail = new Map<string, string>();
  const byUrl = new Map<string, string>();
  const remember = (c: ContactRow) => {
    if (c.email_normalised && !byEmail.has(c.email_normalised)) byEmail.set(c.email_normalised, c.id);
    if (c.profile_url_normalised && !byUrl.has(c.profile_url_normalised)) byUrl.set(c.profile_url_normalised, c.id);
  };
  const contactOf = (p: ContactKeys) =>
    (p.emailKey && byEmail.get(p.emailKey)) || (p.urlKey && byUrl.get(p.urlKey)) || undefined;
  const keyed = people.filter((p) => p.emailKey || p.urlKey);
  const readContacts = async () => {
    const found: ContactRow[] = await tx.execute(
      `select id, email_normalised, profile_url_normalised from contacts
       where workspace_id = ? and (email_normalised = any(${texts}) or profile_url_normalised = any(${texts}))`,
      [
        workspaceId,
        JSON.stringify(keyed.flatMap((p) => (p.emailKey ? [p.emailKey] : []))),
        JSON.stringify(keyed.flatMap((p) => (p.urlKey ? [p.urlKey] : []))),
      ],
    );
    found.forEach(remember);
  };
  await readContacts();
  const existing = new Set(keyed.map(contactOf).filter((x): x is string => !!x));
  // Conflicts with concurrent writers are skipped here and read back below.
  const seen = new Set<string>();
  const toInsert = keyed.filter((p) => {
    if (contactOf(p)) return false;
    const keys = [p.emailKey && `e:${p.emailKey}`, p.urlKey && `u:${p.urlKey}`].filter(Boolean) as string[];
    if (keys.some((k) => seen.has(k))) return false;
    keys.forEach((k) => seen.add(k));
    return true;
  });
  const created = new Set<string>();
  if (toInsert.length) {
    const inserted: ContactRow[] = await tx.execute(
      `insert into contacts (id, workspace_id, email, email_normalised, profile_url, profile_url_normalised,
         first_name, last_name, full_name, title, company, company_domain, country, created_at, updated_at)
       select v.id, ?, v.email, v.email_normalised, v.profile_url, v.profile_url_normalised, v.first_name, v.last_name, v.full_name,
         v.title, v.company, v.company_domain, v.country, now(), now()
       from json_to_recordset(?::json) as v(id uuid, email text, email_normalised text, profile_url text, profile_url_normalised text,
         first_name text, last_name text, full_name text, title text, company text, company_domain text, country text)
       on conflict do nothing returning id, email_normalised, profile_url_normalised`,
      [
        workspaceId,
        JSON.stringify(
          toInsert.map((p) => ({
            id: uuidv7(),
            email: p.emailKey ? p.email?.trim() : null,
            email_normalised: p.emailKey,
            profile_url: p.urlKey ? p.profile_url?.trim() : null,
            profile_url_normalised: p.urlKey,
            ...descriptive(p),
          })),
        ),
      ],
    );
    inserted.forEach((c) => {
      remember(c);
      created.add(c.id);
    });
    if (keyed.some((p) => !contactOf(p))) await readContacts();
    if (keyed.some((p) => !contactOf(p))) throw new AppError(409, 'conflict', 'a contact changed concurrently; retry');
  }
  const fill = keyed.filter((p) => existing.has(contactOf(p)!));
  if (fill.length) {
    await tx.execute(
      `update contacts c set first_name = coalesce(c.first_name, v.first_name), last_name = coalesce(c.last_name, v.last_name),
         full_name = coalesce(c.full_name, v.full_name), title = coalesce(c.title, v.title), company = coalesce(c.company, v.company),
         company_domain = coalesce(c.company_domain, v.company_domain), country = coalesce(c.country, v.country), updated_at = now()
       from json_to_recordset(?::json) as v(id uuid, first_name text, last_name text, full_name text, title text, company text, company_domain text, country text)
       where c.id = v.id and (c.first_name is null or c.last_name is null or c.full_name is null or c.title is null or c.company is null
         or c.company_domain is null or c.country is null)`,
      [JSON.stringify(fill.map((p) => ({ id: contactOf(p), ...descriptive(p) })))],
    );
  }
  return { contactOf, created };
}
