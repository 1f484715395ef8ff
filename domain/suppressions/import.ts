// A CSV file of addresses and domains added to the suppression list (docs/email.md "Suppression",
// POST /api/suppressions/import). The file is read as it arrives (lib/csv.ts, on csv-parse) and its
// entries added 1,000 at a time, so neither the file nor its entries are ever whole in memory.
// Entries are added as they are read, without one transaction around the file: a file refused part-way
// (too many rows, broken CSV, the size limit) leaves the entries before that point on the list. That is
// safe (a suppression only ever stops email) and importing the file again counts them as already
// present; one long transaction would instead hold the unique keys, and block every unsubscribe of those
// addresses, for as long as a slow upload lasts.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CsvReader, CsvSyntaxError, DELIMITERS, type CsvRecord, type Delimiter } from '../../lib/csv.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest } from '../errors.js';
import type { Actor } from '../identity.js';
import { addSuppressions, suppressionEntry, type SuppressionEntry } from './suppressions.js';

/** Entries per insert. */
export const IMPORT_BATCH = 1000;
/** Rows a file may have (the header included); one more is 413 `too_many_rows`. */
export const MAX_IMPORT_ROWS = 1_000_000;
/** The largest file, bytes (20 MiB); one byte more is 413 `file_too_large`. */
export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
/** Invalid rows listed in the answer (all are counted). */
export const INVALID_SHOWN = 100;

/** Header names of the column to read, by preference; a file whose first row names none is read from its first column. */
const COLUMN_NAMES = ['email', 'email_address', 'e_mail', 'address', 'value', 'domain'];

export interface InvalidRow {
  /** The record's number in the file, the first (a header or not) being 1. */
  row: number;
  value: string;
  message: string;
}

export interface ImportResult {
  /** Entries new on the list. */
  imported: number;
  /** Valid entries already on the list, or repeated in the file. */
  already_present: number;
  invalid: InvalidRow[];
  invalid_count: number;
}

/** The delimiter that occurs most in the first line (a comma when none does). */
function sniffDelimiter(head: Buffer): Delimiter {
  const line = head.toString('utf8', 0, Math.min(head.length, 64 * 1024)).split(/\r?\n/, 1)[0];
  let best: Delimiter = ',';
  let most = 0;
  for (const d of DELIMITERS) {
    const n = line.split(d).length - 1;
    if (n > most) [best, most] = [d, n];
  }
  return best;
}

const headerName = (cell: string) =>
  cell
    .replace(/^\ufeff/, '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/**
 * Reads the file and adds its entries for the actor's workspace with reason `import`, source `csv`.
 * 400 `invalid_csv` when the file stops being CSV, 413 `too_many_rows` past MAX_IMPORT_ROWS (the
 * entries before either stay added; the error's details say how many).
 */
export async function importSuppressionsCsv(
  em: EntityManager,
  actor: Actor,
  file: AsyncIterable<Buffer>,
): Promise<ImportResult> {
  assertWritable(actor);
  const result: ImportResult = { imported: 0, already_present: 0, invalid: [], invalid_count: 0 };
  let reader: CsvReader | undefined;
  let column = 0;
  let rows = 0;
  let batch = new Map<string, SuppressionEntry>();
  let valid = 0;

  const flush = async () => {
    if (!batch.size) return;
    const entries = [...batch.values()];
    batch = new Map();
    result.imported += await addSuppressions(em, actor.workspaceId, entries, 'import', 'csv', actor.userId);
  };
  const done = () => ({ imported: result.imported, already_present: valid - result.imported });

  const take = async (records: CsvRecord[]) => {
    for (const r of records) {
      rows++;
      if (rows > MAX_IMPORT_ROWS) {
        await flush();
        throw new AppError(
          413,
          'too_many_rows',
          `the file has more than ${MAX_IMPORT_ROWS} rows; the entries of the first ${MAX_IMPORT_ROWS} were added (import the rest as another file)`,
          done(),
        );
      }
      if (rows === 1) {
        const named = COLUMN_NAMES.map((n) => r.values.findIndex((v) => headerName(v) === n)).find((i) => i >= 0);
        if (named !== undefined) {
          column = named;
          continue; // a header
        }
      }
      const raw = (r.values[column] ?? '').trim();
      if (!raw) continue; // a blank row or cell: nothing to add, nothing wrong
      const entry = suppressionEntry(raw);
      if (!entry) {
        result.invalid_count++;
        if (result.invalid.length < INVALID_SHOWN)
          result.invalid.push({
            row: rows,
            value: raw.slice(0, 200),
            message: 'neither an email address nor a domain',
          });
        continue;
      }
      valid++;
      batch.set(`${entry.kind}:${entry.value}`, entry);
      if (batch.size >= IMPORT_BATCH) await flush();
    }
  };

  try {
    for await (const chunk of file) {
      reader ??= new CsvReader({ delimiter: sniffDelimiter(chunk), encoding: 'utf-8' });
      await take(reader.write(chunk));
    }
    if (reader) await take(reader.end());
  } catch (err) {
    if (!(err instanceof CsvSyntaxError)) throw err;
    // The records the failing chunk completed before the error are good rows: keep them.
    await take(err.records);
    await flush();
    throw badRequest(
      'invalid_csv',
      `row ${err.recordsBefore + 1} is not CSV: ${err.message}; the entries before it were added`,
      done(),
    );
  }
  await flush();
  return { ...result, ...done() };
}
