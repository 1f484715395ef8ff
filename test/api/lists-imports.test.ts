// CSV import routes (docs/imports.md): the preview of real-world files (BOM, CRLF, quoted newlines,
// semicolons, Windows-1252), the one-shot import, every documented 4xx code of the four routes, the
// 50 MiB limit enforced while streaming (nothing stored), and cross-workspace 404s on every id.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import { api, call, closeApi, createTestApp, createUser, type Res, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { addTeamMember, failInserts } from '../helpers/db.js';
import {
  commit,
  draftPath,
  importPath,
  peopleCsv,
  postCsv,
  preview,
  previewPath,
  waitImport,
} from '../helpers/imports.js';
test.after.always(closeApi);

const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });
const MiB = 1024 * 1024;

function expectError(t: any, r: Res, status: number, code: string, what = '') {
  t.is(r.status, status, `${what}: ${r.text}`);
  t.is(r.body?.error?.code, code, `${what}: ${r.text}`);
}

async function setup(owner?: TestUser) {
  const u = owner ?? (await createOwner());
  const app = await createTestApp(u);
  const list = await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body: { name: 'Imported' } });
  return { u, appId: app.id, listId: list.body.id as string, workspaceId: await workspaceIdOf(u.id) };
}

/** Imports of the workspace still `uploading`, and stored file chunks of its imports: an upload that failed leaves neither. */
async function leftovers(workspaceId: string) {
  const [r]: { uploading: number; chunks: number }[] = await (
    await em()
  ).execute(
    `select (select count(*)::int from list_imports where workspace_id = ? and status = 'uploading') as uploading,
            (select count(*)::int from import_file_chunks c join list_imports i on i.id = c.list_import_id where i.workspace_id = ? and i.status = 'uploading') as chunks`,
    [workspaceId, workspaceId],
  );
  return r;
}

test('a UTF-8 file with a BOM, CRLF line ends and quoted newlines: detected, previewed, checked', async (t) => {
  const s = await setup();
  const csv =
    '\ufeffE-mail,Prénom,Nom,Entreprise,Notes\r\nzoe@x.example,Zoë,Ålund,"Acme, Inc.","first line\r\nsecond ""quoted"" line"\r\n\r\nbad-email,Bob,Ray,Globex,\r\n,No,Id,,\r\nlin@x.example,Lin,Wu,Initech,ok';
  const r = await preview(s.u, s.appId, csv, { filename: 'contacts FR.csv' });
  t.is(r.status, 201, r.text);
  t.like(r.body, {
    status: 'draft',
    filename: 'contacts FR.csv',
    size_bytes: Buffer.byteLength(csv),
    format: { encoding: 'utf-8', bom: true, delimiter: ',', has_header: true },
    suggested_mapping: { email: 0, first_name: 1, last_name: 2, company: 3 },
    mapping: null,
    list_id: null,
    workflow_id: null,
    progress: { rows_read: 0, bytes_read: 0, percent: 0 },
    error: null,
  });
  t.deepEqual(
    r.body.columns.map((c: { header: string; suggested_field: string | null }) => [c.header, c.suggested_field]),
    [
      ['E-mail', 'email'],
      ['Prénom', 'first_name'],
      ['Nom', 'last_name'],
      ['Entreprise', 'company'],
      ['Notes', null],
    ],
  );
  t.deepEqual(r.body.sample.rows[0], [
    'zoe@x.example',
    'Zoë',
    'Ålund',
    'Acme, Inc.',
    'first line\r\nsecond "quoted" line',
  ]);
  // Rows as a spreadsheet numbers them: header 1, Zoë 2, the blank line 3, then 4, 5, 6.
  t.like(r.body.sample, { rows_checked: 4, valid: 2, invalid: 2, complete: true, existing_contacts: 0 });
  t.deepEqual(
    r.body.sample.problems.map((p: { row: number; reasons: { code: string }[] }) => [
      p.row,
      p.reasons.map((x) => x.code),
    ]),
    [
      [4, ['invalid_email']],
      [5, ['missing_identifier']],
    ],
  );
  t.regex(r.body.sha256, /^[0-9a-f]{64}$/);
});

