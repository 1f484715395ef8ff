import test from 'ava';
import pg from 'pg';
import { App } from '../../db/entities/App.js';
import { Contact } from '../../db/entities/Contact.js';
import { DiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { Lead } from '../../db/entities/Lead.js';
import { LeadList } from '../../db/entities/LeadList.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { DEMO_USER_ID, DEMO_WORKSPACE_ID } from '../../domain/demo/seed.js';
import { addContactToList, type ContactInput } from '../../domain/lists/lists.js';
import { ownActor, resolveActor } from '../../domain/workspaces.js';
import { normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, createTestApp, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, seedCampaign } from '../helpers/campaigns.js';
import { addTeamMember } from '../helpers/db.js';
import { waitFor } from '../../scripts/children.js';

const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });
const NO_SUCH_ID = '0190f5d2-7c1a-7b3e-9a10-000000000000';

async function createList(
  u: TestUser,
  appId: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const r = await call('POST', `/api/apps/${appId}/lists`, {
    ...auth(u, headers),
    body: { name: `list ${Math.random()}`, ...body },
  });
  if (r.status !== 201) throw new Error(`list creation failed: ${r.status} ${r.text}`);
  return r.body as { id: string; name: string; app_id: string };
}

async function add(u: TestUser, listId: string, input: ContactInput) {
  const e = await em();
  return addContactToList(e, await ownActor(e, { userId: u.id, kind: 'pat' }), listId, input);
}

