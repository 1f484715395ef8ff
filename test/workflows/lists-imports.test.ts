// CSV imports into lead lists on the real dev server (docs/imports.md): the `list-import:<id>`
// workflow with search attributes and a progress query, exact counts at every moment, the three
// dedupe modes, duplicates within the file and against existing contacts, re-imports that add
// nothing, chunks across several activity calls and continueAsNew, cancel (draft, queued, running),
// failures (invalid CSV mid-file, the list deleted), the Operator tools, and replay tests.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { Contact } from '../../db/entities/Contact.js';
import { AgentAttachment } from '../../db/entities/AgentAttachment.js';
import { pgImportFiles } from '../../domain/lists/import-files.js';
import type { JobInput, Jobs } from '../../domain/jobs.js';
import { cancelImport, commitImport } from '../../domain/lists/imports.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { listImportWorkflowIds } from '../../lib/workflow-ids.js';
import type { ListImportInput } from '../../workflows/lists.js';
import { AppId, JobKind, WorkspaceId } from '../../workflows/search-attributes.js';
import { api, call, createTestApp, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { withStart } from '../helpers/jobs.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { commit, draftPath, peopleCsv, postCsv, preview, importPath, waitImport } from '../helpers/imports.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
test.after.always(closeApi);

const auth = (u: TestUser) => ({ token: u.accessToken });

async function setup(owner?: TestUser) {
  const u = owner ?? (await createOwner());
  const app = await createTestApp(u);
  const list = await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body: { name: 'Imported' } });
  const e = await em();
  const actor = await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined);
  return { u, appId: app.id, listId: list.body.id as string, workspaceId: await workspaceIdOf(u.id), actor };
}
type Setup = Awaited<ReturnType<typeof setup>>;

const count = async (sql: string, params: unknown[]) => Number((await (await em()).execute(sql, params))[0].n);
const leadsOf = (listId: string) => count('select count(*)::int as n from leads where list_id = ?', [listId]);
const contactsOf = (workspaceId: string) =>
  count('select count(*)::int as n from contacts where workspace_id = ?', [workspaceId]);
const chunksOf = (importId: string) =>
  count('select count(*)::int as n from import_file_chunks where list_import_id = ?', [importId]);
const contact = async (workspaceId: string, email: string) =>
  (await em()).findOneOrFail(Contact, { workspace: workspaceId, emailNormalised: email });

/** Jobs whose list-import start is replaced (not started, or started with test parameters). */
async function jobsWith(startListImport: (s: JobInput<'list-import'>) => Promise<unknown>): Promise<Jobs> {
  const { services } = await api();
  return withStart(services.jobs, 'list-import', startListImport);
}

/** Starts the import's workflow on the test worker with small activity calls (several calls, continueAsNew). */
async function startSmall(importId: string, input: Partial<ListImportInput>) {
  const { services } = await api();
  return services.temporal.workflow.start('listImport', {
    taskQueue: services.config.temporal.taskQueue,
    workflowId: listImportWorkflowIds.run(importId),
    args: [{ importId, ...input }],
  });
}

/** A draft committed without its workflow started (the test starts it). */
async function committedNotStarted(
  s: Setup,
  csv: string | Buffer,
  body: { listId?: string; listName?: string } = { listId: s.listId },
) {
  const p = await preview(s.u, s.appId, csv);
  if (p.status !== 201) throw new Error(p.text);
  const e = await em();
  await commitImport(e as never, s.actor, await jobsWith(async () => {}), s.appId, p.body.id, body);
  return p.body.id as string;
}

const invariant = (p: { rows_read: number; created: number; updated: number; duplicate: number; invalid: number }) =>
  p.rows_read === p.created + p.updated + p.duplicate + p.invalid;

