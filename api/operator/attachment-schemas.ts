import { z } from 'zod';
import { EXTRACTION_STATUSES, type IAgentAttachment } from '../../db/entities/AgentAttachment.js';
import { MAX_ATTACHMENT_BYTES } from '../../domain/operator/attachments.js';
import { BINARY } from '../schemas.js';

/** The form of POST /api/agent/attachments (multipart/form-data), as the OpenAPI document states it. */
export const AttachmentForm = z
  .object({
    file: z.unknown().meta({
      jsonSchema: {
        ...BINARY,
        description: `The file, at most ${MAX_ATTACHMENT_BYTES} bytes (2 MiB; more → 413 file_too_large), typed by its content: UTF-8 text (plain, Markdown, CSV, JSON, HTML, XML) or PDF; anything else → 400 invalid_file`,
      },
    }),
    app_id: z.uuid().meta({ description: 'The product; malformed or missing → 400 invalid_app' }),
    thread_id: z.uuid().optional().meta({
      description:
        "One of the caller's threads of that product (400 invalid_thread, 404 thread_not_found); absent: a thread is created",
    }),
  })
  .strict();

export const AttachmentView = z.object({
  file_id: z.uuid(),
  thread_id: z.uuid(),
  filename: z.string().meta({ description: 'Base name, without control characters, at most 255 characters' }),
  content_type: z.string().meta({
    description:
      'Detected from the content: text/plain, text/markdown, text/csv, text/tab-separated-values, application/json, text/html, application/xml or application/pdf',
  }),
  size_bytes: z.number().int().nonnegative(),
  extraction_status: z.enum(EXTRACTION_STATUSES).meta({
    description:
      'extracted: text found and kept; truncated: text found, the first 200,000 characters kept; empty: no text (e.g. a scanned PDF); failed: the PDF could not be read',
  }),
});

export const toAttachmentView = (a: IAgentAttachment): z.infer<typeof AttachmentView> => ({
  file_id: a.id,
  thread_id: a.thread.id,
  filename: a.filename,
  content_type: a.contentType,
  size_bytes: a.sizeBytes,
  extraction_status: a.extractionStatus as z.infer<typeof AttachmentView>['extraction_status'],
});