/** Every page of a growing list, following next_cursor. */
async function allPages(u: TestUser, path: string, limit: number) {
  const ids: string[] = [];
  const sep = path.includes('?') ? '&' : '?';
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r: any = await call('GET', `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, auth(u));
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
    if (r.body.items.length > limit) throw new Error('page over limit');
    ids.push(...r.body.items.map((i: any) => i.id));
    cursor = r.body.next_cursor;
    pages++;
  } while (cursor);
  return { ids, pages };
}

test('normaliseEmail and normaliseProfileUrl', (t) => {
  t.is(normaliseEmail('  Ada.Lovelace@Example.COM '), 'ada.lovelace@example.com');
  t.is(normaliseEmail('   '), null);
  t.is(normaliseEmail(null), null);
  for (const u of [
    'https://www.Network.example/in/ada-l/',
    'http://network.example/in/ada-l?utm=x#top',
    'network.example/in/ada-l//',
    'HTTPS://WWW.NETWORK.EXAMPLE/in/ada-l',
  ]) {
    t.is(normaliseProfileUrl(u), 'https://network.example/in/ada-l', u);
  }
  t.not(
    normaliseProfileUrl('https://network.example/in/Ada-L'),
    normaliseProfileUrl('https://network.example/in/ada-l'),
    'the path keeps its case',
  );
  t.is(normaliseProfileUrl('mailto:ada@example.com'), null);
  t.is(normaliseProfileUrl('not a url'), null);
  t.is(normaliseProfileUrl(''), null);
});

test('POST /api/apps/{appId}/lists creates a list (201, name trimmed, lead_count 0); GET one, by product and across the workspace', async (t) => {
  const u = await createUser();
  const app = await createTestApp(u);
  const r = await call('POST', `/api/apps/${app.id}/lists`, {
    ...auth(u),
    body: { name: '  Fintech CFOs  ', description: 'From the Q3 agent' },
  });
  t.is(r.status, 201, r.text);
  t.like(r.body, { app_id: app.id, name: 'Fintech CFOs', description: 'From the Q3 agent', lead_count: 0 });
  t.is(r.body.created_at, r.body.updated_at);
  const noDescription = await createList(u, app.id, { name: 'Other' });
  t.is((noDescription as any).description, null);

  const one = await call('GET', `/api/lists/${r.body.id}`, auth(u));
  t.is(one.status, 200);
  t.deepEqual(one.body, r.body);
  const byApp = await call('GET', `/api/apps/${app.id}/lists`, auth(u));
  t.is(byApp.status, 200);
  t.deepEqual(byApp.body, { items: [r.body, noDescription], next_cursor: null });
  const all = await call('GET', '/api/lists', auth(u));
  t.deepEqual(all.body, byApp.body);
  t.deepEqual((await call('GET', `/api/lists?app_id=${app.id}`, auth(u))).body, byApp.body);
});

test('validation: 400 invalid_body, invalid_id and invalid_query', async (t) => {
  const u = await createUser();
  const app = await createTestApp(u);
  const list = await createList(u, app.id);
  for (const body of [
    {},
    { name: '' },
    { name: '   ' },
    { name: 'x'.repeat(201) },
    { name: 7 },
    { name: 'x', description: 'd'.repeat(5001) },
    { name: 'x', app_id: app.id },
  ]) {
    const r = await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body });
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is(
    (await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body: { name: '😀'.repeat(200) } })).status,
    201,
    '200 code points fit',
  );
  for (const body of [{}, { name: '' }, { description: 5 }, { name: 'x', lead_count: 3 }]) {
    const r = await call('PUT', `/api/lists/${list.id}`, { ...auth(u), body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  for (const [method, path] of [
    ['GET', '/api/apps/not-a-uuid/lists'],
    ['POST', '/api/apps/not-a-uuid/lists'],
    ['GET', '/api/lists/not-a-uuid'],
    ['PUT', '/api/lists/not-a-uuid'],
    ['DELETE', '/api/lists/not-a-uuid'],
    ['GET', '/api/lists/not-a-uuid/leads'],
  ] as const) {
    const r = await call(method, path, {
      ...auth(u),
      body: method === 'GET' || method === 'DELETE' ? undefined : { name: 'x' },
    });
    t.is(r.status, 400, `${method} ${path}`);
    t.is(r.body.error.code, 'invalid_id');
  }
  for (const path of [
    `/api/apps/${app.id}/lists?limit=0`,
    `/api/apps/${app.id}/lists?limit=201`,
    `/api/apps/${app.id}/lists?cursor=zzz`,
    '/api/lists?app_id=nope',
    '/api/lists?appId=x',
    `/api/lists/${list.id}/leads?q=${'x'.repeat(201)}`,
    `/api/lists/${list.id}/leads?search=x`,
  ]) {
    const r = await call('GET', path, auth(u));
    t.is(r.status, 400, path);
    t.is(r.body.error.code, 'invalid_query');
  }
});

test('lists require authentication (401 unauthorized)', async (t) => {
  for (const [method, path] of [
    ['GET', `/api/apps/${NO_SUCH_ID}/lists`],
    ['POST', `/api/apps/${NO_SUCH_ID}/lists`],
    ['GET', '/api/lists'],
    ['GET', `/api/lists/${NO_SUCH_ID}`],
    ['PUT', `/api/lists/${NO_SUCH_ID}`],
    ['DELETE', `/api/lists/${NO_SUCH_ID}`],
    ['GET', `/api/lists/${NO_SUCH_ID}/leads`],
  ] as const) {
    const r = await call(method, path);
    t.is(r.status, 401, `${method} ${path}`);
    t.is(r.body.error.code, 'unauthorized');
  }
});

test('names are unique per product, case-insensitively: 409 list_name_taken on create and rename', async (t) => {
  const u = await createOwner();
  const a = await createTestApp(u, 'a');
  const b = await createTestApp(u, 'b');
  const first = await createList(u, a.id, { name: 'Hot leads' });
  const dup = await call('POST', `/api/apps/${a.id}/lists`, { ...auth(u), body: { name: '  HOT LEADS ' } });
  t.is(dup.status, 409);
  t.is(dup.body.error.code, 'list_name_taken');
  t.is(
    (await call('POST', `/api/apps/${b.id}/lists`, { ...auth(u), body: { name: 'Hot leads' } })).status,
    201,
    'another product may use the name',
  );
  const second = await createList(u, a.id, { name: 'Cold leads' });
  const rename = await call('PUT', `/api/lists/${second.id}`, { ...auth(u), body: { name: 'hot leads' } });
  t.is(rename.status, 409);
  t.is(rename.body.error.code, 'list_name_taken');
  // Renaming a list to its own name in another case is allowed.
  const recase = await call('PUT', `/api/lists/${first.id}`, { ...auth(u), body: { name: 'HOT Leads' } });
  t.is(recase.status, 200, recase.text);
  t.is(recase.body.name, 'HOT Leads');
  // Concurrent creates of one name: exactly one wins.
  const rs = await Promise.all(
    Array.from({ length: 6 }, () => call('POST', `/api/apps/${a.id}/lists`, { ...auth(u), body: { name: 'Race' } })),
  );
  t.is(rs.filter((r) => r.status === 201).length, 1);
  t.true(rs.filter((r) => r.status !== 201).every((r) => r.status === 409 && r.body.error.code === 'list_name_taken'));
});

test('PUT /api/lists/{id} changes name and/or description; null clears the description', async (t) => {
  const u = await createUser();
  const app = await createTestApp(u);
  const list = await createList(u, app.id, { name: 'Before', description: 'old' });
  await add(u, list.id, { email: 'x@example.com' });
  const r = await call('PUT', `/api/lists/${list.id}`, { ...auth(u), body: { name: ' After ' } });
  t.is(r.status, 200, r.text);
  t.like(r.body, { id: list.id, name: 'After', description: 'old', lead_count: 1 });
  const cleared = await call('PUT', `/api/lists/${list.id}`, { ...auth(u), body: { description: null } });
  t.like(cleared.body, { name: 'After', description: null });
  t.true(cleared.body.updated_at >= r.body.updated_at);
  t.deepEqual((await call('GET', `/api/lists/${list.id}`, auth(u))).body, cleared.body);
});

test('lists page with limit and cursor, by product and across the workspace; lead_count per list', async (t) => {
  const u = await createOwner();
  const a = await createTestApp(u, 'a');
  const b = await createTestApp(u, 'b');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await createList(u, i % 2 ? b.id : a.id, { name: `l${i}` })).id);
  const ofA = ids.filter((_, i) => i % 2 === 0);
  t.deepEqual((await allPages(u, `/api/apps/${a.id}/lists`, 2)).ids, ofA);
  const across = await allPages(u, '/api/lists', 2);
  t.deepEqual(across.ids, ids);
  t.is(across.pages, 3);
  t.deepEqual(
    (await allPages(u, `/api/lists?app_id=${b.id}`, 1)).ids,
    ids.filter((_, i) => i % 2),
  );

  // lead_count: 3, 0, 1, ... from one grouped query.
  for (let i = 0; i < 3; i++) await add(u, ids[0], { email: `p${i}@example.com` });
  await add(u, ids[2], { email: 'p0@example.com' });
  const r = await call('GET', '/api/lists', auth(u));
  t.deepEqual(
    r.body.items.map((l: any) => l.lead_count),
    [3, 0, 1, 0, 0],
  );
  t.is((await call('GET', `/api/lists/${ids[0]}`, auth(u))).body.lead_count, 3);
});

test('addContactToList dedupes contacts on normalised email, then normalised profile URL; re-adding is a no-op', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const list = await createList(u, app.id);
  const other = await createList(u, app.id);
  const e = await em();
  const ws = await e.findOneOrFail(Workspace, { owner: u.id });

  const first = await add(u, list.id, { email: 'Ada@Example.com', firstName: 'Ada' });
  t.true(first.created);
  t.is(first.lead.source, 'manual');
  const again = await add(u, list.id, { email: '  ada@EXAMPLE.com ' });
  t.false(again.created);
  t.is(again.lead.id, first.lead.id);
  t.is(await e.count(Contact, { workspace: ws }), 1);

  const byUrl = await add(u, list.id, {
    profileUrl: 'https://www.network.example/in/grace/',
    fullName: 'Grace Hopper',
  });
  t.true(byUrl.created);
  for (const url of [
    'http://network.example/in/grace',
    'network.example/in/grace?trk=abc',
    'https://WWW.network.example/in/grace#about',
  ]) {
    const r = await add(u, list.id, { profileUrl: url });
    t.false(r.created, url);
    t.is(r.lead.id, byUrl.lead.id);
  }
  // Email first: a known email wins even when the profile URL is new.
  const viaEmail = await add(u, list.id, {
    email: 'ada@example.com',
    profileUrl: 'https://network.example/in/someone-else',
  });
  t.is(viaEmail.lead.id, first.lead.id);
  t.false(viaEmail.created);
  t.is(await e.count(Contact, { workspace: ws }), 2);
  t.is(await e.count(Lead, { list: list.id }), 2);

  // The same contact in another list: a second lead, the one contact.
  const elsewhere = await add(u, other.id, { email: 'ADA@example.com', title: 'Analyst', company: 'Engines Ltd' });
  t.true(elsewhere.created);
  t.is(elsewhere.lead.contact.id, first.lead.contact.id);
  // Empty fields of the reused contact were filled; existing ones are kept.
  const contact = await (await em()).findOneOrFail(Contact, first.lead.contact.id);
  t.like(contact, {
    firstName: 'Ada',
    title: 'Analyst',
    company: 'Engines Ltd',
    email: 'Ada@Example.com',
    emailNormalised: 'ada@example.com',
  });

  // Another workspace's contacts are separate people.
  const v = await createUser();
  const vList = await createList(v, (await createTestApp(v)).id);
  const theirs = await add(v, vList.id, { email: 'ada@example.com' });
  t.true(theirs.created);
  t.not(theirs.lead.contact.id, first.lead.contact.id);
});

test('addContactToList: 20 concurrent adds of one contact make one contact and one lead, without error', async (t) => {
  const u = await createUser();
  const list = await createList(u, (await createTestApp(u)).id);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      add(u, list.id, {
        email: i % 2 ? 'Race@Example.com' : 'race@example.com',
        profileUrl: i % 3 ? 'https://network.example/in/race' : 'https://www.network.example/in/race/',
      }),
    ),
  );
  t.is(results.filter((r) => r.created).length, 1);
  t.is(new Set(results.map((r) => r.lead.id)).size, 1);
  const e = await em();
  t.is(await e.count(Lead, { list: list.id }), 1);
  t.is(await e.count(Contact, { workspace: await e.findOneOrFail(Workspace, { owner: u.id }) }), 1);
});

test('addContactToList refuses a contact without a usable key (400 invalid_contact), a foreign list (404) and the Demo workspace (403)', async (t) => {
  const u = await createUser();
  const list = await createList(u, (await createTestApp(u)).id);
  for (const input of [
    {},
    { email: '   ' },
    { email: 'not-an-email' },
    { profileUrl: 'ftp://x.example/a' },
    { email: 'a@example.com', title: 't'.repeat(301) },
  ]) {
    const err = await t.throwsAsync(add(u, list.id, input));
    t.like(err, { status: 400, code: 'invalid_contact' }, JSON.stringify(input).slice(0, 60));
  }
  const stranger = await createUser();
  t.like(await t.throwsAsync(add(stranger, list.id, { email: 'a@example.com' })), { status: 404, code: 'not_found' });
  const e = await em();
  const demoActor = { ...(await ownActor(e, { userId: u.id, kind: 'pat' })), isDemo: true };
  t.like(await t.throwsAsync(addContactToList(e, demoActor, list.id, { email: 'a@example.com' })), {
    status: 403,
    code: 'demo_read_only',
  });
  t.is(await e.count(Lead, { list: list.id }), 0);
});

test('GET /api/lists/{id}/leads: contact fields, pages by lead id, q searches name, email and company with literal wildcards', async (t) => {
  const u = await createUser();
  const list = await createList(u, (await createTestApp(u)).id);
  const people: ContactInput[] = [
    {
      email: 'ada@engines.example',
      firstName: 'Ada',
      lastName: 'Lovelace',
      title: 'CTO',
      company: 'Analytical Engines',
      country: 'GB',
      profileUrl: 'https://network.example/in/ada',
    },
    { email: 'grace@navy.example', fullName: 'Grace Hopper', company: 'US Navy' },
    { email: 'alan@bletchley.example', fullName: 'Alan Turing', company: '100% Codebreakers' },
    { profileUrl: 'https://network.example/in/anon' },
    { email: 'under_score@x.example', company: 'Plain' },
  ];
  const leads = [];
  for (const p of people) leads.push((await add(u, list.id, p)).lead);

  const r = await call('GET', `/api/lists/${list.id}/leads`, auth(u));
  t.is(r.status, 200, r.text);
  t.is(r.body.next_cursor, null);
  t.deepEqual(
    r.body.items.map((i: any) => i.id),
    leads.map((l) => l.id),
  );
  t.deepEqual(r.body.items[0], {
    id: leads[0].id,
    list_id: list.id,
    contact_id: leads[0].contact.id,
    name: 'Ada Lovelace',
    first_name: 'Ada',
    last_name: 'Lovelace',
    title: 'CTO',
    company: 'Analytical Engines',
    email: 'ada@engines.example',
    profile_url: 'https://network.example/in/ada',
    country: 'GB',
    source: 'manual',
    created_at: leads[0].createdAt.toISOString(),
  });
  t.like(r.body.items[3], { name: null, email: null, company: null, profile_url: 'https://network.example/in/anon' });

  const paged = await allPages(u, `/api/lists/${list.id}/leads`, 2);
  t.deepEqual(
    paged.ids,
    leads.map((l) => l.id),
  );
  t.is(paged.pages, 3);

  const search = async (q: string) =>
    (await call('GET', `/api/lists/${list.id}/leads?q=${encodeURIComponent(q)}`, auth(u))).body.items.map(
      (i: any) => i.email,
    );
  t.deepEqual(await search('lovelace'), ['ada@engines.example'], 'first + last name');
  t.deepEqual(await search('ADA LOVE'), ['ada@engines.example']);
  t.deepEqual(await search('hopper'), ['grace@navy.example'], 'full name');
  t.deepEqual(await search('navy.EXAMPLE'), ['grace@navy.example'], 'email');
  t.deepEqual(await search('codebreak'), ['alan@bletchley.example'], 'company');
  t.deepEqual(await search('100%'), ['alan@bletchley.example'], '% is literal');
  t.deepEqual(await search('%'), ['alan@bletchley.example']);
  t.deepEqual(await search('_'), ['under_score@x.example'], '_ is literal');
  t.deepEqual(await search('nobody'), []);
  t.is((await search('   ')).length, 5, 'a blank q is no filter');
  const qPaged = await allPages(u, `/api/lists/${list.id}/leads?q=example`, 1);
  t.is(qPaged.ids.length, 4);
});

test("another workspace's product or list is 404 not_found on every id-taking route", async (t) => {
  const owner = await createUser();
  const app = await createTestApp(owner);
  const list = await createList(owner, app.id);
  await add(owner, list.id, { email: 'secret@example.com' });
  const other = await createUser();
  await createTestApp(other);
  for (const [method, path, body] of [
    ['GET', `/api/apps/${app.id}/lists`, undefined],
    ['POST', `/api/apps/${app.id}/lists`, { name: 'intrusion' }],
    ['GET', `/api/lists?app_id=${app.id}`, undefined],
    ['GET', `/api/lists/${list.id}`, undefined],
    ['PUT', `/api/lists/${list.id}`, { name: 'renamed' }],
    ['DELETE', `/api/lists/${list.id}`, undefined],
    ['GET', `/api/lists/${list.id}/leads`, undefined],
    ['GET', `/api/apps/${NO_SUCH_ID}/lists`, undefined],
    ['GET', `/api/lists/${NO_SUCH_ID}`, undefined],
    ['GET', `/api/lists/${NO_SUCH_ID}/leads`, undefined],
  ] as const) {
    const r = await call(method, path, { ...auth(other), body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.deepEqual((await call('GET', '/api/lists', auth(other))).body.items, []);
  const still = await call('GET', `/api/lists/${list.id}`, auth(owner));
  t.like(still.body, { name: list.name, lead_count: 1 });
});

test('a team member without access to the product gets 403 not_assigned; with access, the lists work', async (t) => {
  const owner = await createOwner();
  const mine = await createTestApp(owner, 'assigned');
  const hidden = await createTestApp(owner, 'hidden');
  const shown = await createList(owner, mine.id, { name: 'shown' });
  const secret = await createList(owner, hidden.id, { name: 'secret' });
  const member = await createUser();
  await addTeamMember(owner.id, member.id, { appIds: [mine.id] });
  const asOwner = { 'x-acting-as': owner.id };
  for (const [method, path, body] of [
    ['GET', `/api/apps/${hidden.id}/lists`, undefined],
    ['POST', `/api/apps/${hidden.id}/lists`, { name: 'x' }],
    ['GET', `/api/lists?app_id=${hidden.id}`, undefined],
    ['GET', `/api/lists/${secret.id}`, undefined],
    ['PUT', `/api/lists/${secret.id}`, { name: 'x' }],
    ['DELETE', `/api/lists/${secret.id}`, undefined],
    ['GET', `/api/lists/${secret.id}/leads`, undefined],
  ] as const) {
    const r = await call(method, path, { ...auth(member, asOwner), body });
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'not_assigned');
  }
  // Across the workspace the member sees only the lists of products they were given.
  t.deepEqual(
    (await call('GET', '/api/lists', auth(member, asOwner))).body.items.map((l: any) => l.id),
    [shown.id],
  );
  const created = await call('POST', `/api/apps/${mine.id}/lists`, {
    ...auth(member, asOwner),
    body: { name: 'by member' },
  });
  t.is(created.status, 201, created.text);
  t.is(
    (await call('PUT', `/api/lists/${shown.id}`, { ...auth(member, asOwner), body: { description: 'ok' } })).status,
    200,
  );
  t.is((await call('GET', `/api/lists/${shown.id}/leads`, auth(member, asOwner))).status, 200);
  t.is((await call('DELETE', `/api/lists/${created.body.id}`, auth(member, asOwner))).status, 200);
  // A member given no product sees no list.
  const none = await createUser();
  await addTeamMember(owner.id, none.id, { appIds: [] });
  const empty = await call('GET', '/api/lists', auth(none, asOwner));
  t.is(empty.status, 200, empty.text);
  t.deepEqual(empty.body.items, []);
  // Not a member of that workspace at all: 403 not_assigned from X-Acting-As.
  const stranger = await createUser();
  const r = await call('GET', `/api/lists/${shown.id}`, auth(stranger, asOwner));
  t.is(r.status, 403);
  t.is(r.body.error.code, 'not_assigned');
});

test('the Demo workspace reads lists but refuses writes with 403 demo_read_only', async (t) => {
  const u = await createUser();
  const joined = await call('POST', '/api/me/workspaces/demo/join', auth(u));
  t.true(joined.status === 201 || joined.status === 200, joined.text);
  const e = await em();
  const demoApp = await e.findOneOrFail(App, { workspace: DEMO_WORKSPACE_ID }, { orderBy: { id: 'asc' } });
  // A list in the Demo workspace, written directly (as a seed would).
  const list = e.create(LeadList, {
    workspace: e.getReference(Workspace, DEMO_WORKSPACE_ID),
    app: demoApp,
    name: `demo ${Math.random()}`,
  });
  await e.flush();
  // The shared Demo workspace outlives this test: take the row out again whatever happens.
  t.teardown(async () => void (await (await em()).nativeDelete(LeadList, { id: list.id })));
  const inDemo = auth(u, { 'x-acting-as': DEMO_USER_ID });
  t.is((await call('GET', '/api/lists', inDemo)).status, 200);
  t.is((await call('GET', `/api/apps/${demoApp.id}/lists`, inDemo)).status, 200);
  t.like((await call('GET', `/api/lists/${list.id}`, inDemo)).body, { id: list.id, lead_count: 0 });
  t.is((await call('GET', `/api/lists/${list.id}/leads`, inDemo)).status, 200);
  for (const [method, path, body] of [
    ['POST', `/api/apps/${demoApp.id}/lists`, { name: 'vandalism' }],
    ['PUT', `/api/lists/${list.id}`, { name: 'vandalism' }],
    ['DELETE', `/api/lists/${list.id}`, undefined],
  ] as const) {
    const r = await call(method, path, { ...inDemo, body });
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'demo_read_only');
  }
  const fresh = await em();
  t.is((await fresh.findOneOrFail(LeadList, list.id)).name, list.name);
  t.is(await fresh.count(LeadList, { workspace: DEMO_WORKSPACE_ID, name: 'vandalism' }), 0);
  // The domain refuses too, for callers outside a request (workflows).
  const actor = await resolveActor(fresh, { userId: u.id, kind: 'pat' }, DEMO_USER_ID);
  t.like(await t.throwsAsync(addContactToList(fresh, actor, list.id, { email: 'a@example.com' })), {
    code: 'demo_read_only',
  });
});

test('DELETE /api/lists/{id} deletes the list and its leads, keeps the contacts, and clears the list of agents that used it', async (t) => {
  const u = await createUser();
  const app = await createTestApp(u);
  const list = await createList(u, app.id);
  const kept = await createList(u, app.id);
  const a = await add(u, list.id, { email: 'one@example.com' });
  await add(u, list.id, { email: 'two@example.com' });
  await add(u, kept.id, { email: 'one@example.com' });
  const e = await em();
  const ws = e.getReference(Workspace, (await e.findOneOrFail(Workspace, { owner: u.id })).id);
  const agent = e.create(DiscoveryAgent, {
    workspace: ws,
    app: e.getReference(App, app.id),
    name: 'Agent',
    list: e.getReference(LeadList, list.id),
  });
  const other = e.create(DiscoveryAgent, {
    workspace: ws,
    app: e.getReference(App, app.id),
    name: 'Other',
    list: e.getReference(LeadList, kept.id),
  });
  await e.flush();

  const r = await call('DELETE', `/api/lists/${list.id}`, auth(u));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { id: list.id, deleted: true, leads_deleted: 2, agents_cleared: [agent.id] });

  const after = await em();
  const cleared = await after.findOneOrFail(DiscoveryAgent, agent.id);
  t.is(cleared.list, null, 'the agent keeps working without a destination list');
  t.is(cleared.status, 'draft');
  t.is((await after.findOneOrFail(DiscoveryAgent, other.id)).list?.id, kept.id);
  t.is(await after.count(Lead, { list: list.id }), 0);
  t.is(await after.count(Contact, { id: a.lead.contact.id }), 1, 'contacts stay in the workspace');
  t.is((await call('GET', `/api/lists/${kept.id}`, auth(u))).body.lead_count, 1);

  for (const [method, path] of [
    ['GET', `/api/lists/${list.id}`],
    ['DELETE', `/api/lists/${list.id}`],
    ['GET', `/api/lists/${list.id}/leads`],
  ] as const) {
    t.is((await call(method, path, auth(u))).status, 404, `${method} ${path} after delete`);
  }
  // The name is free again.
  t.is((await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body: { name: list.name } })).status, 201);
});

/** An enrollment row of the lead in the campaign, as the enroll routes insert it (no workflow: deletion only reads the rows). */
async function enroll(
  workspaceId: string,
  campaignId: string,
  lead: { leadId: string; contactId: string },
  status = 'active',
) {
  await (
    await em()
  ).execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 1, 1, now(), now(), now())`,
    [uuidv7(), workspaceId, campaignId, lead.leadId, lead.contactId, status],
  );
}

