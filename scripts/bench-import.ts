// `npm run bench:import`: a CSV of 100,000 rows × 12 columns imported end to end — uploaded over
// HTTP to the API in this process (`POST /api/apps/{appId}/lists/import`: the file streamed into
// PostgreSQL in 1 MiB chunks, previewed, committed), then the `list-import:<id>` workflow on the
// bench's own worker process and task queue. Prints the upload time, the workflow time, rows per
// second for the database writes (rows ÷ time inside the chunk transactions) and for the whole job,
// and the worker's resident memory (sampled every 20 ms during the import, and its VmHWM).
// Goals: whole import ≤ 5 s, ≥ 150,000 rows/s written, worker RSS ≤ 300 MB.
// The worker runs as in production: `npm run build` first (skip with --no-build), then
// `node dist/workers/worker.js` (the prebuilt workflow bundle, no TypeScript loader), with the
// production image's NODE_OPTIONS unless BENCH_NODE_FLAGS says otherwise.
// Own database (`outreach_<BENCH_DB_SUFFIX>`, default `outreach_bench`) and Redis database 2.
import type { EntityManager } from '@mikro-orm/postgresql';
import { benchApiOwner, benchStack, dropBenchOwner, memoryMb, startApiAndBuiltWorker, workerPolling } from './bench-fixtures.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const { stack, env, taskQueue, log } = await benchStack('import', { suffix: process.env.BENCH_DB_SUFFIX ?? 'bench', redisDb: 2 }, { build: true });

// Imported after the environment is set: config is read once.
const { createList } = await import('../domain/lists/lists.js');

/** 12 columns, realistic widths; every row a distinct person. */
export function benchCsv(rows: number, tag: string): Buffer {
  const out: string[] = ['Email,LinkedIn URL,First Name,Last Name,Full Name,Job Title,Company,Company Domain,Country,Phone,Headline,Notes\n'];
  for (let i = 0; i < rows; i++) {
    const c = i % 997;
    out.push(
      `person${i}.${tag}@company${c}.example,https://pronet.example/in/person-${i}-${tag},First${i},Last${i},First${i} Last${i},Head of Growth,"Company ${c}, Inc.",company${c}.example,France,+33 1 23 45 ${String(i % 100).padStart(2, '0')} 00,Growth leader at Company ${c},"imported, row ${i}"\n`,
    );
  }
  return Buffer.from(out.join(''));
}

const { services, base, worker, connection, close } = await startApiAndBuiltWorker(env);
/** The run's account: deleted at the end (its workspace, contacts and leads with it), so runs do not pile up. */
let benchUser: string | undefined;

try {
  await workerPolling(connection, taskQueue);
  const em = services.orm.em.fork() as EntityManager;
  const { actor, app, token: secret } = await benchApiOwner(em);
  benchUser = actor.userId;
  const list = await createList(em, actor, app.id, { name: 'Bench import' });
  const csv = benchCsv(ROWS, String(process.pid));
  log(`file: ${ROWS} rows × 12 columns, ${(csv.length / 1024 / 1024).toFixed(1)} MiB`);
  const rssBefore = memoryMb(worker.pid!, 'VmRSS');

  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, memoryMb(worker.pid!, 'VmRSS'));
  }, 20);
  const started = performance.now();
  const form = new FormData();
  form.append('list_id', list.id);
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'bench.csv');
  const res = await fetch(`${base}/api/apps/${app.id}/lists/import`, { method: 'POST', body: form, headers: { authorization: `Bearer ${secret}` } });
  const accepted = performance.now();
  const body = (await res.json()) as { id: string; status: string };
  if (res.status !== 202) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
  let row: { status: string; rows_read: number; created: number; write_ms: number; chunks: number; started_at: Date; finished_at: Date; error_code: string | null } | undefined;
  for (;;) {
    [row] = await services.orm.em.fork().execute(
      'select status, rows_read, created, write_ms, chunks, started_at, finished_at, error_code from list_imports where id = ?',
      [body.id],
    );
    if (row && ['completed', 'failed', 'canceled'].includes(row.status)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const finished = performance.now();
  clearInterval(sampler);
  peak = Math.max(peak, memoryMb(worker.pid!, 'VmRSS'));
  if (row.status !== 'completed') throw new Error(`the import ended ${row.status} (${row.error_code})`);
  const whole = (finished - started) / 1000;
  const upload = (accepted - started) / 1000;
  const workflow = (new Date(row.finished_at).getTime() - new Date(row.started_at).getTime()) / 1000;
  const writes = row.write_ms / 1000;
  const hwm = memoryMb(worker.pid!, 'VmHWM');
  const goal = (ok: boolean) => (ok ? 'met' : 'MISSED');
  console.log(`bench:import — ${ROWS.toLocaleString('en')} rows × 12 columns (${(csv.length / 1024 / 1024).toFixed(1)} MiB), one-shot import on the bench's own worker`);
  console.log(`  rows imported:                    ${row.rows_read} (${row.created} contacts created, ${row.chunks} chunk transactions)`);
  console.log(`  upload (stored + preview + commit): ${upload.toFixed(2)} s`);
  console.log(`  workflow (running → completed):   ${workflow.toFixed(2)} s`);
  console.log(`  database writes:                  ${(row.rows_read / writes).toFixed(0)} rows/s (${writes.toFixed(2)} s inside chunk transactions)   (goal ≥ 150,000: ${goal(row.rows_read / writes >= 150_000)})`);
  console.log(`  whole job:                        ${(row.rows_read / whole).toFixed(0)} rows/s, ${whole.toFixed(2)} s from the upload's first byte to completed   (goal ≤ 5 s: ${goal(whole <= 5)})`);
  console.log(`  worker RSS:                       ${rssBefore.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB during the import   (goal ≤ 300 MB: ${goal(peak <= 300)}); VmHWM ${hwm.toFixed(0)} MB`);

  // The second figure: exporting 100,000 contacts (scripts/bench-contacts-export.ts, its own worker).
  const { benchContactsExport } = await import('./bench-contacts-export.js');
  const exported = await benchContactsExport({ count: 100_000, log });
  console.log(`  contacts export:                  100,000 contacts in ${exported.seconds.toFixed(2)} s, ${exported.rowsPerSecond.toFixed(0)} rows/s   (goal ≤ 5 s: ${goal(exported.seconds <= 5)})`);
} finally {
  await dropBenchOwner(services.orm.em.fork() as EntityManager, benchUser, log);
  await close();
  if (process.env.CI) await stack.stop();
}
