// Contacts for the Operator: list them with the filters of GET /api/contacts, export them as CSV (the
// contacts-export workflow; a change, so it needs confirmation) and read an export's state.
import { z } from 'zod';
import type { IContactExport } from '../../db/entities/ContactExport.js';
import { contactExportWorkflowIds } from '../../lib/workflow-ids.js';
import { createExport, getExport } from '../contacts/exports.js';
import { FIT_LABELS, listContacts, type ContactFilters } from '../contacts/contacts.js';
import { defineTool } from './registry.js';

const filters = {
  list_id: z.uuid().optional(),
  app_id: z.uuid().optional(),
  fit: z.enum([...FIT_LABELS, 'none']).optional(),
  pinned: z.boolean().optional(),
  q: z.string().trim().max(200).optional(),
};
const toFilters = (i: {
  list_id?: string;
  app_id?: string;
  fit?: ContactFilters['fit'];
  pinned?: boolean;
  q?: string;
}): ContactFilters => ({
  listId: i.list_id,
  appId: i.app_id,
  fit: i.fit,
  pinned: i.pinned,
  q: i.q || undefined,
});

const exportView = (e: IContactExport) => ({
  id: e.id,
  status: e.status,
  row_count: e.rowCount,
  byte_count: Number(e.byteCount),
  download_url: e.status === 'completed' ? `/api/contacts/export?id=${e.id}` : null,
  error: e.errorCode ? { code: e.errorCode, message: e.errorMessage } : null,
  workflow_id: contactExportWorkflowIds.export(e.id),
  created_at: e.createdAt.toISOString(),
  finished_at: e.finishedAt?.toISOString() ?? null,
});

export const contactTools = [
  defineTool({
    name: 'list_contacts',
    ids: {
      list_id: 'list',
      app_id: 'app',
      after: { value: 'a page cursor (the last contact id of the previous page)' },
    },
    domain: 'contacts',
    description:
      'List contacts of the workspace (oldest first, up to `limit`, default 20, max 50), filtered by list, product, fit label (good, maybe, bad, none), pinned, and q (text in name, email, company or title). `after` continues after a contact id.',
    input: z
      .object({ ...filters, limit: z.number().int().min(1).max(50).optional(), after: z.uuid().optional() })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      const limit = input.limit ?? 20;
      const rows = await listContacts(em, actor, toFilters(input), { limit, after: input.after });
      return {
        contacts: rows.slice(0, limit).map((c) => ({
          id: c.id,
          name: c.full_name ?? ([c.first_name, c.last_name].filter(Boolean).join(' ') || null),
          title: c.title,
          company: c.company,
          email: c.email,
          profile_url: c.profile_url,
          time_zone: c.time_zone,
          fit_score: c.fit_score,
          fit_label: c.fit_label,
          pinned: c.pinned_at !== null,
        })),
        more_after: rows.length > limit ? rows[limit - 1].id : null,
      };
    },
  }),
  defineTool({
    name: 'export_contacts',
    ids: { list_id: 'list', app_id: 'app' },
    domain: 'contacts',
    description:
      'Export the contacts matching the filters (list, product, fit, pinned, q) to a CSV file in the background; returns the export, downloadable from its download_url once completed (see get_export).',
    input: z.object(filters).strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, input) => exportView(await createExport(em, actor, jobs, toFilters(input))),
  }),
  defineTool({
    name: 'get_export',
    ids: { export_id: 'export' },
    domain: 'contacts',
    description:
      'Read a contacts export: its state (queued, running, completed, failed), rows written so far and, once completed, its download_url.',
    input: z.object({ export_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => exportView(await getExport(em, actor, input.export_id)),
  }),
];
