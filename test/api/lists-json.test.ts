// Leads over JSON, beyond the spec (docs/imports.md "Adding leads over JSON"): POST /api/lists/{id}/leads
// checks each person by the CSV import's row rule and dedupes as an import row does (each mode, the
// same counts as the same rows imported from a CSV), answers per person, refuses a bad body whole;
// 1,000 people in one request; ownership and product scope; no event (as a CSV import's rows);
// the leads are listed, exported and enrollable; DELETE /api/lists/{id}/leads/{leadId}; the
// Operator tools over the same domain function.
import test from 'ava';
import { parse } from 'csv-parse/sync';
import { randomUUID } from 'node:crypto';
import { DEMO_USER_ID, DEMO_WORKSPACE_ID } from '../../domain/demo/seed.js';
import { AppError } from '../../domain/errors.js';
import { uuidv7 } from '../../lib/ids.js';
import { findTool } from '../../domain/tools/index.js';
import { needsConfirmation, runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { campaignOwner, campaignWithAccount, seedCampaign } from '../helpers/campaigns.js';
import { seedContacts } from '../helpers/contacts.js';
import { importPath, postCsv, waitImport } from '../helpers/imports.js';
import { createOwnerWithProducts } from '../helpers/scope.js';
import { waitFor } from '../../scripts/children.js';
test.after.always(closeApi);

const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });
const NO_SUCH_ID = '0190f5d2-7c1a-7b3e-9a10-000000000000';
const add = (u: TestUser, listId: string, body: unknown, headers: Record<string, string> = {}) =>
  call('POST', `/api/lists/${listId}/leads`, { ...auth(u, headers), body });

async function ownerWithList(u?: TestUser) {
  const owner = u ?? (await createOwner());
  const app = await createTestApp(owner);
  const list = await call('POST', `/api/apps/${app.id}/lists`, {
    ...auth(owner),
    body: { name: `JSON ${randomUUID()}` },
  });
  if (list.status !== 201) throw new Error(list.text);
  return { u: owner, appId: app.id, listId: list.body.id as string, workspaceId: await workspaceIdOf(owner.id) };
}

async function contactOf(u: TestUser, id: string) {
  const r = await call('GET', `/api/contacts/${id}`, auth(u));
  if (r.status !== 200) throw new Error(r.text);
  return r.body;
}

async function leadsOf(u: TestUser, listId: string) {
  const out: any[] = [];
  for (let cursor: string | null = ''; cursor !== null;) {
    const r: any = await call(
      'GET',
      `/api/lists/${listId}/leads?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      auth(u),
    );
    if (r.status !== 200) throw new Error(r.text);
    out.push(...r.body.items);
    cursor = r.body.next_cursor;
  }
  return out;
}

const count = async (sql: string, params: unknown[]) =>
  ((await (await em()).execute(sql, params))[0] as { n: number }).n;

/**
 * One batch of every kind of person, against a contact already in the workspace (Ada: email,
 * company and title known, no first name). `tag` keeps the people of each run apart.
 */
function mixed(tag: string) {
  const ada = `ada-${tag}@engines.example`;
  return {
    ada,
    seed: { email: ada, company: 'Analytical Engines', title: 'Analyst', last_name: 'Lovelace' },
    people: [
      // 0: Ada again, by a differently written email: fills first_name, and would change title.
      { email: `  ${ada.toUpperCase()} `, first_name: 'Ada', title: 'CTO', company: '' },
      // 1: a new person, by profile URL only (normalised for the dedupe).
      {
        profile_url: `http://www.pronet.example/in/grace-${tag}/?trk=x`,
        full_name: 'Grace Hopper',
        company_domain: 'https://www.Navy.example/about',
        time_zone: 'america/new_york',
      },
      // 2: invalid email.
      { email: 'grace(at)navy', first_name: 'Grace' },
      // 3: no identifier at all.
      { first_name: 'Nobody', company: 'Nowhere', email: null },
      // 4: a value longer than its field.
      { email: `long-${tag}@example.test`, title: 'x'.repeat(301) },
      // 5: the person of row 1 again (by the normalised profile URL), with a title.
      { profile_url: `https://pronet.example/in/grace-${tag}`, title: 'Rear Admiral' },
      // 6: a new person with every field.
      {
        email: `alan-${tag}@bletchley.example`,
        profile_url: `https://pronet.example/in/alan-${tag}`,
        first_name: 'Alan',
        last_name: 'Turing',
        full_name: 'Alan Turing',
        title: 'Cryptanalyst',
        company: 'GC&CS',
        company_domain: 'bletchley.example',
        country: 'GB',
        phone: '+44 1908 640404',
        headline: 'Computing machinery',
        time_zone: 'Europe/London',
      },
      // 7: an invalid profile URL beside a valid email: invalid (each given identifier must be valid).
      { email: `bad-url-${tag}@example.test`, profile_url: 'mailto:x@example.test' },
    ],
  };
}

