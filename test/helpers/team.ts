// Team helpers: invitations go through the API; the token is read back from the recorded email.
import { OutboxEmail } from '../../db/entities/OutboxEmail.js';
import { TeamInvitation } from '../../db/entities/TeamInvitation.js';
import { PASSWORD, api, call, uniqueEmail, type TestUser } from './api.js';

export async function lastEmailTo(to: string) {
  const em = (await api()).services.orm.em.fork();
  const [mail] = await em.find(OutboxEmail, { to: to.toLowerCase() }, { orderBy: { id: 'desc' }, limit: 1 });
  return mail ?? null;
}

export async function inviteTokenFor(to: string): Promise<string> {
  const mail = await lastEmailTo(to);
  const m = mail && /\/invite\/(inv_[A-Za-z0-9_-]+)/.exec(mail.text);
  if (!m) throw new Error(`no invitation email for ${to}`);
  return m[1];
}

export async function invite(
  inviter: TestUser,
  body: { email?: string; role?: 'admin' | 'member'; all_apps?: boolean; app_ids?: string[] } = {},
  headers: Record<string, string> = {},
) {
  const email = body.email ?? uniqueEmail('invitee');
  const r = await call('POST', '/api/team/invitations', {
    token: inviter.accessToken,
    headers,
    body: { role: 'member', ...body, email },
  });
  if (r.status !== 201) throw new Error(`invite failed: ${r.status} ${r.text}`);
  return { invitation: r.body, email, token: await inviteTokenFor(email) };
}

/** Invites a new person and accepts as a new account; returns the member as a TestUser plus membership id. */
export async function addMemberViaInvite(
  owner: TestUser,
  body: { role?: 'admin' | 'member'; all_apps?: boolean; app_ids?: string[] } = {},
) {
  const { email, token, invitation } = await invite(owner, body);
  const r = await call('POST', `/api/team/invitations/by-token/${token}/accept`, {
    body: { name: 'Invitee', password: PASSWORD },
  });
  if (r.status !== 201) throw new Error(`accept failed: ${r.status} ${r.text}`);
  const user: TestUser = {
    id: r.body.user.id,
    email,
    accessToken: r.body.access_token,
    refreshToken: r.body.refresh_token,
  };
  const members = await call('GET', '/api/team/members', { token: owner.accessToken });
  const membership = members.body.items.find((m: any) => m.user_id === user.id);
  return { user, memberId: membership.id as string, invitationId: invitation.id as string };
}

export async function expireInvitation(id: string) {
  const em = (await api()).services.orm.em.fork();
  await em.nativeUpdate(TeamInvitation, { id }, { expiresAt: new Date(Date.now() - 1000) });
}
