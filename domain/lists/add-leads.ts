// Leads over JSON (docs/imports.md, "Adding leads over JSON"; beyond the spec): up to MAX_PEOPLE
// people added to a list in one request, by the CSV import's rules: each person is checked by the
// import's row rule (import-csv.ts `checkPerson`) and applied to the workspace's contacts by its
// dedupe (contact-rows.ts `matchRows`), and every valid person's contact joins the list. One answer
// per person, in order. One transaction of a fixed number of statements whatever the number of
// people: lock the list and the workspace's contact-write lock (the one imports' chunks take), find
// and lock the matching contacts, then one statement inserts the new contacts, updates the changed
// ones and inserts the leads (reading back the leads that were already there).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DedupeMode } from '../../db/entities/ListImport.js';
import { uuidv7 } from '../../lib/ids.js';
import { withPgClient, type PgClient } from '../../lib/pg-raw.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import {
  CONTACT_COLUMNS,
  Params,
  contactRowsSql,
  contactsWriteLock,
  lockMatchingContacts,
  matchRows,
  textArray,
  updateContactsCte,
  type RowOutcome,
} from './contact-rows.js';
import { checkPerson, type CleanRow, type ContactField, type RowProblem } from './import-csv.js';
import { requireList } from './lists.js';

/** Most people in one request (more: 400 `invalid_body`, nothing written). */
export const MAX_PEOPLE = 1000;
/** The lead `source` of people added this way (the CSV import's are `import`). */
export const JSON_LEAD_SOURCE = 'api';

/** A person as given: the CSV import's contact fields, each a string (null or absent: no value). */
export type PersonInput = Partial<Record<ContactField, string | null>>;

export interface PersonResult {
  /** The person's position in the request, from 0. */
  index: number;
  /** `created`, `updated`, `duplicate` as a CSV row counts (docs/imports.md "Dedupe and counts"), or `invalid`. */
  status: RowOutcome | 'invalid';
  leadId: string | null;
  contactId: string | null;
  /** This person's contact joined the list now (false: it was already in it, or an earlier person of the request added it). */
  leadAdded: boolean;
  /** Why an invalid person was refused: the row rule's first problem. */
  error: RowProblem | null;
}

export interface AddLeadsResult {
  items: PersonResult[];
  totals: Record<RowOutcome | 'invalid', number> & { leadsAdded: number };
}

/** Opens the transaction; generic plans keep the contact lookup on its unique indexes (contact-rows.ts). */
const BEGIN = ['begin', 'set local plan_cache_mode = force_generic_plan'].join('; ');

/** Attempts when a single add (addContactToList) inserts one of these contacts meanwhile (a unique violation). */
const ATTEMPTS = 3;

/**
 * Adds the people to the list: each checked by the import's row rule, the valid ones applied to the
 * workspace's contacts by `dedupeMode` (the import's modes; default `update_empty`) and added to
 * the list once. 404 for a list not in the actor's workspace (who may touch it was checked before:
 * domain/access.ts); 403 `demo_read_only` in the Demo; 400 `invalid_body` over MAX_PEOPLE.
 */
export async function addLeadsToList(
  em: EntityManager,
  actor: Actor,
  listId: string,
  people: readonly PersonInput[],
  dedupeMode: DedupeMode = 'update_empty',
): Promise<AddLeadsResult> {
  assertWritable(actor);
  if (people.length > MAX_PEOPLE)
    throw badRequest('invalid_body', `at most ${MAX_PEOPLE} people per request; split the batch`);
  const list = await requireList(em, actor, listId);
  const items: PersonResult[] = [];
  const valid: { index: number; row: CleanRow }[] = [];
  const domains = new Map<string, string>();
  people.forEach((person, index) => {
    const { row, problems } = checkPerson((f) => person[f] ?? '', domains);
    if (row) valid.push({ index, row });
    items.push({
      index,
      status: 'invalid',
      leadId: null,
      contactId: null,
      leadAdded: false,
      error: problems[0] ?? null,
    });
  });
  const totals = { created: 0, updated: 0, duplicate: 0, invalid: people.length - valid.length, leadsAdded: 0 };
  if (!valid.length) return { items, totals };

  const written = await withPgClient(em, async (c) => {
    for (let attempt = 1; ; attempt++) {
      await c.query(BEGIN);
      try {
        const out = await write(c, actor.workspaceId, list.id, valid, dedupeMode);
        await c.query('commit');
        return out;
      } catch (err) {
        await c.query('rollback').catch(() => {});
        if ((err as { code?: string }).code !== '23505') throw err;
        if (attempt >= ATTEMPTS)
          throw new AppError(409, 'conflict', 'contacts of these people changed concurrently; retry the request');
      }
    }
  });
  Object.assign(totals, written.counts, { leadsAdded: written.leadsAdded });
  valid.forEach(({ index }, j) => Object.assign(items[index], written.rows[j], { error: null }));
  return { items, totals };
}

