// The import itself (docs/imports.md, "The run"): reads the stored file from the committed cursor,
// checks each record, and writes chunks of `chunkRows` records, each in ONE transaction that also
// advances the cursor and the counters. A worker killed anywhere resumes at the last committed
// chunk: nothing lost (the cursor never passes an uncommitted record), nothing doubled (a chunk's
// rows and its cursor commit together, and a chunk is written only if the cursor is still where it
// began, under the import row's lock, so two executions of the activity can never both write it).
//
// Per chunk, a fixed number of statements whatever its size (BEGIN with its settings and the
// session's staging table; lock the import row, the list and the workspace's import lock; find and
// lock the contacts matching the chunk's emails or profile URLs; COPY the new contacts into the
// staging table; one statement inserts them and their leads set-based from it, updates the changed
// contacts, inserts the other leads and the invalid rows, and moves the cursor; COMMIT). Rows are applied in file order (dedupe on normalised
// email, then profile URL, as domain/lists/lists.ts does): a later row of the file meets the contact an
// earlier one created.
// Parsing of the next chunk overlaps the current chunk's transaction (two connections).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DedupeMode, ListImportStatus } from '../../db/entities/ListImport.js';
import { CsvReader, CsvSyntaxError, type CsvEncoding, type CsvRecord, type Delimiter } from '../../lib/csv.js';
import { uuidv7 } from '../../lib/ids.js';
import { countImportRows } from '../../lib/metrics.js';
import { copyFrom, withPgClient, type PgClient } from '../../lib/pg-raw.js';
import type { ImportFileStore } from './import-files.js';
import { DESCRIPTIVE_FIELDS, checkRow, cutValue, type CleanRow, type Mapping, type RowProblem } from './import-csv.js';
import { MAX_COLUMNS } from './import-csv.js';
import {
  CONTACT_COLUMNS,
  Params,
  CONTACTS_LOCK_PREFIX,
  lockMatchingContacts,
  matchRows,
  textArray,
  updateContactsCte,
  type ContactState,
} from './contact-rows.js';

export interface RunLimits {
  /** Records per chunk transaction (config.listImport.chunkRows: LIST_IMPORT_CHUNK_ROWS, default 5,000). */
  chunkRows: number;
  /** Stop after this many records (the workflow calls again): bounds one activity's work. */
  maxRecords: number;
  /** Stop after this long, ms. */
  maxMs: number;
}

/** Bytes parsed at a time. */
const PARSE_SLICE_BYTES = 64 * 1024;

export const defaultRunLimits = (chunkRows: number): RunLimits => ({
  chunkRows,
  maxRecords: Number.MAX_SAFE_INTEGER,
  maxMs: 60_000,
});

export interface RunHooks {
  /** After each committed chunk: the position (the activity heartbeats it). */
  committed(position: { bytes: number; row: number }): void;
  /** The activity was asked to stop (its workflow was canceled). */
  stopRequested(): boolean;
}

/** A failure that retrying cannot fix: the import fails with this code. */
export class ImportFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ImportFailure';
  }
}

/** Another writer moved the cursor or inserted a conflicting contact: the chunk is read again and retried. */
export class ChunkRace extends Error {}

export interface RunOutcome {
  /** The whole file is committed. */
  done: boolean;
  /** The import is no longer running (a cancel was recorded): its status. */
  stopped: ListImportStatus | null;
}

interface ImportRow {
  id: string;
  workspace_id: string;
  status: ListImportStatus;
  list_id: string | null;
  size_bytes: number;
  chunk_bytes: number;
  encoding: CsvEncoding;
  delimiter: Delimiter;
  header_row: number;
  column_count: number;
  mapping: Mapping;
  dedupe_mode: DedupeMode;
  cursor_bytes: number;
  cursor_row: number;
}

interface Batch {
  rows: CleanRow[];
  problems: { row: number; reasons: RowProblem[]; values: string[] }[];
  rowsRead: number;
  start: number;
  end: number;
  endRow: number;
}

async function loadImport(c: PgClient, importId: string): Promise<ImportRow | undefined> {
  const { rows } = await c.query<ImportRow>(
    `select id, workspace_id, status, list_id, size_bytes, chunk_bytes, encoding, delimiter, header_row, column_count, mapping, dedupe_mode, cursor_bytes, cursor_row
     from list_imports where id = $1`,
    [importId],
  );
  return rows[0];
}

/**
 * Writes one chunk in one transaction (see the module comment). Returns the status when the import
 * is no longer running (nothing written); throws ChunkRace when the cursor moved or a contact was
 * inserted concurrently (nothing written; the caller reads the chunk again).
 */
