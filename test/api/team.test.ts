import test from 'ava';
import { call, createTestApp, createUser, closeApi, type TestUser, uniqueEmail } from '../helpers/api.js';
import { addMemberViaInvite, invite } from '../helpers/team.js';
import { createOwner, setUserPlan } from '../helpers/billing.js';
test.after.always(closeApi);

const as = (u: TestUser, owner: TestUser) => ({ token: u.accessToken, headers: { 'x-acting-as': owner.id } });

async function ownerRow(owner: TestUser): Promise<string> {
  const r = await call('GET', '/api/team/members', { token: owner.accessToken });
  return r.body.items.find((m: any) => m.role === 'owner').id;
}

test('the member list starts with the owner and shows invited members; members may read it', async (t) => {
  const owner = await createOwner('Owner');
  const app = await createTestApp(owner);
  const r0 = await call('GET', '/api/team/members', { token: owner.accessToken });
  t.is(r0.status, 200, r0.text);
  t.is(r0.body.items.length, 1);
  t.like(r0.body.items[0], { user_id: owner.id, role: 'owner', all_apps: true, email: owner.email, name: 'Owner' });
  const { user: member } = await addMemberViaInvite(owner, { app_ids: [app.id] });
  const r = await call('GET', '/api/team/members', as(member, owner));
  t.is(r.status, 200);
  t.is(r.body.items.length, 2);
  t.like(
    r.body.items.find((m: any) => m.user_id === member.id),
    { role: 'member', all_apps: false, app_ids: [app.id] },
  );
  const paged = await call('GET', '/api/team/members?limit=1', { token: owner.accessToken });
  t.is(paged.body.items.length, 1);
  t.truthy(paged.body.next_cursor);
  const next = await call('GET', `/api/team/members?limit=1&cursor=${paged.body.next_cursor}`, {
    token: owner.accessToken,
  });
  t.is(next.body.items.length, 1);
  t.not(next.body.items[0].id, paged.body.items[0].id);
  const bad = await call('GET', '/api/team/members?limit=0', { token: owner.accessToken });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_query');
  t.is((await call('GET', '/api/team/members')).status, 401);
  const badActing = await call('GET', '/api/team/members', {
    token: owner.accessToken,
    headers: { 'x-acting-as': 'x' },
  });
  t.is(badActing.status, 400);
  t.is(badActing.body.error.code, 'invalid_user');
});

test('plain members cannot manage the team: 403 forbidden_role', async (t) => {
  const owner = await createOwner();
  const { user: member } = await addMemberViaInvite(owner);
  const { memberId: otherId } = await addMemberViaInvite(owner);
  const { invitation } = await invite(owner);
  const ctx = as(member, owner);
  const attempts = [
    await call('GET', '/api/team/members/audit', ctx),
    await call('GET', '/api/team/invitations', ctx),
    await call('POST', '/api/team/invitations', { ...ctx, body: { email: 'x@example.test', role: 'member' } }),
    await call('DELETE', `/api/team/invitations/${invitation.id}`, ctx),
    await call('DELETE', `/api/team/members/${otherId}`, ctx),
    await call('PATCH', `/api/team/members/${otherId}/role`, { ...ctx, body: { role: 'admin' } }),
    await call('PUT', `/api/team/members/${otherId}`, { ...ctx, body: { all_apps: true } }),
  ];
  for (const r of attempts) {
    t.is(r.status, 403, r.text);
    t.is(r.body.error.code, 'forbidden_role');
  }
});