test('preview → commit → completed: counts, contacts and leads, search attributes, the progress query, the file deleted', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  const p = await preview(s.u, s.appId, peopleCsv(30, tag));
  t.is(p.status, 201, p.text);
  t.like(p.body, {
    status: 'draft',
    format: { encoding: 'utf-8', bom: false, delimiter: ',', has_header: true },
    workflow_id: null,
  });
  t.deepEqual(p.body.suggested_mapping, {
    email: 0,
    profile_url: 1,
    first_name: 2,
    last_name: 3,
    title: 4,
    company: 5,
    country: 6,
  });
  t.like(p.body.sample, { rows_checked: 30, valid: 30, invalid: 0, complete: true, existing_contacts: 0 });
  t.is(await chunksOf(p.body.id), 1);
  const c = await commit(s.u, s.appId, p.body.id, { list_id: s.listId });
  t.is(c.status, 202, c.text);
  t.like(c.body, {
    workflow_id: `list-import:${p.body.id}`,
    dedupe_mode: 'update_empty',
    list_id: s.listId,
    list_name: null,
  });
  t.deepEqual(c.body.mapping, p.body.suggested_mapping);
  const done = await waitImport(s.u, s.appId, p.body.id);
  t.is(done.status, 'completed', JSON.stringify(done.error));
  t.like(done.progress, {
    rows_read: 30,
    created: 30,
    updated: 0,
    duplicate: 0,
    invalid: 0,
    leads_added: 30,
    percent: 100,
    bytes_read: p.body.size_bytes,
    bytes_total: p.body.size_bytes,
  });
  t.truthy(done.started_at);
  t.truthy(done.finished_at);
  t.is(await leadsOf(s.listId), 30);
  t.is(await contactsOf(s.workspaceId), 30);
  const ann = await contact(s.workspaceId, `p0-${tag}@acme.example`);
  t.like(ann, {
    firstName: 'First0',
    lastName: 'Last0',
    title: 'Head of Growth',
    company: 'Acme 0',
    country: 'France',
    profileUrlNormalised: `https://pronet.example/in/p0-${tag}`,
  });
  const leads = await call('GET', `/api/lists/${s.listId}/leads?limit=200`, auth(s.u));
  t.true(leads.body.items.every((l: { source: string }) => l.source === 'import'));
  t.is(await chunksOf(p.body.id), 0, 'the file is deleted once the import is final');
  const { services } = await api();
  const handle = services.temporal.workflow.getHandle(listImportWorkflowIds.run(p.body.id));
  const d = await handle.describe();
  t.is(d.typedSearchAttributes.get(JobKind), 'list-import');
  t.is(d.typedSearchAttributes.get(WorkspaceId), s.workspaceId);
  t.is(d.typedSearchAttributes.get(AppId), s.appId);
  const q = await handle.query('progress');
  t.like(q, { status: 'completed', rowsRead: 30, created: 30, leadsAdded: 30, bytesRead: p.body.size_bytes });
  t.true((await replayLive(services.temporal, handle.workflowId)) > 0);
  await replayFixture(services.temporal, 'listImport', handle.workflowId);
});