test('POST /api/lists/{id}/leads: mixed valid, invalid and duplicate people, in each dedupe mode, answered one by one', async (t) => {
  const expected = {
    // Ada: update_empty fills first_name (title kept); overwrite replaces title too; skip changes nothing.
    update_empty: { ada: 'updated', adaFields: { first_name: 'Ada', title: 'Analyst' }, repeat: 'updated' },
    overwrite: { ada: 'updated', adaFields: { first_name: 'Ada', title: 'CTO' }, repeat: 'updated' },
    skip: { ada: 'duplicate', adaFields: { first_name: null, title: 'Analyst' }, repeat: 'duplicate' },
  } as const;
  for (const mode of ['update_empty', 'overwrite', 'skip'] as const) {
    const w = await ownerWithList();
    const tag = randomUUID();
    const m = mixed(tag);
    const [ada] = await seedContacts(w.workspaceId, [m.seed]);
    const r = await add(w.u, w.listId, { people: m.people, ...(mode === 'update_empty' ? {} : { dedupe_mode: mode }) });
    t.is(r.status, 200, r.text);
    const items = r.body.items as any[];
    t.deepEqual(
      items.map((i) => i.index),
      m.people.map((_, i) => i),
      mode,
    );
    t.deepEqual(
      items.map((i) => i.status),
      [expected[mode].ada, 'created', 'invalid', 'invalid', 'invalid', expected[mode].repeat, 'created', 'invalid'],
      mode,
    );
    t.deepEqual(
      items.map((i) => i.error?.code ?? null),
      [null, null, 'invalid_email', 'missing_identifier', 'too_long', null, null, 'invalid_profile_url'],
    );
    t.like(items[4].error, { field: 'title', message: 'title is longer than 300 characters' });
    t.like(items[2].error, { field: 'email' });
    t.is(items[3].error.field, null);
    for (const i of [2, 3, 4, 7]) t.like(items[i], { lead_id: null, contact_id: null, lead_added: false });
    // Ada's existing contact joined the list; Grace's row 5 is the contact row 1 created, same lead.
    t.is(items[0].contact_id, ada.id);
    t.is(items[5].contact_id, items[1].contact_id);
    t.is(items[5].lead_id, items[1].lead_id);
    t.deepEqual(
      items.map((i) => i.lead_added),
      [true, true, false, false, false, false, true, false],
    );
    t.deepEqual(r.body.totals, {
      created: 2,
      updated: (mode === 'skip' ? 0 : 2) as number,
      duplicate: (mode === 'skip' ? 2 : 0) as number,
      invalid: 4,
      leads_added: 3,
    });

    // The contacts as the import would have left them.
    t.like(await contactOf(w.u, ada.id), { ...expected[mode].adaFields, company: 'Analytical Engines', email: m.ada });
    const grace = await contactOf(w.u, items[1].contact_id);
    t.like(grace, {
      profile_url: `http://www.pronet.example/in/grace-${tag}/?trk=x`,
      full_name: 'Grace Hopper',
      company_domain: 'navy.example',
      time_zone: 'America/New_York',
      title: mode === 'skip' ? null : 'Rear Admiral',
    });
    t.deepEqual(
      grace.leads.map((l: any) => [l.id, l.list_id, l.source]),
      [[items[1].lead_id, w.listId, 'api']],
    );
    t.like(await contactOf(w.u, items[6].contact_id), {
      email: `alan-${tag}@bletchley.example`,
      phone: '+44 1908 640404',
      headline: 'Computing machinery',
      country: 'GB',
      time_zone: 'Europe/London',
    });

    // Sent again: nothing new, every valid person a duplicate (nothing left to fill or replace).
    const again = await add(w.u, w.listId, { people: m.people, dedupe_mode: mode });
    t.is(again.status, 200, again.text);
    t.deepEqual(again.body.totals, { created: 0, updated: 0, duplicate: 4, invalid: 4, leads_added: 0 });
    t.deepEqual(
      again.body.items.map((i: any) => i.lead_id),
      items.map((i) => i.lead_id),
    );
    t.is((await call('GET', `/api/lists/${w.listId}`, auth(w.u))).body.lead_count, 3);
  }
});

