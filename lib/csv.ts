// Incremental CSV reading over raw bytes, with each record's end offset in the file, on csv-parse
// (pinned): imports resume a file at the first byte after the last committed record, so every
// record must say exactly where it ends. The stream interface of csv-parse reports offsets only
// through a per-record info object (about 40 % slower on 100,000 rows); its Parser drives the same
// engine synchronously through `parser.api.parse(buf, end, push, close)`, with `parser.info.bytes`
// at the end of the record being pushed. That member is not in the typings, so it is reached in one
// place here, and test/lib/csv.test.ts pins the offsets it gives (BOM, CRLF, quoted newlines).
import { CsvError, Parser } from 'csv-parse';

export const DELIMITERS = [',', ';', '\t', '|'] as const;
export type Delimiter = (typeof DELIMITERS)[number];
export const ENCODINGS = ['utf-8', 'windows-1252'] as const;
export type CsvEncoding = (typeof ENCODINGS)[number];

/** Longest record, in characters: an unclosed quote cannot make the parser buffer the rest of a large file. */
export const MAX_RECORD_CHARS = 1024 * 1024;

export interface CsvRecord {
  values: string[];
  /** The file offset just after this record (and its line break): where the next one starts. */
  end: number;
}

/** The file is not CSV from here on (an unclosed quote, a record past the size limit). */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    /** Records read before the one that failed. */
    readonly recordsBefore: number,
    /** The records the failing write completed before the error (not returned by it). */
    readonly records: CsvRecord[] = [],
  ) {
    super(message);
    this.name = 'CsvSyntaxError';
  }
}

type Push = (record: unknown) => void;
interface ParserApi {
  parse(buf: Buffer | undefined, end: boolean, push: Push, close: () => void): Error | undefined;
}

// Windows-1252 is Latin-1 except for 0x80–0x9F, where it has these characters (WHATWG Encoding;
// 81, 8D, 8F, 90 and 9D stay the C1 controls). Node 20's TextDecoder('windows-1252') decodes those
// bytes as Latin-1 (0x80 → U+0080, not €), so the table is applied here.
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';
const C1 = /[\u0080-\u009f]/g;
const HAS_C1 = /[\u0080-\u009f]/;

/** Windows-1252 bytes as text. */
export function decodeWindows1252(bytes: Buffer): string {
  const s = bytes.toString('latin1');
  return HAS_C1.test(s) ? s.replace(C1, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]) : s;
}

/**
 * Reads records from consecutive byte chunks of a file, starting at `startByte` (0, or the end of a
 * record read before). UTF-8 is decoded by the parser (a BOM at offset 0 is skipped and counted in
 * the offsets); Windows-1252 is parsed as bytes (every delimiter and quote is ASCII) and each value
 * decoded, so offsets stay byte offsets either way.
 */
export class CsvReader {
  private readonly parser: Parser;
  private readonly api: ParserApi;
  private readonly bytes: boolean;
  private records = 0;
  private out: CsvRecord[] = [];
  private readonly push: Push;

  constructor(opts: { delimiter: Delimiter; encoding: CsvEncoding; startByte?: number }) {
    const startByte = opts.startByte ?? 0;
    this.bytes = opts.encoding === 'windows-1252';
    this.parser = new Parser({
      delimiter: opts.delimiter,
      bom: !this.bytes && startByte === 0,
      encoding: this.bytes ? null : 'utf8',
      relax_column_count: true,
      // A quote inside an unquoted value (`5" screen`) is a character, as spreadsheets write it.
      relax_quotes: true,
      // Blank lines are records (spreadsheets number them as rows); callers skip blank records.
      skip_empty_lines: false,
      max_record_size: MAX_RECORD_CHARS,
    });
    this.api = (this.parser as unknown as { api: ParserApi }).api;
    const info = this.parser.info;
    this.push = (record) => {
      const raw = record as (string | Buffer)[];
      const values = this.bytes ? raw.map((v) => decodeWindows1252(v as Buffer)) : (raw as string[]);
      this.out.push({ values, end: startByte + info.bytes });
    };
  }