test('dedupe: update_empty fills blanks, overwrite replaces, skip leaves contacts alone; identifiers are never replaced; every contact joins the list', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  const e = await em();
  const existing = (i: number, over: Record<string, unknown>) =>
    e.create(Contact, {
      workspace: s.workspaceId,
      email: `c${i}-${tag}@x.example`,
      emailNormalised: `c${i}-${tag}@x.example`,
      ...over,
    } as never);
  existing(1, { firstName: 'Old', title: null, company: 'OldCo' });
  existing(2, { firstName: 'Old', title: null, company: 'OldCo' });
  existing(3, { firstName: 'Old', title: null, company: 'OldCo' });
  // Matched by profile URL only (another spelling of it), no email yet.
  e.create(Contact, {
    workspace: s.workspaceId,
    profileUrl: `https://www.pronet.example/in/P4-${tag}/`,
    profileUrlNormalised: `https://pronet.example/in/p4-${tag}`,
  } as never);
  await e.flush();
  const csv = (rows: string[]) => ['email,profile,first,title,company', ...rows].join('\n') + '\n';
  const rows = [
    `c1-${tag}@x.example,,New,CTO,NewCo`,
    `C2-${tag}@X.Example,,,,`,
    `c3-${tag}@x.example,,Old,,OldCo`,
    `p4-${tag}@x.example,pronet.example/in/p4-${tag},Pat,,`,
  ];
  const run = async (mode: string, listName: string) => {
    const r = await postCsv(s.u, importPath(s.appId), csv(rows), {
      fields: { list_name: listName, dedupe_mode: mode },
    });
    t.is(r.status, 202, r.text);
    return waitImport(s.u, s.appId, r.body.id);
  };

  const skip = await run('skip', 'Skip');
  t.like(skip.progress, { rows_read: 4, created: 0, updated: 0, duplicate: 4, leads_added: 4 });
  t.like(await contact(s.workspaceId, `c1-${tag}@x.example`), { firstName: 'Old', title: null, company: 'OldCo' });

  const fill = await run('update_empty', 'Fill');
  // c1: title filled; c2: nothing given; c3: nothing new; p4: email and first name filled.
  t.like(fill.progress, { rows_read: 4, created: 0, updated: 2, duplicate: 2, leads_added: 4 });
  t.like(await contact(s.workspaceId, `c1-${tag}@x.example`), { firstName: 'Old', title: 'CTO', company: 'OldCo' });
  t.like(await contact(s.workspaceId, `p4-${tag}@x.example`), {
    firstName: 'Pat',
    email: `p4-${tag}@x.example`,
    profileUrl: `https://www.pronet.example/in/P4-${tag}/`,
  });

  const over = await run('overwrite', 'Over');
  // c1: first name and company replaced; c2: empty cells clear nothing; c3 and p4: same values.
  t.like(over.progress, { rows_read: 4, created: 0, updated: 1, duplicate: 3, leads_added: 4 });
  t.like(await contact(s.workspaceId, `c1-${tag}@x.example`), { firstName: 'New', title: 'CTO', company: 'NewCo' });
  t.like(await contact(s.workspaceId, `c2-${tag}@x.example`), { firstName: 'Old', company: 'OldCo' });
  t.is(await contactsOf(s.workspaceId), 4);
});

test('duplicates within the file: later rows meet the contact an earlier row created (by email, or by profile URL), in one chunk and across chunks', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  const lines = ['email,profile_url,first_name,title'];
  lines.push(`ann-${tag}@x.example,,Ann,`);
  lines.push(`ANN-${tag}@x.example,https://pronet.example/in/ann-${tag},,CEO`); // same person: fills URL and title
  lines.push(`,https://www.pronet.example/in/Ann-${tag}/,Ann,CEO`); // same person by URL: nothing new
  lines.push(`ann-${tag}@x.example,,Ann,CEO`); // identical
  // A new email with Ann's profile URL is Ann (either identifier matching is a match); she keeps her email.
  lines.push(`bob-${tag}@x.example,https://pronet.example/in/ann-${tag},Bob,`);
  lines.push(`cy-${tag}@x.example,,Cy,`);
  const r = await postCsv(s.u, importPath(s.appId), lines.join('\r\n'), { fields: { list_id: s.listId } });
  const done = await waitImport(s.u, s.appId, r.body.id);
  t.like(done.progress, { rows_read: 6, created: 2, updated: 1, duplicate: 3, invalid: 0, leads_added: 2 });
  t.like(await contact(s.workspaceId, `ann-${tag}@x.example`), {
    firstName: 'Ann',
    title: 'CEO',
    profileUrlNormalised: `https://pronet.example/in/ann-${tag}`,
  });
  t.is(
    await count('select count(*)::int as n from contacts where workspace_id = ? and email_normalised = ?', [
      s.workspaceId,
      `bob-${tag}@x.example`,
    ]),
    0,
  );
  t.is(await contactsOf(s.workspaceId), 2);
  t.is(await leadsOf(s.listId), 2);
});

