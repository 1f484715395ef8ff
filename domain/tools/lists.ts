// Lead lists' actions for the Operator: list a product's lists with their sizes, create one, add
// people to one (the same domain function as POST /api/lists/{id}/leads) and remove a lead from one.
import { z } from 'zod';
import { DEDUPE_MODES } from '../../db/entities/ListImport.js';
import { MAX_PEOPLE, addLeadsToList } from '../lists/add-leads.js';
import { CONTACT_FIELDS } from '../lists/import-csv.js';
import { createList, listLists, removeLeadFromList } from '../lists/lists.js';
import { defineTool } from './registry.js';

const view = (l: { list: { id: string; name: string; app: { id: string } }; leadCount: number }) => ({
  id: l.list.id,
  name: l.list.name,
  app_id: l.list.app.id,
  lead_count: l.leadCount,
});

/** A person: the contact fields of a CSV import's mapping. */
const Person = z
  .object(Object.fromEntries(CONTACT_FIELDS.map((f) => [f, z.string().nullable().optional()])))
  .strict() as z.ZodType<Partial<Record<(typeof CONTACT_FIELDS)[number], string | null>>>;

/** At most this many people of an answer are listed to the model (the totals count them all). */
const SHOWN = 50;

export const listTools = [
  defineTool({
    name: 'list_lead_lists',
    ids: { app_id: 'app' },
    domain: 'lists',
    description: 'List the lead lists of the workspace (optionally of one product) with how many leads each holds.',
    input: z.object({ app_id: z.uuid().optional() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) =>
      (await listLists(em, actor, { limit: 200 }, input.app_id)).slice(0, 200).map(view),
  }),
  defineTool({
    name: 'create_lead_list',
    ids: { app_id: 'app' },
    domain: 'lists',
    description: 'Create a lead list in a product (names are unique per product, ignoring case).',
    input: z
      .object({
        app_id: z.uuid(),
        name: z.string().trim().min(1).max(200),
        description: z.string().max(5000).optional(),
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor }, input) =>
      view(await createList(em, actor, input.app_id, { name: input.name, description: input.description ?? null })),
  }),
  defineTool({
    name: 'add_leads_to_list',
    ids: { list_id: 'list' },
    domain: 'lists',
    description: `Add people to a lead list (up to ${MAX_PEOPLE}), as a CSV import would: each needs an email or a profile URL (profile_url); fields ${CONTACT_FIELDS.join(', ')}. People already in the workspace (same email, else same profile URL) are not duplicated: dedupe_mode says what a person does to the existing contact: skip, update_empty (default: fill empty fields) or overwrite. Answers the totals and, per person, created / updated / duplicate / invalid with the reason.`,
    input: z
      .object({
        list_id: z.uuid(),
        people: z.array(Person).min(1).max(MAX_PEOPLE),
        dedupe_mode: z.enum(DEDUPE_MODES).optional(),
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor }, input) => {
      const r = await addLeadsToList(em, actor, input.list_id, input.people, input.dedupe_mode);
      const invalid = r.items.filter((i) => i.status === 'invalid');
      const added = r.items.filter((i) => i.status !== 'invalid');
      return {
        list_id: input.list_id,
        totals: {
          created: r.totals.created,
          updated: r.totals.updated,
          duplicate: r.totals.duplicate,
          invalid: r.totals.invalid,
          leads_added: r.totals.leadsAdded,
        },
        invalid: invalid.slice(0, SHOWN).map((i) => ({ index: i.index, error: i.error })),
        leads: added
          .slice(0, SHOWN)
          .map((i) => ({ index: i.index, status: i.status, lead_id: i.leadId, contact_id: i.contactId })),
        truncated: invalid.length > SHOWN || added.length > SHOWN,
      };
    },
  }),
  defineTool({
    name: 'remove_lead_from_list',
    ids: { list_id: 'list', lead_id: { within: 'list_id', child: 'list_lead' } },
    domain: 'lists',
    description:
      'Remove a lead from its lead list (the contact stays in the workspace and its other lists). Refused (lead_in_use) while a campaign that is not archived enrolls the lead.',
    input: z.object({ list_id: z.uuid(), lead_id: z.uuid() }).strict(),
    risk: 'delete',
    run: async ({ em, actor }, input) => {
      await removeLeadFromList(em, actor, input.list_id, input.lead_id);
      return { list_id: input.list_id, lead_id: input.lead_id, removed: true };
    },
  }),
];