  private run(buf: Buffer | undefined, end: boolean): CsvRecord[] {
    this.out = [];
    const err = this.api.parse(buf, end, this.push, () => {});
    this.records += this.out.length;
    if (err) {
      const code = err instanceof CsvError ? err.code : undefined;
      const why =
        code === 'CSV_QUOTE_NOT_CLOSED'
          ? 'a quoted value is never closed'
          : code === 'CSV_MAX_RECORD_SIZE'
            ? `a record is longer than ${MAX_RECORD_CHARS} characters (often an unclosed quote)`
            : err.message;
      throw new CsvSyntaxError(why, this.records, this.out);
    }
    return this.out;
  }

  /** The records completed by this chunk. */
  write(chunk: Buffer): CsvRecord[] {
    return this.run(chunk, false);
  }

  /** The last record, when the file does not end with a line break. */
  end(): CsvRecord[] {
    return this.run(undefined, true);
  }
}

/**
 * All records of `bytes`: a whole small file, or a head (`complete` false), whose last, cut record
 * is never completed (only `end()` would) and whose cut inside a quoted value is no error.
 */
export function readAll(
  bytes: Buffer,
  opts: { delimiter: Delimiter; encoding: CsvEncoding; complete: boolean; maxRecords?: number },
): CsvRecord[] {
  const reader = new CsvReader(opts);
  const max = opts.maxRecords ?? Infinity;
  const records: CsvRecord[] = [];
  // In slices, so that a head of many small records stops early.
  for (let at = 0; at < bytes.length && records.length < max; at += 64 * 1024)
    records.push(...reader.write(bytes.subarray(at, at + 64 * 1024)));
  if (opts.complete && records.length < max) records.push(...reader.end());
  return records.slice(0, max);
}

const isBlank = (values: string[]) => values.every((v) => v.trim() === '');

/**
 * The delimiter that splits the first records most consistently: for each candidate, the share of
 * (non-blank) records having the most common column count, which must be at least 2; at equal
 * shares, more columns. A file of one column (no candidate splits it) is read with `,`.
 */
export function detectDelimiter(head: Buffer, encoding: CsvEncoding, complete: boolean): Delimiter {
  let best: { d: Delimiter; score: number; columns: number } = { d: ',', score: 0, columns: 1 };
  for (const d of DELIMITERS) {
    let records: CsvRecord[];
    try {
      records = readAll(head.subarray(0, 256 * 1024), {
        delimiter: d,
        encoding,
        complete: complete && head.length <= 256 * 1024,
        maxRecords: 200,
      });
    } catch {
      continue;
    }
    const counts = records.filter((r) => !isBlank(r.values)).map((r) => r.values.length);
    if (!counts.length) continue;
    const freq = new Map<number, number>();
    for (const c of counts) freq.set(c, (freq.get(c) ?? 0) + 1);
    const [columns, n] = [...freq.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0];
    if (columns < 2) continue;
    const score = n / counts.length;
    // Higher consistency wins; at equal consistency, the candidate splitting into more columns.
    if (score > best.score + 1e-9 || (Math.abs(score - best.score) <= 1e-9 && columns > best.columns))
      best = { d, score, columns };
  }
  return best.d;
}

/**
 * Validates UTF-8 across chunk boundaries without keeping the text: `valid` stays true while every
 * chunk so far decodes (a sequence cut by a chunk boundary is completed by the next chunk).
 */
export class Utf8Check {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  valid = true;
  write(chunk: Uint8Array): void {
    if (!this.valid) return;
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      this.valid = false;
    }
  }
  end(): boolean {
    if (this.valid) {
      try {
        this.decoder.decode();
      } catch {
        this.valid = false;
      }
    }
    return this.valid;
  }
}

export const hasUtf8Bom = (head: Uint8Array) =>
  head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
