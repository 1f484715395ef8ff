// Lead lists' actions for the Operator: list a product's lists with their sizes, create one.
import { z } from 'zod';
import { createList, listLists } from '../lists/lists.js';
import { defineTool } from './registry.js';

const view = (l: { list: { id: string; name: string; app: { id: string } }; leadCount: number }) => ({
  id: l.list.id,
  name: l.list.name,
  app_id: l.list.app.id,
  lead_count: l.leadCount,
});

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
];
