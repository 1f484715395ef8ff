import test from 'ava';
import { PASSWORD, call, createTestApp, createUser, uniqueEmail, closeApi } from '../helpers/api.js';
import { expireInvitation, invite, inviteTokenFor, lastEmailTo } from '../helpers/team.js';
import { api } from '../helpers/api.js';
import { TeamInvitation } from '../../db/entities/TeamInvitation.js';
import { sha256Hex } from '../../lib/crypto.js';
import { createOwner } from '../helpers/billing.js';
test.after.always(closeApi);

test('creating an invitation is 201, emails a link with a token that is stored only hashed', async (t) => {
  const owner = await createOwner('Olivia Owner');
  const email = uniqueEmail('inv');
  const r = await call('POST', '/api/team/invitations', {
    token: owner.accessToken,
    body: { email: email.toUpperCase(), role: 'member' },
  });
  t.is(r.status, 201, r.text);
  t.is(r.body.email, email);
  t.is(r.body.role, 'member');
  t.is(r.body.status, 'pending');
  t.is(r.body.email_status, 'sent');
  t.true(r.body.all_apps);
  t.is(r.body.invited_by.id, owner.id);
  t.false(JSON.stringify(r.body).includes('inv_'), 'the token is never in the API response');
  const days = (Date.parse(r.body.expires_at) - Date.now()) / 86400_000;
  t.true(days > 6.9 && days <= 7.01);

  const mail = await lastEmailTo(email);
  t.truthy(mail);
  t.regex(mail!.subject, /Olivia Owner/);
  t.regex(mail!.text, /\/invite\/inv_[A-Za-z0-9_-]{40,}/);
  const token = await inviteTokenFor(email);
  const em = (await api()).services.orm.em.fork();
  const row = await em.findOneOrFail(TeamInvitation, r.body.id);
  t.is(row.tokenHash, sha256Hex(token));

  const list = await call('GET', '/api/team/invitations', { token: owner.accessToken });
  t.is(list.status, 200);
  t.deepEqual(
    list.body.items.map((i: any) => i.id),
    [r.body.id],
  );
  t.is(list.body.next_cursor, null);
});

