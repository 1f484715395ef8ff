import { z } from 'zod';
import type { IApp } from '../../db/entities/App.js';
import { Timestamp, text, urlPattern } from '../schemas.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';

const terms = z.array(text({ min: 1, max: 100, trim: true })).max(50);
/** The structured half of an ideal customer profile; discovery matches candidates against it. */
export const IcpFilters = z
  .object({
    titles: terms.optional(),
    seniorities: terms.optional(),
    industries: terms.optional(),
    countries: terms.optional(),
    company_sizes: terms.optional(),
    keywords: terms.optional(),
  })
  .strict();

export const AppView = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  website_url: z.string().nullable(),
  value_proposition: z.string().nullable(),
  icp_description: z.string().nullable(),
  icp_filters: IcpFilters.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toAppView = (a: IApp): z.infer<typeof AppView> => ({
  id: a.id,
  workspace_id: a.workspace.id,
  name: a.name,
  description: a.description ?? null,
  website_url: a.websiteUrl ?? null,
  value_proposition: a.valueProposition ?? null,
  icp_description: a.icpDescription ?? null,
  icp_filters: (a.icpFilters ?? null) as z.infer<typeof IcpFilters> | null,
  created_at: a.createdAt.toISOString(),
  updated_at: a.updatedAt.toISOString(),
});

export const CreateAppBody = z
  .object({
    name: text({ min: 1, max: 200, trim: true }),
    description: text({ max: 5000 }).nullish(),
    website_url: z
      .string()
      .max(2048)
      .regex(new RegExp(urlPattern('http(s)')), 'website_url must be an http(s) URL with a public host name')
      .nullish(),
  })
  .strict();

export const ListAppsQuery = z.object(pageQuery);
export const AppPage = pageSchema(AppView);

export const UpdateAppBody = z
  .object({
    name: text({ min: 1, max: 200, trim: true }).optional(),
    description: text({ max: 5000 }).nullish(),
    website_url: z
      .string()
      .max(2048)
      .regex(new RegExp(urlPattern('http(s)')), 'website_url must be an http(s) URL with a public host name')
      .nullish(),
    value_proposition: text({ max: 5000 }).nullish(),
    icp_description: text({ max: 10_000 }).nullish(),
    icp_filters: IcpFilters.nullish(),
  })
  .strict();

export const AppIdParams = z.object({ id: z.uuid() });

export const AppStatsView = z.object({
  items: z.array(
    z.object({
      app_id: z.uuid(),
      name: z.string(),
      agents: z.number().int(),
      active_agents: z.number().int(),
      lists: z.number().int(),
      leads: z.number().int(),
    }),
  ),
});