test('the same people as a CSV import and over JSON: the same counts and the same contacts (one row rule, one dedupe)', async (t) => {
  const tag = randomUUID();
  const m = mixed(tag);
  const fields = [
    'email',
    'profile_url',
    'first_name',
    'last_name',
    'full_name',
    'title',
    'company',
    'company_domain',
    'country',
    'phone',
    'headline',
    'time_zone',
  ] as const;
  const quote = (v: string) => `"${v.replace(/"/g, '""')}"`;
  const csv = [
    fields.join(','),
    ...m.people.map((p) =>
      fields.map((f) => quote(((p as Record<string, string | null>)[f] ?? '') as string)).join(','),
    ),
  ].join('\n');
  const outcome = async (via: 'csv' | 'json') => {
    const w = await ownerWithList();
    const [ada] = await seedContacts(w.workspaceId, [m.seed]);
    let counts: Record<string, number>;
    if (via === 'json') {
      const r = await add(w.u, w.listId, { people: m.people });
      t.is(r.status, 200, r.text);
      counts = r.body.totals;
    } else {
      const started = await postCsv(w.u, importPath(w.appId), csv, { fields: { list_id: w.listId } });
      t.is(started.status, 202, started.text);
      const done = await waitImport(w.u, w.appId, started.body.id);
      t.is(done.status, 'completed');
      const p = done.progress;
      counts = {
        created: p.created,
        updated: p.updated,
        duplicate: p.duplicate,
        invalid: p.invalid,
        leads_added: p.leads_added,
      };
      t.deepEqual(
        done.invalid_rows.items.map((x: any) => [x.row, x.reasons[0].code]),
        [
          [4, 'invalid_email'],
          [5, 'missing_identifier'],
          [6, 'too_long'],
          [9, 'invalid_profile_url'],
        ],
      );
    }
    const contacts = (await leadsOf(w.u, w.listId)).map((l) => l.contact_id as string);
    const rows = [];
    for (const id of contacts) {
      const c = await contactOf(w.u, id);
      rows.push([id === ada.id ? 'ada' : 'new', ...fields.map((f) => c[f] ?? null)].join('|'));
    }
    return { counts, contacts: rows.sort() };
  };
  const [csvOut, jsonOut] = await Promise.all([outcome('csv'), outcome('json')]);
  t.deepEqual(jsonOut, csvOut);
  t.deepEqual(jsonOut.counts, { created: 2, updated: 2, duplicate: 0, invalid: 4, leads_added: 3 });
});

