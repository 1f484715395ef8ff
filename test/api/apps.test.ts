import test from 'ava';
import { call, createPat, createUser, closeApi } from '../helpers/api.js';
test.after.always(closeApi);

test('POST /api/apps creates a product (201) and GET /api/apps lists it', async (t) => {
  const u = await createUser();
  const r = await call('POST', '/api/apps', { token: u.accessToken, body: { name: '  Acme CRM ', website_url: 'https://acme.example' } });
  t.is(r.status, 201, r.text);
  t.is(r.body.name, 'Acme CRM');
  t.is(r.body.website_url, 'https://acme.example');
  const list = await call('GET', '/api/apps', { token: await createPat(u) });
  t.is(list.status, 200);
  t.deepEqual(list.body.items.map((a: any) => a.id), [r.body.id]);
  t.is(list.body.next_cursor, null);
});

test('GET /api/apps pages with limit and cursor', async (t) => {
  const u = await createUser();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await call('POST', '/api/apps', { token: u.accessToken, body: { name: `p${i}` } })).body.id);
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
  for (const body of [{}, { name: '' }, { name: 'x', website_url: 'javascript:alert(1)' }, { name: 'x', workspace_id: u.id }]) {
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
