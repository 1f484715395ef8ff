// Mailboxes connected with Google or Microsoft OAuth end to end (docs/email.md "Connecting with Google
// or Microsoft"), one Google-style and one Microsoft-style: a local authorization server speaking the
// provider's token endpoint, the test mail server (GreenMail) behind an XOAUTH2 gateway that refuses
// expired and revoked tokens (test/helpers/mail-oauth.ts), and a worker of the test's own configured
// with the provider. Connect through start → consent → callback; a campaign email goes out over SMTP
// XOAUTH2 and a reply comes back through the mailbox sync (IMAP XOAUTH2); the access token expires
// mid-run and every session is cut — the next send and the sync log in with a refreshed token (each
// prospect gets one message); the grant is revoked — the account is disconnected `oauth_revoked`
// and the next send is held `not_connected`, nothing sent.
import test from 'ava';
import { temporalJobs } from '../../jobs/temporal.js';
import { enrollLeads } from '../../domain/enrollments/enrollments.js';
import { resolveActor } from '../../domain/workspaces.js';
import type { Config } from '../../lib/config.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, closeApi, listen, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, seedCampaign } from '../helpers/campaigns.js';
import { testAuthServer, xoauth2Gateway, type OAuthStyle } from '../helpers/mail-oauth.js';
import { createMailbox, mailServer, openMailbox, sendAs, uniqueAddress, waitForMail } from '../helpers/mail-server.js';
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });
/** The access tokens' lifetime here: refreshed after half of it (domain/mailbox/oauth-tokens.ts). */
const TOKEN_SECONDS = 12;

async function inboxCount(address: string): Promise<number> {
  const c = await openMailbox(address).catch(() => null);
  if (!c) return 0;
  try {
    return (await c.mailboxOpen('INBOX')).exists;
  } finally {
    await c.logout().catch(() => undefined);
  }
}