/** The transaction's statements (see the module comment); throws 23505 when a contact was inserted concurrently. */
async function write(
  c: PgClient,
  workspaceId: string,
  listId: string,
  valid: { row: CleanRow }[],
  mode: DedupeMode,
): Promise<{
  rows: Pick<PersonResult, 'status' | 'leadId' | 'contactId' | 'leadAdded'>[];
  counts: Record<RowOutcome, number>;
  leadsAdded: number;
}> {
  // The list cannot be deleted under the statement (for key share); contacts of the workspace are
  // written by one batch at a time (imports' chunks take the same lock).
  const { rows: locked } = await c.query<{ list_ok: number }>(
    `select (select count(*)::int from (select 1 from lead_lists where id = $1 and workspace_id = $2 for key share) l) as list_ok,
            pg_advisory_xact_lock(hashtext($3)) is not null as locked`,
    [listId, workspaceId, contactsWriteLock(workspaceId)],
  );
  if (!locked[0]?.list_ok) throw notFound('list');
  const rows = valid.map((v) => v.row);
  const matched = matchRows(rows, await lockMatchingContacts(c, workspaceId, rows), mode);

  const p = new Params();
  const wsP = p.add(workspaceId);
  const listP = p.add(listId);
  const ctes: string[] = [];
  if (matched.created.length)
    ctes.push(`new_contacts as (insert into contacts (id, workspace_id, ${CONTACT_COLUMNS.join(', ')}, created_at, updated_at)
      select v.id, ${wsP}, ${CONTACT_COLUMNS.map((k) => `v.${k}`).join(', ')}, now(), now() from ${contactRowsSql(p, matched.created)})`);
  if (matched.changed.length) ctes.push(updateContactsCte(p, 'changed_contacts', matched.changed));
  // Each contact once, in the order people named it; a contact already in the list keeps its lead
  // (read from the statement's snapshot, which does not see the leads it inserts).
  const contactIds = [...new Set(matched.rows.map((r) => r.contact.id))];
  const idsP = p.add(textArray(contactIds));
  // Sorted: UUIDv7s minted in one millisecond are not ordered among themselves, and a list's leads
  // are paged by id, so the new leads list in the order people were given.
  const leadIds = contactIds.map(() => uuidv7()).sort();
  ctes.push(`added as (insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
      select v.id, ${wsP}, ${listP}, v.contact_id, ${p.add(JSON_LEAD_SOURCE)}, now(), now()
      from unnest(${p.add(textArray(leadIds))}::uuid[], ${idsP}::uuid[]) as v(id, contact_id)
      on conflict (list_id, contact_id) do nothing returning id, contact_id)`);
  const { rows: leads } = await c.query<{ id: string; contact_id: string; added: boolean }>(
    `with ${ctes.join(',\n')}
     select id, contact_id, true as added from added
     union all
     select l.id, l.contact_id, false as added from leads l where l.list_id = ${listP} and l.contact_id = any(${idsP}::uuid[])`,
    p.values,
  );
  const leadOf = new Map(leads.map((l) => [l.contact_id, l]));
  // A lead another writer committed after the statement's snapshot (its insert did nothing): read it now.
  const missing = contactIds.filter((id) => !leadOf.has(id));
  if (missing.length) {
    const { rows: late } = await c.query<{ id: string; contact_id: string }>(
      'select id, contact_id from leads where list_id = $1 and contact_id = any($2::uuid[])',
      [listId, missing],
    );
    for (const l of late) leadOf.set(l.contact_id, { ...l, added: false });
  }
  const firstSeen = new Set<string>();
  return {
    rows: matched.rows.map(({ contact, outcome }) => {
      const lead = leadOf.get(contact.id);
      // Only a lead removed by a concurrent request between the two reads: the caller repeats.
      if (!lead) throw new AppError(409, 'conflict', 'the list changed concurrently; retry the request');
      const first = !firstSeen.has(contact.id);
      firstSeen.add(contact.id);
      return { status: outcome, leadId: lead.id, contactId: contact.id, leadAdded: first && lead.added };
    }),
    counts: matched.counts,
    leadsAdded: leads.filter((l) => l.added).length,
  };
}