test('a semicolon file in Windows-1252 (é, €): decoded, imported with its accents and euro signs', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  // ¤ stands for €: byte 80 in Windows-1252, which latin1 cannot write.
  const text = `Email;Prénom;Société;Pays\r\nrene-${tag}@x.example;René;Café ¤uro;France\r\nchloe-${tag}@x.example;Chloé;Crème & Co;Belgique\r\n`;
  const bytes = Buffer.from(text, 'latin1');
  bytes[bytes.indexOf(0xa4)] = 0x80;
  const p = await preview(s.u, s.appId, bytes);
  t.is(p.status, 201, p.text);
  t.like(p.body.format, { encoding: 'windows-1252', bom: false, delimiter: ';', has_header: true });
  t.deepEqual(
    p.body.columns.map((c: { header: string }) => c.header),
    ['Email', 'Prénom', 'Société', 'Pays'],
  );
  t.deepEqual(p.body.suggested_mapping, { email: 0, first_name: 1, company: 2, country: 3 });
  t.deepEqual(p.body.sample.rows[0], [`rene-${tag}@x.example`, 'René', 'Café €uro', 'France']);
  const c = await commit(s.u, s.appId, p.body.id, { list_id: s.listId });
  t.is(c.status, 202, c.text);
  const done = await waitImport(s.u, s.appId, p.body.id);
  t.like(done.progress, { rows_read: 2, created: 2, leads_added: 2 });
  const leads = await call('GET', `/api/lists/${s.listId}/leads`, auth(s.u));
  t.deepEqual(leads.body.items.map((l: { first_name: string; company: string }) => [l.first_name, l.company]).sort(), [
    ['Chloé', 'Crème & Co'],
    ['René', 'Café €uro'],
  ]);
});

test('form fields override the detection: delimiter (a word or the character), encoding, has_header', async (t) => {
  const s = await setup();
  const csv = 'ann@x.example|Ann\nbob@x.example|Bob\n';
  const detected = await preview(s.u, s.appId, csv);
  t.like(detected.body.format, { delimiter: '|', has_header: false });
  t.deepEqual(detected.body.suggested_mapping, { email: 0 });
  t.is(detected.body.sample.rows_checked, 2);
  const forced = await preview(s.u, s.appId, csv, {
    fields: { delimiter: 'comma', encoding: 'windows-1252', has_header: 'true' },
  });
  t.is(forced.status, 201, forced.text);
  t.like(forced.body.format, { delimiter: ',', encoding: 'windows-1252', has_header: true });
  t.deepEqual(
    forced.body.columns.map((c: { header: string }) => c.header),
    ['ann@x.example|Ann'],
  );
  const tab = await preview(s.u, s.appId, 'email\tname\nann@x.example\tAnn\n', { fields: { delimiter: '\t' } });
  t.like(tab.body.format, { delimiter: '\t', has_header: true });
});