test('the owner changes roles; admins manage members only; nobody changes the owner', async (t) => {
  const owner = await createOwner();
  const { user: admin, memberId: adminId } = await addMemberViaInvite(owner, { role: 'admin' });
  const { memberId: admin2Id } = await addMemberViaInvite(owner, { role: 'admin' });
  const { memberId: memberId } = await addMemberViaInvite(owner);
  const ownerId = await ownerRow(owner);

  // Admin promotes a member and demotes... only members: other admins and the owner are off limits.
  const promoted = await call('PATCH', `/api/team/members/${memberId}/role`, {
    ...as(admin, owner),
    body: { role: 'admin' },
  });
  t.is(promoted.status, 200, promoted.text);
  t.is(promoted.body.role, 'admin');
  for (const target of [admin2Id, ownerId, memberId]) {
    const r = await call('PATCH', `/api/team/members/${target}/role`, {
      ...as(admin, owner),
      body: { role: 'member' },
    });
    t.is(r.status, 403);
    t.is(r.body.error.code, 'forbidden_role');
  }
  // The owner can demote an admin, but cannot change the owner row; "owner" is not a settable role.
  const demoted = await call('PATCH', `/api/team/members/${admin2Id}/role`, {
    token: owner.accessToken,
    body: { role: 'member' },
  });
  t.is(demoted.status, 200);
  t.is(demoted.body.role, 'member');
  const self = await call('PATCH', `/api/team/members/${ownerId}/role`, {
    token: owner.accessToken,
    body: { role: 'admin' },
  });
  t.is(self.status, 403);
  t.is(self.body.error.code, 'forbidden_role');
  const makeOwner = await call('PATCH', `/api/team/members/${adminId}/role`, {
    token: owner.accessToken,
    body: { role: 'owner' },
  });
  t.is(makeOwner.status, 400);
  t.is(makeOwner.body.error.code, 'invalid_body');
  const extra = await call('PATCH', `/api/team/members/${adminId}/role`, {
    token: owner.accessToken,
    body: { role: 'member', user_id: owner.id },
  });
  t.is(extra.status, 400);
  // Nobody removes the owner.
  for (const ctx of [{ token: owner.accessToken }, as(admin, owner)]) {
    const r = await call('DELETE', `/api/team/members/${ownerId}`, ctx);
    t.is(r.status, 403);
    t.is(r.body.error.code, 'forbidden_role');
  }
});

