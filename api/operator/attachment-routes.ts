// Operator attachments (docs/operator-attachments.md): POST /api/agent/attachments, multipart/form-data.
// In the shared 20/min agent group (every /api/agent/ path). Order: authentication, X-Acting-As and
// the Demo rule, the rate limit (router), then the Operator's plan check, and only then the body is
// read, streaming, under its limits; then the fields, the product, the thread, the file.
import { createAttachment, MAX_ATTACHMENT_BYTES } from '../../domain/operator/attachments.js';
import { badRequest } from '../../domain/errors.js';
import { requireOperatorAccess } from '../../domain/billing/plans.js';
import { closeIfUnread, readForm, type Form } from '../middleware/multipart.js';
import { defineOperation, reply } from '../operation.js';
import { AttachmentForm, AttachmentView, toAttachmentView } from './attachment-schemas.js';

const FORM = { file: 'file', fields: ['app_id', 'thread_id'], fileBytes: MAX_ATTACHMENT_BYTES } as const;

/** The form's fields, checked with the spec's codes (the file's content is checked by the domain). */
function fieldsOf(form: Form) {
  const { app_id, thread_id } = form.fields;
  if (!AttachmentForm.shape.app_id.safeParse(app_id).success)
    throw badRequest('invalid_app', 'a valid app_id is required');
  if (thread_id !== undefined && !AttachmentForm.shape.thread_id.safeParse(thread_id).success)
    throw badRequest('invalid_thread', 'thread_id must be a thread id (UUID)');
  if (!form.file) {
    throw badRequest(
      'missing_file',
      form.fileAsText ? 'the file field must be a file part (with a filename)' : 'the file field is required',
    );
  }
  return { appId: app_id.toLowerCase(), threadId: thread_id?.toLowerCase(), file: form.file };
}

export const uploadAttachmentOp = defineOperation({
  method: 'POST',
  path: '/api/agent/attachments',
  summary:
    'Upload a file (text or PDF, at most 2 MiB) for chat: its text is extracted now, and a message of the thread can name it',
  tag: 'operator',
  auth: 'user',
  form: AttachmentForm,
  responses: { 201: AttachmentView },
  errors: {
    400: ['invalid_app', 'invalid_file', 'invalid_thread', 'invalid_upload', 'invalid_user', 'missing_file'],
    402: [''],
    403: ['app_not_owned', 'demo_read_only', 'not_assigned'],
    404: ['thread_not_found'],
    413: ['file_too_large', 'invalid_upload'],
    422: ['pdf_extraction_unavailable'],
    500: ['thread_create_failed', 'upload_failed'],
  },
  handler: async ({ em, actor, ctx, services }) => {
    try {
      await requireOperatorAccess(em, actor);
      const { appId, threadId, file } = fieldsOf(await readForm(ctx, FORM));
      const attachment = await createAttachment(
        em,
        actor,
        { appId, threadId, filename: file.filename, data: file.data },
        services.pdf,
      );
      return reply(201, toAttachmentView(attachment));
    } catch (err) {
      // Refused before the body was read (e.g. 402): close rather than drain what the client still sends.
      closeIfUnread(ctx);
      throw err;
    }
  },
});
