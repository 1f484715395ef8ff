// Contacts exports on the real dev server: POST starts `contacts-export:<id>`, the workflow writes the
// CSV in chunks (one per page) with the cursor in PostgreSQL, GET lists the exports and streams a
// completed file back. The file is parsed back: every contact, every awkward value (quotes, commas,
// newlines, non-ASCII) intact and formula injection neutralised. Filters and scope agree with the
// contacts list; a small page size with continue-as-new writes the same bytes; every code; the tools;
// replay tests.
import test from 'ava';
import { parse } from 'csv-parse/sync';
import { ContactExport } from '../../db/entities/ContactExport.js';
import { createExport, failExport } from '../../domain/contacts/exports.js';
import type { Jobs } from '../../domain/jobs.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { EXPORT_COLUMNS } from '../../lib/contacts-csv.js';
import { contactExportWorkflowIds } from '../../lib/workflow-ids.js';
import type { ContactsExportInput } from '../../workflows/contacts.js';
import { api, call, closeApi, createTestApp, createUser, type Res, type TestUser } from '../helpers/api.js';
import { withStart } from '../helpers/jobs.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { seedContacts, type ContactSpec, type SeededContact } from '../helpers/contacts.js';
import { addTeamMember } from '../helpers/db.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { waitFor } from '../../scripts/children.js';
test.after.always(closeApi);

const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });
const NO_SUCH_ID = '0190a000-0000-7000-8000-000000000000';

