// Operator attachments (docs/operator-attachments.md): a file uploaded for chat is typed by its
// content, its text is extracted once at upload, and the row (with the SHA-256 of the bytes) belongs
// to one thread of the caller. A message that names attachments gives the model their text.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentAttachment, type ExtractionStatus, type IAgentAttachment } from '../../db/entities/AgentAttachment.js';
import type { IAgentThread } from '../../db/entities/AgentThread.js';
import { isUuid } from '../../lib/ids.js';
import { PdfUnreadableError, type PdfExtractorLoader } from '../../lib/pdf-text.js';
import { AppError, badRequest } from '../errors.js';
import type { Actor } from '../identity.js';
import { createThread, requireOwnedApp, requireThread } from './threads.js';

/** Largest file accepted: 2 MiB (413 file_too_large above). */
export const MAX_ATTACHMENT_BYTES = 2 * 1024 * 1024;
/** Characters of extracted text kept per attachment (more: status `truncated`). */
export const MAX_ATTACHMENT_CHARS = 200_000;
/** PDF reading bounds: pages read at most, and the time budget per document. */
export const PDF_MAX_PAGES = 500;
export const PDF_TIMEOUT_MS = 15_000;
/** Longest stored file name (the column's length). */
export const MAX_FILENAME = 255;

export type AttachmentKind = 'text' | 'pdf';

export interface DetectedType {
  kind: AttachmentKind;
  /** The detected media type, e.g. text/plain, text/csv, application/json, application/pdf. */
  contentType: string;
  /** The usual extension of that type, for a file that came without a usable name. */
  extension: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

const extensionOf = (name: string | undefined): string =>
  /\.([A-Za-z0-9]{1,10})$/.exec(name ?? '')?.[1].toLowerCase() ?? '';

/** C0 controls other than tab, line feed, vertical tab, form feed and carriage return, and DEL. */
const CONTROL = /[\u0001-\u0008\u000e-\u001f\u007f]/g;

/** The text of a file that is text: valid UTF-8 (a BOM is dropped), no NUL, almost no control characters. */
function decodeText(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  if (text.includes('\u0000')) return undefined;
  const controls = text.match(CONTROL)?.length ?? 0;
  if (controls > Math.max(2, text.length / 100)) return undefined;
  return text;
}

/** Same count (≥ 1) of a delimiter outside quotes on each of the first lines (at least two). */
function looksTabular(text: string): ',' | '\t' | ';' | undefined {
  const lines = text
    .split(/\r?\n/, 51)
    .filter((l) => l.trim() !== '')
    .slice(0, 50);
  if (lines.length < 2) return undefined;
  for (const d of [',', '\t', ';'] as const) {
    const counts = lines.map((line) => {
      let n = 0;
      let quoted = false;
      for (const ch of line) {
        if (ch === '"') quoted = !quoted;
        else if (ch === d && !quoted) n++;
      }
      return n;
    });
    if (counts[0] >= 1 && counts.every((c) => c === counts[0])) return d;
  }
  return undefined;
}

/** A Markdown heading (`# Title`) as the first line, or a fenced code block. */
const looksMarkdown = (text: string): boolean => /^\s*#{1,6}[ \t]+\S/.test(text) || /^(```|~~~)/m.test(text);

function textSubtype(text: string, filename: string | undefined): DetectedType {
  const t = (contentType: string, extension: string): DetectedType => ({ kind: 'text', contentType, extension });
  const head = text.trimStart().slice(0, 256).toLowerCase();
  // Verifiable from the content whatever the name says.
  if (head.startsWith('{') || head.startsWith('[')) {
    try {
      JSON.parse(text);
      return t('application/json', 'json');
    } catch {
      /* not JSON after all */
    }
  }
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return t('text/html', 'html');
  if (head.startsWith('<?xml')) return t('application/xml', 'xml');
  // Among text types the name may choose; it never makes a file that is not text acceptable.
  const ext = extensionOf(filename);
  if (ext === 'csv') return t('text/csv', 'csv');
  if (ext === 'tsv') return t('text/tab-separated-values', 'tsv');
  if (ext === 'md' || ext === 'markdown') return t('text/markdown', 'md');
  const delimiter = looksTabular(text);
  if (delimiter) return delimiter === '\t' ? t('text/tab-separated-values', 'tsv') : t('text/csv', 'csv');
  if (looksMarkdown(text)) return t('text/markdown', 'md');
  return t('text/plain', 'txt');
}

/**
 * The file's type, by content: a PDF (`%PDF-` first), or text (valid UTF-8, no NUL, almost no
 * control characters), whose subtype comes from the content (JSON that parses, HTML, XML, a table)
 * or, among text types, the name. Anything else (images, archives, binaries, other encodings, an
 * empty file) is 400 `invalid_file`.
 */
export function detectType(bytes: Uint8Array, filename?: string): DetectedType {
  if (bytes.length === 0) throw badRequest('invalid_file', 'the file is empty');
  if (Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(5, bytes.length)).toString('latin1') === '%PDF-') {
    return { kind: 'pdf', contentType: 'application/pdf', extension: 'pdf' };
  }
  const text = decodeText(bytes);
  if (text === undefined) {
    throw badRequest(
      'invalid_file',
      'unsupported file: only text files (UTF-8: plain text, Markdown, CSV, JSON, HTML, XML) and PDFs are accepted',
    );
  }
  return textSubtype(text, filename);
}

