// Where an import's file lives while the import needs it: behind a small interface, so an object
// store can take PostgreSQL's place; the embedded default is PostgreSQL (`import_file_chunks`, one
// row per 1 MiB chunk), which every worker can read and which needs no extra service. A file is
// written chunk by chunk while it arrives (never whole in memory), read back chunk by chunk from any
// byte offset (an import resumes in the middle), and removed when the import ends.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Utf8Check, hasUtf8Bom } from '../../lib/csv.js';
import { withPgClient } from '../../lib/pg-raw.js';

/** Bytes per stored chunk. */
export const IMPORT_CHUNK_BYTES = 1024 * 1024;
/** Bytes of the file's start kept in memory during the upload for the preview's sample. */
export const HEAD_BYTES = 1024 * 1024;

export interface ImportFileStore {
  /** Stores chunk `seq` of the import's file (a repeat replaces it). */
  put(importId: string, seq: number, data: Buffer): Promise<void>;
  /** The file's bytes from `offset` to the end, in stored chunks (the first one cut at `offset`). */
  read(importId: string, offset: number, chunkBytes: number): AsyncIterable<Buffer>;
  /** Deletes the file. */
  remove(importId: string): Promise<void>;
}

/** The PostgreSQL store: each call takes a pooled connection for one statement. */
export function pgImportFiles(em: EntityManager): ImportFileStore {
  return {
    put: (importId, seq, data) =>
      withPgClient(em, async (c) => {
        await c.query(
          `insert into import_file_chunks (list_import_id, seq, data) values ($1, $2, $3)
           on conflict (list_import_id, seq) do update set data = excluded.data`,
          [importId, seq, data],
        );
      }),
    async *read(importId, offset, chunkBytes) {
      for (let seq = Math.floor(offset / chunkBytes); ; seq++) {
        const rows = await withPgClient(
          em,
          async (c) =>
            (
              await c.query<{ data: Buffer }>(
                'select data from import_file_chunks where list_import_id = $1 and seq = $2',
                [importId, seq],
              )
            ).rows,
        );
        if (!rows.length) return;
        const skip = seq === Math.floor(offset / chunkBytes) ? offset - seq * chunkBytes : 0;
        yield skip ? rows[0].data.subarray(skip) : rows[0].data;
      }
    },
    remove: (importId) =>
      withPgClient(em, async (c) => {
        await c.query('delete from import_file_chunks where list_import_id = $1', [importId]);
      }),
  };
}

/** What the upload learnt about the file on its way in. */
export interface UploadedFileFacts {
  size: number;
  sha256: string;
  /** Every byte so far is valid UTF-8 (a BOM allowed). */
  utf8: boolean;
  bom: boolean;
  /** A NUL byte anywhere: a binary file, or UTF-16, which CSV imports do not read. */
  hasNul: boolean;
  /** The first HEAD_BYTES bytes (the whole file when smaller). */
  head: Buffer;
}

/**
 * Writes an arriving file to the store in IMPORT_CHUNK_BYTES chunks, reading the next bytes only
 * once the previous chunk is stored (backpressure reaches the client), hashing and checking it as
 * it goes. Memory: one chunk being filled, and the head.
 */
export class FileUpload {
  private readonly hash = createHash('sha256');
  private readonly utf8 = new Utf8Check();
  private size = 0;
  private seq = 0;
  private hasNul = false;
  private readonly headParts: Buffer[] = [];
  private headSize = 0;
  private buf = Buffer.allocUnsafe(IMPORT_CHUNK_BYTES);
  private fill = 0;

  constructor(
    private readonly store: ImportFileStore,
    private readonly importId: string,
  ) {}

  private async flush(): Promise<void> {
    if (!this.fill) return;
    // The store may keep the buffer (a pending write): hand it over and start a new one.
    const data = this.buf.subarray(0, this.fill);
    this.buf = Buffer.allocUnsafe(IMPORT_CHUNK_BYTES);
    this.fill = 0;
    await this.store.put(this.importId, this.seq++, data);
  }

  async write(chunk: Buffer): Promise<void> {
    this.hash.update(chunk);
    this.utf8.write(chunk);
    if (!this.hasNul && chunk.includes(0)) this.hasNul = true;
    if (this.headSize < HEAD_BYTES) {
      const part = chunk.subarray(0, HEAD_BYTES - this.headSize);
      this.headParts.push(Buffer.from(part));
      this.headSize += part.length;
    }
    this.size += chunk.length;
    let at = 0;
    while (at < chunk.length) {
      const n = Math.min(chunk.length - at, IMPORT_CHUNK_BYTES - this.fill);
      chunk.copy(this.buf, this.fill, at, at + n);
      this.fill += n;
      at += n;
      if (this.fill === IMPORT_CHUNK_BYTES) await this.flush();
    }
  }

  /** Consumes a stream to its end (its errors, e.g. a size limit, reject). */
  async consume(stream: Readable): Promise<UploadedFileFacts> {
    for await (const chunk of stream) await this.write(chunk as Buffer);
    return this.finish();
  }

  async finish(): Promise<UploadedFileFacts> {
    await this.flush();
    const head = Buffer.concat(this.headParts, this.headSize);
    return {
      size: this.size,
      sha256: this.hash.digest('hex'),
      utf8: this.utf8.end(),
      bom: hasUtf8Bom(head),
      hasNul: this.hasNul,
      head,
    };
  }
}
