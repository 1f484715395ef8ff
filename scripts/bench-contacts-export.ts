// `npm run bench:export`: exports 100,000 contacts (BENCH_CONTACTS) through the real path — the
// export recorded by the domain, the `contactsExport` workflow on the bench's own worker and task
// queue, the CSV written into PostgreSQL page by page — and prints the time from the request to the
// completed file (goal ≤ 5 s), rows per second, the file size, and the time to stream the file back.
// Own database (`outreach_bench`).
//
// `benchContactsExport` is also called by other benchmarks (bench:import) in an environment they
// have already configured (DATABASE_URL, TEMPORAL_ADDRESS set, migrations applied): it brings its
// own worker on its own task queue and a fresh workspace, and cleans both up.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { spawnTsx, stopChild } from './children.js';
import { benchOwner, benchStack, workerPolling } from './bench-fixtures.js';

export async function benchContactsExport(opts: {
  count: number;
  log: (m: string) => void;
}): Promise<{ seconds: number; rowsPerSecond: number }> {
  const { count, log } = opts;
  // Imported here: config is read once, after the caller has set the environment.
  const { openOrm } = await import('../db/orm.js');
  const { createList } = await import('../domain/lists/lists.js');
  const { createExport, exportChunks } = await import('../domain/contacts/exports.js');
  const { temporalJobs } = await import('../jobs/temporal.js');
  const { contactExportWorkflowIds } = await import('../lib/workflow-ids.js');

  const taskQueue = `bench-export-${process.pid}-${randomUUID().slice(0, 8)}`;
  const worker = spawnTsx(
    'workers/worker.ts',
    {
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_SCHEDULES: 'off',
      WEBHOOK_DISPATCHER: 'off',
      MAILBOX_SESSIONS: 'off',
      LOG_LEVEL: 'warn',
    },
    { quiet: true },
  );
  const orm = await openOrm(process.env.DATABASE_URL!);
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  let owner: { userId: string; workspaceId: string } | undefined;
  try {
    const em = orm.em.fork() as EntityManager;
    const { actor, app } = await benchOwner(em);
    owner = actor;
    const list = await createList(em, actor, app.id, { name: 'Bench export' });

    log(`inserting ${count.toLocaleString('en')} contacts (set-based) into a fresh workspace`);
    // Ids are UUIDv7 built in SQL, one millisecond apart going back from now (ordered, and all
    // before the export's own id); every contact is a lead of one list (the `lists` column).
    await em.execute(
      `insert into contacts (id, workspace_id, email, email_normalised, profile_url, profile_url_normalised, first_name, last_name, full_name,
         title, headline, phone, company, company_domain, country, fit_score, fit_label, pinned_at, created_at, updated_at)
       select v.id, ?, 'person' || g || '@company' || (g % 997) || '.example', 'person' || g || '@company' || (g % 997) || '.example',
         'https://pronet.example/in/person-' || g, 'https://pronet.example/in/person-' || g, 'First' || g, 'Last' || g, 'First' || g || ' Last' || g,
         (array['CTO', 'Head of Growth', 'VP Engineering, EMEA', '=Founder'])[1 + g % 4], 'Building "things" at Company ' || (g % 997),
         '+33 1 23 45 ' || lpad((g % 100)::text, 2, '0'), 'Company ' || (g % 997), 'company' || (g % 997) || '.example', 'FR',
         g % 101, (array['good', 'maybe', 'bad', null])[1 + g % 4], case when g % 50 = 0 then now() end, now(), now()
       from generate_series(1, ?) g,
         lateral (select md5(g::text) as h, lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint - ? - 1000 + g), 12, '0') as ms) x,
         lateral (select (substr(ms, 1, 8) || '-' || substr(ms, 9, 4) || '-7' || substr(h, 1, 3) || '-8' || substr(h, 4, 3) || '-' || substr(h, 7, 12))::uuid as id) v`,
      [actor.workspaceId, count, count],
    );
    await em.execute(
      `insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
       select gen_random_uuid(), workspace_id, ?, id, 'import', now(), now() from contacts where workspace_id = ?`,
      [list.id, actor.workspaceId],
    );
    await em.execute('analyze contacts');
    await em.execute('analyze leads');

    await workerPolling(connection, taskQueue, 120_000);
    const client = new Client({ connection });
    const jobs = temporalJobs(client, taskQueue);

    log('exporting through the workflow');
    const started = performance.now();
    const exp = await createExport(em, actor, jobs, {});
    const result = (await client.workflow.getHandle(contactExportWorkflowIds.export(exp.id)).result()) as {
      status: string;
      rows: number;
      bytes: number;
    };
    const seconds = (performance.now() - started) / 1000;
    if (result.status !== 'completed' || result.rows !== count)
      throw new Error(`the export ended ${JSON.stringify(result)}`);

    // Streaming the file back as the download route does (chunk by chunk).
    const readStart = performance.now();
    let bytes = 0;
    for await (const chunk of exportChunks(orm.em.fork() as EntityManager, exp.id)) bytes += chunk.length;
    const readSeconds = (performance.now() - readStart) / 1000;
    log(
      `file: ${(bytes / 1e6).toFixed(1)} MB in ${Math.ceil(count / 5_000) + 1} chunks, streamed back in ${readSeconds.toFixed(2)} s`,
    );
    return { seconds, rowsPerSecond: count / seconds };
  } finally {
    await stopChild(worker);
    // The workspace goes (its contacts, leads and exports with it), so repeated runs do not grow the database.
    if (owner) {
      const em = orm.em.fork() as EntityManager;
      await em
        .execute('delete from workspaces where id = ?', [owner.workspaceId])
        .catch((err) => log(`could not delete the bench workspace: ${String(err)}`));
      await em
        .execute('delete from users where id = ?', [owner.userId])
        .catch((err) => log(`could not delete the bench user: ${String(err)}`));
    }
    await connection.close();
    await orm.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { stack, log } = await benchStack('export', { suffix: 'bench', redisDb: 2 });
  const count = Number(process.env.BENCH_CONTACTS ?? 100_000);
  try {
    const { seconds, rowsPerSecond } = await benchContactsExport({ count, log });
    console.log(
      `bench:export — ${count.toLocaleString('en')} contacts exported to CSV through the contacts-export workflow`,
    );
    console.log(
      `  request → completed file:  ${seconds.toFixed(2)} s   (goal ≤ 5 s: ${seconds <= 5 ? 'met' : 'MISSED'})`,
    );
    console.log(`  rows per second:            ${Math.round(rowsPerSecond).toLocaleString('en')}`);
  } finally {
    if (process.env.CI) await stack.stop();
  }
  process.exit(0);
}
