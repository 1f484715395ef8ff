// Table views (docs/ideas-views-onboarding.md): per person, table and workspace; POST upserts by
// (table, name) case-insensitively (201 created / 200 updated); validated layouts with size limits;
// DELETE only one's own (404 for another member's or another workspace's); the per-table cap.
import test from 'ava';
import { MAX_VIEWS_PER_TABLE } from '../../domain/table-views/table-views.js';
import { uuidv7 } from '../../lib/ids.js';
import { call, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const as = (u: TestUser, owner?: TestUser, body?: unknown) => ({
  token: u.accessToken,
  headers: (owner ? { 'x-acting-as': owner.id } : {}) as Record<string, string>,
  body,
});
const save = (u: TestUser, body: unknown, owner?: TestUser) => call('POST', '/api/table-views', as(u, owner, body));
const views = async (u: TestUser, q = '', owner?: TestUser) =>
  (await call('GET', `/api/table-views${q}`, as(u, owner))).body.items as {
    id: string;
    table: string;
    name: string;
    layout: any;
  }[];

const layout = {
  columns: [{ key: 'name', width: 240 }, { key: 'email' }, { key: 'custom.industry', hidden: true, pinned: 'left' }],
  filters: [
    { field: 'fit', op: 'gte', value: 70 },
    { field: 'country', op: 'in', value: ['FR', 'DE'] },
    { field: 'email', op: 'is_not_null' },
  ],
  sort: [{ field: 'created_at', direction: 'desc' }],
  page_size: 100,
};

test('POST creates (201) then updates by name in any letter case (200): same id, new layout and spelling', async (t) => {
  const u = await createUser();
  const a = await save(u, { table: 'contacts', name: 'Hot leads', layout });
  t.is(a.status, 201, a.text);
  t.like(a.body, {
    table: 'contacts',
    name: 'Hot leads',
    layout: { columns: layout.columns, filters: layout.filters, sort: layout.sort, page_size: 100 },
  });
  const b = await save(u, { table: 'contacts', name: '  HOT LEADS ', layout: { columns: [{ key: 'email' }] } });
  t.is(b.status, 200, b.text);
  t.is(b.body.id, a.body.id);
  t.deepEqual(b.body.layout, { columns: [{ key: 'email' }], filters: [], sort: [] });
  t.is(b.body.name, 'HOT LEADS');
  // The same name on another table is another view.
  const c = await save(u, { table: 'campaigns', name: 'Hot leads', layout: {} });
  t.is(c.status, 201);
  t.deepEqual(
    (await views(u)).map((v) => [v.table, v.name]),
    [
      ['contacts', 'HOT LEADS'],
      ['campaigns', 'Hot leads'],
    ],
  );
  t.deepEqual(
    (await views(u, '?table=campaigns')).map((v) => v.id),
    [c.body.id],
  );
  t.is((await call('GET', '/api/table-views?table=invoices', as(u))).status, 400);
});

test('layouts are validated: known tables, key shapes, unique columns and sort fields, counts, 16 KiB', async (t) => {
  const u = await createUser();
  const bad: unknown[] = [
    { table: 'invoices', name: 'x', layout: {} },
    { table: 'contacts', name: '  ', layout: {} },
    { table: 'contacts', name: 'x'.repeat(101), layout: {} },
    { table: 'contacts', name: 'x' },
    { table: 'contacts', name: 'x', layout: { columns: [{ key: '1st' }] } },
    { table: 'contacts', name: 'x', layout: { columns: [{ key: 'a' }, { key: 'a' }] } },
    { table: 'contacts', name: 'x', layout: { columns: [{ key: 'a', width: 5 }] } },
    { table: 'contacts', name: 'x', layout: { columns: Array.from({ length: 101 }, (_, i) => ({ key: `c${i}` })) } },
    { table: 'contacts', name: 'x', layout: { filters: [{ field: 'a', op: 'like', value: 1 }] } },
    {
      table: 'contacts',
      name: 'x',
      layout: { filters: [{ field: 'a', op: 'in', value: Array.from({ length: 101 }, (_, i) => i) }] },
    },
    { table: 'contacts', name: 'x', layout: { filters: [{ field: 'a', op: 'eq', value: { nested: true } }] } },
    { table: 'contacts', name: 'x', layout: { sort: [{ field: 'a', direction: 'up' }] } },
    {
      table: 'contacts',
      name: 'x',
      layout: {
        sort: [
          { field: 'a', direction: 'asc' },
          { field: 'a', direction: 'desc' },
        ],
      },
    },
    {
      table: 'contacts',
      name: 'x',
      layout: { sort: Array.from({ length: 6 }, (_, i) => ({ field: `f${i}`, direction: 'asc' })) },
    },
    { table: 'contacts', name: 'x', layout: { columns: [], surprise: 1 } },
    // Within every per-field limit, over 16 KiB in all.
    {
      table: 'contacts',
      name: 'x',
      layout: {
        filters: Array.from({ length: 50 }, (_, i) => ({ field: `f${i}`, op: 'in', value: ['y'.repeat(400)] })),
      },
    },
  ];
  for (const body of bad) {
    const r = await save(u, body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is((await views(u)).length, 0, 'nothing saved');
});

test('per person and workspace: a member does not see, overwrite or delete the owner’s views; acting-as keeps them apart; DELETE own only (404 otherwise)', async (t) => {
  const owner = await createOwner();
  const member = await createUser();
  await addTeamMember(owner.id, member.id);
  const mine = (await save(owner, { table: 'leads', name: 'Mine', layout })).body;
  // The member, in the owner's workspace, saves the same name: their own view, not the owner's.
  const theirs = await save(member, { table: 'leads', name: 'Mine', layout: {} }, owner);
  t.is(theirs.status, 201);
  t.not(theirs.body.id, mine.id);
  t.deepEqual(
    (await views(member, '', owner)).map((v) => v.id),
    [theirs.body.id],
  );
  t.deepEqual(
    (await views(member)).map((v) => v.id),
    [],
    'the member’s own workspace has none',
  );
  t.deepEqual(
    (await views(owner)).map((v) => v.id),
    [mine.id],
  );
  t.deepEqual(
    (await views(owner)).find((v) => v.id === mine.id)!.layout.columns,
    layout.columns,
    'the owner’s layout is untouched',
  );

  t.is((await call('DELETE', `/api/table-views/${mine.id}`, as(member, owner))).status, 404);
  t.is((await call('DELETE', `/api/table-views/${mine.id}`, as(member))).status, 404);
  const stranger = await createUser();
  t.is((await call('DELETE', `/api/table-views/${mine.id}`, as(stranger))).status, 404);
  t.is((await call('DELETE', `/api/table-views/${uuidv7()}`, as(owner))).status, 404);
  t.is((await call('DELETE', '/api/table-views/nope', as(owner))).body.error.code, 'invalid_id');
  t.is((await call('DELETE', `/api/table-views/${mine.id}`, as(owner))).status, 204);
  t.is((await call('DELETE', `/api/table-views/${mine.id}`, as(owner))).status, 404);
  t.deepEqual(
    (await views(member, '', owner)).map((v) => v.id),
    [theirs.body.id],
  );
});

test(`at most ${MAX_VIEWS_PER_TABLE} views per table: a new one above is 409 view_limit_reached, an update still works`, async (t) => {
  const u = await createUser();
  const ws = await workspaceIdOf(u.id);
  const e = await em();
  for (let i = 0; i < MAX_VIEWS_PER_TABLE; i++) {
    await e.execute(
      `insert into table_views (id, workspace_id, user_id, "table", name, layout, created_at, updated_at) values (?, ?, ?, 'meetings', ?, '{}', now(), now())`,
      [uuidv7(), ws, u.id, `v${i}`],
    );
  }
  const over = await save(u, { table: 'meetings', name: 'one more', layout: {} });
  t.is(over.status, 409);
  t.is(over.body.error.code, 'view_limit_reached');
  t.is((await save(u, { table: 'meetings', name: 'V7', layout: {} })).status, 200);
  t.is(
    (await save(u, { table: 'contacts', name: 'one more', layout: {} })).status,
    201,
    'another table has its own cap',
  );
  const p1 = await call('GET', '/api/table-views?table=meetings&limit=20', as(u));
  t.is(p1.body.items.length, 20);
  t.truthy(p1.body.next_cursor);
});