test('the one-shot import: upload, preview and commit in one request (202), into a new list; the mapping given is used', async (t) => {
  const s = await setup();
  const tag = randomUUID().slice(0, 8);
  const csv = `name,contact,company\nAnn,ann-${tag}@x.example,Acme\nBob,bob-${tag}@x.example,Globex\n`;
  const r = await postCsv(s.u, importPath(s.appId), csv, {
    fields: {
      list_name: 'Trade show',
      dedupe_mode: 'overwrite',
      mapping: JSON.stringify({ email: 1, full_name: 0, company: 2 }),
    },
  });
  t.is(r.status, 202, r.text);
  t.true(['queued', 'running', 'completed'].includes(r.body.status));
  t.like(r.body, {
    dedupe_mode: 'overwrite',
    list_name: 'Trade show',
    mapping: { email: 1, full_name: 0, company: 2 },
    workflow_id: `list-import:${r.body.id}`,
  });
  const done = await waitImport(s.u, s.appId, r.body.id);
  t.like(done.progress, { rows_read: 2, created: 2, leads_added: 2 });
  const list = await call('GET', `/api/lists/${done.list_id}`, auth(s.u));
  t.like(list.body, { name: 'Trade show', app_id: s.appId, lead_count: 2 });
  const leads = await call('GET', `/api/lists/${done.list_id}/leads`, auth(s.u));
  t.deepEqual(leads.body.items.map((l: { name: string }) => l.name).sort(), ['Ann', 'Bob']);
});

test('preview 400s: invalid_upload, missing_file, invalid_file (empty, binary, UTF-16), invalid_csv, invalid_body; nothing stays stored', async (t) => {
  const s = await setup();
  const { base } = await api();
  const json = await call('POST', previewPath(s.appId), { ...auth(s.u), body: { file: 'a,b' } });
  expectError(t, json, 400, 'invalid_upload', 'JSON body');
  expectError(
    t,
    await preview(s.u, s.appId, '', { noFile: true, fields: { delimiter: ',' } }),
    400,
    'missing_file',
    'no file part',
  );
  // A `file` field without a filename is a text field, not a file.
  const asText = new FormData();
  asText.append('file', 'email\na@x.example\n');
  const textRes = await fetch(base + previewPath(s.appId), {
    method: 'POST',
    body: asText,
    headers: { authorization: `Bearer ${s.u.accessToken}` },
  });
  t.is(textRes.status, 400);
  t.like(await textRes.json(), { error: { code: 'missing_file' } });
  expectError(t, await preview(s.u, s.appId, ''), 400, 'invalid_file', 'empty');
  expectError(
    t,
    await preview(s.u, s.appId, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x1a])),
    400,
    'invalid_file',
    'binary',
  );
  expectError(
    t,
    await preview(s.u, s.appId, Buffer.from('\ufeffemail\na@x.example\n', 'utf16le')),
    400,
    'invalid_file',
    'UTF-16',
  );
  expectError(t, await preview(s.u, s.appId, '\n\n \n'), 400, 'invalid_file', 'only blank lines');
  const unclosed = await preview(s.u, s.appId, 'email,note\na@x.example,"never closed\nb@x.example,x\n');
  expectError(t, unclosed, 400, 'invalid_csv', 'unclosed quote');
  t.deepEqual(unclosed.body.error.details, { row: 2 });
  expectError(
    t,
    await preview(s.u, s.appId, 'email\na@x.example\n', { fields: { delimiter: ':' } }),
    400,
    'invalid_body',
    'delimiter',
  );
  expectError(
    t,
    await preview(s.u, s.appId, 'email\na@x.example\n', { fields: { encoding: 'latin-9' } }),
    400,
    'invalid_body',
    'encoding',
  );
  expectError(
    t,
    await preview(s.u, s.appId, 'email\na@x.example\n', { fields: { has_header: 'yes' } }),
    400,
    'invalid_body',
    'has_header',
  );
  expectError(
    t,
    await preview(s.u, s.appId, 'email\na@x.example\n', { fields: { list_id: s.listId } }),
    400,
    'invalid_upload',
    'a commit field on the preview',
  );
  const wide = `${Array.from({ length: 201 }, (_, i) => `c${i}`).join(',')}\n${Array.from({ length: 201 }, () => 'x').join(',')}\n`;
  expectError(t, await preview(s.u, s.appId, wide), 400, 'invalid_file', 'more than 200 columns');
  expectError(t, await call('POST', previewPath('not-a-uuid'), auth(s.u)), 400, 'invalid_id', 'app id');
  expectError(
    t,
    await preview(s.u, s.appId, 'email\n', { headers: { 'x-acting-as': 'nope' } }),
    400,
    'invalid_user',
    'X-Acting-As',
  );
  t.deepEqual(await leftovers(s.workspaceId), { uploading: 0, chunks: 0 });
});

