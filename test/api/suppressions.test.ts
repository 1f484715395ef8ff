// The suppression list and the email footer (docs/email.md "Suppression"), through real HTTP and
// PostgreSQL: add (201, 200 for one already there), list (filters, pages), remove (owners and admins),
// CSV import (valid, invalid, repeated rows; its limits), the footer; who may do what (members,
// another workspace, the Demo workspace); and what the list does: enrollment skips a suppressed lead
// (`suppressed`), and the claim stops a planned send to an address suppressed since it was planned.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { claimSend } from '../../domain/enrollments/executor.js';
import { DEMO_USER_ID } from '../../domain/demo/demo.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, closeApi, createUser, uniqueEmail, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { postCsv } from '../helpers/imports.js';
import { addMemberViaInvite } from '../helpers/team.js';
test.after.always(closeApi);

const MiB = 1024 * 1024;
const as = (u: TestUser, body?: unknown, actingAs?: string) => ({
  token: u.accessToken,
  headers: (actingAs ? { 'x-acting-as': actingAs } : {}) as Record<string, string>,
  ...(body === undefined ? {} : { body }),
});
const code = (r: { status: number; body: any }) => `${r.status} ${r.body?.error?.code ?? ''}`.trim();
const count = async (workspaceId: string) =>
  Number(
    (
      await (
        await em()
      ).execute<{ n: number }[]>(`select count(*)::int as n from suppressions where workspace_id = ?`, [workspaceId])
    )[0].n,
  );
const importCsv = (u: TestUser, csv: string | Buffer, opts: Parameters<typeof postCsv>[3] = {}) =>
  postCsv(u, '/api/suppressions/import', csv, opts);
/** A fresh domain, so that no two tests (nor two runs) share entries. */
const domain = () => `d${randomUUID().slice(0, 8)}.example`;

async function joinedDemo(): Promise<TestUser> {
  const u = await createUser();
  const r = await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken });
  if (r.status !== 201) throw new Error(`join failed: ${r.status} ${r.text}`);
  return u;
}

test('POST adds an address or a domain, normalised: 201 when new, 200 with the entry already there (its first reason kept)', async (t) => {
  const u = await createOwner();
  const d = domain();
  const a = await call('POST', '/api/suppressions', as(u, { value: `Ada.Lovelace@${d.toUpperCase()}` }));
  t.is(a.status, 201, a.text);
  t.like(a.body, { kind: 'address', value: `ada.lovelace@${d}`, reason: 'manual', source: 'api', created_by: u.id });
  const again = await call('POST', '/api/suppressions', as(u, { value: `ada.lovelace@${d}`, reason: 'complaint' }));
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body, a.body, 'the same entry, reason unchanged');

  const dom = await call('POST', '/api/suppressions', as(u, { value: `@${d}`, reason: 'complaint' }));
  t.is(dom.status, 201, dom.text);
  t.like(dom.body, { kind: 'domain', value: d, reason: 'complaint' });
  const bare = await call('POST', '/api/suppressions', as(u, { value: d }));
  t.is(bare.status, 200, 'example.com and @example.com are one entry');
  t.is(bare.body.id, dom.body.id);
  t.is(await count(await workspaceIdOf(u.id)), 2);
});

test('POST validation: 400 invalid_suppression for a value that is neither, invalid_body for other mistakes; nothing is added', async (t) => {
  const u = await createOwner();
  for (const value of [
    'not an address',
    'ada@',
    '@',
    'localhost',
    'a@b@c.example',
    'x@y.example.',
    '1.2.3.4',
    `${'a'.repeat(65)}@x.example`,
  ]) {
    t.is(code(await call('POST', '/api/suppressions', as(u, { value }))), '400 invalid_suppression', value);
  }
  t.is(code(await call('POST', '/api/suppressions', as(u, {}))), '400 invalid_suppression', 'value is required');
  t.is(
    code(await call('POST', '/api/suppressions', as(u, { value: 'a@x.example', reason: 'import' }))),
    '400 invalid_body',
    'import is not a manual reason',
  );
  t.is(code(await call('POST', '/api/suppressions', as(u, { value: 'a@x.example', extra: 1 }))), '400 invalid_body');
  t.is(
    code(await call('POST', '/api/suppressions', { token: u.accessToken, rawBody: '{"value":', headers: {} })),
    '400 invalid_body',
  );
  t.is(await count(await workspaceIdOf(u.id)), 0);
});