const enrollmentsOf = async (campaignIds: string[]) =>
  (
    await (
      await em()
    ).execute(`select count(*)::int as n from enrollments where campaign_id = any(?::uuid[])`, [
      `{${campaignIds.join(',')}}`,
    ])
  )[0].n as number;

test('DELETE /api/lists/{id}: a list whose leads a campaign enrolls is 409 list_in_use naming the campaigns, and nothing is deleted; archived campaigns do not hold it', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const [a, b, c] = await o.leads(3);
  const steps = [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }];
  const running = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [], steps });
  const ended = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [], steps, status: 'completed' });
  const archived = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [], steps, status: 'archived' });
  await enroll(o.workspaceId, running.id, a);
  await enroll(o.workspaceId, ended.id, b, 'completed'); // an ended enrollment still holds the list
  await enroll(o.workspaceId, archived.id, c, 'stopped');
  const names = (await (
    await em()
  ).execute(`select id, name from campaigns where id in (?, ?)`, [running.id, ended.id])) as {
    id: string;
    name: string;
  }[];

  const r = await call('DELETE', `/api/lists/${o.listId}`, auth(u));
  t.is(r.status, 409, r.text);
  t.is(r.body.error.code, 'list_in_use');
  t.deepEqual(r.body.error.details, { campaign_ids: [running.id, ended.id].sort(), campaign_count: 2 });
  t.regex(r.body.error.message, /^2 campaigns enroll leads of this list/);
  for (const n of names) t.true(r.body.error.message.includes(`"${n.name}"`), `the message names ${n.name}`);
  t.false(r.body.error.message.includes(archived.id));
  // Nothing was deleted: the list, its leads, every enrollment.
  const kept = await call('GET', `/api/lists/${o.listId}`, auth(u));
  t.is(kept.status, 200);
  t.is(kept.body.lead_count, 3);
  t.is(await enrollmentsOf([running.id, ended.id, archived.id]), 3);

  // Archiving one campaign leaves the other holding the list (named alone).
  t.is(
    (await call('PATCH', `/api/campaigns/${ended.id}/status`, { ...auth(u), body: { status: 'archived' } })).status,
    200,
  );
  const one = await call('DELETE', `/api/lists/${o.listId}`, auth(u));
  t.is(one.status, 409, one.text);
  t.deepEqual(one.body.error.details, { campaign_ids: [running.id], campaign_count: 1 });
  t.regex(one.body.error.message, /^a campaign enrolls leads of this list \(".+"\): archive it first/);

  // With every campaign archived, the list goes, and its leads' enrollments with them.
  t.is(
    (await call('PATCH', `/api/campaigns/${running.id}/status`, { ...auth(u), body: { status: 'archived' } })).status,
    200,
  );
  const gone = await call('DELETE', `/api/lists/${o.listId}`, auth(u));
  t.is(gone.status, 200, gone.text);
  t.like(gone.body, { id: o.listId, deleted: true, leads_deleted: 3 });
  t.is(await enrollmentsOf([running.id, ended.id, archived.id]), 0);

  // A list whose contacts are enrolled through another list is not in use: enrollments belong to leads.
  const other = await createList(u, o.app.id);
  await add(u, other.id, { email: a.email });
  const free = await call('DELETE', `/api/lists/${other.id}`, auth(u));
  t.is(free.status, 200, free.text);
  t.like(free.body, { leads_deleted: 1 });
});