test('500 upload_failed when the file cannot be stored (the chunk store fails): on the preview and the one-shot import; nothing stays stored', async (t) => {
  const s = await setup();
  // A real database failure of every chunk written for this product's imports.
  const failing = await failInserts(
    'import_file_chunks',
    `exists (select 1 from list_imports i where i.id = new.list_import_id and i.app_id = '${s.appId}')`,
  );
  t.teardown(() => failing.remove());
  const csv = 'email,name\nann@x.example,Ann\n';
  expectError(t, await preview(s.u, s.appId, csv), 500, 'upload_failed', 'preview');
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId } }),
    500,
    'upload_failed',
    'one-shot import',
  );
  const [n]: { n: number }[] = await (
    await em()
  ).execute(`select count(*)::int as n from list_imports where app_id = ?`, [s.appId]);
  t.is(n.n, 0, 'the failed uploads are deleted');
  t.deepEqual(await leftovers(s.workspaceId), { uploading: 0, chunks: 0 });
  t.is((await call('GET', `/api/lists/${s.listId}`, auth(s.u))).body.lead_count, 0);
  await failing.remove();
  const ok = await preview(s.u, s.appId, csv);
  t.is(ok.status, 201, ok.text);
});

// The two 50 MiB uploads run alone (before the other tests of the file), not beside them.
test.serial(
  '413: a file over 50 MiB is refused while it streams (file_too_large), a form field too long (invalid_upload); nothing stays stored',
  async (t) => {
    const s = await setup();
    const big = Buffer.alloc(50 * MiB + 1, 'a@x.example\n');
    const r = await preview(s.u, s.appId, big);
    expectError(t, r, 413, 'file_too_large', 'one byte over');
    t.deepEqual(await leftovers(s.workspaceId), { uploading: 0, chunks: 0 });
    expectError(
      t,
      await postCsv(s.u, importPath(s.appId), big, { fields: { list_id: s.listId } }),
      413,
      'file_too_large',
      'one-shot, one byte over',
    );
    t.deepEqual(await leftovers(s.workspaceId), { uploading: 0, chunks: 0 });
    expectError(
      t,
      await preview(s.u, s.appId, 'email\na@x.example\n', { fields: { delimiter: ','.repeat(5000) } }),
      413,
      'invalid_upload',
      'field value',
    );
    t.deepEqual(await leftovers(s.workspaceId), { uploading: 0, chunks: 0 });
  },
);

test.serial('exactly 50 MiB is accepted: stored in 1 MiB chunks, previewed from its head', async (t) => {
  const s = await setup();
  const line = 'someone@x.example,Someone\n';
  const head = 'email,name\n';
  const body = Buffer.alloc(50 * MiB - head.length, line);
  const r = await preview(s.u, s.appId, Buffer.concat([Buffer.from(head), body]));
  t.is(r.status, 201, r.text);
  t.is(r.body.size_bytes, 50 * MiB);
  t.like(r.body.sample, { rows_checked: 1000, complete: false });
  const [c]: { n: number; max: number }[] = await (
    await em()
  ).execute(
    'select count(*)::int as n, max(length(data))::int as max from import_file_chunks where list_import_id = ?',
    [r.body.id],
  );
  t.deepEqual(c, { n: 50, max: MiB });
});

