import test from 'ava';
import { call, createTestApp, createUser, closeApi } from '../helpers/api.js';
test.after.always(closeApi);
import { addTeamMember, removeTeamMember } from '../helpers/db.js';
import { createOwner } from '../helpers/billing.js';

test('malformed X-Acting-As is 400 invalid_user', async (t) => {
  const u = await createUser();
  const r = await call('GET', '/api/apps', { token: u.accessToken, headers: { 'x-acting-as': 'not-a-uuid' } });
  t.is(r.status, 400);
  t.is(r.body.error.code, 'invalid_user');
});

test('acting for an owner whose team you are not in is 403 not_assigned', async (t) => {
  const owner = await createOwner();
  const stranger = await createUser();
  await createTestApp(owner);
  const r = await call('GET', '/api/apps', { token: stranger.accessToken, headers: { 'x-acting-as': owner.id } });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'not_assigned');
  const unknown = await call('GET', '/api/apps', {
    token: stranger.accessToken,
    headers: { 'x-acting-as': '0190a000-0000-7000-8000-000000000000' },
  });
  t.is(unknown.status, 403);
});

test("a team member acts in the owner's workspace, limited to assigned products, until removed", async (t) => {
  const owner = await createOwner();
  const member = await createUser();
  const a1 = await createTestApp(owner, 'one');
  await createTestApp(owner, 'two');
  const membership = await addTeamMember(owner.id, member.id, { appIds: [a1.id] });
  const acting = { token: member.accessToken, headers: { 'x-acting-as': owner.id } };

  const r = await call('GET', '/api/apps', acting);
  t.is(r.status, 200, r.text);
  t.deepEqual(
    r.body.items.map((a: any) => a.id),
    [a1.id],
  );
  // A member with product-limited access may not add products to the owner's workspace.
  t.is((await call('POST', '/api/apps', { ...acting, body: { name: 'nope' } })).status, 403);
  // Own workspace is unaffected.
  t.deepEqual((await call('GET', '/api/apps', { token: member.accessToken })).body.items, []);

  await removeTeamMember(membership);
  const after = await call('GET', '/api/apps', acting);
  t.is(after.status, 403);
  t.is(after.body.error.code, 'not_assigned');
});

test('an admin with access to all products sees and creates them in the owner workspace', async (t) => {
  const owner = await createOwner();
  const admin = await createUser();
  await createTestApp(owner, 'x');
  await addTeamMember(owner.id, admin.id, { role: 'admin' });
  const acting = { token: admin.accessToken, headers: { 'x-acting-as': owner.id } };
  const created = await call('POST', '/api/apps', { ...acting, body: { name: 'by admin' } });
  t.is(created.status, 201);
  const list = await call('GET', '/api/apps', { token: owner.accessToken });
  t.is(list.body.items.length, 2);
  t.true(list.body.items.some((a: any) => a.id === created.body.id));
});

test('identity and token routes ignore X-Acting-As', async (t) => {
  const owner = await createOwner();
  const member = await createUser();
  await addTeamMember(owner.id, member.id);
  const me = await call('GET', '/api/users/me', { token: member.accessToken, headers: { 'x-acting-as': owner.id } });
  t.is(me.status, 200);
  t.is(me.body.id, member.id);
  const bad = await call('GET', '/api/users/me', { token: member.accessToken, headers: { 'x-acting-as': 'garbage' } });
  t.is(bad.status, 200);
  const tok = await call('POST', '/api/users/me/api-tokens', {
    token: member.accessToken,
    headers: { 'x-acting-as': owner.id },
    body: { name: 't' },
  });
  t.is(tok.status, 201);
  t.is((await call('GET', '/api/users/me/api-tokens', { token: owner.accessToken })).body.length, 0);
});

// Generated over every operation: the README lists the routes that ignore X-Acting-As (declared
// `actingAs: false`); on every other authenticated route a header naming a workspace the caller is not
// a member of is 403 `not_assigned` and a malformed one 400 `invalid_user`, never silently ignored.
test('X-Acting-As on every route: as the README states (ignored only where it says so, else 400 / 403)', async (t) => {
  const { allOperations } = await import('../../api/operations.js');
  const { readFileSync } = await import('node:fs');
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const user = allOperations().filter((op) => op.auth === 'user');
  const ignoring = user.filter((op) => !op.actingAs);
  const listed = (op: (typeof user)[number]) => {
    const named = [`\`${op.method} ${op.path}\``, `\`${op.path}\``].some((x) => readme.includes(x));
    return named || (op.path.startsWith('/api/users/me') && readme.includes('`/api/users/me*`'));
  };
  t.deepEqual(
    ignoring.filter((op) => !listed(op)).map((op) => `${op.method} ${op.path}`),
    [],
    'every operation that ignores X-Acting-As is named in the README',
  );
  const owner = await createOwner();
  const stranger = await createUser();
  const problems: string[] = [];
  for (const op of user.filter((o) => o.actingAs)) {
    // Path parameters get a well-formed value: the header is checked before anything is looked up.
    const path = op.path.replace(/\{[^}]+\}/g, '0190a000-0000-7000-8000-000000000001');
    for (const [header, want] of [
      [owner.id, '403 not_assigned'],
      ['garbage', '400 invalid_user'],
    ] as const) {
      const r = await call(op.method, path, { token: stranger.accessToken, headers: { 'x-acting-as': header } });
      const got = `${r.status} ${r.body?.error?.code ?? ''}`.trim();
      if (got !== want)
        problems.push(
          `${op.method} ${op.path} with ${header === 'garbage' ? 'a malformed' : 'a stranger’s'} header: ${got} (expected ${want})`,
        );
    }
  }
  t.deepEqual(problems, []);
});