test('GET lists newest first in pages, filtered by reason, kind and a prefix; only the caller’s workspace', async (t) => {
  const u = await createOwner();
  const other = await createOwner();
  const d = domain();
  const values = [`a1@${d}`, `a2@${d}`, `b1@${d}`, `@${d}`, `@z${d}`];
  const ids: string[] = [];
  for (const [i, value] of values.entries()) {
    const r = await call('POST', '/api/suppressions', as(u, { value, reason: i === 1 ? 'complaint' : 'manual' }));
    t.is(r.status, 201, r.text);
    ids.push(r.body.id);
  }
  await call('POST', '/api/suppressions', as(other, { value: `a9@${d}` }));

  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const r: { status: number; body: any; text: string } = await call(
      'GET',
      `/api/suppressions?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      as(u),
    );
    t.is(r.status, 200, r.text);
    t.true(r.body.items.length <= 2);
    seen.push(...r.body.items.map((x: { id: string }) => x.id));
    cursor = r.body.next_cursor;
  } while (cursor);
  t.deepEqual(seen, [...ids].reverse(), 'every entry once, newest first; none of the other workspace');

  const list = async (q: string) =>
    (await call('GET', `/api/suppressions?${q}`, as(u))).body.items.map((x: { value: string }) => x.value);
  t.deepEqual(await list('reason=complaint'), [`a2@${d}`]);
  t.deepEqual(await list('kind=domain'), [`z${d}`, d]);
  t.deepEqual(await list(`q=A1%40${d}`), [`a1@${d}`], 'a prefix, case-insensitive');
  t.deepEqual(await list('q=a'), [`a2@${d}`, `a1@${d}`]);
  t.deepEqual(await list('q=a_'), [], 'LIKE wildcards are literal');
  t.deepEqual(await list(`kind=address&q=b`), [`b1@${d}`]);

  for (const q of ['limit=0', 'reason=spam', 'kind=ip', 'cursor=nope', `q=${'x'.repeat(321)}`, 'sort=value']) {
    t.is(code(await call('GET', `/api/suppressions?${q}`, as(u))), '400 invalid_query', q);
  }
});

test('DELETE: owners and admins remove an entry (204, then 404); a member is refused (403 not_assigned); another workspace’s id is 404', async (t) => {
  const owner = await createOwner();
  const { user: member } = await addMemberViaInvite(owner, { role: 'member' });
  const { user: admin } = await addMemberViaInvite(owner, { role: 'admin' });
  const stranger = await createOwner();
  const add = async (u: TestUser, actingAs?: string) =>
    (await call('POST', '/api/suppressions', as(u, { value: uniqueEmail('del') }, actingAs))).body.id as string;

  // Any member may read and add.
  const byMember = await call('POST', '/api/suppressions', as(member, { value: uniqueEmail('m') }, owner.id));
  t.is(byMember.status, 201, byMember.text);
  t.is(byMember.body.created_by, member.id);
  t.is((await call('GET', '/api/suppressions', as(member, undefined, owner.id))).status, 200);

  const id = await add(owner);
  t.is(code(await call('DELETE', `/api/suppressions/${id}`, as(member, undefined, owner.id))), '403 not_assigned');
  t.is(code(await call('DELETE', `/api/suppressions/${id}`, as(stranger))), '404 not_found');
  t.is(code(await call('DELETE', '/api/suppressions/not-a-uuid', as(owner))), '400 invalid_id');
  const ws = await workspaceIdOf(owner.id);
  t.is(await count(ws), 2, 'refused deletions changed nothing');

  t.is((await call('DELETE', `/api/suppressions/${id}`, as(admin, undefined, owner.id))).status, 204);
  t.is(code(await call('DELETE', `/api/suppressions/${id}`, as(owner))), '404 not_found');
  t.is((await call('DELETE', `/api/suppressions/${byMember.body.id}`, as(owner))).status, 204);
  t.is(await count(ws), 0);
  const strangers = await add(stranger);
  t.is(code(await call('DELETE', `/api/suppressions/${strangers}`, as(owner))), '404 not_found');
  t.is(await count(await workspaceIdOf(stranger.id)), 1);
});

test('every route: 401 without a token, 400 invalid_user for a malformed X-Acting-As', async (t) => {
  const u = await createOwner();
  const routes: [string, string, unknown?][] = [
    ['GET', '/api/suppressions'],
    ['POST', '/api/suppressions', { value: 'a@x.example' }],
    ['DELETE', `/api/suppressions/${uuidv7()}`],
    ['POST', '/api/suppressions/import'],
    ['GET', '/api/email-settings'],
    ['PATCH', '/api/email-settings', { footer: null }],
  ];
  for (const [method, path, body] of routes) {
    t.is(code(await call(method, path, body === undefined ? {} : { body })), '401 unauthorized', `${method} ${path}`);
    t.is(
      code(await call(method, path, { ...as(u, body), headers: { 'x-acting-as': 'nope' } })),
      '400 invalid_user',
      `${method} ${path}`,
    );
  }
});

test('the Demo workspace: reads answer, every write is 403 demo_read_only', async (t) => {
  const u = await joinedDemo();
  const demo = (body?: unknown) => as(u, body, DEMO_USER_ID);
  t.is((await call('GET', '/api/suppressions', demo())).status, 200);
  t.is((await call('GET', '/api/email-settings', demo())).status, 200);
  t.is(code(await call('POST', '/api/suppressions', demo({ value: 'a@x.example' }))), '403 demo_read_only');
  t.is(code(await call('DELETE', `/api/suppressions/${uuidv7()}`, demo())), '403 demo_read_only');
  t.is(code(await call('PATCH', '/api/email-settings', demo({ footer: 'Somewhere 1' }))), '403 demo_read_only');
  t.is(code(await importCsv(u, 'a@x.example\n', { headers: { 'x-acting-as': DEMO_USER_ID } })), '403 demo_read_only');
});

test('import: the named column, invalid rows listed with their row numbers, repeats and entries already there counted, blanks skipped', async (t) => {
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  const d = domain();
  await call('POST', '/api/suppressions', as(u, { value: `old@${d}` }));
  const csv = [
    'name,Email',
    `Ada,ada@${d}`,
    'Bob,not-an-address',
    `Cy,ADA@${d}`,
    ',',
    `Old,old@${d}`,
    `Dom,@${d}`,
    `Eve,"eve@${d}"`,
    'Zed,zed@',
    '',
  ].join('\r\n');
  const r = await importCsv(u, csv);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, {
    imported: 3,
    already_present: 2,
    invalid: [
      { row: 3, value: 'not-an-address', message: 'neither an email address nor a domain' },
      { row: 9, value: 'zed@', message: 'neither an email address nor a domain' },
    ],
    invalid_count: 2,
  });
  const rows = await (
    await em()
  ).execute<{ kind: string; value: string; reason: string; source: string; created_by: string }[]>(
    `select kind, value, reason, source, created_by from suppressions where workspace_id = ? and reason = 'import' order by value`,
    [ws],
  );
  t.deepEqual(rows, [
    { kind: 'address', value: `ada@${d}`, reason: 'import', source: 'csv', created_by: u.id },
    { kind: 'domain', value: d, reason: 'import', source: 'csv', created_by: u.id },
    { kind: 'address', value: `eve@${d}`, reason: 'import', source: 'csv', created_by: u.id },
  ]);

  // No header: the first column, semicolons; importing it again adds nothing.
  const plain = [`x@${d};X`, `y.${d};Y`, `z@${d};Z`].join('\n');
  t.like((await importCsv(u, plain)).body, { imported: 3, already_present: 0, invalid_count: 0 });
  t.like((await importCsv(u, plain)).body, { imported: 0, already_present: 3 });
  t.is(await count(ws), 7);

  // The first 100 invalid rows are listed, all are counted; an empty file imports nothing.
  const bad = await importCsv(u, `domain\n${Array.from({ length: 150 }, (_, i) => `bad ${i}`).join('\n')}\n`);
  t.is(bad.status, 200, bad.text);
  t.like(bad.body, { imported: 0, already_present: 0, invalid_count: 150 });
  t.is(bad.body.invalid.length, 100);
  t.deepEqual(bad.body.invalid[99], { row: 101, value: 'bad 99', message: 'neither an email address nor a domain' });
  t.deepEqual((await importCsv(u, '')).body, { imported: 0, already_present: 0, invalid: [], invalid_count: 0 });
});

test('import refusals: 400 invalid_upload, missing_file and invalid_csv (the entries before it stay, counted), 413 for two files', async (t) => {
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  const d = domain();
  t.is(
    code(await call('POST', '/api/suppressions/import', as(u, { file: 'a@x.example' }))),
    '400 invalid_upload',
    'not a multipart form',
  );
  t.is(code(await importCsv(u, '', { noFile: true })), '400 missing_file');
  t.is(
    code(await importCsv(u, '', { noFile: true, fields: { file: `a@${d}` } })),
    '400 missing_file',
    'the file as a text field',
  );
  t.is(
    code(await importCsv(u, `a@${d}\n`, { fields: { reason: 'manual' } })),
    '400 invalid_upload',
    'an unknown field',
  );

  const broken = await importCsv(u, `email\na@${d}\nb@${d}\n"c@${d}\n`);
  t.is(code(broken), '400 invalid_csv');
  t.regex(broken.body.error.message, /row 4/);
  t.deepEqual(broken.body.error.details, { imported: 2, already_present: 0 });
  t.is(await count(ws), 2);

  const form = new FormData();
  form.append('file', new Blob([`e@${d}\n`]), 'a.csv');
  form.append('file', new Blob([`f@${d}\n`]), 'b.csv');
  const two = await fetch(`${(await api()).base}/api/suppressions/import`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${u.accessToken}` },
  });
  t.is(two.status, 413);
  t.is(((await two.json()) as { error: { code: string } }).error.code, 'invalid_upload');
});

// The large uploads run alone, not beside the other tests of the file.
test.serial(
  'import limits: a declared length over 20 MiB is refused before reading (413 file_too_large, nothing added), a file one byte over while it streams, more than 1,000,000 rows 413 too_many_rows',
  async (t) => {
    t.timeout(180_000);
    const u = await createOwner();
    const ws = await workspaceIdOf(u.id);
    // Distinct addresses: had any been read, some would have been added.
    const lines: string[] = [];
    for (let i = 0, size = 0; size <= 21 * MiB; i++) {
      const line = `someone-${i}@big.example\n`;
      lines.push(line);
      size += line.length;
    }
    t.is(code(await importCsv(u, lines.join(''))), '413 file_too_large');
    t.is(await count(ws), 0, 'nothing was read');

    const over = Buffer.alloc(20 * MiB + 1, `${'a'.repeat(30)}@over.example\n`);
    t.is(code(await importCsv(u, over)), '413 file_too_large');

    const rows = Buffer.alloc(1_000_001 * 12, 'x@y.example\n');
    const many = await importCsv(u, rows);
    t.is(code(many), '413 too_many_rows');
    t.is(many.body.error.details.imported + many.body.error.details.already_present, 1_000_000);
    t.is(many.body.error.details.imported, 1);
    t.true(rows.length < 20 * MiB, 'refused for its rows, not its size');
  },
);

test('email settings: everyone reads the footer, owners and admins set it (trimmed; null or blank removes it), members are refused', async (t) => {
  const owner = await createOwner();
  const { user: member } = await addMemberViaInvite(owner, { role: 'member' });
  const { user: admin } = await addMemberViaInvite(owner, { role: 'admin' });
  t.deepEqual((await call('GET', '/api/email-settings', as(owner))).body, { footer: null });
  const set = await call(
    'PATCH',
    '/api/email-settings',
    as(owner, { footer: '  Ledgerly Ltd, 1 Main Street, Dublin  ' }),
  );
  t.is(set.status, 200, set.text);
  t.deepEqual(set.body, { footer: 'Ledgerly Ltd, 1 Main Street, Dublin' });
  t.deepEqual((await call('GET', '/api/email-settings', as(member, undefined, owner.id))).body, {
    footer: 'Ledgerly Ltd, 1 Main Street, Dublin',
  });
  const [w] = await (
    await em()
  ).execute<{ email_footer: string }[]>(`select email_footer from workspaces where id = ?`, [
    await workspaceIdOf(owner.id),
  ]);
  t.is(w.email_footer, 'Ledgerly Ltd, 1 Main Street, Dublin', 'stored where the mail connector reads it');

  t.is(
    code(await call('PATCH', '/api/email-settings', as(member, { footer: 'Elsewhere' }, owner.id))),
    '403 not_assigned',
  );
  t.is(code(await call('PATCH', '/api/email-settings', as(owner, { footer: 'x'.repeat(2001) }))), '400 invalid_body');
  t.is((await call('PATCH', '/api/email-settings', as(owner, { footer: 'x'.repeat(2000) }))).status, 200);
  t.is(code(await call('PATCH', '/api/email-settings', as(owner, {}))), '400 invalid_body');
  t.is(code(await call('PATCH', '/api/email-settings', as(owner, { footer: 3 }))), '400 invalid_body');
  t.deepEqual((await call('PATCH', '/api/email-settings', as(admin, { footer: '   ' }, owner.id))).body, {
    footer: null,
  });
  t.deepEqual((await call('PATCH', '/api/email-settings', as(owner, { footer: 'Back' }))).body, { footer: 'Back' });
  t.deepEqual((await call('PATCH', '/api/email-settings', as(owner, { footer: null }))).body, { footer: null });
  t.deepEqual((await call('GET', '/api/email-settings', as(owner))).body, { footer: null });
});

test('enrollment skips a lead whose address or domain is suppressed (`suppressed`), and enrolls the others', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
  });
  const d = domain();
  const [byAddress] = await o.leads(1);
  const [byDomain] = await o.leads(1, { email: `pat@${d}` });
  const [free] = await o.leads(1);
  t.is((await call('POST', '/api/suppressions', as(u, { value: byAddress.email.toUpperCase() }))).status, 201);
  t.is((await call('POST', '/api/suppressions', as(u, { value: d }))).status, 201);
  const r = await call(
    'POST',
    `/api/campaigns/${campaign.id}/leads`,
    as(u, { lead_ids: [byAddress.leadId, byDomain.leadId, free.leadId] }),
  );
  t.is(r.status, 200, r.text);
  const by = Object.fromEntries(
    r.body.items.map((i: { lead_id: string; status: string; reason: string | null }) => [
      i.lead_id,
      `${i.status} ${i.reason ?? ''}`.trim(),
    ]),
  );
  t.deepEqual(by, {
    [byAddress.leadId]: 'skipped suppressed',
    [byDomain.leadId]: 'skipped suppressed',
    [free.leadId]: 'enrolled',
  });
});

test('the claim stops a planned send whose recipient was suppressed after it was planned (stopped, suppressed; its unsent actions canceled)', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
  });
  const d = domain();
  const [lead] = await o.leads(1, { email: `kim@${d}` });
  const e = await em();
  const enrollmentId = uuidv7();
  await e.execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at) values (?, ?, ?, ?, ?, 'active', 1, 1, now(), now(), now())`,
    [enrollmentId, o.workspaceId, campaign.id, lead.leadId, lead.contactId],
  );
  const actionId = uuidv7();
  await e.execute(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, account_id, content, attempts, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 0, 1, 'email', 'planned', now(), ?, ?::jsonb, 0, now(), now())`,
    [
      actionId,
      o.workspaceId,
      campaign.id,
      enrollmentId,
      lead.leadId,
      campaign.stepIds[0],
      account.id,
      JSON.stringify({ subject: 'Hi', body: 'Hello', recipient: lead.email }),
    ],
  );
  // Another workspace suppressing the domain changes nothing here.
  const other = await createOwner();
  t.is((await call('POST', '/api/suppressions', as(other, { value: `@${d}` }))).status, 201);
  const stateOf = async () =>
    (
      await e.execute<{ status: string; stop_reason: string | null; state: string; error_code: string | null }[]>(
        `select e.status, e.stop_reason, a.state, a.error_code from enrollments e join scheduled_actions a on a.enrollment_id = e.id where e.id = ?`,
        [enrollmentId],
      )
    )[0];
  t.like(await stateOf(), { status: 'active', state: 'planned' });

  t.is((await call('POST', '/api/suppressions', as(u, { value: `@${d}` }))).status, 201);
  t.like(await claimSend(e as never, actionId), { outcome: 'canceled', status: 'stopped', stopReason: 'suppressed' });
  t.deepEqual(await stateOf(), {
    status: 'stopped',
    stop_reason: 'suppressed',
    state: 'canceled',
    error_code: 'suppressed',
  });
});