/** Bidirectional formatting characters (a name could otherwise show a false extension). */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** C0 and C1 controls and DEL. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** At most `max` UTF-16 units, never ending inside a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const c = s.slice(0, max);
  return /[\ud800-\udbff]$/.test(c) ? c.slice(0, -1) : c;
}

/**
 * The stored file name: the base name (after the last `/` or `\`), NFC, without control or
 * bidirectional formatting characters, trimmed (also of trailing dots), at most 255 characters with
 * the extension kept. Nothing usable left: `attachment.<extension of the detected type>`.
 */
export function sanitizeFilename(name: string | undefined, type: DetectedType): string {
  let s = (name ?? '').normalize('NFC');
  s = s.slice(Math.max(s.lastIndexOf('/'), s.lastIndexOf('\\')) + 1);
  s = s
    .replace(CONTROLS, '')
    .replace(BIDI, '')
    .trim()
    .replace(/[.\s]+$/, '');
  if (!s || /^\.+$/.test(s)) return `attachment.${type.extension}`;
  if (s.length > MAX_FILENAME) {
    const ext = /\.[^.]{1,16}$/.exec(s)?.[0] ?? '';
    s = cut(s.slice(0, s.length - ext.length), MAX_FILENAME - ext.length) + ext;
  }
  return s;
}

export interface ExtractedText {
  status: ExtractionStatus;
  text: string | null;
}

/** PostgreSQL text holds no NUL, and lone surrogates are not text. */
const storable = (s: string): string =>
  (s as unknown as { toWellFormed(): string }).toWellFormed().replace(/\u0000/g, '');

function bounded(text: string, truncated: boolean): ExtractedText {
  const clean = storable(text);
  const kept = cut(clean, MAX_ATTACHMENT_CHARS);
  if (!kept.trim()) return { status: 'empty', text: null };
  return { status: truncated || kept.length < clean.length ? 'truncated' : 'extracted', text: kept };
}

/**
 * The text to keep. Text files: as they are (a BOM dropped), the first 200,000 characters. PDFs: the
 * text of their pages through the extractor (`empty` when there is none, e.g. a scan; `failed` when
 * the document cannot be read). An extractor that cannot be loaded is 422 `pdf_extraction_unavailable`.
 */
