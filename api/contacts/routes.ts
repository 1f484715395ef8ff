// Contacts, lead edits and CSV exports (docs/contacts.md).
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createExport, exportChunks, listExports, requireDownload } from '../../domain/contacts/exports.js';
import { editLead, getContact, listContacts, setFit, setPinned } from '../../domain/contacts/contacts.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  ContactDetailView,
  ContactPage,
  ContactsQuery,
  Csv,
  EditedLeadView,
  ExportBody,
  ExportPage,
  ExportQuery,
  ExportView,
  FitBody,
  LeadPatchBody,
  exportFileName,
  toContactDetailView,
  toContactView,
  toEditedLeadView,
  toExportView,
  toFilters,
} from './schemas.js';

const tag = 'contacts';
const auth = { 401: ['unauthorized'] };

export const listContactsOp = defineOperation({
  method: 'GET',
  path: '/api/contacts',
  ids: { query: { list_id: 'list', app_id: 'app' } },
  summary: 'The workspace’s contacts you can see, oldest first, filtered by list, product, fit, pinned and text',
  description:
    'A member limited to some products sees the contacts that are a lead of a list of those products. Filters combine (AND); `q` searches the full name, first + last name, email, company and title.',
  tag,
  auth: 'user',
  query: ContactsQuery,
  responses: { 200: ContactPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, query }) =>
    page(await listContacts(em, actor, toFilters(query), toPageRequest(query)), query.limit, toContactView),
});

export const getContactOp = defineOperation({
  method: 'GET',
  path: '/api/contacts/{id}',
  ids: { path: { id: 'contact' } },
  summary: 'One contact with its list memberships (leads) and field provenance (edited_fields, enriched_fields)',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ContactDetailView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toContactDetailView(await getContact(em, actor, params.id)),
});

export const setContactFitOp = defineOperation({
  method: 'PATCH',
  path: '/api/contacts/{id}/fit',
  ids: { path: { id: 'contact' } },
  summary:
    'Set the contact’s fit: score 0..100 and/or label good | maybe | bad (null clears one, an absent one is kept)',
  tag,
  auth: 'user',
  params: IdParams,
  body: FitBody,
  responses: { 200: ContactDetailView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) => toContactDetailView(await setFit(em, actor, params.id, body)),
});

export const pinContactOp = defineOperation({
  method: 'PUT',
  path: '/api/contacts/{id}/pin',
  ids: { path: { id: 'contact' } },
  summary: 'Pin the contact (for the whole workspace); pinning a pinned contact changes nothing',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ContactDetailView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toContactDetailView(await setPinned(em, actor, params.id, true)),
});

export const unpinContactOp = defineOperation({
  method: 'DELETE',
  path: '/api/contacts/{id}/pin',
  ids: { path: { id: 'contact' } },
  summary: 'Unpin the contact; unpinning an unpinned contact changes nothing',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ContactDetailView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toContactDetailView(await setPinned(em, actor, params.id, false)),
});

export const editLeadOp = defineOperation({
  method: 'PATCH',
  path: '/api/leads/{id}',
  ids: { path: { id: 'lead' } },
  summary:
    'Edit the fields of a lead’s contact; each field named is marked as edited, so enrichment never overwrites it',
  description:
    'Contacts are shared by lists: the edit shows in every list the contact is in. `null` clears a field. The contact must keep an email or a profile URL (400 invalid_contact); an email or profile URL that another contact of the workspace has (once normalised) is 409 contact_exists with `details.contact_id` naming it.',
  tag,
  auth: 'user',
  params: IdParams,
  body: LeadPatchBody,
  invalid: { fields: { email: 'invalid_email', profile_url: 'invalid_profile_url', time_zone: 'invalid_time_zone' } },
  responses: { 200: EditedLeadView },
  errors: {
    400: [
      'invalid_id',
      'invalid_body',
      'invalid_email',
      'invalid_profile_url',
      'invalid_contact',
      'invalid_time_zone',
      'invalid_user',
    ],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['contact_exists'],
  },
  handler: async ({ em, actor, params, body }) => toEditedLeadView(await editLead(em, actor, params.id, body)),
});

export const createExportOp = defineOperation({
  method: 'POST',
  path: '/api/contacts/export',
  ids: { body: { list_id: 'list', app_id: 'app' } },
  summary:
    'Export the contacts matching the filters (those of GET /api/contacts) as CSV, on the workflow contacts-export:<id>',
  description:
    'Answers 202 with the export in `queued`; follow it with GET /api/contacts/export and download it there with `?id=` once `completed`.',
  tag,
  auth: 'user',
  body: ExportBody,
  responses: { 202: ExportView },
  errors: {
    400: ['invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, services, body }) =>
    reply(202, toExportView(await createExport(em, actor, services.jobs, toFilters(body)))),
});

export const exportsOp = defineOperation({
  method: 'GET',
  path: '/api/contacts/export',
  ids: { query: { id: 'export' } },
  summary: 'Your contact exports, newest first, with state and counts; with `id`, the CSV file of a completed one',
  description:
    'Without `id`: `{items, next_cursor}` of exports. With `id`: the file as `text/csv` (attachment), streamed from storage; 409 export_not_ready while queued or running, 409 export_failed after a failure, 404 for an export you cannot see.',
  tag,
  auth: 'user',
  query: ExportQuery,
  responses: { 200: ExportPage },
  alternatives: { 200: { 'text/csv': Csv } },
  errors: {
    400: ['invalid_query', 'invalid_user'],
    ...auth,
    404: ['not_found'],
    409: ['export_not_ready', 'export_failed'],
  },
  handler: async ({ em, actor, services, query }) => {
    if (!query.id) return page(await listExports(em, actor, toPageRequest(query)), query.limit, toExportView);
    const exp = await requireDownload(em, actor, query.id);
    // Its own EntityManager: the stream is read after the handler has returned.
    const stream = Readable.from(exportChunks(services.orm.em.fork() as EntityManager, exp.id), { objectMode: false });
    return reply(200, stream, {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${exportFileName(exp)}"`,
      'Content-Length': String(exp.byteCount),
      'Cache-Control': 'private, no-store',
    });
  },
});