/**
 * Time spent in chunk transactions (`write_ms`, what the benchmark divides by): each chunk records
 * its time up to its last statement plus what the previous chunk's last statement and commit took
 * (`unrecorded`); runImport records the last remainder when it returns.
 */
interface WriteClock {
  unrecorded: number;
}

async function commitBatch(
  c: PgClient,
  importId: string,
  batch: Batch,
  clock: WriteClock,
): Promise<ListImportStatus | null> {
  const started = performance.now();
  try {
    const recorded: Recorded = { ms: 0 };
    const out = await writeBatch(c, importId, batch, started, clock, recorded);
    clock.unrecorded += performance.now() - started - recorded.ms;
    return out;
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new ChunkRace(`a contact or lead was added concurrently (${(err as { constraint?: string }).constraint})`);
    throw err;
  }
}

/**
 * The chunk's new contacts, with the id of their lead, arrive by `COPY … FROM STDIN` in this
 * unindexed temporary table (no WAL, no index, no constraint: PostgreSQL's fastest way in), and
 * the chunk statement inserts contacts and leads from it set-based (docs/imports.md, "The run").
 */
const STAGE = 'list_import_stage';
const STAGE_COLUMNS = [
  'id',
  'lead_id',
  ...(['email', 'email_normalised', 'profile_url', 'profile_url_normalised', ...DESCRIPTIVE_FIELDS] as const),
];
const STAGE_DDL = `create temp table if not exists ${STAGE} (id uuid not null, lead_id uuid not null, ${STAGE_COLUMNS.slice(
  2,
)
  .map((k) => `${k} text`)
  .join(', ')}) on commit delete rows`;

/** A value in COPY's text format (`\N` is NULL; backslash, tab, line feed and carriage return escaped). */
const copyValue = (v: string | null): string =>
  v === null ? '\\N' : /[\\\t\n\r]/.test(v) ? v.replace(/[\\\t\n\r]/g, (ch) => COPY_ESCAPES[ch]) : v;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** The new contacts as COPY text, in pieces of about 256 KiB (Buffers: off the JS heap until sent). */
function stageRows(created: ContactState[], leadIds: string[]): Buffer[] {
  const out: Buffer[] = [];
  let lines: string[] = [];
  let size = 0;
  for (let i = 0; i < created.length; i++) {
    const s = created[i];
    const line = `${s.id}\t${leadIds[i]}\t${CONTACT_COLUMNS.map((k) => copyValue(s[k])).join('\t')}\n`;
    lines.push(line);
    size += line.length;
    if (size >= 256 * 1024) {
      out.push(Buffer.from(lines.join('')));
      lines = [];
      size = 0;
    }
  }
  if (lines.length) out.push(Buffer.from(lines.join('')));
  return out;
}

/** One round trip opens the chunk's transaction with its settings (see writeBatch). */
const BEGIN = [
  'begin',
  // The tables grow by thousands of rows per chunk, faster than autovacuum's statistics: every
  // statement here has an index to use, and this keeps the planner on them.
  'set local enable_seqscan = off',
  // The chunk's rows and its cursor commit together, so a commit lost in a database crash loses
  // both, and the import resumes before it: nothing needs this commit flushed before the next
  // chunk. The import's final state is committed synchronously, which flushes every one before it.
  'set local synchronous_commit = off',
  // Generic plans for the identifier lookup (below): planned for this workspace's id, it would trust
  // statistics that predate the import (a workspace they do not know looks empty) and could walk
  // another unique index by its workspace prefix, filtering every contact of the workspace per key.
  'set local plan_cache_mode = force_generic_plan',
  // The staging table the chunk's new contacts are COPYed into (see STAGE): created once per
  // pooled connection (a temporary table is the session's own), emptied at every commit of a
  // transaction that used it (PostgreSQL skips the others). No notice when it already exists.
  'set local client_min_messages = warning',
  STAGE_DDL,
].join('; ');

/**
 * The import row (locked), the target list (locked against deletion until commit), the workspace's
 * import lock (imports of one workspace write contacts one chunk at a time: no deadlock between their
 * row locks), and whether `contacts` has more than doubled (by at least 1 MB) since its statistics
 * were taken: the planner scales them by the table's current size only when they describe a
 * non-empty table, so a first import into an empty one would look "known empty" for up to a minute.
 */