export async function extractText(
  bytes: Uint8Array,
  type: DetectedType,
  loadPdf: PdfExtractorLoader,
): Promise<ExtractedText> {
  if (type.kind === 'text') return bounded(utf8.decode(bytes), false);
  let extractor;
  try {
    extractor = await loadPdf();
  } catch {
    throw new AppError(
      422,
      'pdf_extraction_unavailable',
      'PDF text extraction is unavailable on this server; upload the text instead',
    );
  }
  try {
    const r = await extractor.extract(bytes, {
      maxPages: PDF_MAX_PAGES,
      maxChars: MAX_ATTACHMENT_CHARS,
      timeoutMs: PDF_TIMEOUT_MS,
    });
    return bounded(r.text.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n'), r.truncated);
  } catch (err) {
    if (err instanceof PdfUnreadableError) return { status: 'failed', text: null };
    throw err;
  }
}

export interface NewAttachment {
  appId: string;
  /** An existing thread of the caller in that product; absent: a thread is created. */
  threadId?: string;
  filename?: string;
  data: Buffer;
}

/** An unexpected failure, as the spec's 500 code, with the cause kept for the log. */
function failure(code: string, message: string, cause: unknown): AppError {
  if (cause instanceof AppError) return cause;
  return Object.assign(new AppError(500, code, message), { cause });
}

/**
 * Stores an uploaded file for chat. Checks, in order: the product (403 `app_not_owned` /
 * `not_assigned`), the thread (404 `thread_not_found`: unknown, another user's, or another
 * product's), the file (400 `invalid_file`), the text (422 `pdf_extraction_unavailable`); then, in
 * one transaction, the thread when none was given and the attachment row.
 */
export async function createAttachment(
  em: EntityManager,
  actor: Actor,
  input: NewAttachment,
  loadPdf: PdfExtractorLoader,
): Promise<IAgentAttachment> {
  await requireOwnedApp(em, actor, input.appId);
  let thread: IAgentThread | undefined;
  if (input.threadId !== undefined) {
    thread = await requireThread(em, actor, input.threadId, 'thread_not_found');
    if (thread.app.id !== input.appId) throw new AppError(404, 'thread_not_found', 'thread not found in this product');
  }
  const type = detectType(input.data, input.filename);
  const extracted = await extractText(input.data, type, loadPdf);
  const sha256 = createHash('sha256').update(input.data).digest('hex');
  return em.transactional(async (tx) => {
    let threadId = thread?.id;
    if (!threadId) {
      try {
        threadId = (await createThread(tx, actor, input.appId)).id;
      } catch (err) {
        throw failure('thread_create_failed', 'the thread could not be created', err);
      }
    }
    try {
      const row = tx.create(AgentAttachment, {
        workspace: actor.workspaceId,
        thread: threadId,
        userId: actor.userId,
        filename: sanitizeFilename(input.filename, type),
        contentType: type.contentType,
        sizeBytes: input.data.length,
        sha256,
        extractionStatus: extracted.status,
        text: extracted.text,
      });
      await tx.flush();
      return row;
    } catch (err) {
      throw failure('upload_failed', 'the file could not be stored', err);
    }
  });
}

/**
 * The attachments a chat message names, in the order given: each must be one of this thread's (and
 * the caller's) attachments, else 404 `attachment_not_found`, and have text, else 422
 * `attachment_unavailable` (extraction found none, or failed).
 */
export async function requireChatAttachments(
  em: EntityManager,
  actor: Actor,
  threadId: string,
  ids: string[],
): Promise<{ id: string; filename: string; text: string }[]> {
  if (ids.length === 0) return [];
  const valid = ids.filter(isUuid).map((id) => id.toLowerCase());
  const rows = valid.length
    ? await em.find(AgentAttachment, {
        id: { $in: valid },
        thread: threadId,
        workspace: actor.workspaceId,
        userId: actor.userId,
      })
    : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    const a = byId.get(id.toLowerCase());
    if (!a) throw new AppError(404, 'attachment_not_found', `attachment ${id} is not in this thread`);
    if (!a.text?.trim())
      throw new AppError(
        422,
        'attachment_unavailable',
        `attachment ${a.filename} has no text for chat (extraction: ${a.extractionStatus})`,
      );
    return { id: a.id, filename: a.filename, text: a.text };
  });
}
