import { z } from 'zod';
import type { ListWithCount, LeadRow, DeletedList } from '../../domain/lists/lists.js';
import { DEDUPE_MODES } from '../../db/entities/ListImport.js';
import { MAX_PEOPLE, type AddLeadsResult } from '../../domain/lists/add-leads.js';
import { CONTACT_FIELDS, FIELD_MAX, PERSON_PROBLEM_CODES, type ContactField } from '../../domain/lists/import-csv.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, text } from '../schemas.js';

export const AppIdParams = z.object({ appId: z.uuid() });

export const ListView = z.object({
  id: z.uuid(),
  app_id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  lead_count: z.number().int().nonnegative(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toListView = ({ list, leadCount }: ListWithCount): z.infer<typeof ListView> => ({
  id: list.id,
  app_id: list.app.id,
  name: list.name,
  description: list.description ?? null,
  lead_count: leadCount,
  created_at: list.createdAt.toISOString(),
  updated_at: list.updatedAt.toISOString(),
});

export const ListPage = pageSchema(ListView);

const Name = text({ min: 1, max: 200, trim: true }).meta({
  description: 'Unique within the product, case-insensitively (409 list_name_taken)',
});
const Description = text({ max: 5000 }).nullable();

export const CreateListBody = z.object({ name: Name, description: Description.optional() }).strict();

export const UpdateListBody = z
  .object({ name: Name.optional(), description: Description.optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.description !== undefined, {
    message: 'give at least one of name, description',
  })
  .meta({ minProperties: 1 });

export const ListListsQuery = z.object(pageQuery);
export const ListAllListsQuery = z.object({ ...pageQuery, app_id: z.uuid().optional() });
export const ListLeadsQuery = z.object({
  ...pageQuery,
  q: text({ max: 200, trim: true }).optional().meta({
    description:
      'Case-insensitive substring of the contact’s name, email or company (% and _ match literally); blank means no filter',
  }),
});

export const DeletedListView = z.object({
  id: z.uuid(),
  deleted: z.literal(true),
  leads_deleted: z.number().int().nonnegative(),
  /** Agents that delivered into this list: their `list_id` is now null and they keep running. */
  agents_cleared: z.array(z.uuid()),
});

export const toDeletedListView = (d: DeletedList): z.infer<typeof DeletedListView> => ({
  id: d.id,
  deleted: true,
  leads_deleted: d.leadsDeleted,
  agents_cleared: d.agentsCleared,
});

export const LeadView = z.object({
  id: z.uuid(),
  list_id: z.uuid(),
  contact_id: z.uuid(),
  /** The contact's full name, else first and last name joined; null when none is known. */
  name: z.string().nullable(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  title: z.string().nullable(),
  company: z.string().nullable(),
  email: z.string().nullable(),
  profile_url: z.string().nullable(),
  country: z.string().nullable(),
  source: z.string(),
  created_at: Timestamp,
});

export const toLeadView = (r: LeadRow): z.infer<typeof LeadView> => ({
  id: r.id,
  list_id: r.list_id,
  contact_id: r.contact_id,
  name: r.full_name ?? ([r.first_name, r.last_name].filter(Boolean).join(' ') || null),
  first_name: r.first_name,
  last_name: r.last_name,
  title: r.title,
  company: r.company,
  email: r.email,
  profile_url: r.profile_url,
  country: r.country,
  source: r.source,
  created_at: new Date(r.created_at).toISOString(),
});

export const LeadPage = pageSchema(LeadView);

// Leads over JSON (beyond the spec; docs/imports.md "Adding leads over JSON").

export const ListLeadParams = z.object({ id: z.uuid(), leadId: z.uuid() });

const personField = (f: ContactField) =>
  z
    .string()
    .nullable()
    .optional()
    .meta({
      description: `At most ${FIELD_MAX[f]} characters once trimmed (longer: this person is invalid, too_long); null, absent or blank: no value`,
    });

export const PersonBody = z
  .object(
    Object.fromEntries(CONTACT_FIELDS.map((f) => [f, personField(f)])) as Record<
      ContactField,
      ReturnType<typeof personField>
    >,
  )
  .strict()
  .meta({
    description:
      'A person, with the contact fields a CSV column can map to. Checked by the CSV import’s row rule: an email or a profile_url is needed, each valid when given (else this person is invalid, the others are still added).',
  });

export const AddLeadsBody = z
  .object({
    people: z
      .array(PersonBody)
      .min(1)
      .max(MAX_PEOPLE)
      .meta({ description: `1 to ${MAX_PEOPLE} people, answered one by one in the same order` }),
    dedupe_mode: z.enum(DEDUPE_MODES).default('update_empty').meta({
      description:
        'As the CSV import’s: what a person does to a contact that already exists (same normalised email, else same normalised profile URL): skip = leaves it as it is; update_empty = fills its empty fields (default); overwrite = replaces its fields with the person’s non-empty values. A blank value never clears a field, and an existing email or profile URL is never replaced. In every mode the contact joins the list.',
    }),
  })
  .strict();

const PersonProblem = z.object({
  code: z.enum(PERSON_PROBLEM_CODES).meta({
    description:
      'missing_identifier: neither email nor profile URL; invalid_email; invalid_profile_url; too_long: a value longer than its field (field says which)',
  }),
  field: z.enum(CONTACT_FIELDS).nullable(),
  message: z.string(),
});

export const AddedLeadsView = z.object({
  items: z.array(
    z.object({
      index: z.number().int().nonnegative().meta({ description: 'The person’s position in people, from 0' }),
      status: z.enum(['created', 'updated', 'duplicate', 'invalid']).meta({
        description:
          'created: a new contact; updated: the contact it matched changed; duplicate: it matched a contact and changed nothing (skip, nothing to fill, the same values, or a repeat of an earlier person); invalid: not added (error says why)',
      }),
      lead_id: z.uuid().nullable().meta({ description: 'The contact’s lead in this list (null when invalid)' }),
      contact_id: z.uuid().nullable(),
      lead_added: z.boolean().meta({
        description: 'The contact joined the list with this person (false: it was in the list already, or invalid)',
      }),
      error: PersonProblem.nullable().meta({ description: 'Why an invalid person was not added: its first problem' }),
    }),
  ),
  totals: z.object({
    created: z.number().int().nonnegative(),
    updated: z.number().int().nonnegative(),
    duplicate: z.number().int().nonnegative(),
    invalid: z.number().int().nonnegative(),
    leads_added: z.number().int().nonnegative().meta({ description: 'Contacts that joined the list' }),
  }),
});

export const toAddedLeadsView = (r: AddLeadsResult): z.infer<typeof AddedLeadsView> => ({
  items: r.items.map((i) => ({
    index: i.index,
    status: i.status,
    lead_id: i.leadId,
    contact_id: i.contactId,
    lead_added: i.leadAdded,
    error: i.error
      ? { code: i.error.code as (typeof PERSON_PROBLEM_CODES)[number], field: i.error.field, message: i.error.message }
      : null,
  })),
  totals: {
    created: r.totals.created,
    updated: r.totals.updated,
    duplicate: r.totals.duplicate,
    invalid: r.totals.invalid,
    leads_added: r.totals.leadsAdded,
  },
});