test('invitation validation: bad email, role owner, unknown field → 400 invalid_body; foreign app → 400 invalid_app', async (t) => {
  const owner = await createOwner();
  const other = await createOwner();
  const foreignApp = await createTestApp(other);
  for (const body of [
    { email: 'nope', role: 'member' },
    { email: uniqueEmail(), role: 'owner' },
    { email: uniqueEmail(), role: 'member', token: 'x' },
    { email: uniqueEmail(), role: 'member', all_apps: false },
    { email: uniqueEmail(), role: 'member', app_ids: ['not-a-uuid'] },
  ]) {
    const r = await call('POST', '/api/team/invitations', { token: owner.accessToken, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  const r = await call('POST', '/api/team/invitations', {
    token: owner.accessToken,
    body: { email: uniqueEmail(), role: 'member', app_ids: [foreignApp.id] },
  });
  t.is(r.status, 400);
  t.is(r.body.error.code, 'invalid_app');
  t.is((await call('POST', '/api/team/invitations', { body: { email: uniqueEmail(), role: 'member' } })).status, 401);
});

test('duplicate pending invitation is 409 already_invited; inviting a member is 409 already_member', async (t) => {
  const owner = await createOwner();
  const { email, token } = await invite(owner);
  const dup = await call('POST', '/api/team/invitations', { token: owner.accessToken, body: { email, role: 'admin' } });
  t.is(dup.status, 409);
  t.is(dup.body.error.code, 'already_invited');
  t.is(
    (await call('POST', `/api/team/invitations/by-token/${token}/accept`, { body: { password: PASSWORD } })).status,
    201,
  );
  const again = await call('POST', '/api/team/invitations', {
    token: owner.accessToken,
    body: { email, role: 'member' },
  });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'already_member');
  const self = await call('POST', '/api/team/invitations', {
    token: owner.accessToken,
    body: { email: owner.email, role: 'member' },
  });
  t.is(self.status, 409);
  t.is(self.body.error.code, 'already_member');
});

test('public lookup by token shows workspace, inviter, email, role and expiry, without secrets', async (t) => {
  const owner = await createOwner('Ivy Inviter');
  const { email, token } = await invite(owner, { role: 'admin' });
  const r = await call('GET', `/api/team/invitations/by-token/${token}`);
  t.is(r.status, 200, r.text);
  t.is(r.body.email, email);
  t.is(r.body.role, 'admin');
  t.is(r.body.workspace.owner_id, owner.id);
  t.regex(r.body.workspace.name, /Ivy Inviter/);
  t.deepEqual(r.body.inviter, { name: 'Ivy Inviter', email: owner.email });
  t.false(r.body.account_exists);
  t.truthy(r.body.expires_at);
  t.false(/token|hash/.test(Object.keys(r.body).join(',')));
  for (const bad of ['inv_doesnotexist00000000000000000000', 'garbage', 'inv_' + 'x'.repeat(300)]) {
    const nf = await call('GET', `/api/team/invitations/by-token/${bad}`);
    t.is(nf.status, 404);
    t.is(nf.body.error.code, 'not_found');
  }
});

test('accepting creates the account (201), logs the invitee in, and is single use (409 invitation_used)', async (t) => {
  const owner = await createOwner();
  const app = await createTestApp(owner);
  const { email, token } = await invite(owner, { app_ids: [app.id] });
  const weak = await call('POST', `/api/team/invitations/by-token/${token}/accept`, { body: { password: 'short' } });
  t.is(weak.status, 400);
  t.is(weak.body.error.code, 'invalid_body');
  const missing = await call('POST', `/api/team/invitations/by-token/${token}/accept`, { body: {} });
  t.is(missing.status, 400);
  const extra = await call('POST', `/api/team/invitations/by-token/${token}/accept`, {
    body: { password: PASSWORD, email: 'x@y.z' },
  });
  t.is(extra.status, 400);

  const r = await call('POST', `/api/team/invitations/by-token/${token}/accept`, {
    body: { name: 'New Person', password: PASSWORD },
  });
  t.is(r.status, 201, r.text);
  t.is(r.body.user.email, email);
  t.is(r.body.user.name, 'New Person');
  t.is(r.body.token_type, 'Bearer');
  // Logged in, with an own workspace, and acting in the owner's limited to the invited product.
  t.is((await call('GET', '/api/users/me', { token: r.body.access_token })).status, 200);
  const apps = await call('GET', '/api/apps', { token: r.body.access_token, headers: { 'x-acting-as': owner.id } });
  t.is(apps.status, 200);
  t.deepEqual(
    apps.body.items.map((a: any) => a.id),
    [app.id],
  );
  // The password works for login too.
  t.is((await call('POST', '/api/auth/login', { body: { email, password: PASSWORD } })).status, 200);

  const again = await call('POST', `/api/team/invitations/by-token/${token}/accept`, { body: { password: PASSWORD } });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'invitation_used');
  const look = await call('GET', `/api/team/invitations/by-token/${token}`);
  t.is(look.status, 409);
  const list = await call('GET', '/api/team/invitations', { token: owner.accessToken });
  t.is(list.body.items[0].status, 'accepted');
  t.truthy(list.body.items[0].accepted_at);
});

test('an existing account must prove itself: password or its own bearer (401 invalid_credentials, 403 email_mismatch)', async (t) => {
  const owner = await createOwner();
  const existing = await createUser('Existing');
  const stranger = await createUser();
  const { token } = await invite(owner, { email: existing.email });
  t.true((await call('GET', `/api/team/invitations/by-token/${token}`)).body.account_exists);
  const path = `/api/team/invitations/by-token/${token}/accept`;
  const none = await call('POST', path, { body: {} });
  t.is(none.status, 401);
  t.is(none.body.error.code, 'invalid_credentials');
  const wrong = await call('POST', path, { body: { password: 'wrong password 9' } });
  t.is(wrong.status, 401);
  t.is(wrong.body.error.code, 'invalid_credentials');
  const other = await call('POST', path, { token: stranger.accessToken, body: {} });
  t.is(other.status, 403);
  t.is(other.body.error.code, 'email_mismatch');
  const badBearer = await call('POST', path, { token: 'pat_bogus', body: {} });
  t.is(badBearer.status, 401);
  t.is(badBearer.body.error.code, 'unauthorized');

  const ok = await call('POST', path, { body: { password: PASSWORD } });
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.user.id, existing.id);
  const members = await call('GET', '/api/team/members', { token: owner.accessToken });
  t.true(members.body.items.some((m: any) => m.user_id === existing.id && m.role === 'member'));
});

test('an existing account accepts with its own bearer; a stranger bearer on a new-account invitation is 403', async (t) => {
  const owner = await createOwner();
  const existing = await createUser();
  const stranger = await createUser();
  const { token } = await invite(owner, { email: existing.email, role: 'admin' });
  const ok = await call('POST', `/api/team/invitations/by-token/${token}/accept`, {
    token: existing.accessToken,
    body: {},
  });
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.user.id, existing.id);
  const fresh = await invite(owner);
  const r = await call('POST', `/api/team/invitations/by-token/${fresh.token}/accept`, {
    token: stranger.accessToken,
    body: { password: PASSWORD },
  });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'email_mismatch');
});

