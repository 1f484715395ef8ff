// A worker killed in the middle of a CSV import (docs/imports.md, "Resume"): the import runs on a
// worker of its own task queue, in chunks of 500 rows; the worker is SIGKILLed once some chunks
// have committed; while no worker runs, the committed progress stays where it was; a new worker
// takes the activity over (after its heartbeat timeout) and resumes at the committed cursor. In the
// end every row is imported exactly once: each chunk committed once, no contact or lead doubled.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { temporalJobs } from '../../jobs/temporal.js';
import { commitImport } from '../../domain/lists/imports.js';
import { resolveActor } from '../../domain/workspaces.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { listImportWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, closeApi, createTestApp } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { peopleCsv, preview } from '../helpers/imports.js';
import { replayLive } from '../helpers/replay.js';
test.after.always(closeApi);

const ROWS = 40_000;
const CHUNK = 500;

interface Row {
  status: string;
  cursor_bytes: number;
  rows_read: number;
  created: number;
  duplicate: number;
  leads_added: number;
  chunks: number;
}
async function progress(id: string): Promise<Row> {
  const rows: Row[] = await (
    await em()
  ).execute(
    'select status, cursor_bytes, rows_read, created, duplicate, leads_added, chunks from list_imports where id = ?',
    [id],
  );
  return rows[0];
}

test('a worker killed mid-import: another worker resumes at the last committed chunk; nothing lost, nothing doubled', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const list = (await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: 'Crash' } }))
    .body;
  const workspaceId = await workspaceIdOf(u.id);
  const tag = randomUUID().slice(0, 8);
  const p = await preview(u, app.id, peopleCsv(ROWS, tag));
  t.is(p.status, 201, p.text);

  const { services } = await api();
  const taskQueue = `list-import-crash-${randomUUID()}`;
  const env = {
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_SCHEDULES: 'off',
    WEBHOOK_DISPATCHER: 'off',
    MAILBOX_SESSIONS: 'off',
    LIST_IMPORT_CHUNK_ROWS: String(CHUNK),
  };
  const first = spawnTsx('workers/worker.ts', env, { quiet: true });
  t.teardown(() => stopChild(first));
  const e = await em();
  const actor = await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined);
  await commitImport(e as never, actor, temporalJobs(services.temporal, taskQueue), app.id, p.body.id, {
    listId: list.id,
  });

  await waitFor('a few chunks to commit', async () => (await progress(p.body.id)).chunks >= 4, 120_000);
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  const atKill = await progress(p.body.id);
  t.is(atKill.status, 'running');
  t.true(atKill.rows_read < ROWS, `killed part-way (${atKill.rows_read} rows)`);
  // No worker: nothing moves.
  await new Promise((r) => setTimeout(r, 1500));
  t.deepEqual(await progress(p.body.id), atKill);

  const second = spawnTsx('workers/worker.ts', env, { quiet: true });
  t.teardown(() => stopChild(second));
  await waitFor(
    'the import to complete on the second worker',
    async () => (await progress(p.body.id)).status === 'completed',
    180_000,
  );

  const end = await progress(p.body.id);
  t.like(end, { rows_read: ROWS, created: ROWS, duplicate: 0, leads_added: ROWS, chunks: ROWS / CHUNK });
  const counts: { contacts: number; emails: number; leads: number }[] = await (
    await em()
  ).execute(
    `select (select count(*)::int from contacts where workspace_id = ?) as contacts,
            (select count(distinct email_normalised)::int from contacts where workspace_id = ?) as emails,
            (select count(*)::int from leads where list_id = ?) as leads`,
    [workspaceId, workspaceId, list.id],
  );
  t.deepEqual(counts[0], { contacts: ROWS, emails: ROWS, leads: ROWS });

  // The activity was taken over: its last attempt was not the first, and the workflow completed as usual.
  const handle = services.temporal.workflow.getHandle(listImportWorkflowIds.run(p.body.id));
  const history = await handle.fetchHistory();
  const attempts = (history.events ?? [])
    .filter((ev) => ev.activityTaskStartedEventAttributes)
    .map((ev) => ev.activityTaskStartedEventAttributes!.attempt ?? 1);
  t.true(
    attempts.some((a) => a > 1),
    `attempts: ${attempts.join(', ')}`,
  );
  t.like(await handle.result(), { status: 'completed', rowsRead: ROWS });
  await replayLive(services.temporal, handle.workflowId);
});