test('re-importing the same file adds nothing; into another list it adds leads, not contacts', async (t) => {
  const s = await setup();
  const csv = peopleCsv(120, randomUUID().slice(0, 8));
  const first = await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId } });
  t.like((await waitImport(s.u, s.appId, first.body.id)).progress, { created: 120, leads_added: 120 });
  const again = await preview(s.u, s.appId, csv);
  t.is(again.body.sample.existing_contacts, 120, 'the preview says they are all known');
  t.is(again.body.sha256, first.body.sha256);
  for (const mode of ['update_empty', 'overwrite', 'skip']) {
    const r = await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId, dedupe_mode: mode } });
    t.like(
      (await waitImport(s.u, s.appId, r.body.id)).progress,
      { rows_read: 120, created: 0, updated: 0, duplicate: 120, leads_added: 0 },
      mode,
    );
  }
  t.is(await contactsOf(s.workspaceId), 120);
  t.is(await leadsOf(s.listId), 120);
  const r = await postCsv(s.u, importPath(s.appId), csv, { fields: { list_name: 'Second list' } });
  const done = await waitImport(s.u, s.appId, r.body.id);
  t.like(done.progress, { created: 0, duplicate: 120, leads_added: 120 });
  t.is(await contactsOf(s.workspaceId), 120);
});

test('values are stored exactly as read: quotes, backslashes, braces, commas, the word NULL, \\N, tabs and line breaks, emoji', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  // The new contacts reach PostgreSQL through COPY's text format: its NULL (\N), escapes and separators are data here.
  const odd = ['Jo "JJ" O\\Brien', '{x}, y', 'NULL', 'Zoë 😀 \\"', 'one\r\ntwo\tthree \\N \\t'];
  const esc = (v: string) => `"${v.replace(/"/g, '""')}"`;
  const csv = `email,first_name,last_name,company,title,headline\nodd-${tag}@x.example,${odd.map(esc).join(',')}\n`;
  const r = await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId } });
  t.like((await waitImport(s.u, s.appId, r.body.id)).progress, { created: 1 });
  t.like(await contact(s.workspaceId, `odd-${tag}@x.example`), {
    firstName: odd[0],
    lastName: odd[1],
    company: odd[2],
    title: odd[3],
    headline: odd[4],
  });
});

test('two imports of overlapping files into two lists at once: each contact once, each list complete', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  const a = postCsv(s.u, importPath(s.appId), peopleCsv(3000, tag), { fields: { list_name: 'A' } });
  const b = postCsv(s.u, importPath(s.appId), peopleCsv(3000, tag, { from: 1500 }), { fields: { list_name: 'B' } });
  const [ra, rb] = await Promise.all([a, b]);
  const [da, db] = await Promise.all([waitImport(s.u, s.appId, ra.body.id), waitImport(s.u, s.appId, rb.body.id)]);
  t.is(da.status, 'completed');
  t.is(db.status, 'completed');
  t.is(da.progress.created + db.progress.created, 4500, 'the 1,500 people in both files were created once');
  t.is(da.progress.duplicate + db.progress.duplicate, 1500);
  t.is(await contactsOf(s.workspaceId), 4500);
  t.is(await leadsOf(da.list_id), 3000);
  t.is(await leadsOf(db.list_id), 3000);
});

