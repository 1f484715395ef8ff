// `npm run chaos [-- --short]`: the deployed shape on this machine — 2 API processes, 2 workers, the
// Temporal dev server, PostgreSQL and Redis, all of its own (data under .data/chaos*, free ports, so
// it never touches the usual stack) — driven with real work through the API while each part is
// broken in turn:
//   1. kill -9 of the worker running the list import's activity (mid-chunk), then a restart;
//   2. kill -9 of an API process with requests and an Operator stream in flight, then a restart;
//   3. a restart of the Temporal server (same SQLite file);
//   4. a restart of PostgreSQL (fast shutdown: every connection is cut);
//   5. Redis down for 30 s (5 s with --short);
//   6. a restart of the mail server (GreenMail of the run's own, killed, started again);
//   7. kill -9 of the worker whose mailbox-session service holds the most mailboxes (then a restart).
// Work: a two-email campaign on sandbox senders with no gap, enrolled in waves (one before each
// fault, so sends are in flight at every fault), a 100,000-row list import (5,000 with --short), an
// `action.executed` webhook stream to a local receiver, an Operator turn every few seconds, and 100
// mail-connector mailboxes (10 with --short) followed by the workers' mailbox-session services, to
// which prospects' replies arrive all along (scripts/chaos/mail.ts), each a `message.received`.
// After the last fault it waits for the work to finish, then checks from the database, the sandbox's
// record of sends and the receiver's log: 0 sends lost or doubled, 0 webhook events lost or
// delivered twice, 0 import rows lost or doubled, every workflow finished, every Operator turn
// completed, every reply the mail server accepted stored once with one `message.received`, every
// mailbox leased by a live worker at the end, a killed worker's mailboxes taken over within 60 s, and
// the API never answered a 5xx other than 503 + Retry-After, nor hung. Prints a
// table (fault → work in flight → outcome → recovery) and exits 1 if any of it failed. The
// verdict is also written as JSON to CHAOS_RESULT when set (the short run in npm test reads it).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../lib/config.js';
import { freePort, sweepRun } from './children.js';

const SHORT = process.argv.includes('--short');
const dir = join(repoRoot, '.data', SHORT ? `chaos-short-${process.pid}` : 'chaos');
rmSync(dir, { recursive: true, force: true }); // every run starts from an empty cluster and Temporal
mkdirSync(dir, { recursive: true });
// A stack of its own: read by scripts/stack/* at import time, so set before they are imported.
process.env.STACK_DATA_DIR = dir;
for (const name of ['DATABASE_URL', 'REDIS_URL', 'TEMPORAL_ADDRESS']) delete process.env[name];
// Every process of the run (fleet and servers) inherits this mark, so an interrupted run leaves none.
const CHAOS_MARK = 'OUTREACH_CHAOS_RUN';
const runId = String(process.pid);
process.env[CHAOS_MARK] = runId;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`[chaos] ${signal}: stopping every process of the run`);
    void sweepRun(runId, 5_000, CHAOS_MARK).finally(() => process.exit(130));
  });
}
for (const name of ['PGPORT_EMBEDDED', 'REDIS_PORT_EMBEDDED', 'TEMPORAL_PORT_EMBEDDED', 'TEMPORAL_UI_PORT_EMBEDDED'])
  process.env[name] = String(await freePort());

const { runChaos } = await import('./chaos/run.js');
const SCALE = SHORT
  ? {
      waves: [40, 40, 40, 40, 40],
      importRows: 20_000,
      senders: 2,
      redisDownMs: 5_000,
      restartDownMs: 3_000,
      drainMs: 240_000,
      turnEveryMs: 3_000,
      mailboxes: 10,
      prospects: 20,
      replyEveryMs: 250,
    }
  : {
      waves: [600, 600, 600, 600, 600],
      importRows: 100_000,
      senders: 13,
      redisDownMs: 30_000,
      restartDownMs: 10_000,
      drainMs: 600_000,
      turnEveryMs: 2_000,
      mailboxes: 100,
      prospects: 200,
      replyEveryMs: 100,
    };
let ok = false;
try {
  const verdict = await runChaos(dir, SCALE);
  ok = verdict.ok;
  if (process.env.CHAOS_RESULT) writeFileSync(process.env.CHAOS_RESULT, JSON.stringify(verdict, null, 2));
} catch (err) {
  console.error(`[chaos] ${err instanceof Error ? err.stack : String(err)}`);
} finally {
  const { stopStack } = await import('./stack.js');
  await stopStack({ log: (msg) => console.error(`[chaos] ${msg}`) });
  await sweepRun(runId, 5_000, CHAOS_MARK); // anything a failure left behind
  if (SHORT && ok) rmSync(dir, { recursive: true, force: true }); // kept on failure, for its logs
}
process.exit(ok ? 0 : 1);
