import { z } from 'zod';
import type { ListWithCount, LeadRow, DeletedList } from '../../domain/lists/lists.js';
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