for (const style of ['google', 'microsoft'] as const satisfies readonly OAuthStyle[]) {
  test(`${style} style: connect with OAuth, send and receive over XOAUTH2, survive an access-token expiry, stop at a revoked grant`, async (t) => {
    const { services } = await api();
    const m = mailServer();
    const auth = await testAuthServer(style);
    auth.expiresIn = TOKEN_SECONDS;
    const gw = await xoauth2Gateway(m, auth, () => 'secret');
    t.teardown(async () => {
      await gw.close();
      await auth.close();
    });

    // The worker and the API both know the provider; the worker runs this test's jobs only.
    const taskQueue = `mail-oauth-${style}-${Date.now()}`;
    const ENV = `MAIL_OAUTH_${style.toUpperCase()}_`;
    const worker = spawnTsx(
      'workers/worker.ts',
      {
        TEMPORAL_TASK_QUEUE: taskQueue,
        TEMPORAL_SCHEDULES: 'off',
        WEBHOOK_DISPATCHER: 'off',
        // Its session service follows this test's mailbox (whose lifecycle runs on its queue), with the provider's configuration.
        MAILBOX_SESSIONS_UNASSIGNED: 'off',
        [`${ENV}CLIENT_ID`]: auth.clientId,
        [`${ENV}CLIENT_SECRET`]: auth.clientSecret,
        [`${ENV}AUTHORIZE_URL`]: `${auth.url}/authorize`,
        [`${ENV}TOKEN_URL`]: `${auth.url}/token`,
      },
      { quiet: true },
    );
    t.teardown(() => stopChild(worker));
    const jobs = temporalJobs(services.temporal, taskQueue);
    const provider = {
      ...services.config.mailOAuth[style],
      clientId: auth.clientId,
      clientSecret: auth.clientSecret,
      authorizeUrl: `${auth.url}/authorize`,
      tokenUrl: `${auth.url}/token`,
      smtp: { host: m.host, port: gw.smtpPort, security: 'none' },
      imap: { host: m.host, port: gw.imapPort, security: 'none' },
    };
    const config: Config = { ...services.config, mailOAuth: { ...services.config.mailOAuth, [style]: provider } };
    const { base } = await listen({ ...services, config, jobs });
    provider.redirectUri = `${base}/oauth/mailbox/${style}/callback`;

    // Connect: start → the provider's consent → our callback.
    const u = await createOwner();
    const o = await campaignOwner(u);
    const address = await createMailbox(uniqueAddress('sender', `${style}.test`));
    auth.signIn = address;
    const created = await call('POST', '/api/platform-accounts', {
      ...as(u, { channel: 'email', display_name: 'Ana Sender', time_zone: 'Europe/Paris' }),
      base,
    });
    const accountId = created.body.id as string;
    const start = await call('POST', `/api/platform-accounts/${accountId}/oauth/${style}/start`, {
      ...as(u, {}),
      base,
    });
    t.is(start.status, 200, start.text);
    const consent = await fetch(start.body.authorization_url, { redirect: 'manual' });
    t.is(consent.status, 302);
    const back = new URL(consent.headers.get('location')!);
    const cb = await call('GET', back.pathname + back.search, { base });
    t.is(cb.status, 200, cb.text);
    t.like(cb.body.account, { status: 'connected', connector: 'mail', address });
    const db = await em();
    await db.execute(
      `update platform_accounts set min_gap_seconds = 0, jitter_seconds = 0, warmup_skipped_at = now(), working_hours = '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb where id = ?`,
      [accountId],
    );

    const prospects = ['first', 'second', 'third'].map((w) => uniqueAddress(w, 'prospect.test'));
    const leads = await Promise.all(prospects.map(async (p) => (await o.leads(1, { email: p }))[0]));
    const campaign = await seedCampaign(o.workspaceId, {
      appId: o.app.id,
      accountIds: [accountId],
      steps: [{ type: 'email', config: { subject: 'Hello {{first_name}}', body: 'A short note.' } }],
    });
    const e = services.orm.em.fork();
    const actor = await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined);
    const enroll = async (i: number) => {
      const [r] = await enrollLeads(e as never, jobs, actor, campaign.id, [leads[i].leadId], new Set());
      t.is(r.status, 'enrolled');
    };

    // 1. Sent over SMTP XOAUTH2 with the token of the connection.
    await enroll(0);
    await waitForMail(prospects[0], 1, 60_000);

    // 2. The access token expires (the provider now refuses it) and the server cuts every session:
    //    the next send and the sync must log in again with a refreshed token.
    await new Promise((r) => setTimeout(r, (TOKEN_SECONDS + 1) * 1000));
    gw.dropAll();
    await enroll(1);
    await waitForMail(prospects[1], 1, 60_000);
    const refreshed = auth.requests.filter((q) => q.grantType === 'refresh_token' && q.status === 200);
    t.true(refreshed.length >= 1, `refreshed (${JSON.stringify(auth.requests)})`);
    if (style === 'microsoft') {
      // Each refresh spent the refresh token the one before it issued: none was lost.
      t.true(
        auth.requests.every((q) => q.status === 200),
        JSON.stringify(auth.requests),
      );
    }
    // The second prospect replies: the sync, reconnected with a new token, reads it.
    await sendAs(prospects[1], { to: address, subject: 'Re: Hello', text: 'Interested, tell me more.' });
    await waitFor(
      'the reply in the inbox',
      async () =>
        (
          await db.execute<{ n: string }[]>(
            `select count(*) as n from inbox_messages where platform_account_id = ? and direction = 'in'`,
            [accountId],
          )
        )[0].n !== '0',
      60_000,
    );
    t.true(
      gw.logins.some((l) => l.side === 'imap' && l.ok),
      'the sync logged in over IMAP XOAUTH2',
    );
    t.is(await inboxCount(prospects[0]), 1, 'the first prospect got one message');
    t.is(await inboxCount(prospects[1]), 1, 'the second prospect got one message');

    // 3. Revoked: the account is disconnected `oauth_revoked`, the next send held, nothing sent.
    auth.revoke(address);
    gw.dropAll();
    await enroll(2);
    await waitFor(
      'the account disconnected with oauth_revoked',
      async () =>
        (
          await db.execute<{ status: string; status_reason: string | null }[]>(
            `select status, status_reason from platform_accounts where id = ?`,
            [accountId],
          )
        )[0].status_reason === 'oauth_revoked',
      60_000,
    );
    await waitFor(
      'the third send held not_connected',
      async () => {
        const [a] = await db.execute<{ state: string; waiting_reason: string | null }[]>(
          `select state, waiting_reason from scheduled_actions where campaign_id = ? and lead_id = ?`,
          [campaign.id, leads[2].leadId],
        );
        return !!a && a.state !== 'executing' && a.waiting_reason === 'not_connected';
      },
      60_000,
    );
    const [held] = await db.execute<{ state: string }[]>(
      `select state from scheduled_actions where campaign_id = ? and lead_id = ?`,
      [campaign.id, leads[2].leadId],
    );
    t.not(held.state, 'failed');
    t.not(held.state, 'executed');
    const events = await db.execute<{ n: string }[]>(
      `select count(*) as n from webhook_events where name = 'account.disconnected' and body like ?`,
      [`%${accountId}%`],
    );
    t.is(Number(events[0].n), 1, 'account.disconnected once');
    await new Promise((r) => setTimeout(r, 3000));
    t.is(await inboxCount(prospects[2]), 0, 'nothing sent after the revocation');
    await call('DELETE', `/api/platform-accounts/${accountId}`, { ...as(u, { on_campaigns: 'pause' }), base });
  });
}