test('a member of the team accepting a second invitation is 409 already_member', async (t) => {
  const owner = await createOwner();
  const existing = await createUser();
  const first = await invite(owner, { email: existing.email });
  // Simulate a stale invitation that is still pending although its invitee already joined.
  const em = (await api()).services.orm.em.fork();
  t.is(
    (await call('POST', `/api/team/invitations/by-token/${first.token}/accept`, { body: { password: PASSWORD } }))
      .status,
    200,
  );
  await em.nativeUpdate(TeamInvitation, { id: first.invitation.id }, { acceptedAt: null, acceptedBy: null });
  const r = await call('POST', `/api/team/invitations/by-token/${first.token}/accept`, {
    body: { password: PASSWORD },
  });
  t.is(r.status, 409);
  t.is(r.body.error.code, 'already_member');
});

test('an expired invitation is 410 invitation_expired; a revoked one 410 invitation_revoked', async (t) => {
  const owner = await createOwner();
  const a = await invite(owner);
  await expireInvitation(a.invitation.id);
  for (const [m, p] of [
    ['GET', ''],
    ['POST', '/accept'],
  ] as const) {
    const r = await call(m, `/api/team/invitations/by-token/${a.token}${p}`, {
      body: m === 'POST' ? { password: PASSWORD } : undefined,
    });
    t.is(r.status, 410);
    t.is(r.body.error.code, 'invitation_expired');
  }
  // Expired invitations do not block a new one.
  const again = await call('POST', '/api/team/invitations', {
    token: owner.accessToken,
    body: { email: a.email, role: 'member' },
  });
  t.is(again.status, 201);
  const b = await invite(owner);
  t.is((await call('DELETE', `/api/team/invitations/${b.invitation.id}`, { token: owner.accessToken })).status, 204);
  const r = await call('POST', `/api/team/invitations/by-token/${b.token}/accept`, { body: { password: PASSWORD } });
  t.is(r.status, 410);
  t.is(r.body.error.code, 'invitation_revoked');
});

test('revoking: 204 once, then 409 invitation_not_pending; another workspace is 404; bad id 400', async (t) => {
  const owner = await createOwner();
  const other = await createOwner();
  const { invitation } = await invite(owner);
  const foreign = await call('DELETE', `/api/team/invitations/${invitation.id}`, { token: other.accessToken });
  t.is(foreign.status, 404);
  t.is(foreign.body.error.code, 'not_found');
  t.is((await call('DELETE', `/api/team/invitations/${invitation.id}`, { token: owner.accessToken })).status, 204);
  const twice = await call('DELETE', `/api/team/invitations/${invitation.id}`, { token: owner.accessToken });
  t.is(twice.status, 409);
  t.is(twice.body.error.code, 'invitation_not_pending');
  const bad = await call('DELETE', '/api/team/invitations/nope', { token: owner.accessToken });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_id');
  // The other workspace's list does not show it.
  t.deepEqual((await call('GET', '/api/team/invitations', { token: other.accessToken })).body.items, []);
});

test('concurrent accepts of one invitation: exactly one succeeds, the other is 409 invitation_used', async (t) => {
  const owner = await createOwner();
  const { token } = await invite(owner);
  const path = `/api/team/invitations/by-token/${token}/accept`;
  const results = await Promise.all([0, 1, 2].map(() => call('POST', path, { body: { password: PASSWORD } })));
  const statuses = results.map((r) => r.status).sort();
  t.deepEqual(statuses, [201, 409, 409], results.map((r) => r.text).join('\n'));
  for (const r of results.filter((x) => x.status === 409)) t.is(r.body.error.code, 'invitation_used');
  const members = await call('GET', '/api/team/members', { token: owner.accessToken });
  t.is(members.body.items.length, 2);
});

test('an accept racing a revoke ends consistently (accepted or revoked, never both)', async (t) => {
  const owner = await createOwner();
  const { token, invitation } = await invite(owner);
  const [acc, rev] = await Promise.all([
    call('POST', `/api/team/invitations/by-token/${token}/accept`, { body: { password: PASSWORD } }),
    call('DELETE', `/api/team/invitations/${invitation.id}`, { token: owner.accessToken }),
  ]);
  const list = await call('GET', '/api/team/invitations', { token: owner.accessToken });
  const status = list.body.items[0].status;
  if (acc.status === 201) {
    t.is(rev.status, 409);
    t.is(status, 'accepted');
  } else {
    t.is(acc.status, 410);
    t.is(rev.status, 204);
    t.is(status, 'revoked');
  }
});