const LOCK_IMPORT = `select i.id, i.workspace_id, i.status, i.list_id, i.cursor_bytes, i.dedupe_mode,
    (select count(*)::int from (select 1 from lead_lists l where l.id = i.list_id for key share) l) as list_ok,
    pg_advisory_xact_lock(hashtext('${CONTACTS_LOCK_PREFIX}' || i.workspace_id::text)) is not null as locked,
    (select pg_relation_size(r.oid) / current_setting('block_size')::int > 2 * r.relpages + 128 from pg_class r where r.oid = 'contacts'::regclass) as stale_stats
  from list_imports i where i.id = $1 for update of i`;

/** What a chunk's write reports back: its time before the final statement, and its rows once planned. */
interface Recorded {
  ms: number;
  rows?: Parameters<typeof countImportRows>[0];
}

async function writeBatch(
  c: PgClient,
  importId: string,
  batch: Batch,
  started: number,
  clock: WriteClock,
  recorded: Recorded,
): Promise<ListImportStatus | null> {
  await c.query(BEGIN);
  try {
    const out = await writeChunk(c, importId, batch, started, clock, recorded);
    await c.query('commit');
    if (recorded.rows) countImportRows(recorded.rows); // committed rows only: a chunk that runs again is counted once
    return out;
  } catch (err) {
    await c.query('rollback').catch(() => {});
    throw err;
  }
}

async function writeChunk(
  c: PgClient,
  importId: string,
  batch: Batch,
  started: number,
  clock: WriteClock,
  recorded: Recorded,
): Promise<ListImportStatus | null> {
  const { rows } = await c.query<{
    workspace_id: string;
    status: ListImportStatus;
    list_id: string;
    cursor_bytes: number;
    dedupe_mode: DedupeMode;
    list_ok: number;
    stale_stats: boolean;
  }>(LOCK_IMPORT, [importId]);
  const imp = rows[0];
  if (!imp) return 'canceled';
  if (imp.status !== 'running') return imp.status;
  if (imp.cursor_bytes !== batch.start) throw new ChunkRace(`the cursor is at ${imp.cursor_bytes}, not ${batch.start}`);
  if (!imp.list_ok) throw new ImportFailure('list_deleted', 'the target list was deleted during the import');
  // ANALYZE samples at most 30,000 rows: milliseconds on the small tables where this happens, and
  // a few times per large import at most; its statistics serve the rest of this transaction.
  if (imp.stale_stats) await c.query('analyze contacts');
  // One unique-index probe per key (on a generic plan: see BEGIN), and the matches locked in id order.
  const existing = await lockMatchingContacts(c, imp.workspace_id, batch.rows);
  const statement = planChunk(importId, imp, batch, existing);
  recorded.rows = statement.rows;
  // Planned (the new contacts are COPY bytes, the other parameters flat strings): the chunk's rows
  // and contacts are garbage from here, and die young instead of surviving the round trips into
  // the worker's old heap.
  batch.rows = [];
  batch.problems = [];
  if (statement.stage.length)
    await copyFrom(c, `copy ${STAGE} (${STAGE_COLUMNS.join(', ')}) from stdin`, statement.stage);
  statement.stage = [];
  recorded.ms = performance.now() - started;
  statement.values[statement.writeMsAt] = Math.round(recorded.ms + clock.unrecorded);
  await c.query(statement.text, statement.values);
  // Recorded once this commits: the carried time is no longer carried.
  clock.unrecorded = 0;
  return null;
}

/**
 * The chunk's writes and the cursor as one statement (data-modifying CTEs; the leads' foreign keys
 * are checked at its end, when the contacts inserted beside them exist): the rows applied in file
 * order to the contacts found, by the dedupe mode. The new contacts (with their leads' ids) are
 * `stage`, COPYed into the staging table before the statement, which inserts them and their leads
 * from there; `values[writeMsAt]` is the chunk's write time, set just before it is sent.
 */