async function createList(u: TestUser, appId: string, name: string): Promise<string> {
  const r = await call('POST', `/api/apps/${appId}/lists`, { ...auth(u), body: { name } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.id;
}

/** Values a spreadsheet would evaluate, and values that stress CSV quoting. */
const AWKWARD = [
  '=HYPERLINK("http://evil.example","click")',
  '+1+1',
  '-2+3',
  '@SUM(A1:A2)',
  '\tTabbed',
  '\rCarriage',
  '＝1+1', // full-width equals sign
  'Comma, Inc.',
  'Say "hello"',
  'Line one\nline two',
  'Windows\r\nline',
  'Müller – Straße 😀',
  ' leading and trailing ',
  'plain',
];

function spec(i: number, lists: string[]): ContactSpec {
  const a = AWKWARD[i % AWKWARD.length];
  return {
    email: `p${i}@export${i % 7}.example`,
    first_name: `First${i}`,
    last_name: i % 3 === 0 ? a : `Last${i}`,
    full_name: i % 2 === 0 ? `Full ${a} ${i}` : null,
    title: a,
    company: i % 5 === 0 ? `Acme, "${i}"` : `Acme ${i % 4}`,
    phone: i % 4 === 0 ? `+33 1 23 45 ${String(i).padStart(2, '0')}` : null,
    country: 'DE',
    time_zone: i % 3 === 0 ? 'Europe/Berlin' : null,
    fit_label: ['good', 'maybe', 'bad', null][i % 4],
    fit_score: i % 4 === 3 ? null : i % 101,
    pinned: i % 9 === 0,
    lists,
  };
}

/** What the file holds for a value: formula-like cells get a leading apostrophe. */
const cell = (v: string | number | null | undefined): string => {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return typeof v === 'string' && /^[=+\-@\t\r＝＋－＠]/.test(s) ? `'${s}` : s;
};

interface World {
  u: TestUser;
  workspaceId: string;
  appA: string;
  appB: string;
  listA: string;
  listB: string;
  contacts: SeededContact[];
}

async function world(count: number): Promise<World> {
  const u = await createOwner();
  const appA = (await createTestApp(u, 'A')).id;
  const appB = (await createTestApp(u, 'B')).id;
  const listA = await createList(u, appA, 'List A');
  const listB = await createList(u, appB, 'List, "B"');
  const workspaceId = await workspaceIdOf(u.id);
  const contacts = await seedContacts(
    workspaceId,
    Array.from({ length: count }, (_, i) =>
      spec(i, [...(i % 2 === 0 ? [listA] : []), ...(i % 3 === 0 ? [listB] : [])]),
    ),
  );
  return { u, workspaceId, appA, appB, listA, listB, contacts };
}

const temporal = async () => (await api()).services.temporal;
const finished = async (workflowId: string) => (await temporal()).workflow.getHandle(workflowId).result();

/** The download, its bytes as they came (fetch's text() would drop the byte order mark) and its records parsed back. */
async function download(
  u: TestUser,
  id: string,
  headers: Record<string, string> = {},
): Promise<{ res: Res; bytes: Buffer; records: Record<string, string>[] }> {
  const r = await fetch(`${(await api()).base}/api/contacts/export?id=${id}`, {
    headers: { authorization: `Bearer ${u.accessToken}`, ...headers },
  });
  const bytes = Buffer.from(await r.arrayBuffer());
  const text = bytes.toString('utf8');
  const res: Res = { status: r.status, headers: r.headers, text, body: r.status === 200 ? text : JSON.parse(text) };
  if (res.status !== 200) return { res, bytes, records: [] };
  return { res, bytes, records: parse(bytes, { bom: true, columns: true }) as Record<string, string>[] };
}

/** Every page of GET /api/contacts with these filters: the ids. */
async function listed(u: TestUser, query: string, headers: Record<string, string> = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let cursor: string | null = ''; cursor !== null;) {
    const r: Res = await call(
      'GET',
      `/api/contacts?limit=200&${query}${cursor ? `&cursor=${cursor}` : ''}`,
      auth(u, headers),
    );
    ids.push(...r.body.items.map((c: { id: string }) => c.id));
    cursor = r.body.next_cursor;
  }
  return ids;
}

/** Jobs that record the export without starting its workflow (the test starts it itself). */
async function unstartedJobs(): Promise<Jobs> {
  return withStart((await api()).services.jobs, 'contacts-export', async () => {});
}

async function actorOf(u: TestUser, actingAs?: string) {
  const e = await em();
  return resolveActor(e as never, { userId: u.id, kind: 'session' }, actingAs);
}

test('an export of a few hundred contacts: 202 queued, the workflow completes, the CSV parses back exactly, formulas neutralised', async (t) => {
  const w = await world(350);
  const r = await call('POST', '/api/contacts/export', { ...auth(w.u), body: {} });
  t.is(r.status, 202, r.text);
  t.like(r.body, {
    status: 'queued',
    row_count: 0,
    download_url: null,
    error: null,
    requested_by: w.u.id,
    workflow_id: `contacts-export:${r.body.id}`,
  });
  t.deepEqual(r.body.filters, { list_id: null, app_id: null, fit: null, pinned: null, q: null });
  t.like(await finished(r.body.workflow_id), { status: 'completed', rows: 350 });

  const listedExports = await call('GET', '/api/contacts/export', auth(w.u));
  t.is(listedExports.status, 200, listedExports.text);
  const e = listedExports.body.items[0];
  t.like(e, {
    id: r.body.id,
    status: 'completed',
    row_count: 350,
    download_url: `/api/contacts/export?id=${r.body.id}`,
    error: null,
  });
  t.truthy(e.started_at && e.finished_at);
  t.regex(e.file_name, /^contacts-\d{4}-\d{2}-\d{2}-[0-9a-f]{12}\.csv$/);

  const { res, bytes, records } = await download(w.u, r.body.id);
  t.is(res.status, 200, res.text);
  t.is(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.is(res.headers.get('content-disposition'), `attachment; filename="${e.file_name}"`);
  t.is(Number(res.headers.get('content-length')), e.byte_count);
  t.is(bytes.length, e.byte_count);
  t.true(res.text.startsWith('\ufeffid,name,first_name'), 'a byte order mark, then the header');
  t.true(res.text.includes('\r\n'), 'CRLF records');
  t.deepEqual(Object.keys(records[0]), [...EXPORT_COLUMNS]);
  t.is(records.length, 350);
  const byId = new Map(w.contacts.map((c) => [c.id, c]));
  t.deepEqual(
    records.map((x) => x.id),
    w.contacts.map((c) => c.id),
    'every contact once, in id order',
  );
  for (const x of records) {
    const c = byId.get(x.id)!;
    const lists = [...(c.lists ?? [])].map((l) => (l === w.listA ? 'List A' : 'List, "B"')).sort();
    t.deepEqual(x, {
      id: c.id,
      name: cell(c.full_name ?? `${c.first_name} ${c.last_name}`),
      first_name: cell(c.first_name),
      last_name: cell(c.last_name),
      email: cell(c.email),
      phone: cell(c.phone),
      title: cell(c.title),
      headline: '',
      company: cell(c.company),
      company_domain: '',
      country: 'DE',
      time_zone: cell(c.time_zone),
      profile_url: '',
      fit_score: cell(c.fit_score),
      fit_label: cell(c.fit_label),
      pinned: c.pinned ? 'true' : 'false',
      lists: lists.join('; '),
      created_at: x.created_at,
      updated_at: x.updated_at,
    });
    t.false(Number.isNaN(Date.parse(x.created_at)));
  }
  // Spot checks of the raw neutralisation.
  t.true(records.some((x) => x.title === `'=HYPERLINK("http://evil.example","click")`));
  t.true(records.some((x) => x.title === "'-2+3" && x.phone === ''));
  t.true(records.some((x) => x.phone.startsWith("'+33 1 23")));
  t.true(records.some((x) => x.title === 'Line one\nline two'));
  t.true(records.some((x) => x.title === 'Windows\r\nline'));
  t.true(records.some((x) => x.title === 'Müller – Straße 😀'));

  await replayLive(await temporal(), r.body.workflow_id);
  await replayFixture(await temporal(), 'contactsExport', r.body.workflow_id);
});

test('a small page size with continue-as-new writes the very same file, one chunk per page, and replays', async (t) => {
  const w = await world(230);
  const actor = await actorOf(w.u);
  const reference = await call('POST', '/api/contacts/export', { ...auth(w.u), body: { list_id: w.listA } });
  await finished(reference.body.workflow_id);

  const e = await createExport(await em(), actor, await unstartedJobs(), { listId: w.listA });
  const workflowId = contactExportWorkflowIds.export(e.id);
  const input: ContactsExportInput = { exportId: e.id, pageSize: 20, pagesPerStep: 2, stepsPerRun: 1 };
  const handle = await (
    await temporal()
  ).workflow.start('contactsExport', { taskQueue: process.env.TEMPORAL_TASK_QUEUE!, workflowId, args: [input] });
  t.like(await handle.result(), { status: 'completed', rows: 115 });
  // 115 rows in pages of 20: 6 pages of contacts + the header, two pages per step, one step per run: 3 runs.
  const chunks: { n: number }[] = await (
    await em()
  ).execute('select count(*)::int as n from export_file_chunks where export_id = ?', [e.id]);
  t.is(chunks[0].n, 7);
  let runs = 0;
  // Visibility is eventually consistent: wait until it lists the three runs, then check there are no more.
  await waitFor(
    'the three runs in visibility',
    async () => {
      runs = 0;
      for await (const _ of (await temporal()).workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs++;
      return runs >= 3;
    },
    60_000,
  );
  t.is(runs, 3);

  const a = await download(w.u, reference.body.id);
  const b = await download(w.u, e.id);
  t.is(a.records.length, 115);
  t.deepEqual(
    a.records.map((x) => x.id),
    w.contacts.filter((_, i) => i % 2 === 0).map((c) => c.id),
  );
  t.true(b.bytes.equals(a.bytes), 'the same bytes');
  await replayLive(await temporal(), workflowId);
  await replayFixture(await temporal(), 'contactsExport-continued', workflowId);
});

test('filters: each export holds exactly what GET /api/contacts lists with the same filters; contacts created after the request are left out', async (t) => {
  const w = await world(120);
  const cases: [Record<string, unknown>, string][] = [
    [{ list_id: w.listB }, `list_id=${w.listB}`],
    [{ app_id: w.appA, fit: 'good' }, `app_id=${w.appA}&fit=good`],
    [{ pinned: true }, 'pinned=true'],
    [{ fit: 'none', pinned: false }, 'fit=none&pinned=false'],
    [{ q: 'hello' }, 'q=hello'],
    [{ q: 'export3.example', list_id: w.listA }, `q=export3.example&list_id=${w.listA}`],
    [{ q: 'no such person' }, 'q=no%20such%20person'],
  ];
  const started: { id: string; workflow_id: string }[] = [];
  for (const [body] of cases) {
    const r = await call('POST', '/api/contacts/export', { ...auth(w.u), body });
    t.is(r.status, 202, r.text);
    started.push(r.body);
  }
  for (const [i, [body, query]] of cases.entries()) {
    await finished(started[i].workflow_id);
    const ids = await listed(w.u, query);
    const { records, res } = await download(w.u, started[i].id);
    t.is(res.status, 200, res.text);
    t.deepEqual(
      records.map((x) => x.id),
      ids,
      JSON.stringify(body),
    );
    const view = (await call('GET', '/api/contacts/export?limit=200', auth(w.u))).body.items.find(
      (x: { id: string }) => x.id === started[i].id,
    );
    t.is(view.row_count, ids.length);
    t.like(view.filters, body);
  }
  const empty = await download(w.u, started[cases.length - 1].id);
  t.is(empty.res.text, `\ufeff${EXPORT_COLUMNS.join(',')}\r\n`, 'no match: the header alone');

  // Recorded, then contacts arrive, then it runs: the newer contacts are not in it.
  const e = await createExport(await em(), await actorOf(w.u), await unstartedJobs(), {});
  await new Promise((r) => setTimeout(r, 5)); // clock separation: the contacts are created after the request's time, not a wait on the system
  await seedContacts(w.workspaceId, [spec(1000, [w.listA]), spec(1001, [])]);
  await (await api()).services.jobs.start('contacts-export', { exportId: e.id, workspaceId: w.workspaceId });
  t.like(await finished(contactExportWorkflowIds.export(e.id)), { status: 'completed', rows: 120 });
  // A repeated start of a finished export is a no-op.
  await (await api()).services.jobs.start('contacts-export', { exportId: e.id, workspaceId: w.workspaceId });
  t.is((await (await em()).findOneOrFail(ContactExport, e.id)).rowCount, 120);
});

test('a member limited to a product exports only its contacts and list names, sees only their own exports; owners see all', async (t) => {
  const w = await world(60);
  const member = await createUser();
  await addTeamMember(w.u.id, member.id, { appIds: [w.appA] });
  const peer = await createUser();
  await addTeamMember(w.u.id, peer.id, { appIds: [w.appA] });
  const as = { 'x-acting-as': w.u.id };
  const r = await call('POST', '/api/contacts/export', { ...auth(member, as), body: {} });
  t.is(r.status, 202, r.text);
  await finished(r.body.workflow_id);
  const { records } = await download(member, r.body.id, as);
  t.deepEqual(
    records.map((x) => x.id),
    await listed(member, '', as),
  );
  t.deepEqual(
    records.map((x) => x.id),
    w.contacts.filter((_, i) => i % 2 === 0).map((c) => c.id),
  );
  t.true(
    records.every((x) => x.lists === 'List A'),
    'list B is not named',
  );
  // Product B, as a filter: 403.
  for (const body of [{ app_id: w.appB }, { list_id: w.listB }]) {
    const denied = await call('POST', '/api/contacts/export', { ...auth(member, as), body });
    t.is(denied.status, 403, denied.text);
    t.is(denied.body.error.code, 'not_assigned');
  }
  // The owner sees the member's export; another limited member does not.
  t.true(
    (await call('GET', '/api/contacts/export', auth(w.u))).body.items.some((x: { id: string }) => x.id === r.body.id),
  );
  t.is((await download(w.u, r.body.id)).res.status, 200);
  t.deepEqual((await call('GET', '/api/contacts/export', auth(peer, as))).body.items, []);
  const hidden = await download(peer, r.body.id, as);
  t.is(hidden.res.status, 404);
  // The owner's own export is not the member's to see.
  const mine = await call('POST', '/api/contacts/export', { ...auth(w.u), body: {} });
  t.is((await download(member, mine.body.id, as)).res.status, 404);
});

test('409 export_not_ready while queued or running, 409 export_failed after a failure (the partial file is dropped); 400s; 404s across workspaces', async (t) => {
  const w = await world(5);
  const actor = await actorOf(w.u);
  const e = await createExport(await em(), actor, await unstartedJobs(), {});
  const waiting = await call('GET', `/api/contacts/export?id=${e.id}`, auth(w.u));
  t.is(waiting.status, 409, waiting.text);
  t.like(waiting.body.error, { code: 'export_not_ready', details: { status: 'queued' } });
  await (await em()).execute(`update contact_exports set status = 'running' where id = ?`, [e.id]);
  await (await em()).execute(`insert into export_file_chunks (export_id, seq, data) values (?, 0, 'partial')`, [e.id]);
  t.like((await call('GET', `/api/contacts/export?id=${e.id}`, auth(w.u))).body.error, {
    code: 'export_not_ready',
    details: { status: 'running' },
  });
  await failExport(await em(), e.id, 'export_failed', 'the database went away');
  const failed = await call('GET', `/api/contacts/export?id=${e.id}`, auth(w.u));
  t.is(failed.status, 409);
  t.is(failed.body.error.code, 'export_failed');
  const view = (await call('GET', '/api/contacts/export', auth(w.u))).body.items.find(
    (x: { id: string }) => x.id === e.id,
  );
  t.like(view, {
    status: 'failed',
    download_url: null,
    error: { code: 'export_failed', message: 'the database went away' },
  });
  t.is(
    (await (await em()).execute('select count(*)::int as n from export_file_chunks where export_id = ?', [e.id]))[0].n,
    0,
  );
  // The workflow of a failed export does nothing.
  await (await api()).services.jobs.start('contacts-export', { exportId: e.id, workspaceId: w.workspaceId });
  t.like(await finished(contactExportWorkflowIds.export(e.id)), { status: 'skipped', reason: 'failed' });

  for (const body of [
    { fit: 'great' },
    { pinned: 'yes' },
    { list_id: 'nope' },
    { q: 'x'.repeat(201) },
    { columns: ['id'] },
    [],
  ]) {
    const r = await call('POST', '/api/contacts/export', { ...auth(w.u), body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  for (const q of ['id=nope', 'limit=0', 'format=csv']) {
    const r = await call('GET', `/api/contacts/export?${q}`, auth(w.u));
    t.is(r.status, 400, q);
    t.is(r.body.error.code, 'invalid_query');
  }

  const other = await createOwner();
  const done = await call('POST', '/api/contacts/export', { ...auth(w.u), body: {} });
  await finished(done.body.workflow_id);
  for (const [method, path, body] of [
    ['GET', `/api/contacts/export?id=${done.body.id}`, undefined],
    ['GET', `/api/contacts/export?id=${NO_SUCH_ID}`, undefined],
    ['POST', '/api/contacts/export', { list_id: w.listA }],
    ['POST', '/api/contacts/export', { app_id: w.appA }],
  ] as const) {
    const r = await call(method, path, { ...auth(other), body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.deepEqual((await call('GET', '/api/contacts/export', auth(other))).body.items, []);
  for (const [method, path] of [
    ['GET', '/api/contacts/export'],
    ['POST', '/api/contacts/export'],
  ] as const) {
    t.is((await call(method, path, {})).status, 401);
  }
});

test('a failing export is recorded failed with its code, its partial file dropped (replay of the failed path)', async (t) => {
  const w = await world(30);
  const e = await createExport(await em(), await actorOf(w.u), await unstartedJobs(), {});
  // A scope the database refuses to read (not a uuid): a data error, not retried.
  await (await em()).execute(`update contact_exports set scope_app_ids = '["not-a-uuid"]' where id = ?`, [e.id]);
  await (await api()).services.jobs.start('contacts-export', { exportId: e.id, workspaceId: w.workspaceId });
  const workflowId = contactExportWorkflowIds.export(e.id);
  t.like(await finished(workflowId), { status: 'failed', code: 'invalid_data' });
  const row = await (await em()).findOneOrFail(ContactExport, e.id, { refresh: true });
  t.like(row, { status: 'failed', errorCode: 'invalid_data' });
  t.truthy(row.finishedAt);
  t.is(
    (await (await em()).execute('select count(*)::int as n from export_file_chunks where export_id = ?', [e.id]))[0].n,
    0,
    'the header written at the start is gone',
  );
  await replayLive(await temporal(), workflowId);
  await replayFixture(await temporal(), 'contactsExport-failed', workflowId);
});

test('GET /api/contacts/export pages newest first', async (t) => {
  const w = await world(1);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++)
    ids.push((await createExport(await em(), await actorOf(w.u), await unstartedJobs(), {})).id);
  const seen: string[] = [];
  for (let cursor: string | null = ''; cursor !== null;) {
    const r: Res = await call('GET', `/api/contacts/export?limit=2${cursor ? `&cursor=${cursor}` : ''}`, auth(w.u));
    t.true(r.body.items.length <= 2);
    seen.push(...r.body.items.map((x: { id: string }) => x.id));
    cursor = r.body.next_cursor;
  }
  t.deepEqual(seen, [...ids].reverse());
});

test('Operator tools: export_contacts starts the same workflow (a change); get_export reads it; another workspace’s is not found', async (t) => {
  const w = await world(40);
  const { services } = await api();
  const e = services.orm.em.fork();
  const ctx = { em: e, jobs: services.jobs, config: services.config, providers: services, actor: await actorOf(w.u) };
  const exportTool = findTool('export_contacts')!;
  const getTool = findTool('get_export')!;
  t.is(exportTool.risk, 'change');
  t.is(getTool.risk, 'read');
  const started = (await runTool(exportTool, ctx, { list_id: w.listB, fit: 'good' })) as {
    id: string;
    status: string;
    workflow_id: string;
  };
  t.like(started, { status: 'queued', workflow_id: `contacts-export:${started.id}` });
  await finished(started.workflow_id);
  const got = (await runTool(getTool, { ...ctx, em: services.orm.em.fork() }, { export_id: started.id })) as {
    status: string;
    row_count: number;
    download_url: string;
  };
  t.like(got, {
    status: 'completed',
    row_count: (await listed(w.u, `list_id=${w.listB}&fit=good`)).length,
    download_url: `/api/contacts/export?id=${started.id}`,
  });
  const other = await createOwner();
  const otherCtx = { ...ctx, actor: await actorOf(other) };
  t.like(await t.throwsAsync(runTool(getTool, otherCtx, { export_id: started.id })), { status: 404 });
  t.like(await t.throwsAsync(runTool(exportTool, otherCtx, { list_id: w.listA })), { status: 404 });
});
