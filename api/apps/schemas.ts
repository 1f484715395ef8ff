import { z } from 'zod';
import type { IApp } from '../../db/entities/App.js';
import { Timestamp, text, urlPattern } from '../schemas.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';

export const AppView = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  website_url: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toAppView = (a: IApp): z.infer<typeof AppView> => ({
  id: a.id,
  workspace_id: a.workspace.id,
  name: a.name,
  description: a.description ?? null,
  website_url: a.websiteUrl ?? null,
  created_at: a.createdAt.toISOString(),
  updated_at: a.updatedAt.toISOString(),
});

export const CreateAppBody = z
  .object({
    name: text({ min: 1, max: 200, trim: true }),
    description: text({ max: 5000 }).nullish(),
    website_url: z.string().max(2048).regex(new RegExp(urlPattern('http(s)')), 'website_url must be an http(s) URL with a public host name').nullish(),
  })
  .strict();

export const ListAppsQuery = z.object(pageQuery);
export const AppPage = pageSchema(AppView);