test('the one-shot import’s codes: invalid_body, invalid_list_id, list_name_taken, invalid_mapping', async (t) => {
  const s = await setup();
  const other = await createTestApp(s.u, 'Other product');
  const otherList = await call('POST', `/api/apps/${other.id}/lists`, { ...auth(s.u), body: { name: 'Elsewhere' } });
  const csv = 'email,name\na@x.example,Ann\n';
  expectError(t, await postCsv(s.u, importPath(s.appId), csv), 400, 'invalid_body', 'no target list');
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId, list_name: 'Both' } }),
    400,
    'invalid_body',
    'both targets',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId, mapping: '{email: 0' } }),
    400,
    'invalid_body',
    'mapping not JSON',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId, mapping: '{"phone_number": 1}' } }),
    400,
    'invalid_body',
    'unknown field',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId, dedupe_mode: 'merge' } }),
    400,
    'invalid_body',
    'dedupe mode',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: 'nope' } }),
    400,
    'invalid_list_id',
    'malformed list id',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: otherList.body.id } }),
    400,
    'invalid_list_id',
    'another product’s list',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_name: 'imported' } }),
    409,
    'list_name_taken',
    'taken name',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId, mapping: '{"first_name": 1}' } }),
    422,
    'invalid_mapping',
    'no identifier',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { fields: { list_id: s.listId, mapping: '{"email": 7}' } }),
    422,
    'invalid_mapping',
    'no such column',
  );
  // Each refusal discarded its upload: no draft (whose id nobody was told) was left behind.
  t.deepEqual(await leftovers(s.workspaceId), { uploading: 0, chunks: 0 });
  const [{ n }]: { n: number }[] = await (
    await em()
  ).execute('select count(*)::int as n from list_imports where workspace_id = ?', [s.workspaceId]);
  t.is(n, 0);
});

test('commit codes: invalid_body, invalid_list_id, list_name_taken, invalid_mapping, already_committed, invalid_transition; a repeat is idempotent', async (t) => {
  const s = await setup();
  const other = await createTestApp(s.u, 'Other product');
  const otherList = await call('POST', `/api/apps/${other.id}/lists`, { ...auth(s.u), body: { name: 'Elsewhere' } });
  const p = await preview(s.u, s.appId, peopleCsv(3, randomUUID().slice(0, 8)));
  const id = p.body.id;
  expectError(t, await commit(s.u, s.appId, id, {}), 400, 'invalid_body', 'no target');
  expectError(
    t,
    await commit(s.u, s.appId, id, { list_id: s.listId, list_name: 'X' }),
    400,
    'invalid_body',
    'both targets',
  );
  expectError(
    t,
    await commit(s.u, s.appId, id, { list_id: s.listId, dedupe_mode: 'merge' }),
    400,
    'invalid_body',
    'dedupe mode',
  );
  expectError(
    t,
    await commit(s.u, s.appId, id, { list_id: s.listId, mapping: { email: -1 } }),
    400,
    'invalid_body',
    'negative column',
  );
  expectError(t, await commit(s.u, s.appId, id, { list_id: 'nope' }), 400, 'invalid_list_id', 'malformed list id');
  expectError(
    t,
    await commit(s.u, s.appId, id, { list_id: otherList.body.id }),
    400,
    'invalid_list_id',
    'another product’s list',
  );
  expectError(t, await commit(s.u, s.appId, id, { list_id: randomUUID() }), 400, 'invalid_list_id', 'unknown list');
  expectError(t, await commit(s.u, s.appId, id, { list_name: 'IMPORTED' }), 409, 'list_name_taken', 'taken name');
  expectError(
    t,
    await commit(s.u, s.appId, id, { list_id: s.listId, mapping: { title: 4 } }),
    422,
    'invalid_mapping',
    'no identifier',
  );
  expectError(
    t,
    await commit(s.u, s.appId, id, { list_id: s.listId, mapping: { email: 0, title: 0 } }),
    422,
    'invalid_mapping',
    'one column twice',
  );
  expectError(
    t,
    await commit(s.u, s.appId, id, { list_id: s.listId, mapping: { email: 9 } }),
    422,
    'invalid_mapping',
    'past the last column',
  );
  // The refusals changed nothing: still a draft.
  t.is((await call('GET', draftPath(s.appId, id), auth(s.u))).body.status, 'draft');
  const first = await commit(s.u, s.appId, id, { list_id: s.listId });
  t.is(first.status, 202, first.text);
  const again = await commit(s.u, s.appId, id, { list_id: s.listId });
  t.true([200, 202].includes(again.status), again.text);
  t.is(again.body.id, id);
  t.is(again.body.committed_at, first.body.committed_at);
  expectError(
    t,
    await commit(s.u, s.appId, id, { list_id: s.listId, dedupe_mode: 'overwrite' }),
    409,
    'already_committed',
    'other choices',
  );
  const done = await waitImport(s.u, s.appId, id);
  t.is(done.status, 'completed');
  // After completion the same commit still answers the import (200), and starts nothing new.
  const late = await commit(s.u, s.appId, id, { list_id: s.listId });
  t.is(late.status, 200, late.text);
  t.like(late.body, { status: 'completed', progress: { created: 3 } });
  // A canceled draft cannot be committed.
  const p2 = await preview(s.u, s.appId, peopleCsv(1, randomUUID().slice(0, 8)));
  const { cancelImport } = await import('../../domain/lists/imports.js');
  const { pgImportFiles } = await import('../../domain/lists/import-files.js');
  const { resolveActor } = await import('../../domain/workspaces.js');
  const e = await em();
  await cancelImport(
    e as never,
    await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined),
    (await api()).services.jobs,
    pgImportFiles(e as never),
    p2.body.id,
  );
  expectError(
    t,
    await commit(s.u, s.appId, p2.body.id, { list_id: s.listId }),
    409,
    'invalid_transition',
    'canceled draft',
  );
});