test('1,000 people in one request are added in one transaction; 1,001 are 400 invalid_body and nothing changes', async (t) => {
  const w = await ownerWithList();
  const tag = randomUUID();
  const people = Array.from({ length: 1000 }, (_, i) => ({
    email: `p${i}-${tag}@bulk.example`,
    profile_url: `https://pronet.example/in/p${i}-${tag}`,
    first_name: `First${i}`,
    last_name: `Last${i}`,
    title: 'Head of Growth',
    company: `Acme ${i % 7}`,
    company_domain: `acme${i % 7}.example`,
    country: 'France',
  }));
  const over = await add(w.u, w.listId, { people: [...people, { email: `extra-${tag}@bulk.example` }] });
  t.is(over.status, 400, over.text);
  t.is(over.body.error.code, 'invalid_body');
  t.is((await call('GET', `/api/lists/${w.listId}`, auth(w.u))).body.lead_count, 0);
  t.is(await count('select count(*)::int as n from contacts where workspace_id = ?', [w.workspaceId]), 0);

  const started = Date.now();
  const r = await add(w.u, w.listId, { people });
  t.is(r.status, 200, r.text);
  t.log(`1,000 people added in ${Date.now() - started} ms`);
  t.deepEqual(r.body.totals, { created: 1000, updated: 0, duplicate: 0, invalid: 0, leads_added: 1000 });
  t.is(r.body.items.length, 1000);
  t.true(r.body.items.every((i: any, n: number) => i.index === n && i.status === 'created' && i.lead_added));
  t.is(new Set(r.body.items.map((i: any) => i.lead_id)).size, 1000);
  t.is((await call('GET', `/api/lists/${w.listId}`, auth(w.u))).body.lead_count, 1000);
  // One transaction: every lead of the request was written by the same one (the same xmin).
  t.is(
    await count('select count(distinct xmin::text)::int as n from leads where list_id = ?', [w.listId]),
    1,
    'one transaction',
  );
});

test('a body that is not valid as a whole is 400 invalid_body and changes nothing', async (t) => {
  const w = await ownerWithList();
  const ok = { email: `ok-${randomUUID()}@example.test` };
  for (const [why, body] of [
    ['not an object', ['a']],
    ['no people field', { dedupe_mode: 'skip' }],
    ['people not an array', { people: ok }],
    ['no people', { people: [] }],
    ['an unknown dedupe mode', { people: [ok], dedupe_mode: 'merge' }],
    ['an unknown top-level field', { people: [ok], list_id: w.listId }],
    ['an unknown person field', { people: [ok, { email: 'b@example.test', linkedin: 'x' }] }],
    ['a person that is not an object', { people: [ok, 'c@example.test'] }],
    ['a value that is not a string', { people: [ok, { email: 'd@example.test', phone: 33123 }] }],
  ] as const) {
    const r = await add(w.u, w.listId, body);
    t.is(r.status, 400, `${why}: ${r.text}`);
    t.is(r.body.error.code, 'invalid_body', why);
  }
  // Up to 4 MiB is read (1,000 people with long values); more is 413 before the body is parsed.
  const big = await add(w.u, w.listId, { people: [{ ...ok, headline: 'x'.repeat(4 * 1024 * 1024) }] });
  t.is(big.status, 413, big.text);
  t.is(big.body.error.code, 'payload_too_large');
  const long = await add(w.u, w.listId, { people: [{ ...ok, headline: 'x'.repeat(2 * 1024 * 1024) }] });
  t.is(long.status, 200, 'over 1 MiB is read');
  t.like(long.body.items[0], { status: 'invalid', error: { code: 'too_long', field: 'headline' } });
  const raw = await call('POST', `/api/lists/${w.listId}/leads`, { ...auth(w.u), rawBody: '{"people": [' });
  t.is(raw.status, 400);
  t.is(raw.body.error.code, 'invalid_body');
  t.is((await call('GET', `/api/lists/${w.listId}`, auth(w.u))).body.lead_count, 0);
  t.is(await count('select count(*)::int as n from contacts where workspace_id = ?', [w.workspaceId]), 0);
});

