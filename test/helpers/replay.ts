// Replay tests: a workflow's recorded history must replay against the current workflow code.
// Fresh histories come from runs in the test; committed ones in test/fixtures/histories/ pin the
// behaviour of earlier code, so a non-deterministic change fails here before it reaches jobs in flight.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { repoRoot } from '../../lib/config.js';
import { workflowsPath } from '../../workers/worker.js';

const fixtures = join(repoRoot, 'test', 'fixtures', 'histories');

// Replays bundle the workflow code; keep the SDK's bundling chatter out of the test output.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this process
}

// The SDK cannot run two replays at once in one process (its native runtime refuses), so replays
// within an ava worker process are queued.
let queue: Promise<unknown> = Promise.resolve();
function serially<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => {});
  return next;
}

export async function replayLive(client: Client, workflowId: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  await serially(() => Worker.runReplayHistory({ workflowsPath, replayName: workflowId }, history));
  return history.events?.length ?? 0;
}

/**
 * Replays the committed fixture `<name>.json`. With RECORD_HISTORIES=1 (or when it does not exist
 * yet) the live history of `workflowId` is written there first.
 */
export async function replayFixture(client: Client, name: string, workflowId: string): Promise<void> {
  const file = join(fixtures, `${name}.json`);
  if (process.env.RECORD_HISTORIES === '1' || !existsSync(file)) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    writeFileSync(file, historyToJSON(history));
  }
  await serially(() =>
    Worker.runReplayHistory({ workflowsPath, replayName: name }, JSON.parse(readFileSync(file, 'utf8'))),
  );
}