test('GET draft: invalid_id, invalid_query; invalid rows page through by row number', async (t) => {
  const s = await setup();
  const rows = [
    'email,name',
    ...Array.from({ length: 7 }, (_, i) =>
      i % 2 ? `ok${i}-${randomUUID().slice(0, 6)}@x.example,Ok` : `broken-${i},Broken`,
    ),
  ];
  const r = await postCsv(s.u, importPath(s.appId), rows.join('\n'), { fields: { list_id: s.listId } });
  t.is(r.status, 202, r.text);
  const done = await waitImport(s.u, s.appId, r.body.id);
  t.like(done.progress, { rows_read: 7, created: 3, invalid: 4 });
  const page1 = await call('GET', `${draftPath(s.appId, r.body.id)}?invalid_limit=3`, auth(s.u));
  t.deepEqual(
    page1.body.invalid_rows.items.map((x: { row: number }) => x.row),
    [2, 4, 6],
  );
  t.deepEqual(page1.body.invalid_rows.items[0], {
    row: 2,
    reasons: [{ code: 'invalid_email', field: 'email', message: 'email is not an email address' }],
    values: ['broken-0', 'Broken'],
  });
  t.is(page1.body.invalid_rows.next_after, 6);
  const page2 = await call('GET', `${draftPath(s.appId, r.body.id)}?invalid_limit=3&invalid_after=6`, auth(s.u));
  t.deepEqual(
    page2.body.invalid_rows.items.map((x: { row: number }) => x.row),
    [8],
  );
  t.is(page2.body.invalid_rows.next_after, null);
  expectError(t, await call('GET', draftPath(s.appId, 'nope'), auth(s.u)), 400, 'invalid_id', 'import id');
  expectError(
    t,
    await call('GET', `${draftPath(s.appId, r.body.id)}?invalid_limit=0`, auth(s.u)),
    400,
    'invalid_query',
    'limit 0',
  );
  expectError(
    t,
    await call('GET', `${draftPath(s.appId, r.body.id)}?invalid_after=-1`, auth(s.u)),
    400,
    'invalid_query',
    'negative after',
  );
  expectError(
    t,
    await call('GET', `${draftPath(s.appId, r.body.id)}?page=2`, auth(s.u)),
    400,
    'invalid_query',
    'unknown parameter',
  );
});