test('a file of many chunks over several activity calls and workflow runs (continueAsNew): exact progress at every moment', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  // 12,001 data rows, 2 invalid: three chunks of 5,000 records, one call each, two calls per run.
  const lines = peopleCsv(12_000, tag).trimEnd().split('\n');
  lines.splice(4000, 0, 'not-an-email,,X,Y,T,C,FR');
  lines.push(',,No,Identifier,T,C,FR');
  const id = await committedNotStarted(s, lines.join('\n') + '\n');
  const handle = await startSmall(id, { recordsPerCall: 5000, callsPerRun: 2 });
  const seen: any[] = [];
  const body = await waitImport(s.u, s.appId, id, (b) => {
    seen.push(b.progress);
    return ['completed', 'failed', 'canceled'].includes(b.status);
  });
  t.is(body.status, 'completed', JSON.stringify(body.error));
  t.like(body.progress, { rows_read: 12_002, created: 12_000, invalid: 2, leads_added: 12_000 });
  t.true(seen.every(invariant), 'rows_read = created + updated + duplicate + invalid whenever read');
  t.true(
    seen.every((p, i) => i === 0 || p.rows_read >= seen[i - 1].rows_read),
    'monotonic',
  );
  t.deepEqual(
    body.invalid_rows.items.map((r: { row: number; reasons: { code: string }[] }) => [r.row, r.reasons[0].code]),
    [
      [4001, 'invalid_email'],
      [12_003, 'missing_identifier'],
    ],
  );
  t.is(await leadsOf(s.listId), 12_000);
  const [{ chunks }] = await (await em()).execute('select chunks from list_imports where id = ?', [id]);
  t.is(chunks, 3);
  const { services } = await api();
  const first = await services.temporal.workflow
    .getHandle(handle.workflowId, handle.firstExecutionRunId)
    .fetchHistory();
  t.truthy(first.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes, 'the first run continued as new');
  t.like(await handle.query('progress'), { status: 'completed', rowsRead: 12_002 });
  await replayLive(services.temporal, handle.workflowId);
  await replayFixture(services.temporal, 'listImport-continued', handle.workflowId);
});

test('cancel: a draft at once; a queued import before it runs; a running one at a chunk boundary (rows so far stay); a final one is 409', async (t) => {
  const s = await setup();
  const { services } = await api();
  const files = pgImportFiles((await em()) as never);
  const cancel = async (id: string) => cancelImport((await em()) as never, s.actor, services.jobs, files, id);

  const draft = await preview(s.u, s.appId, peopleCsv(5, randomUUID().slice(0, 8)));
  t.like(await cancel(draft.body.id), { status: 'canceled' });
  t.is(await chunksOf(draft.body.id), 0);
  t.like(await cancel(draft.body.id), { status: 'canceled' }, 'a repeat is a no-op');

  // Queued, its workflow never started (a lost start): canceled at once; a workflow starting later ends without importing.
  const queued = await committedNotStarted(s, peopleCsv(5, randomUUID().slice(0, 8)));
  t.like(await cancel(queued), { status: 'canceled' });
  t.is(await chunksOf(queued), 0);
  const h = await startSmall(queued, {});
  t.like(await h.result(), { status: 'canceled', rowsRead: 0 });
  await replayFixture(services.temporal, 'listImport-canceled', h.workflowId);

  // Running: 60,000 rows in chunks of 5,000; canceled once a chunk has committed.
  const tag = randomUUID().slice(0, 8);
  const big = await postCsv(s.u, importPath(s.appId), peopleCsv(60_000, tag), { fields: { list_name: 'Big' } });
  t.is(big.status, 202, big.text);
  await waitImport(s.u, s.appId, big.body.id, (b) => b.progress.rows_read > 0 || b.status === 'completed');
  const c = await cancel(big.body.id);
  // Usually still canceling when the route answers; on a loaded machine the chunk boundary may come first.
  t.true(['canceling', 'canceled'].includes(c.status), c.status);
  const end = await waitImport(s.u, s.appId, big.body.id);
  t.is(end.status, 'canceled');
  t.true(end.progress.rows_read > 0 && end.progress.rows_read < 60_000, `stopped part-way: ${end.progress.rows_read}`);
  t.is(end.progress.rows_read % 5000, 0, 'at a chunk boundary');
  t.is(await leadsOf(end.list_id), end.progress.created, 'every committed row is in the list, nothing more');
  t.is(
    await count('select count(*)::int as n from contacts where workspace_id = ? and email like ?', [
      s.workspaceId,
      `%-${tag}@acme.example`,
    ]),
    end.progress.created,
  );
  t.is(await chunksOf(big.body.id), 0);
  t.like(await (await api()).services.temporal.workflow.getHandle(listImportWorkflowIds.run(big.body.id)).result(), {
    status: 'canceled',
  });

  const doneId = (
    await postCsv(s.u, importPath(s.appId), peopleCsv(2, randomUUID().slice(0, 8)), { fields: { list_id: s.listId } })
  ).body.id;
  await waitImport(s.u, s.appId, doneId);
  const refused = await t.throwsAsync(cancel(doneId));
  t.like(refused, { status: 409, code: 'invalid_transition' });
});

