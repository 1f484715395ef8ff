// A worker killed in the middle of an export: after the heartbeat timeout the step is retried on
// another worker, from the cursor the last committed page left, and the file holds every contact
// exactly once, in order.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { ContactExport } from '../../db/entities/ContactExport.js';
import { createExport } from '../../domain/contacts/exports.js';
import { resolveActor } from '../../domain/workspaces.js';
import { contactExportWorkflowIds } from '../../lib/workflow-ids.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, closeApi, createTestApp } from '../helpers/api.js';
import { withStart } from '../helpers/jobs.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { seedContacts } from '../helpers/contacts.js';
test.after.always(closeApi);

test('a worker killed mid-export: another worker resumes at the last committed page; nothing lost, nothing doubled', async (t) => {
  t.timeout(4 * 60_000);
  const { services } = await api();
  const u = await createOwner();
  await createTestApp(u);
  const workspaceId = await workspaceIdOf(u.id);
  const contacts = await seedContacts(
    workspaceId,
    Array.from({ length: 20_000 }, (_, i) => ({ email: `crash${i}@resume.example`, full_name: `Person ${i}` })),
  );
  const e = await em();
  const actor = await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined);
  const exp = await createExport(
    e,
    actor,
    withStart(services.jobs, 'contacts-export', async () => {}),
    {},
  );

  const taskQueue = `export-crash-${randomUUID()}`;
  const env = {
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_SCHEDULES: 'off',
    WEBHOOK_DISPATCHER: 'off',
    MAILBOX_SESSIONS: 'off',
  };
  const workflowId = contactExportWorkflowIds.export(exp.id);
  // Pages of 10 in one long step: thousands of small commits, so the kill lands mid-step.
  const handle = await services.temporal.workflow.start('contactsExport', {
    taskQueue,
    workflowId,
    args: [{ exportId: exp.id, pageSize: 10, pagesPerStep: 100_000 }],
  });
  const rows = async () => (await (await em()).findOneOrFail(ContactExport, exp.id, { refresh: true })).rowCount;
  const first = spawnTsx('workers/worker.ts', env, { quiet: true });
  await waitFor('the export to be under way', async () => (await rows()) >= 1_000, 90_000);
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  const atKill = await rows();
  t.true(atKill < 20_000, `killed at ${atKill}`);

  const second = spawnTsx('workers/worker.ts', env, { quiet: true });
  t.teardown(() => stopChild(second));
  t.like(await handle.result(), { status: 'completed', rows: 20_000 });
  const done = await (await em()).findOneOrFail(ContactExport, exp.id, { refresh: true });
  t.like(done, { status: 'completed', rowCount: 20_000, nextSeq: 2_001 });

  const r = await fetch(`${(await api()).base}/api/contacts/export?id=${exp.id}`, {
    headers: { authorization: `Bearer ${u.accessToken}` },
  });
  const bytes = Buffer.from(await r.arrayBuffer());
  t.is(bytes.length, Number(done.byteCount));
  const records = parse(bytes, { bom: true, columns: true }) as { id: string; email: string }[];
  t.is(records.length, 20_000);
  t.deepEqual(
    records.map((x) => x.id),
    contacts.map((c) => c.id),
    'every contact once, in order',
  );
});