test('ownership and product scope: another workspace’s or an unknown list is 404, a product the member was not given 403, the Demo 403', async (t) => {
  const f = await createOwnerWithProducts();
  const person = { people: [{ email: `scope-${randomUUID()}@example.test` }] };
  const stranger = await ownerWithList();
  for (const listId of [f.p1.listId, NO_SUCH_ID]) {
    const r = await add(stranger.u, listId, person);
    t.is(r.status, 404, r.text);
    t.is(r.body.error.code, 'not_found');
    const d = await call('DELETE', `/api/lists/${listId}/leads/${f.p1.lead.leadId}`, auth(stranger.u));
    t.is(d.status, 404, d.text);
  }
  // Another workspace's lead inside one's own list: not found either.
  const d = await call('DELETE', `/api/lists/${stranger.listId}/leads/${f.p1.lead.leadId}`, auth(stranger.u));
  t.is(d.status, 404, d.text);
  t.is((await call('POST', `/api/lists/not-a-uuid/leads`, { ...auth(stranger.u), body: person })).status, 400);

  const asOwner = { 'x-acting-as': f.owner.id };
  const denied = await add(f.member, f.p1.listId, person, asOwner);
  t.is(denied.status, 403, denied.text);
  t.is(denied.body.error.code, 'not_assigned');
  const deniedDelete = await call(
    'DELETE',
    `/api/lists/${f.p1.listId}/leads/${f.p1.lead.leadId}`,
    auth(f.member, asOwner),
  );
  t.is(deniedDelete.status, 403, deniedDelete.text);
  const allowed = await add(f.member, f.p2.listId, person, asOwner);
  t.is(allowed.status, 200, allowed.text);
  t.is(allowed.body.totals.leads_added, 1);
  t.is(await count('select count(*)::int as n from leads where list_id = ?', [f.p1.listId]), 1, 'P1 untouched');

  // The Demo workspace is read-only.
  const visitor = await createUser();
  t.true([200, 201].includes((await call('POST', '/api/me/workspaces/demo/join', auth(visitor))).status));
  const [demoList] = await (
    await em()
  ).execute<{ id: string }[]>('select id from lead_lists where workspace_id = ? order by id limit 1', [
    DEMO_WORKSPACE_ID,
  ]);
  const demo = await add(visitor, demoList.id, person, { 'x-acting-as': DEMO_USER_ID });
  t.is(demo.status, 403, demo.text);
  t.is(demo.body.error.code, 'demo_read_only');
});

test('events: adding leads over JSON emits what a CSV import emits per lead (no webhook event), and no notification (the call is its own answer)', async (t) => {
  const w = await ownerWithList();
  const tag = randomUUID();
  const events = () => count('select count(*)::int as n from webhook_events where workspace_id = ?', [w.workspaceId]);
  const notes = () => count('select count(*)::int as n from notifications where workspace_id = ?', [w.workspaceId]);
  // A CSV import of three people: no webhook event for its leads; one notification when it ends.
  const csv = ['email,first_name', ...[1, 2, 3].map((i) => `csv${i}-${tag}@example.test,P${i}`)].join('\n');
  const started = await postCsv(w.u, importPath(w.appId), csv, { fields: { list_id: w.listId } });
  t.is(started.status, 202, started.text);
  t.is((await waitImport(w.u, w.appId, started.body.id)).status, 'completed');
  await waitFor('the import notification', async () => (await notes()) === 1);
  t.is(await events(), 0, 'a CSV import emits no webhook event for the leads it adds');

  const r = await add(w.u, w.listId, {
    people: [1, 2, 3].map((i) => ({ email: `json${i}-${tag}@example.test`, first_name: `J${i}` })),
  });
  t.is(r.status, 200, r.text);
  t.is(r.body.totals.leads_added, 3);
  t.is(await events(), 0, 'no webhook event, as for imported leads');
  t.is(await notes(), 1, 'no notification');
});

