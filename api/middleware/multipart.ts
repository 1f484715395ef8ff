// multipart/form-data request bodies, read by the operations that declare `form` (api/operation.ts)
// when their own checks have passed: the router reads no body for them. The stream is parsed by
// busboy as it arrives, under hard limits; the moment one is passed the request stops being read
// (nothing beyond the limit is buffered), the answer is sent and the connection is closed.
//
// Codes: a body that is not a multipart form, or a malformed one (no boundary, broken part headers,
// cut short), or a form with an unknown or repeated field is 400 `invalid_upload`; a form past its
// size limits (too many parts, files or fields, a field value too long, the whole body too large)
// is 413 `invalid_upload`; a file past its limit is 413 `file_too_large`.
//
// A file is either collected in memory (small files: `UploadedFile.data`) or, with `sink`, handed
// to the caller as a stream the moment its part begins (large files, e.g. CSV imports, written
// elsewhere chunk by chunk): the form then resolves once the parser is done AND the sink has
// finished; a limit passed destroys the sink's stream, and a sink that fails fails the form.
import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import busboy from 'busboy';
import { AppError } from '../../domain/errors.js';

export interface FormLimits {
  /** The file part's name (one file at most). */
  file: string;
  /** Names of the text fields the form takes; any other is 400 invalid_upload. */
  fields: readonly string[];
  /** Largest file accepted, bytes: one byte more is 413 file_too_large. */
  fileBytes: number;
  /** Longest text field value, bytes (default 1024): more is 413 invalid_upload. */
  fieldBytes?: number;
  /**
   * Streams the file part to the caller instead of collecting it: called once, when the part
   * begins; must consume `file` to its end (reading at its own pace applies backpressure to the
   * client). The stream is destroyed (so the sink's read rejects) when a limit is passed.
   */
  sink?: (file: Readable, info: { filename?: string; mimeType: string }) => Promise<void>;
}

export interface UploadedFile {
  /** As the client named it (busboy keeps the base name only); may be absent. */
  filename?: string;
  /** The part's declared Content-Type (informative only: never trusted for the file's type). */
  mimeType: string;
  data: Buffer;
}

export interface Form {
  fields: Record<string, string>;
  file?: UploadedFile;
  /** With `sink`: the file part that was streamed to it (its bytes are wherever the sink put them). */
  streamed?: { filename?: string; mimeType: string };
  /** The file field arrived as a text part (no filename): the caller's "missing file" can say so. */
  fileAsText: boolean;
}

/** Room for part headers, boundaries and the text fields, on top of the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

const invalid = (message: string) => new AppError(400, 'invalid_upload', message);
const tooLarge = (message: string) => new AppError(413, 'invalid_upload', message);

/** When a request is answered before its body was read to the end, the connection is closed rather than drained. */
export function closeIfUnread(ctx: Context): void {
  if (!ctx.req.complete) ctx.set('Connection', 'close');
}

