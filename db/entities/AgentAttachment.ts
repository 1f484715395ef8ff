import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { AgentThread } from './AgentThread.js';
import { Workspace } from './Workspace.js';

/**
 * `extracted`: text found, all of it kept; `truncated`: text found, the first 200,000 characters
 * kept (or a PDF's first 500 pages read); `empty`: no text (a blank file, a scanned PDF); `failed`:
 * the PDF could not be read (corrupt, encrypted, too slow). Only the first two give chat text.
 */
export const EXTRACTION_STATUSES = ['extracted', 'truncated', 'empty', 'failed'] as const;
export type ExtractionStatus = (typeof EXTRACTION_STATUSES)[number];

// A file uploaded for chat (POST /api/agent/attachments): its text, extracted at upload, is what a
// message that names it gives the model. `id` is the spec's `file_id`.
export const AgentAttachment = defineEntity({
  name: 'AgentAttachment',
  tableName: 'agent_attachments',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    thread: p.manyToOne(AgentThread).ref().deleteRule('cascade').index(),
    userId: p.uuid(),
    filename: p.string().length(255),
    contentType: p.string().length(100),
    sizeBytes: p.integer(),
    sha256: p.string().length(64),
    extractionStatus: p.string().length(20),
    text: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IAgentAttachment = InferEntity<typeof AgentAttachment>;
