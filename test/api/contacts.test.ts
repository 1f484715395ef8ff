// Contacts: the filtered list and its pagination (agreeing with what the filters select), one contact
// with memberships and provenance, fit and pin, lead edits (validation, unique keys, edited fields
// surviving enrichment), product scope of members, cross-workspace 404s, the Demo guard, the tools.
import test from 'ava';
import { DEMO_USER_ID, demoId } from '../../domain/demo/seed.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { loadConfig } from '../../lib/config.js';
import { CorpusPeople } from '../../lib/enrichment/local.js';
import { api, call, closeApi, createTestApp, createUser, type Res, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { seedContacts, type SeededContact } from '../helpers/contacts.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });
const NO_SUCH_ID = '0190a000-0000-7000-8000-000000000000';

async function createList(u: TestUser, appId: string, name: string): Promise<string> {
  const r = await call('POST', `/api/apps/${appId}/lists`, { ...auth(u), body: { name } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.id;
}

interface World {
  u: TestUser;
  workspaceId: string;
  appA: string;
  appB: string;
  listA: string;
  listB: string;
  contacts: SeededContact[];
}

/** 30 contacts: 0–19 in list A (product A), 10–29 in list B (product B); fit, pins and titles vary. */
async function world(): Promise<World> {
  const u = await createOwner();
  const appA = (await createTestApp(u, 'A')).id;
  const appB = (await createTestApp(u, 'B')).id;
  const listA = await createList(u, appA, 'List A');
  const listB = await createList(u, appB, 'List B');
  const labels = ['good', 'maybe', 'bad', null] as const;
  const contacts = await seedContacts(
    await workspaceIdOf(u.id),
    Array.from({ length: 30 }, (_, i) => ({
      email: `person${i}@acme${i % 3}.example`,
      first_name: `First${i}`,
      last_name: `Last${i}`,
      full_name: i % 5 === 0 ? null : `First${i} Last${i}`,
      title: i % 4 === 0 ? 'CTO' : i % 4 === 1 ? 'Head of 100%_growth' : 'Engineer',
      company: `Acme ${i % 3}`,
      fit_label: labels[i % 4],
      fit_score: labels[i % 4] ? 10 * (i % 10) : null,
      pinned: i % 6 === 0,
      lists: [...(i < 20 ? [listA] : []), ...(i >= 10 ? [listB] : [])],
    })),
  );
  return { u, workspaceId: await workspaceIdOf(u.id), appA, appB, listA, listB, contacts };
}

/** Every page of GET /api/contacts with these filters (`limit` per page): the ids in order. */
async function pageAll(u: TestUser, query: string, limit = 7, headers: Record<string, string> = {}): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const r: Res = await call(
      'GET',
      `/api/contacts?limit=${limit}${query ? `&${query}` : ''}${cursor ? `&cursor=${cursor}` : ''}`,
      auth(u, headers),
    );
    if (r.status !== 200) throw new Error(`${query}: ${r.status} ${r.text}`);
    if (r.body.items.length > limit) throw new Error('page too long');
    ids.push(...r.body.items.map((c: { id: string }) => c.id));
    cursor = r.body.next_cursor;
    if (!cursor) return ids;
  }
  throw new Error('too many pages');
}

test('GET /api/contacts: every filter and combination, paged, returns exactly the contacts it selects, oldest first', async (t) => {
  const w = await world();
  const c = w.contacts;
  const expect = (pred: (x: SeededContact, i: number) => boolean) => c.filter(pred).map((x) => x.id);
  const cases: [string, string[]][] = [
    ['', expect(() => true)],
    [`list_id=${w.listA}`, expect((_, i) => i < 20)],
    [`list_id=${w.listB}`, expect((_, i) => i >= 10)],
    [`app_id=${w.appB}`, expect((_, i) => i >= 10)],
    ['fit=good', expect((x) => x.fit_label === 'good')],
    ['fit=maybe', expect((x) => x.fit_label === 'maybe')],
    ['fit=bad', expect((x) => x.fit_label === 'bad')],
    ['fit=none', expect((x) => x.fit_label === null)],
    ['pinned=true', expect((x) => Boolean(x.pinned))],
    ['pinned=false', expect((x) => !x.pinned)],
    ['q=cto', expect((x) => x.title === 'CTO')],
    ['q=%25_gro', expect((x) => x.title === 'Head of 100%_growth')], // % and _ match themselves
    ['q=ACME1.EX', expect((_, i) => i % 3 === 1)], // email, case-insensitively
    ['q=first7%20last7', expect((_, i) => i === 7)], // first + last name (full name null for 0, 5, …)
    ['q=First25', expect((_, i) => i === 25)], // no full name: matched by first + last
    [
      `list_id=${w.listA}&pinned=true&fit=good`,
      expect((x, i) => i < 20 && Boolean(x.pinned) && x.fit_label === 'good'),
    ],
    [`app_id=${w.appA}&list_id=${w.listB}`, expect((_, i) => i >= 10 && i < 20)],
    ['q=nobody-matches', []],
  ];
  for (const [query, ids] of cases) {
    t.deepEqual(await pageAll(w.u, query), ids, query || '(no filter)');
    t.deepEqual(await pageAll(w.u, query, 200), ids, `${query} in one page`);
  }
  t.is(cases[1][1].length, 20);

  const first = await call('GET', '/api/contacts?limit=1', auth(w.u));
  t.like(first.body.items[0], {
    id: c[0].id,
    name: 'First0 Last0', // no full name: first and last joined
    full_name: null,
    email: 'person0@acme0.example',
    title: 'CTO',
    company: 'Acme 0',
    fit_label: 'good',
    fit_score: 0,
    pinned: true,
  });
  t.truthy(first.body.items[0].pinned_at);
  t.regex(first.body.next_cursor, /^[A-Za-z0-9_-]{22}$/);
});

test('GET /api/contacts: 400 for bad filters, 404 for another workspace’s list or product', async (t) => {
  const w = await world();
  const other = await world();
  for (const q of [
    'fit=great',
    'pinned=yes',
    'list_id=nope',
    'app_id=1',
    'limit=0',
    'limit=201',
    'cursor=abc',
    'sort=name',
    `q=${'x'.repeat(201)}`,
  ]) {
    const r = await call('GET', `/api/contacts?${q}`, auth(w.u));
    t.is(r.status, 400, q);
    t.is(r.body.error.code, 'invalid_query', q);
  }
  for (const q of [`list_id=${other.listA}`, `app_id=${other.appA}`, `list_id=${NO_SUCH_ID}`, `app_id=${NO_SUCH_ID}`]) {
    const r = await call('GET', `/api/contacts?${q}`, auth(w.u));
    t.is(r.status, 404, q);
    t.is(r.body.error.code, 'not_found');
  }
  // Only the caller's workspace: nothing of the other one shows.
  const mine = new Set(await pageAll(w.u, '', 200));
  t.false(other.contacts.some((c) => mine.has(c.id)));
});

test('a member limited to a product sees only the contacts of its lists, their memberships there, and 403 elsewhere', async (t) => {
  const w = await world();
  const member = await createUser();
  await addTeamMember(w.u.id, member.id, { appIds: [w.appA] });
  const as = { 'x-acting-as': w.u.id };
  t.deepEqual(
    await pageAll(member, '', 7, as),
    w.contacts.slice(0, 20).map((c) => c.id),
  );
  t.deepEqual(
    await pageAll(member, 'q=cto', 7, as),
    w.contacts
      .slice(0, 20)
      .filter((c) => c.title === 'CTO')
      .map((c) => c.id),
  );
  const both = w.contacts[15]; // in A and B
  const onlyB = w.contacts[25];
  const seen = await call('GET', `/api/contacts/${both.id}`, auth(member, as));
  t.is(seen.status, 200, seen.text);
  t.deepEqual(
    seen.body.leads.map((l: { list_id: string }) => l.list_id),
    [w.listA],
    'only the memberships of lists they see',
  );
  const owner = await call('GET', `/api/contacts/${both.id}`, auth(w.u));
  t.deepEqual(
    owner.body.leads.map((l: { list_id: string }) => l.list_id),
    [w.listA, w.listB],
  );
  for (const [method, path, body] of [
    ['GET', `/api/contacts?app_id=${w.appB}`, undefined],
    ['GET', `/api/contacts?list_id=${w.listB}`, undefined],
    ['GET', `/api/contacts/${onlyB.id}`, undefined],
    ['PATCH', `/api/contacts/${onlyB.id}/fit`, { label: 'good' }],
    ['PUT', `/api/contacts/${onlyB.id}/pin`, undefined],
    ['DELETE', `/api/contacts/${onlyB.id}/pin`, undefined],
    ['PATCH', `/api/leads/${onlyB.leads[w.listB]}`, { title: 'x' }],
    ['PATCH', `/api/leads/${both.leads[w.listB]}`, { title: 'x' }], // the lead of list B, though the contact is visible
  ] as const) {
    const r = await call(method, path, { ...auth(member, as), body });
    t.is(r.status, 403, `${method} ${path} ${r.text}`);
    t.is(r.body.error.code, 'not_assigned');
  }
  t.is(
    (
      await call('PATCH', `/api/leads/${both.leads[w.listA]}`, {
        ...auth(member, as),
        body: { title: 'Edited by member' },
      })
    ).status,
    200,
  );
  // A member given no product sees no contact.
  const none = await createUser();
  await addTeamMember(w.u.id, none.id, { appIds: [] });
  t.deepEqual(await pageAll(none, '', 50, as), []);
});

test('GET /api/contacts/{id}: memberships and provenance; fit is set, partly changed and cleared; pin is idempotent both ways', async (t) => {
  const w = await world();
  const c = w.contacts[12];
  const got = await call('GET', `/api/contacts/${c.id}`, auth(w.u));
  t.is(got.status, 200, got.text);
  t.like(got.body, {
    id: c.id,
    edited_fields: [],
    enriched_fields: [],
    network_provider_id: null,
    fit_label: 'good',
    fit_score: 20,
    pinned: true,
  });
  t.deepEqual(
    got.body.leads.map((l: any) => [l.id, l.list_id, l.list_name, l.app_id, l.source]),
    [
      [c.leads[w.listA], w.listA, 'List A', w.appA, 'import'],
      [c.leads[w.listB], w.listB, 'List B', w.appB, 'import'],
    ],
  );

  const fit = await call('PATCH', `/api/contacts/${c.id}/fit`, { ...auth(w.u), body: { score: 87, label: 'good' } });
  t.is(fit.status, 200, fit.text);
  t.like(fit.body, { fit_score: 87, fit_label: 'good' });
  t.truthy(fit.body.fit_updated_at);
  t.like((await call('PATCH', `/api/contacts/${c.id}/fit`, { ...auth(w.u), body: { label: 'maybe' } })).body, {
    fit_score: 87,
    fit_label: 'maybe',
  });
  t.like((await call('PATCH', `/api/contacts/${c.id}/fit`, { ...auth(w.u), body: { score: null } })).body, {
    fit_score: null,
    fit_label: 'maybe',
  });
  t.like((await call('PATCH', `/api/contacts/${c.id}/fit`, { ...auth(w.u), body: { score: 0, label: null } })).body, {
    fit_score: 0,
    fit_label: null,
  });
  for (const body of [
    {},
    { score: 101 },
    { score: -1 },
    { score: 4.5 },
    { label: 'great' },
    { score: '50' },
    { label: 'good', extra: 1 },
  ]) {
    const r = await call('PATCH', `/api/contacts/${c.id}/fit`, { ...auth(w.u), body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is(
    (await call('PATCH', `/api/contacts/nope/fit`, { ...auth(w.u), body: { score: 1 } })).body.error.code,
    'invalid_id',
  );

  // Pin: already pinned (seeded) → unchanged; unpin twice; pin again.
  const pinnedAt = got.body.pinned_at;
  t.like((await call('PUT', `/api/contacts/${c.id}/pin`, auth(w.u))).body, { pinned: true, pinned_at: pinnedAt });
  t.like((await call('DELETE', `/api/contacts/${c.id}/pin`, auth(w.u))).body, { pinned: false, pinned_at: null });
  t.like((await call('DELETE', `/api/contacts/${c.id}/pin`, auth(w.u))).body, { pinned: false, pinned_at: null });
  t.false((await pageAll(w.u, 'pinned=true', 200)).includes(c.id));
  const again = await call('PUT', `/api/contacts/${c.id}/pin`, auth(w.u));
  t.is(again.status, 200, again.text);
  t.true(again.body.pinned);
  t.true((await pageAll(w.u, 'pinned=true', 200)).includes(c.id));
  t.deepEqual(
    await pageAll(w.u, `fit=none&list_id=${w.listA}`, 200),
    w.contacts.filter((x, i) => i < 20 && (x === c ? true : x.fit_label === null)).map((x) => x.id),
  );
});

test('PATCH /api/leads/{id}: edits the contact, marks the fields edited, keeps the unique keys (409 naming the other contact), validates', async (t) => {
  const w = await world();
  const c = w.contacts[3]; // in list A only
  const lead = c.leads[w.listA];
  const r = await call('PATCH', `/api/leads/${lead}`, {
    ...auth(w.u),
    body: {
      title: '  Chief Technology Officer ',
      email: 'New.Address@Example.COM',
      phone: '+33 (1) 23-45-67',
      company_domain: 'WWW.Acme.Example',
      country: 'FR',
    },
  });
  t.is(r.status, 200, r.text);
  t.like(r.body, { id: lead, list_id: w.listA, app_id: w.appA, contact_id: c.id, source: 'import' });
  t.like(r.body.contact, {
    title: 'Chief Technology Officer',
    email: 'New.Address@Example.COM',
    phone: '+33 (1) 23-45-67',
    company_domain: 'acme.example',
    country: 'FR',
  });
  t.deepEqual(r.body.contact.edited_fields, ['email', 'phone', 'title', 'company_domain', 'country']);
  const row = (
    await (await em()).execute('select email_normalised, edited_fields from contacts where id = ?', [c.id])
  )[0];
  t.is(row.email_normalised, 'new.address@example.com');
  t.deepEqual(
    row.edited_fields,
    ['email', 'phone', 'title', 'companyDomain', 'country'],
    'stored with enrichment’s field names',
  );
  // The contact list shows the change, and the old email no longer finds it.
  t.deepEqual(await pageAll(w.u, 'q=new.address', 200), [c.id]);

  // Names: a full name that was the join of first and last follows them (and is marked); an own full name is kept.
  const renamed = await call('PATCH', `/api/leads/${lead}`, { ...auth(w.u), body: { first_name: 'Ada' } });
  t.like(renamed.body.contact, { first_name: 'Ada', full_name: 'Ada Last3', name: 'Ada Last3' });
  t.true(renamed.body.contact.edited_fields.includes('full_name'));
  await call('PATCH', `/api/leads/${lead}`, { ...auth(w.u), body: { full_name: 'Countess Ada' } });
  t.like((await call('PATCH', `/api/leads/${lead}`, { ...auth(w.u), body: { last_name: 'Lovelace' } })).body.contact, {
    full_name: 'Countess Ada',
    last_name: 'Lovelace',
  });
  // null clears a field (and marks it, so enrichment does not fill it back).
  const cleared = await call('PATCH', `/api/leads/${lead}`, { ...auth(w.u), body: { headline: null, phone: null } });
  t.like(cleared.body.contact, { headline: null, phone: null });
  t.true(cleared.body.contact.edited_fields.includes('headline'));

  // Another contact's email or profile URL, in any spelling: 409 contact_exists with its id.
  const other = w.contacts[4];
  const clash = await call('PATCH', `/api/leads/${lead}`, { ...auth(w.u), body: { email: 'Person4@ACME1.example' } });
  t.is(clash.status, 409, clash.text);
  t.like(clash.body.error, { code: 'contact_exists', details: { contact_id: other.id, field: 'email' } });
  await call('PATCH', `/api/leads/${other.leads[w.listA]}`, {
    ...auth(w.u),
    body: { profile_url: 'https://pronet.example/in/someone-else' },
  });
  const urlClash = await call('PATCH', `/api/leads/${lead}`, {
    ...auth(w.u),
    body: { profile_url: 'http://www.pronet.example/in/Someone-Else/?trk=1' },
  });
  t.is(urlClash.status, 409, urlClash.text);
  t.like(urlClash.body.error, { code: 'contact_exists', details: { contact_id: other.id, field: 'profile_url' } });
  // Its own email in another spelling is no clash.
  t.is(
    (await call('PATCH', `/api/leads/${lead}`, { ...auth(w.u), body: { email: 'new.address@example.com' } })).status,
    200,
  );

  // Validation: each with its code; nothing changes.
  for (const [body, code] of [
    [{}, 'invalid_body'],
    [{ nickname: 'x' }, 'invalid_body'],
    [{ title: '   ' }, 'invalid_body'],
    [{ title: 'x'.repeat(301) }, 'invalid_body'],
    [{ first_name: 42 }, 'invalid_body'],
    [{ phone: 'call me' }, 'invalid_body'],
    [{ company_domain: 'not a domain' }, 'invalid_body'],
    [{ email: 'not-an-email' }, 'invalid_email'],
    [{ email: 'a@b' }, 'invalid_email'],
    [{ profile_url: 'ftp://pronet.example/in/x' }, 'invalid_profile_url'],
    [{ profile_url: 'https://localhost/in/x' }, 'invalid_profile_url'],
    [{ profile_url: 'https://pronet.example/in/%zz' }, 'invalid_profile_url'],
    [{ email: null, profile_url: null }, 'invalid_contact'],
  ] as const) {
    const bad = await call('PATCH', `/api/leads/${lead}`, { ...auth(w.u), body });
    t.is(bad.status, 400, `${JSON.stringify(body)} ${bad.text}`);
    t.is(bad.body.error.code, code, JSON.stringify(body));
  }
  // One identity may go as long as the other stays.
  const noEmail = await call('PATCH', `/api/leads/${lead}`, {
    ...auth(w.u),
    body: { email: null, profile_url: 'https://pronet.example/in/ada' },
  });
  t.is(noEmail.status, 200, noEmail.text);
  t.like(noEmail.body.contact, { email: null, profile_url: 'https://pronet.example/in/ada' });
  t.is(
    (await call('PATCH', `/api/leads/${lead}`, { ...auth(w.u), body: { profile_url: null } })).body.error.code,
    'invalid_contact',
  );
  t.is((await call('PATCH', `/api/leads/${NO_SUCH_ID}`, { ...auth(w.u), body: { title: 'x' } })).status, 404);
  t.is((await call('PATCH', `/api/leads/nope`, { ...auth(w.u), body: { title: 'x' } })).body.error.code, 'invalid_id');
});

test('provenance: a field edited through PATCH /api/leads/{id} survives an enrichment, which fills the others', async (t) => {
  const w = await world();
  const people = new CorpusPeople(loadConfig().sources.corpus);
  let i = 3000;
  while (!(people.corpus.people[i].current && people.email(i) && !people.corpus.people[i].email)) i++;
  const p = people.corpus.people[i];
  const [c] = await seedContacts(w.workspaceId, [
    { profile_url: p.profileUrl, full_name: p.fullName, lists: [w.listA] },
  ]);
  const edit = await call('PATCH', `/api/leads/${c.leads[w.listA]}`, {
    ...auth(w.u),
    body: { title: 'Our champion (edited)', company: 'Edited Co' },
  });
  t.is(edit.status, 200, edit.text);

  const r = await call('POST', `/api/enrichment/contacts/${c.id}`, { ...auth(w.u), body: {} });
  t.is(r.status, 202, r.text);
  const outcome = await (await api()).services.temporal.workflow.getHandle(r.body.workflow_id).result();
  t.like(outcome, { status: 'completed', found: true });
  const after = await call('GET', `/api/contacts/${c.id}`, auth(w.u));
  t.like(after.body, { title: 'Our champion (edited)', company: 'Edited Co', email: people.email(i) });
  t.deepEqual(after.body.edited_fields, ['title', 'company']);
  t.true(after.body.enriched_fields.includes('email'));
  t.false(after.body.enriched_fields.includes('title'));
  t.false(after.body.enriched_fields.includes('company'));
  t.truthy(after.body.enriched_at);
  const attempt = await call('POST', `/api/enrichment/contacts/${c.id}`, { ...auth(w.u), body: {} });
  t.true(attempt.body.fields_kept.includes('title'), JSON.stringify(attempt.body));
  // A later edit of a filled field marks it too: the next enrichment keeps it.
  const email = await call('PATCH', `/api/leads/${c.leads[w.listA]}`, { ...auth(w.u), body: { phone: '+1 555 0100' } });
  t.true(email.body.contact.edited_fields.includes('phone'));
  t.true(email.body.contact.enriched_fields.includes('email'));
});

test('another workspace’s contact or lead is 404 on every route that takes its id', async (t) => {
  const w = await world();
  const other = await createOwner();
  const c = w.contacts[15];
  for (const [method, path, body] of [
    ['GET', `/api/contacts/${c.id}`, undefined],
    ['PATCH', `/api/contacts/${c.id}/fit`, { score: 1 }],
    ['PUT', `/api/contacts/${c.id}/pin`, undefined],
    ['DELETE', `/api/contacts/${c.id}/pin`, undefined],
    ['PATCH', `/api/leads/${c.leads[w.listA]}`, { title: 'x' }],
    ['GET', `/api/contacts?list_id=${w.listA}`, undefined],
    ['GET', `/api/contacts?app_id=${w.appA}`, undefined],
    ['GET', `/api/contacts/${NO_SUCH_ID}`, undefined],
    ['PUT', `/api/contacts/${NO_SUCH_ID}/pin`, undefined],
  ] as const) {
    const r = await call(method, path, { ...auth(other), body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  const still = await call('GET', `/api/contacts/${c.id}`, auth(w.u));
  t.like(still.body, { title: c.title, fit_score: c.fit_score });
  t.deepEqual((await call('GET', '/api/contacts', auth(other))).body.items, []);
  // A malformed X-Acting-As: 400 invalid_user (the shared rule, on these routes too).
  for (const path of ['/api/contacts', `/api/contacts/${c.id}`]) {
    const r = await call('GET', path, auth(w.u, { 'x-acting-as': 'nope' }));
    t.is(r.status, 400, path);
    t.is(r.body.error.code, 'invalid_user');
  }
  // Unauthenticated: 401 everywhere.
  for (const [method, path] of [
    ['GET', '/api/contacts'],
    ['GET', `/api/contacts/${c.id}`],
    ['PATCH', `/api/contacts/${c.id}/fit`],
    ['PUT', `/api/contacts/${c.id}/pin`],
    ['DELETE', `/api/contacts/${c.id}/pin`],
    ['PATCH', `/api/leads/${c.leads[w.listA]}`],
  ] as const) {
    t.is((await call(method, path, {})).status, 401, `${method} ${path}`);
  }
});

test('the Demo workspace reads contacts and refuses every write with 403 demo_read_only', async (t) => {
  const u = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', auth(u));
  const inDemo = auth(u, { 'x-acting-as': DEMO_USER_ID });
  const list = await call('GET', '/api/contacts?limit=200', inDemo);
  t.is(list.status, 200, list.text);
  t.true(list.body.items.length > 0);
  const c = list.body.items[0];
  const one = await call('GET', `/api/contacts/${c.id}`, inDemo);
  t.is(one.status, 200, one.text);
  // The seed shows the reviewers' judgement and a finished export a visitor can download.
  t.true(list.body.items.some((x: any) => x.fit_label === 'good' && x.pinned));
  t.true(
    (await Promise.all(list.body.items.map((x: any) => call('GET', `/api/contacts/${x.id}`, inDemo)))).some((r) =>
      r.body.edited_fields.includes('title'),
    ),
  );
  const exports = await call('GET', '/api/contacts/export', inDemo);
  const seeded = exports.body.items.find((x: any) => x.id === demoId(0x600));
  t.like(seeded, { status: 'completed', download_url: `/api/contacts/export?id=${demoId(0x600)}` });
  const file = await call('GET', seeded.download_url, inDemo);
  t.is(file.status, 200, file.text);
  t.is(file.text.trim().split('\r\n').length, seeded.row_count + 1);
  for (const [method, path, body] of [
    ['PATCH', `/api/contacts/${c.id}/fit`, { score: 1 }],
    ['PUT', `/api/contacts/${c.id}/pin`, undefined],
    ['DELETE', `/api/contacts/${c.id}/pin`, undefined],
    ['PATCH', `/api/leads/${one.body.leads[0].id}`, { title: 'vandalism' }],
    ['POST', '/api/contacts/export', {}],
  ] as const) {
    const r = await call(method, path, { ...inDemo, body });
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'demo_read_only');
  }
});

test('Operator tool list_contacts: the same filters and scope as REST, continued with `after`', async (t) => {
  const w = await world();
  const { services } = await api();
  const e = services.orm.em.fork();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: w.u.id, kind: 'session' }, undefined),
  };
  const tool = findTool('list_contacts')!;
  t.is(tool.risk, 'read');
  const first = (await runTool(tool, ctx, { list_id: w.listB, limit: 6 })) as {
    contacts: { id: string }[];
    more_after: string | null;
  };
  t.deepEqual(
    first.contacts.map((c) => c.id),
    w.contacts.slice(10, 16).map((c) => c.id),
  );
  const rest = (await runTool(tool, ctx, { list_id: w.listB, limit: 50, after: first.more_after })) as {
    contacts: { id: string }[];
    more_after: string | null;
  };
  t.deepEqual(
    rest.contacts.map((c) => c.id),
    w.contacts.slice(16).map((c) => c.id),
  );
  t.is(rest.more_after, null);
  const good = (await runTool(tool, ctx, { fit: 'good', pinned: true })) as {
    contacts: { id: string; fit_label: string; pinned: boolean }[];
  };
  t.true(good.contacts.length > 0 && good.contacts.every((c) => c.fit_label === 'good' && c.pinned));
  const other = await createOwner();
  const otherCtx = { ...ctx, actor: await resolveActor(e as never, { userId: other.id, kind: 'session' }, undefined) };
  t.like(await t.throwsAsync(runTool(tool, otherCtx, { list_id: w.listA })), { status: 404 });
});
