import test from 'ava';
import { call, createPat, createUser, closeApi } from '../helpers/api.js';
import { createOwner, setUserPlan } from '../helpers/billing.js';
test.after.always(closeApi);

test('POST /api/apps creates a product (201) and GET /api/apps lists it', async (t) => {
  const u = await createUser();
  const r = await call('POST', '/api/apps', {
    token: u.accessToken,
    body: { name: '  Acme CRM ', website_url: 'https://acme.example' },
  });
  t.is(r.status, 201, r.text);
  t.is(r.body.name, 'Acme CRM');
  t.is(r.body.website_url, 'https://acme.example');
  const list = await call('GET', '/api/apps', { token: await createPat(u) });
  t.is(list.status, 200);
  t.deepEqual(
    list.body.items.map((a: any) => a.id),
    [r.body.id],
  );
  t.is(list.body.next_cursor, null);
});

test('GET /api/apps pages with limit and cursor', async (t) => {
  const u = await createOwner();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++)
    ids.push((await call('POST', '/api/apps', { token: u.accessToken, body: { name: `p${i}` } })).body.id);
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
    const r = await call('GET', `/api/apps${q}`, { token: u.accessToken });
    t.is(r.status, 200);
    t.true(r.body.items.length <= 2);
    seen.push(...r.body.items.map((a: any) => a.id));
    cursor = r.body.next_cursor;
  } while (cursor);
  t.deepEqual(seen, ids);
});

test('apps validation: 400 invalid_body and invalid_query', async (t) => {
  const u = await createUser();
  for (const body of [
    {},
    { name: '' },
    { name: 'x', website_url: 'javascript:alert(1)' },
    { name: 'x', workspace_id: u.id },
  ]) {
    const r = await call('POST', '/api/apps', { token: u.accessToken, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  for (const q of ['?limit=0', '?limit=500', '?cursor=zzz']) {
    const r = await call('GET', `/api/apps${q}`, { token: u.accessToken });
    t.is(r.status, 400, q);
    t.is(r.body.error.code, 'invalid_query');
  }
});

test("apps are per workspace: another user's products never appear", async (t) => {
  const a = await createUser();
  const b = await createUser();
  await call('POST', '/api/apps', { token: a.accessToken, body: { name: 'private' } });
  const r = await call('GET', '/api/apps', { token: b.accessToken });
  t.deepEqual(r.body.items, []);
});

test('apps require authentication', async (t) => {
  const r = await call('GET', '/api/apps');
  t.is(r.status, 401);
  t.is(r.body.error.code, 'unauthorized');
});

test('the plan caps products: a free workspace has one, the 2nd is 403 plan_limit_reached until it upgrades', async (t) => {
  const u = await createUser();
  t.is((await call('POST', '/api/apps', { token: u.accessToken, body: { name: 'first' } })).status, 201);
  const r = await call('POST', '/api/apps', { token: u.accessToken, body: { name: 'second' } });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'plan_limit_reached');
  t.like(r.body.error.details, { limit: 'apps', max: 1, plan: 'free' });
  t.is((await call('GET', '/api/apps', { token: u.accessToken })).body.items.length, 1, 'nothing was created');
  await setUserPlan(u.id, 'starter');
  t.is((await call('POST', '/api/apps', { token: u.accessToken, body: { name: 'second' } })).status, 201);
});

test('concurrent creates never exceed the plan’s product limit', async (t) => {
  const u = await createUser();
  await setUserPlan(u.id, 'starter'); // 3 products
  const rs = await Promise.all(
    Array.from({ length: 6 }, (_, i) => call('POST', '/api/apps', { token: u.accessToken, body: { name: `p${i}` } })),
  );
  t.is(rs.filter((r) => r.status === 201).length, 3);
  t.true(rs.filter((r) => r.status !== 201).every((r) => r.body.error.code === 'plan_limit_reached'));
});
