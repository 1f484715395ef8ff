import test from 'ava';
import { call, createUser, closeApi } from '../helpers/api.js';
import { addTeamMember } from '../helpers/db.js';
import { workspaceIdOf } from '../helpers/billing.js';
test.after.always(closeApi);

test('GET /api/me/workspaces lists the own workspace first, then team memberships', async (t) => {
  const u = await createUser('Ada');
  const owner = await createUser('Grace');
  let r = await call('GET', '/api/me/workspaces', { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.is(r.body.length, 1);
  t.like(r.body[0], {
    id: await workspaceIdOf(u.id),
    owner_id: u.id,
    role: 'owner',
    is_demo: false,
    name: "Ada's workspace",
  });
  t.truthy(r.body[0].member_id, 'the owner membership row created at sign-up');

  const memberId = await addTeamMember(owner.id, u.id, { role: 'admin' });
  r = await call('GET', '/api/me/workspaces', { token: u.accessToken });
  t.is(r.body.length, 2);
  t.deepEqual(r.body[1], {
    id: await workspaceIdOf(owner.id),
    name: "Grace's workspace",
    owner_id: owner.id,
    role: 'admin',
    member_id: memberId,
    is_demo: false,
  });
  // Identity route: X-Acting-As does not apply.
  const acting = await call('GET', '/api/me/workspaces', {
    token: u.accessToken,
    headers: { 'x-acting-as': owner.id },
  });
  t.deepEqual(acting.body, r.body);
  t.is((await call('GET', '/api/me/workspaces')).status, 401);
});

test('DELETE /api/me/workspaces/{member_id} leaves a team workspace; acting there stops working', async (t) => {
  const u = await createUser();
  const owner = await createUser();
  const memberId = await addTeamMember(owner.id, u.id);
  t.is((await call('GET', '/api/apps', { token: u.accessToken, headers: { 'x-acting-as': owner.id } })).status, 200);
  const r = await call('DELETE', `/api/me/workspaces/${memberId}`, { token: u.accessToken });
  t.is(r.status, 204, r.text);
  const after = await call('GET', '/api/apps', { token: u.accessToken, headers: { 'x-acting-as': owner.id } });
  t.is(after.status, 403);
  t.is(after.body.error.code, 'not_assigned');
  t.is((await call('GET', '/api/me/workspaces', { token: u.accessToken })).body.length, 1);
  // Leaving again: the membership is gone.
  t.is((await call('DELETE', `/api/me/workspaces/${memberId}`, { token: u.accessToken })).status, 404);
});

test('you cannot leave your own workspace (403 owner_cannot_leave)', async (t) => {
  const u = await createUser();
  const own = (await call('GET', '/api/me/workspaces', { token: u.accessToken })).body[0];
  const r = await call('DELETE', `/api/me/workspaces/${own.member_id}`, { token: u.accessToken });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'owner_cannot_leave');
  t.is((await call('GET', '/api/me/workspaces', { token: u.accessToken })).body.length, 1);
});

test("someone else's membership is 404; a malformed id is 400 invalid_id; no token is 401", async (t) => {
  const owner = await createUser();
  const member = await createUser();
  const stranger = await createUser();
  const memberId = await addTeamMember(owner.id, member.id);
  const r = await call('DELETE', `/api/me/workspaces/${memberId}`, { token: stranger.accessToken });
  t.is(r.status, 404);
  t.is(r.body.error.code, 'not_found');
  // The owner cannot remove a member through this route either (that is the team API's job).
  t.is((await call('DELETE', `/api/me/workspaces/${memberId}`, { token: owner.accessToken })).status, 404);
  t.is(
    (await call('GET', '/api/apps', { token: member.accessToken, headers: { 'x-acting-as': owner.id } })).status,
    200,
    'still a member',
  );
  const bad = await call('DELETE', '/api/me/workspaces/not-a-uuid', { token: stranger.accessToken });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_id');
  t.is((await call('DELETE', `/api/me/workspaces/${memberId}`)).status, 401);
});
