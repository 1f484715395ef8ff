// `npm run replay -- <workflowId> [runId]`: fetches the live history of a workflow and replays it
// against the current workflow code, to check that a change is deterministic for jobs in flight.
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../lib/config.js';
import { connectTemporal } from '../jobs/connection.js';
import { workflowsPath } from './worker.js';

const [workflowId, runId] = process.argv.slice(2);
if (!workflowId) {
  console.error('usage: npm run replay -- <workflowId> [runId]');
  process.exit(2);
}
const client = await connectTemporal(loadConfig());
try {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  await Worker.runReplayHistory({ workflowsPath, replayName: workflowId }, history);
  console.log(
    `replay ok: ${workflowId} (${history.events?.length ?? 0} events) is deterministic with the current code`,
  );
} catch (err) {
  console.error(`replay failed for ${workflowId}:`, err instanceof Error ? err.message : err);
  process.exitCode = 1;
} finally {
  await client.connection.close();
}