test('failures: a file that stops being CSV after the preview’s head fails at that row (the rows before it imported); a deleted list fails the import', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  // Over 1 MiB (the head), then an unclosed quote.
  const good = peopleCsv(12_000, tag);
  t.true(Buffer.byteLength(good) > 1024 * 1024);
  const r = await postCsv(
    s.u,
    importPath(s.appId),
    `${good}broken@x.example,"never closed,a,b,c,d,e\nmore@x.example,x,a,b,c,d,e\n`,
    { fields: { list_id: s.listId } },
  );
  t.is(r.status, 202, r.text);
  const failed = await waitImport(s.u, s.appId, r.body.id);
  t.is(failed.status, 'failed');
  t.is(failed.error.code, 'invalid_csv');
  t.regex(failed.error.message, /row 12002/);
  t.like(failed.progress, { rows_read: 12_000, created: 12_000 });
  t.is(await chunksOf(r.body.id), 0);
  const { services } = await api();
  await replayFixture(services.temporal, 'listImport-failed', listImportWorkflowIds.run(r.body.id));

  const doomed = await call('POST', `/api/apps/${s.appId}/lists`, { ...auth(s.u), body: { name: 'Doomed' } });
  const id = await committedNotStarted(s, peopleCsv(3, randomUUID().slice(0, 8)), { listId: doomed.body.id });
  t.is((await call('DELETE', `/api/lists/${doomed.body.id}`, auth(s.u))).status, 200);
  await startSmall(id, {});
  const gone = await waitImport(s.u, s.appId, id);
  t.like(gone, { status: 'failed', error: { code: 'list_deleted' }, list_id: null });
});