test('product access: PUT sets all_apps/app_ids; foreign app ids are 400 invalid_app', async (t) => {
  const owner = await createOwner();
  const other = await createOwner();
  const a1 = await createTestApp(owner, 'one');
  const a2 = await createTestApp(owner, 'two');
  const foreign = await createTestApp(other);
  const { user: member, memberId } = await addMemberViaInvite(owner);
  const { user: admin } = await addMemberViaInvite(owner, { role: 'admin' });
  const limited = await call('PUT', `/api/team/members/${memberId}`, {
    ...as(admin, owner),
    body: { all_apps: false, app_ids: [a2.id] },
  });
  t.is(limited.status, 200, limited.text);
  t.like(limited.body, { all_apps: false, app_ids: [a2.id] });
  const apps = await call('GET', '/api/apps', as(member, owner));
  t.deepEqual(
    apps.body.items.map((a: any) => a.id),
    [a2.id],
  );
  const invalid = await call('PUT', `/api/team/members/${memberId}`, {
    token: owner.accessToken,
    body: { all_apps: false, app_ids: [a1.id, foreign.id] },
  });
  t.is(invalid.status, 400);
  t.is(invalid.body.error.code, 'invalid_app');
  for (const body of [
    { all_apps: false },
    { app_ids: [a1.id] },
    { all_apps: true, role: 'owner' },
    { all_apps: 'yes' },
  ]) {
    const r = await call('PUT', `/api/team/members/${memberId}`, { token: owner.accessToken, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  const all = await call('PUT', `/api/team/members/${memberId}`, {
    token: owner.accessToken,
    body: { all_apps: true, app_ids: [a1.id] },
  });
  t.like(all.body, { all_apps: true, app_ids: [] });
  t.is((await call('GET', '/api/apps', as(member, owner))).body.items.length, 2);
  const ownerId = await ownerRow(owner);
  const onOwner = await call('PUT', `/api/team/members/${ownerId}`, {
    token: owner.accessToken,
    body: { all_apps: false, app_ids: [a1.id] },
  });
  t.is(onOwner.status, 403);
});

test('cross-workspace: member ids of another workspace are 404 for every member route', async (t) => {
  const owner = await createOwner();
  const other = await createOwner();
  const { memberId } = await addMemberViaInvite(owner);
  for (const [method, path, body] of [
    ['DELETE', `/api/team/members/${memberId}`, undefined],
    ['PUT', `/api/team/members/${memberId}`, { all_apps: true }],
    ['PATCH', `/api/team/members/${memberId}/role`, { role: 'admin' }],
  ] as const) {
    const r = await call(method, path, { token: other.accessToken, body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.is((await call('GET', '/api/team/members', { token: other.accessToken })).body.items.length, 1);
  t.deepEqual((await call('GET', '/api/team/members/audit', { token: other.accessToken })).body.items, []);
  const bad = await call('DELETE', '/api/team/members/xyz', { token: owner.accessToken });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_id');
  // Acting for a workspace you are not in is 403 not_assigned.
  const na = await call('GET', '/api/team/members', as(other, owner));
  t.is(na.status, 403);
  t.is(na.body.error.code, 'not_assigned');
});

test('invite → accept → act → owner removes the member → the next acting-as request is 403 not_assigned', async (t) => {
  const owner = await createOwner();
  const app = await createTestApp(owner);
  const { email, token } = await invite(owner, { app_ids: [app.id] });
  const acc = await call('POST', `/api/team/invitations/by-token/${token}/accept`, {
    body: { password: 'correct horse 42' },
  });
  t.is(acc.status, 201);
  const member: TestUser = {
    id: acc.body.user.id,
    email,
    accessToken: acc.body.access_token,
    refreshToken: acc.body.refresh_token,
  };
  t.is((await call('GET', '/api/apps', as(member, owner))).status, 200);
  const memberId = (await call('GET', '/api/team/members', { token: owner.accessToken })).body.items.find(
    (m: any) => m.user_id === member.id,
  ).id;
  t.is((await call('DELETE', `/api/team/members/${memberId}`, { token: owner.accessToken })).status, 204);
  const after = await call('GET', '/api/apps', as(member, owner));
  t.is(after.status, 403);
  t.is(after.body.error.code, 'not_assigned');
  t.is((await call('GET', '/api/team/members', as(member, owner))).status, 403);
  // Their own workspace still works.
  t.is((await call('GET', '/api/apps', { token: member.accessToken })).status, 200);
  const again = await call('DELETE', `/api/team/members/${memberId}`, { token: owner.accessToken });
  t.is(again.status, 404);
});

test('admins remove members but not other admins; a member may leave on their own', async (t) => {
  const owner = await createOwner();
  const { user: admin } = await addMemberViaInvite(owner, { role: 'admin' });
  const { memberId: admin2Id } = await addMemberViaInvite(owner, { role: 'admin' });
  const { memberId: m1 } = await addMemberViaInvite(owner);
  const { user: leaver, memberId: m2 } = await addMemberViaInvite(owner);
  const denied = await call('DELETE', `/api/team/members/${admin2Id}`, as(admin, owner));
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'forbidden_role');
  t.is((await call('DELETE', `/api/team/members/${m1}`, as(admin, owner))).status, 204);
  t.is((await call('DELETE', `/api/team/members/${m2}`, as(leaver, owner))).status, 204);
  t.is((await call('DELETE', `/api/team/members/${admin2Id}`, { token: owner.accessToken })).status, 204);
  t.is((await call('GET', '/api/team/members', { token: owner.accessToken })).body.items.length, 2);
});

test('an admin invites and revokes through X-Acting-As; every team change is in the audit log', async (t) => {
  const owner = await createOwner();
  const app = await createTestApp(owner);
  const { user: admin, memberId: adminId } = await addMemberViaInvite(owner, { role: 'admin' });
  const { memberId } = await addMemberViaInvite(owner);
  const inv = await invite(admin, {}, { 'x-acting-as': owner.id });
  t.is(inv.invitation.invited_by.id, admin.id);
  t.is((await call('DELETE', `/api/team/invitations/${inv.invitation.id}`, as(admin, owner))).status, 204);
  t.is(
    (await call('PATCH', `/api/team/members/${memberId}/role`, { token: owner.accessToken, body: { role: 'admin' } }))
      .status,
    200,
  );
  t.is(
    (
      await call('PUT', `/api/team/members/${memberId}`, {
        token: owner.accessToken,
        body: { all_apps: false, app_ids: [app.id] },
      })
    ).status,
    200,
  );
  t.is((await call('DELETE', `/api/team/members/${memberId}`, { token: owner.accessToken })).status, 204);

  const log = await call('GET', '/api/team/members/audit', as(admin, owner));
  t.is(log.status, 200, log.text);
  const actions = log.body.items.map((e: any) => e.action);
  t.deepEqual(actions.slice(0, 5), [
    'member.removed',
    'member.access_changed',
    'member.role_changed',
    'invitation.revoked',
    'invitation.created',
  ]);
  t.is(actions.filter((a: string) => a === 'invitation.accepted').length, 2);
  t.is(actions.filter((a: string) => a === 'invitation.created').length, 3);
  const removed = log.body.items[0];
  t.is(removed.target_member_id, memberId);
  t.is(removed.actor.id, owner.id);
  t.like(removed.details, { role: 'admin' });
  t.like(log.body.items[2].details, { from: 'member', to: 'admin' });
  t.is(log.body.items[3].actor.id, admin.id);
  t.is(log.body.items[3].target_invitation_id, inv.invitation.id);
  const accepted = log.body.items.find(
    (e: any) => e.action === 'invitation.accepted' && e.target_member_id === adminId,
  );
  t.truthy(accepted);
  const p1 = await call('GET', '/api/team/members/audit?limit=2', { token: owner.accessToken });
  t.is(p1.body.items.length, 2);
  const p2 = await call('GET', `/api/team/members/audit?limit=2&cursor=${p1.body.next_cursor}`, {
    token: owner.accessToken,
  });
  t.is(p2.body.items[0].action, 'member.role_changed');
  const bad = await call('GET', '/api/team/members/audit?cursor=%%%', { token: owner.accessToken });
  t.is(bad.status, 400);
});

test('every team route: 401 without a bearer, 400 invalid_user for a malformed X-Acting-As, 403 not_assigned for a foreign team', async (t) => {
  const owner = await createOwner();
  const stranger = await createUser();
  const id = '0190a000-0000-7000-8000-000000000000';
  const routes: [string, string, unknown][] = [
    ['GET', '/api/team/members', undefined],
    ['GET', '/api/team/members/audit', undefined],
    ['DELETE', `/api/team/members/${id}`, undefined],
    ['PUT', `/api/team/members/${id}`, { all_apps: true }],
    ['PATCH', `/api/team/members/${id}/role`, { role: 'admin' }],
    ['GET', '/api/team/invitations', undefined],
    ['POST', '/api/team/invitations', { email: 'a@example.test', role: 'member' }],
    ['DELETE', `/api/team/invitations/${id}`, undefined],
  ];
  for (const [method, path, body] of routes) {
    const anon = await call(method, path, { body });
    t.is(anon.status, 401, `${method} ${path}`);
    t.is(anon.body.error.code, 'unauthorized');
    const bad = await call(method, path, { token: stranger.accessToken, headers: { 'x-acting-as': 'nope' }, body });
    t.is(bad.status, 400, `${method} ${path}`);
    t.is(bad.body.error.code, 'invalid_user');
    const foreign = await call(method, path, {
      token: stranger.accessToken,
      headers: { 'x-acting-as': owner.id },
      body,
    });
    t.is(foreign.status, 403, `${method} ${path}`);
    t.is(foreign.body.error.code, 'not_assigned');
  }
});

test('seats: members plus pending invitations are capped by the plan (403 plan_limit_reached); revoking frees a seat', async (t) => {
  const owner = await createUser();
  const free = await call('POST', '/api/team/invitations', {
    token: owner.accessToken,
    body: { email: uniqueEmail(), role: 'member' },
  });
  t.is(free.status, 403, 'the free plan has one seat: the owner');
  t.is(free.body.error.code, 'plan_limit_reached');
  await setUserPlan(owner.id, 'starter'); // 3 seats
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const r = await call('POST', '/api/team/invitations', {
      token: owner.accessToken,
      body: { email: uniqueEmail(), role: 'member' },
    });
    t.is(r.status, 201, r.text);
    ids.push(r.body.id);
  }
  const over = await call('POST', '/api/team/invitations', {
    token: owner.accessToken,
    body: { email: uniqueEmail(), role: 'member' },
  });
  t.is(over.status, 403);
  t.like(over.body.error.details, { limit: 'seats', max: 3 });
  t.is((await call('DELETE', `/api/team/invitations/${ids[0]}`, { token: owner.accessToken })).status, 204);
  t.is(
    (
      await call('POST', '/api/team/invitations', {
        token: owner.accessToken,
        body: { email: uniqueEmail(), role: 'member' },
      })
    ).status,
    201,
  );
});