function planChunk(
  importId: string,
  imp: { workspace_id: string; list_id: string; dedupe_mode: DedupeMode },
  batch: Batch,
  existing: ContactState[],
): { text: string; values: unknown[]; rows: Recorded['rows'] & {}; stage: Buffer[]; writeMsAt: number } {
  let stage: Buffer[] = [];
  let counts = { created: 0, updated: 0, duplicate: 0 };
  const p = new Params();
  const ctes: string[] = [];
  let leadsAdded = '0';
  if (batch.rows.length) {
    // The rows applied in file order by the dedupe mode: the rule every way into a list shares (contact-rows.ts).
    const matched = matchRows(batch.rows, existing, imp.dedupe_mode);
    const { created, changed } = matched;
    counts = matched.counts;
    const contactIds = new Set(matched.rows.map((r) => r.contact.id));
    const wsP = p.add(imp.workspace_id);
    const listP = p.add(imp.list_id);
    if (created.length) {
      // A plain insert from the staging table, in file order: the lookup, under the workspace's
      // import lock, found no holder of these identifiers; a single add racing in since (unique
      // violation) makes the chunk run again. Their leads are new too (below).
      stage = stageRows(
        created,
        created.map(() => uuidv7()),
      );
      ctes.push(`new_contacts as (insert into contacts (id, workspace_id, ${CONTACT_COLUMNS.join(', ')}, created_at, updated_at)
        select v.id, ${wsP}, ${CONTACT_COLUMNS.map((k) => `v.${k}`).join(', ')}, now(), now() from ${STAGE} v)`);
    }
    if (changed.length) ctes.push(updateContactsCte(p, 'changed_contacts', changed));
    // Leads: contacts created by this chunk cannot be in the list yet (a plain insert); the others
    // may be (`on conflict do nothing`). leads_added counts what was inserted.
    const fresh = new Set(created.map((s) => s.id));
    const known = [...contactIds].filter((id) => !fresh.has(id));
    const leads = (name: string, ids: string[], conflict: string) =>
      `${name} as (insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
        select v.id, ${wsP}, ${listP}, v.contact_id, 'import', now(), now()
        from unnest(${p.add(textArray(ids.map(() => uuidv7())))}::uuid[], ${p.add(textArray(ids))}::uuid[]) as v(id, contact_id) ${conflict} returning 1)`;
    const added: string[] = [];
    if (fresh.size) {
      ctes.push(`fresh_leads as (insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
        select v.lead_id, ${wsP}, ${listP}, v.id, 'import', now(), now() from ${STAGE} v returning 1)`);
      added.push('(select count(*) from fresh_leads)');
    }
    if (known.length) {
      ctes.push(leads('known_leads', known, 'on conflict (list_id, contact_id) do nothing'));
      added.push('(select count(*) from known_leads)');
    }
    if (added.length) leadsAdded = added.join(' + ');
  }
  if (batch.problems.length) {
    ctes.push(`problems as (insert into list_import_problems (list_import_id, row, reasons, values)
      select ${p.add(importId)}, (x->>'row')::int, x->'reasons', x->'values' from jsonb_array_elements(${p.add(JSON.stringify(batch.problems))}::jsonb) x
      on conflict do nothing)`);
  }
  const text = `${ctes.length ? `with ${ctes.join(',\n')}` : ''}
     update list_imports set cursor_bytes = ${p.add(batch.end)}, cursor_row = ${p.add(batch.endRow)}, rows_read = rows_read + ${p.add(batch.rowsRead)},
       created = created + ${p.add(counts.created)}, updated = updated + ${p.add(counts.updated)}, duplicate = duplicate + ${p.add(counts.duplicate)},
       invalid = invalid + ${p.add(batch.problems.length)}, leads_added = leads_added + ${leadsAdded}, chunks = chunks + 1,
       write_ms = write_ms + ${p.add(0)}, updated_at = now()
     where id = ${p.add(importId)}`;
  return {
    text,
    values: p.values,
    rows: { ...counts, invalid: batch.problems.length },
    stage,
    writeMsAt: p.values.length - 2,
  };
}

/**
 * Imports from the committed cursor until the file ends, the import stops running (a cancel), or
 * `limits` say to hand back to the workflow. Each chunk commits before the next is written; the
 * next one is parsed meanwhile. A CSV syntax error commits the records before it, then fails the
 * import (`invalid_csv`).
 */
export async function runImport(
  em: EntityManager,
  store: ImportFileStore,
  importId: string,
  limits: RunLimits,
  hooks: RunHooks,
): Promise<RunOutcome> {
  return withPgClient(em, async (c) => {
    const imp = await loadImport(c, importId);
    if (!imp) return { done: true, stopped: 'canceled' };
    if (imp.status !== 'running') return { done: false, stopped: imp.status };
    if (!imp.list_id) throw new ImportFailure('list_deleted', 'the target list was deleted during the import');
    const began = Date.now();
    const clock: WriteClock = { unrecorded: 0 };
    try {
      return await importFrom(c, store, imp, importId, limits, hooks, began, clock);
    } finally {
      // The last chunk's final statement and commit (see WriteClock).
      if (clock.unrecorded >= 1) {
        await c
          .query('update list_imports set write_ms = write_ms + $2 where id = $1', [
            importId,
            Math.round(clock.unrecorded),
          ])
          .catch(() => {});
      }
    }
  });
}