test('leads added over JSON are listed, exported and enrollable like imported ones', async (t) => {
  const { u, o, campaign } = await campaignWithAccount('network', [
    { type: 'invitation', config: { note: 'Hi {{first_name}}' } },
  ]);
  const tag = randomUUID();
  const r = await add(u, o.listId, {
    people: [
      {
        email: `lin-${tag}@example.test`,
        profile_url: `https://pronet.example/in/lin-${tag}`,
        first_name: 'Lin',
        company: 'Q',
      },
      { profile_url: `https://pronet.example/in/kay-${tag}`, full_name: 'Kay Mcnulty', title: 'Programmer' },
    ],
  });
  t.is(r.status, 200, r.text);
  const [lin, kay] = r.body.items;

  // Listed, searchable.
  const listed = await leadsOf(u, o.listId);
  t.deepEqual(
    listed.map((l) => [l.id, l.contact_id, l.source]),
    [
      [lin.lead_id, lin.contact_id, 'api'],
      [kay.lead_id, kay.contact_id, 'api'],
    ],
  );
  t.like(listed[1], { name: 'Kay Mcnulty', title: 'Programmer', profile_url: `https://pronet.example/in/kay-${tag}` });
  const found = await call('GET', `/api/lists/${o.listId}/leads?q=mcnulty`, auth(u));
  t.deepEqual(
    found.body.items.map((l: any) => l.id),
    [kay.lead_id],
  );
  t.deepEqual(
    (await call('GET', `/api/contacts?list_id=${o.listId}`, auth(u))).body.items.map((c: any) => c.id).sort(),
    [lin.contact_id, kay.contact_id].sort(),
  );

  // Exported: the list's export has both, with the list's name.
  const exp = await call('POST', '/api/contacts/export', { ...auth(u), body: { list_id: o.listId } });
  t.is(exp.status, 202, exp.text);
  const result = await (await api()).services.temporal.workflow.getHandle(exp.body.workflow_id).result();
  t.like(result, { status: 'completed', rows: 2 });
  const file = await fetch(`${(await api()).base}/api/contacts/export?id=${exp.body.id}`, {
    headers: { authorization: `Bearer ${u.accessToken}` },
  });
  t.is(file.status, 200);
  const records = parse(Buffer.from(await file.arrayBuffer()), { bom: true, columns: true }) as Record<
    string,
    string
  >[];
  t.deepEqual(records.map((x) => x.id).sort(), [lin.contact_id, kay.contact_id].sort());
  t.like(
    records.find((x) => x.id === kay.contact_id),
    { name: 'Kay Mcnulty', title: 'Programmer', profile_url: `https://pronet.example/in/kay-${tag}` },
  );

  // Enrollable.
  const enrolled = await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    ...auth(u),
    body: { lead_ids: [lin.lead_id, kay.lead_id] },
  });
  t.is(enrolled.status, 200, enrolled.text);
  t.is(enrolled.body.enrolled, 2, enrolled.text);
  t.deepEqual(
    enrolled.body.items.map((i: any) => [i.lead_id, i.status]),
    [
      [lin.lead_id, 'enrolled'],
      [kay.lead_id, 'enrolled'],
    ],
  );
});

