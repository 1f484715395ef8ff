// The workspace's suppression list and email footer (docs/email.md "Suppression"): beyond the spec.
// Workspace-wide, not per product. Everyone in the workspace reads; anyone who may write adds (and
// imports); owners and admins remove entries and set the footer. The Demo workspace is read-only.
import { AppError, badRequest } from '../../domain/errors.js';
import { getEmailSettings, setEmailFooter } from '../../domain/suppressions/email-settings.js';
import { importSuppressionsCsv, MAX_IMPORT_BYTES, type ImportResult } from '../../domain/suppressions/import.js';
import { addSuppression, deleteSuppression, listSuppressions } from '../../domain/suppressions/suppressions.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { closeIfUnread, readForm } from '../middleware/multipart.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  AddSuppressionBody,
  EmailSettingsBody,
  EmailSettingsView,
  ImportResultView,
  ListSuppressionsQuery,
  SuppressionImportForm,
  SuppressionPage,
  SuppressionView,
  toSuppressionView,
} from './schemas.js';

const tag = 'email';
const SCOPE =
  'Beyond the spec. The list is the workspace’s, not a product’s: an address or domain on it gets no email from any campaign (enrollment skips its leads with `suppressed`; a planned send to it stops with `suppressed`).';

export const listSuppressionsOp = defineOperation({
  method: 'GET',
  path: '/api/suppressions',
  summary: 'The workspace’s suppression list (addresses and domains no email is sent to), newest first',
  description: `${SCOPE} Everyone in the workspace may read it. Filters: \`reason\`, \`kind\`, \`q\` (a prefix of the value).`,
  tag,
  beyondSpec: true,
  auth: 'user',
  query: ListSuppressionsQuery,
  responses: { 200: SuppressionPage },
  errors: { 400: ['invalid_query', 'invalid_user'], 401: ['unauthorized'] },
  handler: async ({ em, actor, query }) =>
    page(
      await listSuppressions(em, actor, { reason: query.reason, kind: query.kind, q: query.q }, toPageRequest(query)),
      query.limit,
      toSuppressionView,
    ),
});

export const addSuppressionOp = defineOperation({
  method: 'POST',
  path: '/api/suppressions',
  summary:
    'Suppress an address or a whole domain: 201 when new, 200 with the entry already on the list (its first reason kept)',
  description: `${SCOPE} Any member who may write can add an entry (suppressing is always safe).`,
  tag,
  beyondSpec: true,
  auth: 'user',
  body: AddSuppressionBody,
  invalid: { fields: { value: 'invalid_suppression' } },
  responses: { 201: SuppressionView, 200: SuppressionView },
  errors: {
    400: ['invalid_body', 'invalid_suppression', 'invalid_user'],
    401: ['unauthorized'],
    403: ['demo_read_only'],
  },
  handler: async ({ em, actor, body }) => {
    const { row, created } = await addSuppression(em, actor, body.value, body.reason);
    return reply(created ? 201 : 200, toSuppressionView(row));
  },
});

export const deleteSuppressionOp = defineOperation({
  method: 'DELETE',
  path: '/api/suppressions/{id}',
  ids: { path: { id: 'suppression' } },
  summary: 'Remove an entry from the suppression list (owners and admins): email may reach it again',
  description: `${SCOPE} A contact who unsubscribed stays unsubscribed (PATCH /api/leads/{id} \`unsubscribed: false\` clears that); only the list entry goes.`,
  tag,
  beyondSpec: true,
  auth: 'user',
  params: IdParams,
  responses: { 204: null },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params }) => {
    await deleteSuppression(em, actor, params.id);
    return reply(204);
  },
});

/** Room for the multipart framing around the file: a declared length beyond it is refused before reading. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

export const importSuppressionsOp = defineOperation({
  method: 'POST',
  path: '/api/suppressions/import',
  summary: 'Add the addresses and domains of a CSV file to the suppression list (reason `import`)',
  description: `${SCOPE} multipart/form-data with one file part \`file\`. The file is read as it arrives and its entries added 1,000 at a time: a file refused part-way (413, 400 invalid_csv) leaves the entries before that point on the list, and the error's \`details\` say how many (importing the file again counts them as already present). A request whose declared length is over the limit is refused before anything is read.`,
  tag,
  beyondSpec: true,
  auth: 'user',
  form: SuppressionImportForm,
  responses: { 200: ImportResultView },
  errors: {
    400: ['invalid_upload', 'missing_file', 'invalid_csv', 'invalid_user'],
    401: ['unauthorized'],
    403: ['demo_read_only'],
    413: ['file_too_large', 'invalid_upload', 'too_many_rows'],
  },
  handler: async ({ ctx, em, actor }) => {
    // Set by the sink when the file part begins (readForm resolves once the sink has finished).
    const job: { run?: Promise<ImportResult> } = {};
    try {
      if (Number(ctx.get('content-length') || 0) > MAX_IMPORT_BYTES + FORM_OVERHEAD_BYTES) {
        throw new AppError(413, 'file_too_large', `the file is larger than ${MAX_IMPORT_BYTES} bytes`);
      }
      const form = await readForm(ctx, {
        file: 'file',
        fields: [],
        fileBytes: MAX_IMPORT_BYTES,
        sink: async (stream) => {
          job.run = importSuppressionsCsv(em, actor, stream);
          await job.run;
        },
      });
      if (!form.streamed || !job.run)
        throw badRequest(
          'missing_file',
          form.fileAsText ? 'the file field must be a file part (with a filename)' : 'the file field is required',
        );
      return await job.run;
    } catch (err) {
      closeIfUnread(ctx);
      // The import may still be writing its last batch: answer once it has stopped.
      await job.run?.catch(() => {});
      throw err;
    }
  },
});

export const getEmailSettingsOp = defineOperation({
  method: 'GET',
  path: '/api/email-settings',
  summary: 'The workspace’s email settings: the footer every email it sends ends with (its postal address)',
  description: 'Beyond the spec. Everyone in the workspace may read them.',
  tag,
  beyondSpec: true,
  auth: 'user',
  responses: { 200: EmailSettingsView },
  errors: { 400: ['invalid_user'], 401: ['unauthorized'] },
  handler: ({ em, actor }) => getEmailSettings(em, actor),
});

export const updateEmailSettingsOp = defineOperation({
  method: 'PATCH',
  path: '/api/email-settings',
  summary: 'Set or remove the workspace’s email footer (owners and admins)',
  description:
    'Beyond the spec. The footer (at most 2,000 characters, trimmed) is appended to every email the workspace sends from then on; null or a blank text removes it.',
  tag,
  beyondSpec: true,
  auth: 'user',
  body: EmailSettingsBody,
  responses: { 200: EmailSettingsView },
  errors: { 400: ['invalid_body', 'invalid_user'], 401: ['unauthorized'], 403: ['not_assigned', 'demo_read_only'] },
  handler: ({ em, actor, body }) => setEmailFooter(em, actor, body.footer),
});