/** Reads a multipart/form-data body within `limits` (see the module comment for the errors). */
export function readForm(ctx: Context, limits: FormLimits): Promise<Form> {
  const req = ctx.req;
  const contentType = ctx.get('content-type');
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) {
    throw invalid(
      `this operation takes a multipart/form-data body${contentType ? `, not ${contentType.split(';')[0]}` : ' (Content-Type is missing)'}`,
    );
  }
  const fieldBytes = limits.fieldBytes ?? 1024;
  const maxBody = limits.fileBytes + FORM_OVERHEAD_BYTES;
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // Browsers send UTF-8 file names in plain `filename="…"` parameters.
      defParamCharset: 'utf8',
      limits: {
        // One byte past the limit is how busboy tells a file over the limit apart from one exactly at it.
        fileSize: limits.fileBytes + 1,
        files: 1,
        fields: limits.fields.length + 4,
        fieldSize: fieldBytes + 1,
        parts: limits.fields.length + 5,
        headerPairs: 16,
      },
    });
  } catch (err) {
    throw invalid(`invalid multipart form: ${(err as Error).message}`);
  }

  return new Promise<Form>((resolve, reject) => {
    const fields: Record<string, string> = {};
    let file: UploadedFile | undefined;
    let streamed: Form['streamed'];
    let sinking: Promise<void> | undefined;
    let fileStream: Readable | undefined;
    let fileAsText = false;
    let settled = false;
    let received = 0;

    const cleanup = () => {
      req.off('data', count);
      req.off('aborted', onAborted);
      req.off('error', onAborted);
    };
    const fail = (err: AppError) => {
      if (settled) return;
      settled = true;
      cleanup();
      // Stop reading: what the client still sends is never read, and the connection is closed after the answer.
      req.unpipe(parser);
      req.pause();
      // Not from inside the parser's own callback (it goes on with the chunk at hand); its listeners
      // stay, and do nothing now that the promise is settled.
      setImmediate(() => parser.destroy());
      // A sink still reading learns it too (its read rejects); the caller awaits its own sink.
      if (limits.sink && fileStream && !fileStream.destroyed) fileStream.destroy(err);
      ctx.set('Connection', 'close');
      reject(err);
    };
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBody) fail(tooLarge(`the form is larger than ${maxBody} bytes`));
    };
    const onAborted = () => fail(invalid('the request body was not received completely'));

    parser.on('file', (name, stream, info) => {
      // The form already failed (e.g. an unknown field before the file, in the same chunk): the file
      // is not handed to a sink that would start storing or applying it.
      if (settled) {
        stream.resume();
        return;
      }
      if (name !== limits.file) {
        stream.resume();
        fail(invalid(`unexpected file field "${name}" (the file goes in "${limits.file}")`));
        return;
      }
      if (limits.sink) {
        fileStream = stream;
        streamed = { filename: info.filename, mimeType: info.mimeType };
        stream.on('limit', () =>
          fail(new AppError(413, 'file_too_large', `the file is larger than ${limits.fileBytes} bytes`)),
        );
        stream.on('error', () => {}); // the sink's read (or the form's failure) reports it
        sinking = limits.sink(stream, { filename: info.filename, mimeType: info.mimeType });
        sinking.catch((err: unknown) =>
          fail(
            err instanceof AppError
              ? err
              : Object.assign(new AppError(500, 'upload_failed', 'the file could not be stored'), { cause: err }),
          ),
        );
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
      });
      stream.on('limit', () =>
        fail(new AppError(413, 'file_too_large', `the file is larger than ${limits.fileBytes} bytes`)),
      );
      stream.on('end', () => {
        if (!stream.truncated)
          file = { filename: info.filename, mimeType: info.mimeType, data: Buffer.concat(chunks, size) };
      });
      stream.on('error', () => {}); // the parser reports the cause
    });
    parser.on('field', (name, value, info) => {
      if (name === limits.file) {
        fileAsText = true;
        return;
      }
      if (!limits.fields.includes(name)) {
        fail(invalid(`unknown form field "${name}" (accepted: ${[limits.file, ...limits.fields].join(', ')})`));
        return;
      }
      if (info.valueTruncated) {
        fail(tooLarge(`form field "${name}" is longer than ${fieldBytes} bytes`));
        return;
      }
      if (Object.hasOwn(fields, name)) {
        fail(invalid(`form field "${name}" is given more than once`));
        return;
      }
      fields[name] = value;
    });
    parser.on('filesLimit', () => fail(tooLarge('one file per request')));
    parser.on('fieldsLimit', () => fail(tooLarge('too many form fields')));
    parser.on('partsLimit', () => fail(tooLarge('too many form parts')));
    parser.on('error', (err: Error) => fail(invalid(`malformed multipart form: ${err.message}`)));
    parser.on('close', () => {
      if (settled) return;
      const done = () => {
        if (settled) return;
        settled = true;
        cleanup();
        resolve({ fields, file, streamed, fileAsText });
      };
      // The parser has seen the whole body; the sink may still be storing its last chunk.
      if (sinking) sinking.then(done, () => {});
      else done();
    });

    req.on('data', count);
    req.on('aborted', onAborted);
    req.on('error', onAborted);
    req.pipe(parser);
  });
}