async function importFrom(
  c: PgClient,
  store: ImportFileStore,
  imp: ImportRow,
  importId: string,
  limits: RunLimits,
  hooks: RunHooks,
  began: number,
  clock: WriteClock,
): Promise<RunOutcome> {
  const reader = new CsvReader({ delimiter: imp.delimiter, encoding: imp.encoding, startByte: imp.cursor_bytes });
  const domains = new Map<string, string>();
  let row = imp.cursor_row;
  let records = 0;
  const open = (start: number, startRow: number): Batch => ({
    rows: [],
    problems: [],
    rowsRead: 0,
    start,
    end: start,
    endRow: startRow,
  });
  let batch = open(imp.cursor_bytes, row);
  let inflight: { done: Promise<ListImportStatus | null>; end: number; endRow: number } | undefined;
  let stopped: ListImportStatus | null = null;

  /** Waits for the chunk in flight; true when the run must stop (the import stopped, or the limits). */
  const settle = async (): Promise<boolean> => {
    if (!inflight) return false;
    const { done, end, endRow } = inflight;
    inflight = undefined;
    stopped = await done;
    if (stopped) return true;
    hooks.committed({ bytes: end, row: endRow });
    return hooks.stopRequested() || records >= limits.maxRecords || Date.now() - began >= limits.maxMs;
  };
  /** Once the previous chunk has committed, starts the current one's transaction and opens the next chunk. */
  const flush = async (): Promise<boolean> => {
    if (await settle()) return true;
    if (batch.end === batch.start) return false;
    const full = batch;
    const done = commitBatch(c, importId, full, clock);
    done.catch(() => {}); // awaited by settle(); not an unhandled rejection meanwhile
    inflight = { done, end: full.end, endRow: full.endRow };
    batch = open(full.end, full.endRow);
    return false;
  };
  const size = () => batch.rows.length + batch.problems.length;
  const take = (recs: CsvRecord[]) => {
    for (const rec of recs) {
      row++;
      records++;
      batch.end = rec.end;
      batch.endRow = row;
      if (row === imp.header_row || rec.values.every((v) => v.trim() === '')) continue;
      batch.rowsRead++;
      // The memo of company domains stays small whatever the file (a file of distinct domains would
      // otherwise grow it by one entry per row for the whole activity call).
      if (domains.size >= 10_000) domains.clear();
      const { row: clean, problems } = checkRow(rec.values, imp.column_count, imp.mapping, domains);
      if (clean) batch.rows.push(clean);
      else
        batch.problems.push({
          row,
          reasons: problems,
          values: rec.values.slice(0, MAX_COLUMNS + 1).map((v) => cutValue(v)),
        });
    }
  };
  /** Takes records into chunks of `chunkRows`, committing each full one; true when the run must stop. */
  const takeAll = async (recs: CsvRecord[]): Promise<boolean> => {
    for (let i = 0; i < recs.length;) {
      const part = recs.slice(i, i + Math.max(1, limits.chunkRows - size()));
      take(part);
      i += part.length;
      if (size() >= limits.chunkRows && (await flush())) return true;
    }
    return false;
  };

  try {
    for await (const chunk of store.read(importId, imp.cursor_bytes, imp.chunk_bytes)) {
      // Parsed a slice at a time: the records of a whole stored chunk are never held while a
      // commit is awaited (what survives an await is promoted, and the worker's heap grows).
      for (let at = 0; at < chunk.length; at += PARSE_SLICE_BYTES) {
        if (await takeAll(reader.write(chunk.subarray(at, at + PARSE_SLICE_BYTES)))) return { done: false, stopped };
        // Let the chunk in flight go on: its next statement is sent only when its previous answer
        // has been handled, so parsing a whole stored chunk at once would leave the database idle.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (await takeAll(reader.end())) return { done: false, stopped };
  } catch (err) {
    if (!(err instanceof CsvSyntaxError)) {
      await settle().catch(() => {});
      throw err;
    }
    // The records before the error are imported; the import then fails at the row after them.
    take(err.records);
    if (!(await flush())) await settle();
    if (stopped) return { done: false, stopped };
    throw new ImportFailure('invalid_csv', `the file is not valid CSV at row ${row + 1}: ${err.message}`);
  }
  if ((await flush()) || (await settle())) {
    if (stopped || batch.end !== batch.start) return { done: false, stopped };
  }
  return { done: true, stopped: null };
}