test('cross-workspace: every id-taking route is 404 for another workspace’s product or import, and for an import under another product', async (t) => {
  const mine = await setup();
  const theirs = await setup();
  const p = await preview(mine.u, mine.appId, peopleCsv(2, randomUUID().slice(0, 8)));
  const csv = 'email\na@x.example\n';
  // Their product in the path.
  expectError(t, await preview(mine.u, theirs.appId, csv), 404, 'not_found', 'preview into their product');
  expectError(
    t,
    await postCsv(mine.u, importPath(theirs.appId), csv, { fields: { list_id: theirs.listId } }),
    404,
    'not_found',
    'import into their product',
  );
  // My import under their product, and under my product by them.
  expectError(
    t,
    await call('GET', draftPath(theirs.appId, p.body.id), auth(mine.u)),
    404,
    'not_found',
    'their product, my import',
  );
  expectError(
    t,
    await call('GET', draftPath(mine.appId, p.body.id), auth(theirs.u)),
    404,
    'not_found',
    'my draft, read by them',
  );
  expectError(
    t,
    await call('GET', draftPath(theirs.appId, p.body.id), auth(theirs.u)),
    404,
    'not_found',
    'my draft under their product',
  );
  expectError(
    t,
    await commit(theirs.u, theirs.appId, p.body.id, { list_id: theirs.listId }),
    404,
    'not_found',
    'commit my draft from their workspace',
  );
  expectError(
    t,
    await commit(theirs.u, mine.appId, p.body.id, { list_id: theirs.listId }),
    404,
    'not_found',
    'commit with my product id',
  );
  // Another product of the same workspace does not hold this import either.
  const second = await createTestApp(mine.u, 'Second');
  expectError(
    t,
    await call('GET', draftPath(second.id, p.body.id), auth(mine.u)),
    404,
    'not_found',
    'another product of mine',
  );
  expectError(
    t,
    await commit(mine.u, second.id, p.body.id, { list_name: 'X' }),
    404,
    'not_found',
    'commit under another product of mine',
  );
  // Unknown ids.
  expectError(
    t,
    await call('GET', draftPath(mine.appId, randomUUID()), auth(mine.u)),
    404,
    'not_found',
    'unknown import',
  );
  expectError(t, await preview(mine.u, randomUUID(), csv), 404, 'not_found', 'unknown product');
  t.is((await call('GET', draftPath(mine.appId, p.body.id), auth(mine.u))).body.status, 'draft');
});

test('401; 403 not_assigned (a member without the product) and demo_read_only (the Demo workspace)', async (t) => {
  const s = await setup();
  const p = await preview(s.u, s.appId, peopleCsv(1, randomUUID().slice(0, 8)));
  const csv = 'email\na@x.example\n';
  t.is((await call('GET', draftPath(s.appId, p.body.id))).status, 401);
  t.is((await call('POST', previewPath(s.appId))).status, 401);
  const other = await createTestApp(s.u, 'Other product');
  const member = await createUser();
  await addTeamMember(s.u.id, member.id, { appIds: [other.id] });
  const asOwner = { 'x-acting-as': s.u.id };
  expectError(t, await preview(member, s.appId, csv, { headers: asOwner }), 403, 'not_assigned', 'preview');
  expectError(
    t,
    await postCsv(member, importPath(s.appId), csv, { headers: asOwner, fields: { list_id: s.listId } }),
    403,
    'not_assigned',
    'import',
  );
  expectError(t, await call('GET', draftPath(s.appId, p.body.id), auth(member, asOwner)), 403, 'not_assigned', 'read');
  expectError(
    t,
    await call('POST', `${draftPath(s.appId, p.body.id)}/commit`, {
      ...auth(member, asOwner),
      body: { list_id: s.listId },
    }),
    403,
    'not_assigned',
    'commit',
  );
  const ok = await preview(member, other.id, csv, { headers: asOwner });
  t.is(ok.status, 201, ok.text);
  // The Demo workspace is read-only.
  const visitor = await createUser();
  t.is((await call('POST', '/api/me/workspaces/demo/join', auth(visitor))).status, 201);
  const demo = { 'x-acting-as': DEMO_USER_ID };
  const apps = await call('GET', '/api/apps', auth(visitor, demo));
  const demoApp = (apps.body.items ?? apps.body)[0].id;
  expectError(t, await preview(visitor, demoApp, csv, { headers: demo }), 403, 'demo_read_only', 'Demo preview');
  expectError(
    t,
    await postCsv(visitor, importPath(demoApp), csv, { headers: demo, fields: { list_name: 'x' } }),
    403,
    'demo_read_only',
    'Demo import',
  );
  expectError(
    t,
    await call('POST', `${draftPath(demoApp, randomUUID())}/commit`, {
      ...auth(visitor, demo),
      body: { list_name: 'x' },
    }),
    403,
    'demo_read_only',
    'Demo commit',
  );
});