test('DELETE /api/lists/{id}/leads/{leadId}: 204, the contact stays; another list’s lead 404; an enrolled lead 409 lead_in_use until its campaigns are archived', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const other = await campaignOwner(u); // another product's list of the same workspace
  const tag = randomUUID();
  const r = await add(u, o.listId, {
    people: ['a', 'b'].map((x) => ({ email: `${x}-${tag}@example.test`, first_name: x.toUpperCase() })),
  });
  const [a, b] = r.body.items;
  // A in the other list too: removing it from one keeps the other.
  const inOther = await add(u, other.listId, { people: [{ email: `a-${tag}@example.test` }] });
  t.is(inOther.body.items[0].contact_id, a.contact_id);

  t.is(
    (await call('DELETE', `/api/lists/${other.listId}/leads/${a.lead_id}`, auth(u))).status,
    404,
    'not that list’s lead',
  );
  t.is((await call('DELETE', `/api/lists/${o.listId}/leads/${NO_SUCH_ID}`, auth(u))).status, 404);
  t.is((await call('DELETE', `/api/lists/${o.listId}/leads/nope`, auth(u))).status, 400);

  const gone = await call('DELETE', `/api/lists/${o.listId}/leads/${a.lead_id}`, auth(u));
  t.is(gone.status, 204, gone.text);
  t.is(gone.text, '');
  t.deepEqual(
    (await leadsOf(u, o.listId)).map((l) => l.id),
    [b.lead_id],
  );
  const contact = await contactOf(u, a.contact_id);
  t.deepEqual(
    contact.leads.map((l: any) => l.list_id),
    [other.listId],
    'the contact stays, in its other list',
  );
  t.is((await call('DELETE', `/api/lists/${o.listId}/leads/${a.lead_id}`, auth(u))).status, 404, 'twice: gone');

  // Enrolled (any status) in a campaign that is not archived: refused, nothing deleted.
  const steps = [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }];
  const running = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [], steps });
  await (
    await em()
  ).execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, 'completed', 1, 1, now(), now(), now())`,
    [uuidv7(), o.workspaceId, running.id, b.lead_id, b.contact_id],
  );
  const refused = await call('DELETE', `/api/lists/${o.listId}/leads/${b.lead_id}`, auth(u));
  t.is(refused.status, 409, refused.text);
  t.is(refused.body.error.code, 'lead_in_use');
  t.deepEqual(refused.body.error.details, { campaign_ids: [running.id], campaign_count: 1 });
  t.regex(refused.body.error.message, /^a campaign enrolls this lead \(".+"\): archive it first/);
  t.is((await leadsOf(u, o.listId)).length, 1);

  t.is(
    (await call('PATCH', `/api/campaigns/${running.id}/status`, { ...auth(u), body: { status: 'archived' } })).status,
    200,
  );
  t.is((await call('DELETE', `/api/lists/${o.listId}/leads/${b.lead_id}`, auth(u))).status, 204);
  t.is((await call('GET', `/api/lists/${o.listId}`, auth(u))).body.lead_count, 0);
  t.is(await count('select count(*)::int as n from enrollments where lead_id = ?', [b.lead_id]), 0);
});

test('the OpenAPI document marks both operations x-beyond-spec', async (t) => {
  const doc = (await call('GET', '/openapi.json')).body;
  t.is(doc.paths['/api/lists/{listId}/leads'].post['x-beyond-spec'], true);
  t.is(doc.paths['/api/lists/{listId}/leads/{leadId}'].delete['x-beyond-spec'], true);
  t.is(doc.paths['/api/lists/{listId}/leads'].get['x-beyond-spec'], undefined);
});

test('Operator tools add_leads_to_list and remove_lead_from_list: confirmed writes over the same domain function', async (t) => {
  const { services } = await api();
  const w = await ownerWithList();
  const stranger = await ownerWithList();
  const ctx = async (u: TestUser) => {
    const e = services.orm.em.fork();
    return {
      em: e,
      jobs: services.jobs,
      config: services.config,
      providers: services,
      actor: await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined),
    };
  };
  const addTool = findTool('add_leads_to_list')!;
  const removeTool = findTool('remove_lead_from_list')!;
  t.is(addTool.risk, 'change');
  t.is(removeTool.risk, 'delete');
  t.true(needsConfirmation(addTool) && needsConfirmation(removeTool), 'a person confirms both');
  const tag = randomUUID();
  const out = (await runTool(addTool, await ctx(w.u), {
    list_id: w.listId,
    people: [{ email: `tool-${tag}@example.test`, first_name: 'Tool' }, { first_name: 'No id' }],
    dedupe_mode: 'skip',
  })) as any;
  t.deepEqual(out.totals, { created: 1, updated: 0, duplicate: 0, invalid: 1, leads_added: 1 });
  t.like(out.invalid[0], { index: 1, error: { code: 'missing_identifier' } });
  const leadId = out.leads[0].lead_id as string;
  t.deepEqual(
    (await leadsOf(w.u, w.listId)).map((l) => [l.id, l.source]),
    [[leadId, 'api']],
  );
  // Another workspace's list: not found, as over REST.
  const err = await t.throwsAsync(
    runTool(addTool, await ctx(stranger.u), { list_id: w.listId, people: [{ email: `x-${tag}@example.test` }] }),
  );
  t.true(err instanceof AppError && err.status === 404, String(err));
  const err2 = await t.throwsAsync(runTool(removeTool, await ctx(w.u), { list_id: stranger.listId, lead_id: leadId }));
  t.true(err2 instanceof AppError && err2.status === 404, String(err2));
  await t.throwsAsync(runTool(addTool, await ctx(w.u), { list_id: w.listId, people: [] }));

  t.deepEqual(await runTool(removeTool, await ctx(w.u), { list_id: w.listId, lead_id: leadId }), {
    list_id: w.listId,
    lead_id: leadId,
    removed: true,
  });
  t.is((await leadsOf(w.u, w.listId)).length, 0);
});