test('DELETE /api/lists/{id} waits for an enrollment being inserted into the list, then refuses with 409 list_in_use', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const [a] = await o.leads(1);
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
  });
  // An enroll in flight: its insert is done (its foreign key holds the lead), not yet committed.
  const c = new pg.Client({ connectionString: (await api()).services.config.databaseUrl });
  await c.connect();
  t.teardown(() => c.end());
  const holder = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;
  await c.query('begin');
  await c.query(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at)
     values ($1, $2, $3, $4, $5, 'active', 1, 1, now(), now(), now())`,
    [uuidv7(), o.workspaceId, campaign.id, a.leadId, a.contactId],
  );
  let answered = false;
  const deleting = call('DELETE', `/api/lists/${o.listId}`, auth(u)).finally(() => {
    answered = true;
  });
  // The delete is blocked by the uncommitted insert (a lock wait on its session), or it answered early.
  await waitFor(
    'the delete to wait on the enrollment insert',
    async () => {
      if (answered) return true;
      const blocked = await (
        await em()
      ).execute(`select 1 from pg_stat_activity where ? = any(pg_blocking_pids(pid))`, [holder]);
      return blocked.length > 0;
    },
    30_000,
  );
  t.false(answered, 'the delete waits for the enrollment');
  await c.query('commit');
  const r = await deleting;
  t.is(r.status, 409, r.text);
  t.deepEqual(r.body.error.details, { campaign_ids: [campaign.id], campaign_count: 1 });
  t.is(await enrollmentsOf([campaign.id]), 1);
  t.is((await call('GET', `/api/lists/${o.listId}`, auth(u))).body.lead_count, 1);
});

test.after.always(closeApi);