test('the codes every route shares: invalid_id, invalid_user, 401; the one-shot route’s upload codes', async (t) => {
  const s = await setup();
  const p = await preview(s.u, s.appId, peopleCsv(2, randomUUID().slice(0, 8)));
  const badUser = { 'x-acting-as': 'not-a-user' };
  const csv = 'email\na@x.example\n';
  expectError(t, await call('POST', importPath('nope'), auth(s.u)), 400, 'invalid_id', 'import: app id');
  expectError(t, await call('GET', draftPath('nope', p.body.id), auth(s.u)), 400, 'invalid_id', 'get: app id');
  expectError(
    t,
    await call('POST', `${draftPath(s.appId, 'nope')}/commit`, { ...auth(s.u), body: { list_id: s.listId } }),
    400,
    'invalid_id',
    'commit: import id',
  );
  expectError(
    t,
    await postCsv(s.u, importPath(s.appId), csv, { headers: badUser, fields: { list_id: s.listId } }),
    400,
    'invalid_user',
    'import',
  );
  expectError(t, await call('GET', draftPath(s.appId, p.body.id), auth(s.u, badUser)), 400, 'invalid_user', 'get');
  expectError(
    t,
    await call('POST', `${draftPath(s.appId, p.body.id)}/commit`, {
      ...auth(s.u, badUser),
      body: { list_id: s.listId },
    }),
    400,
    'invalid_user',
    'commit',
  );
  t.is((await call('POST', importPath(s.appId))).status, 401);
  t.is((await call('POST', `${draftPath(s.appId, p.body.id)}/commit`, { body: { list_id: s.listId } })).status, 401);
  const one = (data: string | Buffer, opts: Parameters<typeof postCsv>[3] = {}) =>
    postCsv(s.u, importPath(s.appId), data, { ...opts, fields: { list_id: s.listId, ...opts.fields } });
  expectError(
    t,
    await call('POST', importPath(s.appId), { ...auth(s.u), body: { list_id: s.listId } }),
    400,
    'invalid_upload',
    'JSON body',
  );
  expectError(t, await one('', { noFile: true }), 400, 'missing_file', 'no file');
  expectError(t, await one(''), 400, 'invalid_file', 'empty file');
  expectError(t, await one('email\n"open\n'), 400, 'invalid_csv', 'unclosed quote');
  expectError(t, await one(csv, { fields: { delimiter: '#' } }), 400, 'invalid_body', 'delimiter');
  expectError(t, await one(csv, { fields: { mapping: 'x'.repeat(5000) } }), 413, 'invalid_upload', 'field over 4 KiB');
  t.deepEqual(await leftovers(s.workspaceId), { uploading: 0, chunks: 0 });
});