test('Operator tools: import a CSV attachment (a new list), read its progress, cancel; truncated, foreign and PDF attachments are refused', async (t) => {
  const s = await setup();
  const { services } = await api();
  const tag = randomUUID().slice(0, 8);
  const form = new FormData();
  form.append('app_id', s.appId);
  form.append('file', new Blob([peopleCsv(25, tag)], { type: 'text/csv' }), 'from-chat.csv');
  const up = await fetch(`${(await api()).base}/api/agent/attachments`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${s.u.accessToken}` },
  });
  const attachment = (await up.json()) as { file_id: string; thread_id: string };
  t.is(up.status, 201);
  const e = await em();
  const ctx = { em: e as never, actor: s.actor, jobs: services.jobs, config: services.config, providers: services };
  t.is(findTool('import_csv_attachment')?.risk, 'change');
  t.is(findTool('get_list_import')?.risk, 'read');
  t.is(findTool('cancel_list_import')?.risk, 'change');
  const started = (await runTool(findTool('import_csv_attachment')!, ctx, {
    attachment_id: attachment.file_id,
    list_name: 'From chat',
  })) as { import_id: string; status: string; started: boolean; workflow_id: string };
  t.like(started, { started: true, workflow_id: `list-import:${started.import_id}` });
  const done = await waitImport(s.u, s.appId, started.import_id);
  t.like(done, {
    status: 'completed',
    source: 'attachment',
    filename: 'from-chat.csv',
    progress: { created: 25, leads_added: 25 },
  });
  const read = (await runTool(findTool('get_list_import')!, ctx, { import_id: started.import_id })) as Record<
    string,
    unknown
  >;
  t.like(read, {
    status: 'completed',
    progress: { rows_read: 25, created: 25, percent: 100 },
    invalid_rows: [],
    more_invalid_rows: false,
  });
  const again = await t.throwsAsync(runTool(findTool('cancel_list_import')!, ctx, { import_id: started.import_id }));
  t.like(again, { code: 'invalid_transition' });

  // Cut at the chat limit: importing it would lose rows.
  const cut = e.create(AgentAttachment, {
    workspace: s.workspaceId,
    thread: attachment.thread_id,
    userId: s.u.id,
    filename: 'big.csv',
    contentType: 'text/csv',
    sizeBytes: 3_000_000,
    sha256: 'x'.repeat(64),
    extractionStatus: 'truncated',
    text: 'email\na@x.example',
  } as never);
  const pdf = e.create(AgentAttachment, {
    workspace: s.workspaceId,
    thread: attachment.thread_id,
    userId: s.u.id,
    filename: 'deck.pdf',
    contentType: 'application/pdf',
    sizeBytes: 10,
    sha256: 'x'.repeat(64),
    extractionStatus: 'extracted',
    text: 'hello',
  } as never);
  await e.flush();
  t.like(
    await t.throwsAsync(
      runTool(findTool('import_csv_attachment')!, ctx, {
        attachment_id: (cut as { id: string }).id,
        list_id: s.listId,
      }),
    ),
    { status: 422, code: 'attachment_truncated' },
  );
  t.like(
    await t.throwsAsync(
      runTool(findTool('import_csv_attachment')!, ctx, {
        attachment_id: (pdf as { id: string }).id,
        list_id: s.listId,
      }),
    ),
    { status: 422, code: 'attachment_unavailable' },
  );
  // Another workspace's user cannot use it, nor read or cancel the import.
  const other = await setup();
  const otherCtx = {
    em: (await em()) as never,
    actor: other.actor,
    jobs: services.jobs,
    config: services.config,
    providers: services,
  };
  t.like(
    await t.throwsAsync(
      runTool(findTool('import_csv_attachment')!, otherCtx, { attachment_id: attachment.file_id, list_name: 'Stolen' }),
    ),
    { status: 404, code: 'attachment_not_found' },
  );
  t.like(await t.throwsAsync(runTool(findTool('get_list_import')!, otherCtx, { import_id: started.import_id })), {
    status: 404,
  });
  t.like(await t.throwsAsync(runTool(findTool('cancel_list_import')!, otherCtx, { import_id: started.import_id })), {
    status: 404,
  });
  // A draft canceled through the tool.
  const draft = await preview(s.u, s.appId, peopleCsv(2, randomUUID().slice(0, 8)));
  t.like(await runTool(findTool('cancel_list_import')!, ctx, { import_id: draft.body.id }), { status: 'canceled' });
  t.is((await call('GET', draftPath(s.appId, draft.body.id), auth(s.u))).body.status, 'canceled');
});

test('a member acting for the owner imports into a product they were given', async (t) => {
  const owner = await createOwner();
  const s = await setup(owner);
  const member = await createUser();
  const { addTeamMember } = await import('../helpers/db.js');
  await addTeamMember(owner.id, member.id, { appIds: [s.appId] });
  const r = await postCsv(member, importPath(s.appId), peopleCsv(3, randomUUID().slice(0, 8)), {
    fields: { list_id: s.listId },
    headers: { 'x-acting-as': owner.id },
  });
  t.is(r.status, 202, r.text);
  const done = await waitImport(owner, s.appId, r.body.id);
  t.like(done.progress, { created: 3 });
});
