// Contacts and leads written set-based (as an import would), for the contacts tests.
import { uuidv7 } from '../../lib/ids.js';
import { normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { em } from './billing.js';

export interface ContactSpec {
  email?: string | null;
  profile_url?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  full_name?: string | null;
  title?: string | null;
  headline?: string | null;
  company?: string | null;
  phone?: string | null;
  country?: string | null;
  time_zone?: string | null;
  fit_label?: string | null;
  fit_score?: number | null;
  pinned?: boolean;
  /** Lists the contact is a lead of. */
  lists?: string[];
}

export interface SeededContact extends ContactSpec {
  id: string;
  /** List id → lead id. */
  leads: Record<string, string>;
}

/** Inserts the contacts (ids in the order given) and their leads; returns them with their ids. */
export async function seedContacts(workspaceId: string, specs: ContactSpec[]): Promise<SeededContact[]> {
  // UUIDv7s minted in the same millisecond are not ordered among themselves: sort them so that the
  // contacts' id order (the list's order) is the order given.
  const ids = specs.map(() => uuidv7()).sort();
  const rows = specs.map((s, i) => ({
    id: ids[i],
    email: s.email ?? null,
    email_normalised: normaliseEmail(s.email),
    profile_url: s.profile_url ?? null,
    profile_url_normalised: normaliseProfileUrl(s.profile_url),
    first_name: s.first_name ?? null,
    last_name: s.last_name ?? null,
    full_name: s.full_name ?? null,
    title: s.title ?? null,
    headline: s.headline ?? null,
    company: s.company ?? null,
    phone: s.phone ?? null,
    country: s.country ?? null,
    time_zone: s.time_zone ?? null,
    fit_label: s.fit_label ?? null,
    fit_score: s.fit_score ?? null,
    pinned: Boolean(s.pinned),
  }));
  const e = await em();
  await e.execute(
    `insert into contacts (id, workspace_id, email, email_normalised, profile_url, profile_url_normalised, first_name, last_name, full_name, title,
       headline, company, phone, country, time_zone, fit_label, fit_score, pinned_at, created_at, updated_at)
     select v.id, ?, v.email, v.email_normalised, v.profile_url, v.profile_url_normalised, v.first_name, v.last_name, v.full_name, v.title,
       v.headline, v.company, v.phone, v.country, v.time_zone, v.fit_label, v.fit_score, case when v.pinned then now() end, now(), now()
     from json_to_recordset(?::json) as v(id uuid, email text, email_normalised text, profile_url text, profile_url_normalised text, first_name text,
       last_name text, full_name text, title text, headline text, company text, phone text, country text, time_zone text, fit_label text, fit_score int, pinned boolean)`,
    [workspaceId, JSON.stringify(rows)],
  );
  const out: SeededContact[] = specs.map((s, i) => ({ ...s, id: rows[i].id, leads: {} }));
  const leadIds = out
    .flatMap((c) => c.lists ?? [])
    .map(() => uuidv7())
    .sort();
  const leads = out.flatMap((c) =>
    (c.lists ?? []).map((listId) => ({ id: (c.leads[listId] = leadIds.shift()!), list_id: listId, contact_id: c.id })),
  );
  if (leads.length) {
    await e.execute(
      `insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
       select v.id, ?, v.list_id, v.contact_id, 'import', now(), now() from json_to_recordset(?::json) as v(id uuid, list_id uuid, contact_id uuid)`,
      [workspaceId, JSON.stringify(leads)],
    );
  }
  return out;
}
