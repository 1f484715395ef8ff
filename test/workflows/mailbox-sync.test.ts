// The mailbox sync (docs/email.md "Receiving"): `mailbox-sync:<accountId>` follows a real mailbox on
// the local mail server (GreenMail) with IMAP IDLE and feeds the inbound pipeline. Acting as the
// prospects over SMTP: a reply in the thread (→ message.received, the sequence stops), an
// out-of-office naming its return date (→ held, not a reply), a hard DSN (→ bounced and suppressed),
// soft DSNs (→ counted, the third in a row hard), a mail to the unsubscribe address (→ unsubscribed),
// a mail from the account itself (→ never a reply); a restart resumes from the cursor with no
// duplicate; refused credentials disconnect the account and end the sync.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { temporalJobs } from '../../jobs/temporal.js';
import { followMailbox } from '../../domain/mailbox/follow.js';
import { encrypt } from '../../lib/crypto.js';
import { InboxReader } from '../../lib/connectors/mailbox/reader.js';
import { parseMailCredentials } from '../../lib/connectors/mailbox/settings.js';
import { uuidv7 } from '../../lib/ids.js';
import { mailboxWorkflowIds } from '../../lib/workflow-ids.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import {
  createMailbox,
  mailCredentials,
  openMailbox,
  sendAs,
  uniqueAddress,
  waitForMail,
} from '../helpers/mail-server.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });
const q = async <T>(sql: string, params: unknown[] = []) => (await em()).execute<T[]>(sql, params);
const DAY_MS = 86_400_000;

/** Polls until `read` gives a value (not undefined), which it returns. */
async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  let value: T | undefined;
  await waitFor(what, async () => (value = await read()) !== undefined, timeoutMs);
  return value!;
}

/** Makes the account a mail-connector account on a fresh mailbox of the test server, as connect stores one. */
async function makeMailAccount(
  accountId: string,
  password = 'sender-pw',
  storedPassword = password,
  /** The fleet whose workers follow it (null: any fleet, so the run's worker). */
  fleet: string | null = null,
) {
  const address = await createMailbox(uniqueAddress('sender', 'sender.test'), password);
  const { services } = await api();
  const credentials = mailCredentials(address, storedPassword);
  parseMailCredentials(credentials); // what connect checks
  await q(
    `update platform_accounts set connector = 'mail', connector_account_id = ?, address = ?, credentials_sealed = ?, status = 'connected', mailbox_fleet = ? where id = ?`,
    [
      `mail:${accountId}`,
      address,
      encrypt(JSON.stringify(credentials), services.config.encryptionKey),
      fleet,
      accountId,
    ],
  );
  return address;
}

async function startSync(accountId: string, workspaceId: string, t: { teardown: (fn: () => Promise<void>) => void }) {
  const { services } = await api();
  await temporalJobs(services.temporal, taskQueue).start('mailbox-sync', { accountId, workspaceId });
  // Over: the sync stops, and the account is left disconnected so no later reconciliation follows it again.
  t.teardown(async () => {
    await services.temporal.workflow
      .getHandle(mailboxWorkflowIds.sync(accountId))
      .terminate('test over')
      .catch(() => undefined);
    await q(`update platform_accounts set status = 'disconnected' where id = ?`, [accountId]);
  });
  return until(
    'the first pass to record the cursor',
    async () =>
      (
        await q<{ last_uid: string }>(
          `select last_uid::text from mailbox_cursors where account_id = ? and uid_validity is not null`,
          [accountId],
        )
      )[0],
  );
}

/**
 * An email campaign (email, a day's wait, email) that sent its first email to each prospect through
 * the sandbox; then the account becomes a mailbox on the test server and the sends are recorded as the
 * mail connector records them (Message-ID `<action id@sender.test>`, the thread's root). The sync runs.
 */
async function campaignThroughMailbox(
  t: { teardown: (fn: () => Promise<void>) => void },
  names: string[],
  opts: { stopOnReply?: boolean } = {},
) {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const prospects = Object.fromEntries(
    await Promise.all(
      names.map(async (n) => {
        const email = uniqueAddress(n, 'prospect.test');
        return [n, (await o.leads(1, { email }))[0]] as const;
      }),
    ),
  );
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    stopOnReply: opts.stopOnReply,
    steps: [
      { type: 'email', config: { subject: 'Hello {{first_name}}', body: 'Hi {{first_name}}, a short note.' } },
      { type: 'wait', config: { unit: 'hours', amount: 24 } },
      { type: 'email', config: { subject: 'Again', body: 'Following up.' } },
    ],
  });
  const r = await call(
    'POST',
    `/api/campaigns/${campaign.id}/leads`,
    as(u, { lead_ids: Object.values(prospects).map((p) => p.leadId) }),
  );
  if (r.status !== 200) throw new Error(r.text);
  await waitFor(
    'the first emails sent',
    async () =>
      (await q(`select 1 from scheduled_actions where campaign_id = ? and state = 'executed'`, [campaign.id]))
        .length === names.length,
    60_000,
  );
  const address = await makeMailAccount(account.id);
  await q(
    `update scheduled_actions set connector_message_id = '<' || id || '@sender.test>', connector_thread_id = '<' || id || '@sender.test>' where campaign_id = ? and state = 'executed'`,
    [campaign.id],
  );
  const sent = Object.fromEntries(
    await Promise.all(
      names.map(async (n) => {
        const [a] = await q<{ id: string; message_id: string; enrollment_id: string }>(
          `select id, connector_message_id as message_id, enrollment_id from scheduled_actions where lead_id = ? and state = 'executed'`,
          [prospects[n].leadId],
        );
        return [n, a] as const;
      }),
    ),
  );
  await startSync(account.id, o.workspaceId, t);
  return { u, o, account: { id: account.id, address }, campaign, prospects, sent };
}

const enrollmentOf = async (campaignId: string, leadId: string) =>
  (
    await q<{ status: string; stop_reason: string | null; replied_at: Date | null; bounced_at: Date | null }>(
      `select status, stop_reason, replied_at, bounced_at from enrollments where campaign_id = ? and lead_id = ?`,
      [campaignId, leadId],
    )
  )[0];
const storedMessage = (accountId: string, messageId: string, timeoutMs = 60_000) =>
  until(
    `message ${messageId} stored`,
    async () =>
      (
        await q<{
          kind: string;
          direction: string;
          lead_id: string | null;
          thread: string;
          subject: string | null;
          body: string;
        }>(
          `select m.kind, m.direction, m.lead_id, c.connector_thread_id as thread, m.subject, m.body from inbox_messages m join conversations c on c.id = m.conversation_id
        where m.platform_account_id = ? and m.connector_message_id = ?`,
          [accountId, messageId],
        )
      )[0],
    timeoutMs,
  );

function dsn(
  from: string,
  to: string,
  recipient: string,
  original: string,
  status: string,
  action: 'failed' | 'delayed',
) {
  const boundary = `dsn-${randomUUID()}`;
  const id = `<${randomUUID()}@mx.prospect.test>`;
  return {
    id,
    raw: [
      'From: Mail Delivery System <mailer-daemon@prospect.test>',
      `To: ${to}`,
      `Subject: ${action === 'failed' ? 'Undelivered Mail Returned to Sender' : 'Delayed Mail (still being retried)'}`,
      `Message-ID: ${id}`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`,
      '',
      `--${boundary}`,
      'Content-Type: text/plain; charset=us-ascii',
      '',
      `The mail system could not deliver your message to ${recipient}.`,
      '',
      `--${boundary}`,
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.prospect.test',
      '',
      `Final-Recipient: rfc822; ${recipient}`,
      `Action: ${action}`,
      `Status: ${status}`,
      '',
      `--${boundary}`,
      'Content-Type: text/rfc822-headers',
      '',
      `From: ${from}`,
      `To: ${recipient}`,
      'Subject: Hello Grace',
      `Message-ID: ${original}`,
      '',
      `--${boundary}--`,
      '',
    ].join('\r\n'),
  };
}

test('a reply, an out-of-office, a hard bounce, an unsubscribe and the account’s own mail, followed live with IDLE', async (t) => {
  const { o, account, campaign, prospects, sent } = await campaignThroughMailbox(t, [
    'replier',
    'away',
    'bouncer',
    'leaver',
  ]);
  const back = new Date(Date.now() + 10 * DAY_MS);
  const backText = back.toLocaleDateString('en-GB', {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    timeZone: 'UTC',
  });

  // The replier answers in the thread.
  const replyId = `<${randomUUID()}@prospect.test>`;
  const sentAt = Date.now();
  await sendAs(prospects.replier.email, {
    to: account.address,
    subject: 'Re: Hello Grace',
    text: 'Sounds good, let us talk Tuesday.\n\nOn Monday, Ana wrote:\n> Hi Grace',
    messageId: replyId,
    inReplyTo: sent.replier.message_id,
    references: [sent.replier.message_id],
  });
  const reply = await storedMessage(account.id, replyId);
  t.log(`reply stored ${Date.now() - sentAt} ms after it was sent`);
  t.like(reply, {
    kind: 'reply',
    direction: 'in',
    lead_id: prospects.replier.leadId,
    thread: sent.replier.message_id,
    subject: 'Re: Hello Grace',
    body: 'Sounds good, let us talk Tuesday.',
  });
  await waitFor(
    'the reply to stop the sequence',
    async () => (await enrollmentOf(campaign.id, prospects.replier.leadId)).status === 'replied',
    60_000,
  );

  // Out of office, automatic, with no In-Reply-To: threaded by the address, not a reply, the contact held.
  const awayId = `<${randomUUID()}@prospect.test>`;
  await sendAs(prospects.away.email, {
    to: account.address,
    subject: 'Automatic reply: Hello Grace',
    text: `I am out of the office and will be back on ${backText}. I have limited access to email.`,
    messageId: awayId,
    headers: { 'Auto-Submitted': 'auto-replied' },
  });
  t.like(await storedMessage(account.id, awayId), {
    kind: 'auto_reply',
    lead_id: prospects.away.leadId,
    thread: sent.away.message_id,
  });
  const [ooo] = await q<{ until: Date }>(`select out_of_office_until as until from contacts where id = ?`, [
    prospects.away.contactId,
  ]);
  t.is(
    new Date(ooo.until).toISOString(),
    `${new Date(back.getTime() + DAY_MS).toISOString().slice(0, 10)}T00:00:00.000Z`,
    'held until the day after the return date',
  );
  t.like(await enrollmentOf(campaign.id, prospects.away.leadId), { status: 'active', replied_at: null });

  // A permanent failure (5.1.1) reported by the prospect's server: bounced, stopped, suppressed.
  const bounce = dsn(
    account.address,
    account.address,
    prospects.bouncer.email,
    sent.bouncer.message_id,
    '5.1.1',
    'failed',
  );
  await sendAs('mailer-daemon@prospect.test', {
    envelope: { from: 'mailer-daemon@prospect.test', to: account.address },
    raw: bounce.raw,
  });
  t.like(await storedMessage(account.id, bounce.id), {
    kind: 'bounce',
    lead_id: prospects.bouncer.leadId,
    thread: sent.bouncer.message_id,
  });
  await waitFor(
    'the bounce to stop the sequence',
    async () => (await enrollmentOf(campaign.id, prospects.bouncer.leadId)).status === 'stopped',
    60_000,
  );
  t.like(await enrollmentOf(campaign.id, prospects.bouncer.leadId), { stop_reason: 'bounced' });
  t.deepEqual(await q(`select bounce_class from scheduled_actions where id = ?`, [sent.bouncer.id]), [
    { bounce_class: 'hard' },
  ]);

  // The List-Unsubscribe mailto: unsubscribed (source mailto), suppressed, the enrollment stopped.
  const leaveId = `<${randomUUID()}@prospect.test>`;
  await sendAs(prospects.leaver.email, {
    to: account.address,
    subject: 'unsubscribe',
    text: 'This message was sent by the unsubscribe button.',
    messageId: leaveId,
  });
  t.like(await storedMessage(account.id, leaveId), { kind: 'auto_reply', lead_id: prospects.leaver.leadId });
  await waitFor(
    'the unsubscribe to stop the sequence',
    async () => (await enrollmentOf(campaign.id, prospects.leaver.leadId)).status === 'stopped',
    60_000,
  );
  t.like(await enrollmentOf(campaign.id, prospects.leaver.leadId), { stop_reason: 'unsubscribed' });
  t.like((await q(`select unsubscribe_source from contacts where id = ?`, [prospects.leaver.contactId]))[0], {
    unsubscribe_source: 'mailto',
  });
  // Someone else writing "unsubscribe" in the away prospect's thread unsubscribes nobody.
  const otherId = `<${randomUUID()}@prospect.test>`;
  await sendAs(uniqueAddress('colleague', 'prospect.test'), {
    to: account.address,
    subject: 'unsubscribe',
    text: 'me, not Grace',
    messageId: otherId,
    inReplyTo: sent.away.message_id,
  });
  t.like(await storedMessage(account.id, otherId), { kind: 'auto_reply', lead_id: prospects.away.leadId });
  t.like((await q(`select unsubscribed_at from contacts where id = ?`, [prospects.away.contactId]))[0], {
    unsubscribed_at: null,
  });
  t.like(await enrollmentOf(campaign.id, prospects.away.leadId), { status: 'active' });

  // The account writes to itself in the replier's thread: stored as its own, not a reply.
  const ownId = `<${randomUUID()}@sender.test>`;
  await sendAs(account.address, {
    to: account.address,
    subject: 'Re: Hello Grace',
    text: 'note to self',
    messageId: ownId,
    inReplyTo: replyId,
    references: [sent.replier.message_id, replyId],
  });
  t.like(await storedMessage(account.id, ownId), { kind: 'sent', direction: 'out', thread: sent.replier.message_id });

  const received = await q<{ body: string }>(
    `select body from webhook_events where workspace_id = ? and name = 'message.received'`,
    [o.workspaceId],
  );
  t.is(received.length, 1, 'one message.received: the reply');
  t.like(JSON.parse(received[0].body).data, {
    lead_id: prospects.replier.leadId,
    message: 'Sounds good, let us talk Tuesday.',
  });
  const suppressed = await q<{ value: string; reason: string; source: string }>(
    `select value, reason, source from suppressions where workspace_id = ? order by reason`,
    [o.workspaceId],
  );
  t.deepEqual(
    suppressed.map((s) => [s.value, s.reason, s.source]),
    [
      [prospects.bouncer.email, 'hard_bounce', 'dsn'],
      [prospects.leaver.email, 'unsubscribe', 'mailto'],
    ],
  );
  const [cursor] = await q<{ mode: string; error_message: string | null }>(
    `select mode, error_message from mailbox_cursors where account_id = ?`,
    [account.id],
  );
  t.like(cursor, { mode: 'idle', error_message: null });
});

test('soft bounces (4.x.x) let the sequence go on, one per send; a reply ends the run; the third in a row counts as hard', async (t) => {
  const { o, account, campaign, prospects, sent } = await campaignThroughMailbox(t, ['full'], { stopOnReply: false });
  const lead = prospects.full;
  // Three more sends of the same enrollment in the thread (as later steps would have been).
  const [first] = await q<{ step_id: string; workspace_id: string }>(
    `select step_id, workspace_id from scheduled_actions where id = ?`,
    [sent.full.id],
  );
  const more: string[] = [];
  for (let i = 1; i <= 3; i++) {
    const id = uuidv7();
    await q(
      `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, executed_at, account_id, content,
         connector_message_id, connector_thread_id, attempts, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, 1, 'email', 'executed', now(), now() + (? || ' seconds')::interval, ?, ?::jsonb, ?, ?, 1, now(), now())`,
      [
        id,
        first.workspace_id,
        campaign.id,
        sent.full.enrollment_id,
        lead.leadId,
        first.step_id,
        10 + i,
        i,
        account.id,
        JSON.stringify({ recipient: lead.email, subject: 'Hello Grace', body: '…' }),
        `<${id}@sender.test>`,
        sent.full.message_id,
      ],
    );
    more.push(`<${id}@sender.test>`);
  }
  const softs = async () =>
    (await q<{ n: number }>(`select email_soft_bounces as n from contacts where id = ?`, [lead.contactId]))[0].n;
  const report = async (original: string, action: 'failed' | 'delayed' = 'failed') => {
    const d = dsn(account.address, account.address, lead.email, original, '4.2.2', action);
    await sendAs('mailer-daemon@prospect.test', {
      envelope: { from: 'mailer-daemon@prospect.test', to: account.address },
      raw: d.raw,
    });
    return storedMessage(account.id, d.id);
  };

  await report(sent.full.message_id);
  t.is(await softs(), 1);
  t.deepEqual(await q(`select bounce_class from scheduled_actions where id = ?`, [sent.full.id]), [
    { bounce_class: 'soft' },
  ]);
  t.like(await enrollmentOf(campaign.id, lead.leadId), { status: 'active', bounced_at: null });
  // A person's reply: no longer "in a row".
  const replyId = `<${randomUUID()}@prospect.test>`;
  await sendAs(lead.email, {
    to: account.address,
    subject: 'Re: Hello Grace',
    text: 'Mailbox was full, sorry.',
    messageId: replyId,
    inReplyTo: sent.full.message_id,
  });
  await storedMessage(account.id, replyId);
  t.is(await softs(), 0);

  await report(more[0], 'delayed'); // a warning only: a delay, not a bounce
  t.is(await softs(), 0);
  await report(more[0]); // the final report of the same send: one soft bounce
  await report(more[1]);
  t.is(await softs(), 2);
  t.like(await enrollmentOf(campaign.id, lead.leadId), { status: 'active', bounced_at: null });
  t.is((await q(`select 1 from suppressions where workspace_id = ?`, [o.workspaceId])).length, 0);

  await report(more[2]);
  t.is(await softs(), 3);
  await waitFor(
    'the third soft bounce to stop the sequence as a hard one',
    async () => (await enrollmentOf(campaign.id, lead.leadId)).status === 'stopped',
    60_000,
  );
  t.like(await enrollmentOf(campaign.id, lead.leadId), { stop_reason: 'bounced' });
  const classes = await q<{ id: string; bounce_class: string | null }>(
    `select connector_message_id as id, bounce_class from scheduled_actions where lead_id = ? and state = 'executed' order by step_position`,
    [lead.leadId],
  );
  t.deepEqual(
    classes.map((c) => c.bounce_class),
    ['soft', 'soft', 'soft', 'hard'],
  );
  t.truthy(
    (await q<{ at: Date | null }>(`select email_bounced_at as at from contacts where id = ?`, [lead.contactId]))[0].at,
  );
  t.deepEqual(await q(`select value, reason, source from suppressions where workspace_id = ?`, [o.workspaceId]), [
    { value: lead.email, reason: 'hard_bounce', source: 'dsn' },
  ]);
});

test('a delivery-delay warning (Action: delayed, 4.x.x) is a delay, not a bounce: not in `bounced`, no soft count, never suppresses; a failed 4.x.x still is a soft bounce', async (t) => {
  const { u, o, account, campaign, prospects, sent } = await campaignThroughMailbox(t, ['slow'], {
    stopOnReply: false,
  });
  const lead = prospects.slow;
  const warn = async (action: 'failed' | 'delayed', status = '4.4.1') => {
    const d = dsn(account.address, account.address, lead.email, sent.slow.message_id, status, action);
    await sendAs('mailer-daemon@prospect.test', {
      envelope: { from: 'mailer-daemon@prospect.test', to: account.address },
      raw: d.raw,
    });
    return storedMessage(account.id, d.id);
  };
  const send = async () =>
    (
      await q<{ bounced_at: Date | null; bounce_class: string | null; delayed_at: Date | null }>(
        `select bounced_at, bounce_class, delayed_at from scheduled_actions where id = ?`,
        [sent.slow.id],
      )
    )[0];
  const softs = async () =>
    (await q<{ n: number }>(`select email_soft_bounces as n from contacts where id = ?`, [lead.contactId]))[0].n;
  const bounced = async () => {
    const r = await call('GET', `/api/campaigns/${campaign.id}/stats`, as(u));
    if (r.status !== 200) throw new Error(r.text);
    return (r.body as { totals: { bounced: number } }).totals.bounced;
  };

  // Three warnings (greylisting, a slow mailbox): each stored in the conversation, none a bounce.
  for (let i = 0; i < 3; i++) await warn('delayed');
  const afterDelays = await send();
  t.is(afterDelays.bounced_at, null, 'a delay is not a bounce');
  t.is(afterDelays.bounce_class, null);
  t.truthy(afterDelays.delayed_at, 'the delay is recorded on the send');
  t.is(await softs(), 0, 'delays never count toward "three soft = hard"');
  t.is(await bounced(), 0, 'the stats’ bounced counts failed deliveries only');
  t.like(await enrollmentOf(campaign.id, lead.leadId), { status: 'active', bounced_at: null });
  t.is((await q(`select 1 from suppressions where workspace_id = ?`, [o.workspaceId])).length, 0, 'not suppressed');
  const [{ email_bounced_at }] = await q<{ email_bounced_at: Date | null }>(
    `select email_bounced_at from contacts where id = ?`,
    [lead.contactId],
  );
  t.is(email_bounced_at, null);

  // The server then gives up with a temporary code: a real soft bounce.
  await warn('failed', '4.2.2');
  t.like(await send(), { bounce_class: 'soft' });
  t.is(await softs(), 1);
  t.is(await bounced(), 1);
  t.like(await enrollmentOf(campaign.id, lead.leadId), { status: 'active' });
});

/** A sender account on a fresh mailbox, and mail to it from a stranger (no lead, no thread). */
async function strangerMail(fleet: string | null = null) {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const address = await makeMailAccount(account.id, 'sender-pw', 'sender-pw', fleet);
  const stranger = uniqueAddress('stranger', 'elsewhere.test');
  const send = async (n: number) => {
    const id = `<m${n}-${randomUUID()}@elsewhere.test>`;
    await sendAs(stranger, { to: address, subject: `Note ${n}`, text: `Note number ${n}.`, messageId: id });
    return id;
  };
  const count = async () =>
    Number(
      (
        await q<{ n: string }>(`select count(*)::text as n from inbox_messages where platform_account_id = ?`, [
          account.id,
        ])
      )[0].n,
    );
  const cursor = async () =>
    (
      await q<{ last_uid: string; uid_validity: string }>(
        `select last_uid::text, uid_validity::text from mailbox_cursors where account_id = ?`,
        [account.id],
      )
    )[0];
  return { o, account, address, send, count, cursor };
}

test('a restarted sync (terminated, started again) loses nothing and stores nothing twice', async (t) => {
  const { services } = await api();
  const { o, account, send, count } = await strangerMail();
  await startSync(account.id, o.workspaceId, t);
  await storedMessage(account.id, await send(1));
  const handle = services.temporal.workflow.getHandle(mailboxWorkflowIds.sync(account.id));
  await handle.terminate('restart');
  const during = [await send(2), await send(3)];
  await temporalJobs(services.temporal, taskQueue).start('mailbox-sync', {
    accountId: account.id,
    workspaceId: o.workspaceId,
  });
  for (const id of during) await storedMessage(account.id, id);
  await storedMessage(account.id, await send(4));
  t.is(await count(), 4, 'notes 1–4, each once');
  // From one stranger, none in a thread of ours: each note its own conversation, unmatched, no event.
  t.is(
    (await q(`select 1 from webhook_events where workspace_id = ? and name = 'message.received'`, [o.workspaceId]))
      .length,
    0,
  );
});

test('two workers share a fleet: the one following a mailbox is killed (SIGKILL), the other takes it over within 60 s; every message stored once', async (t) => {
  const { services } = await api();
  const queue = `mailbox-fleet-${randomUUID()}`;
  // A fleet of its own: two workers on the test's queue, following only the mailboxes whose lifecycle runs there.
  const env = {
    TEMPORAL_TASK_QUEUE: queue,
    TEMPORAL_SCHEDULES: 'off',
    WEBHOOK_DISPATCHER: 'off',
    MAILBOX_SESSIONS_UNASSIGNED: 'off',
    MAILBOX_LEASE_TICK_MS: '2000',
  };
  const workers = [
    spawnTsx('workers/worker.ts', env, { quiet: true }),
    spawnTsx('workers/worker.ts', env, { quiet: true }),
  ];
  t.teardown(() =>
    Promise.all(workers.map((w) => (w.exitCode === null && w.signalCode === null ? stopChild(w) : undefined))),
  );
  const boxes = await Promise.all([1, 2, 3, 4].map(() => strangerMail()));
  const jobs = temporalJobs(services.temporal, queue);
  for (const b of boxes) await jobs.start('mailbox-sync', { accountId: b.account.id, workspaceId: b.o.workspaceId });
  t.teardown(async () => {
    for (const b of boxes) {
      await services.temporal.workflow
        .getHandle(mailboxWorkflowIds.sync(b.account.id))
        .terminate('test over')
        .catch(() => undefined);
      await q(`update platform_accounts set status = 'disconnected' where id = ?`, [b.account.id]);
    }
  });
  const pids = new Set(workers.map((w) => w.pid));
  const holderPid = async (accountId: string) => {
    const [l] = await q<{ holder: string }>(
      `select holder from mailbox_leases where account_id = ? and expires_at > now()`,
      [accountId],
    );
    return l ? Number(l.holder.split(':').at(-2)) : null;
  };
  await waitFor(
    'each mailbox followed by a worker of the fleet',
    async () => (await Promise.all(boxes.map((b) => holderPid(b.account.id)))).every((p) => p !== null && pids.has(p)),
    120_000,
  );
  for (const b of boxes) await storedMessage(b.account.id, await b.send(1), 120_000);

  // The worker following the first mailbox dies without a word, while mail keeps arriving.
  const victimPid = (await holderPid(boxes[0].account.id))!;
  const victim = workers.find((w) => w.pid === victimPid)!;
  const survivor = workers.find((w) => w !== victim)!;
  const orphaned = [];
  for (const b of boxes) if ((await holderPid(b.account.id)) === victimPid) orphaned.push(b);
  victim.kill('SIGKILL');
  await new Promise((res) => victim.once('exit', res));
  const killedAt = Date.now();
  const later = await Promise.all(boxes.map((b) => b.send(2)));
  await waitFor(
    'the survivor to hold every mailbox',
    async () => (await Promise.all(boxes.map((b) => holderPid(b.account.id)))).every((p) => p === survivor.pid),
    120_000,
  );
  const takeover = Date.now() - killedAt;
  for (const [i, b] of boxes.entries()) await storedMessage(b.account.id, later[i], 120_000);
  t.log(
    `${orphaned.length} mailbox(es) taken over ${takeover} ms after the kill; all mail stored ${Date.now() - killedAt} ms after it`,
  );
  t.true(orphaned.length >= 1);
  t.true(takeover <= 60_000, `taken over after ${takeover} ms`);
  for (const b of boxes) t.is(await b.count(), 2, 'each message stored once');
});

test('pass by pass: the first starts at the connection (older mail is left), the next resume from the cursor, a new UIDVALIDITY re-reads by date without duplicates', async (t) => {
  const { services } = await api();
  // Of a fleet no worker runs: only the passes below read this mailbox.
  const { account, address, send, count, cursor } = await strangerMail(`nobody-${randomUUID()}`);
  const pass = () =>
    followMailbox(
      {
        em: () => services.orm.em.fork() as never,
        jobs: services.jobs,
        mailbox: services.mailbox,
        heartbeat: () => undefined,
        budgetMs: 500,
      },
      account.id,
    );
  const inMailbox = (n: number) => waitForMail(address, n, 30_000, 'sender-pw');
  // Mail from an hour before the connection (IMAP APPEND sets its arrival time).
  const box = await openMailbox(address, 'sender-pw');
  const oldId = `<old-${randomUUID()}@elsewhere.test>`;
  try {
    await box.append(
      'INBOX',
      `From: someone@elsewhere.test\r\nTo: ${address}\r\nSubject: Old\r\nMessage-ID: ${oldId}\r\n\r\nFrom before.\r\n`,
      [],
      new Date(Date.now() - 3_600_000),
    );
  } finally {
    await box.logout();
  }

  t.like(await pass(), { continue: true });
  t.is(await count(), 0);
  const first = await cursor();
  t.is(first.last_uid, '1', 'the old mail is behind the cursor, not imported');
  await send(1);
  await inMailbox(2);
  t.like(await pass(), { continue: true });
  t.is(await count(), 1);
  t.like(await cursor(), { last_uid: '2', uid_validity: first.uid_validity });

  // The server renumbered the folder: the stored UIDVALIDITY no longer matches.
  await q(`update mailbox_cursors set uid_validity = 1, last_uid = 99 where account_id = ?`, [account.id]);
  await send(2);
  await inMailbox(3);
  t.like(await pass(), { continue: true });
  t.like(await cursor(), { last_uid: '3', uid_validity: first.uid_validity });
  t.is(await count(), 2, 'notes 1 and 2, each once');
  t.is(
    (await q(`select 1 from inbox_messages where connector_message_id = ?`, [oldId])).length,
    0,
    'mail from before the connection is never imported',
  );

  // Disconnected: the pass ends the sync.
  await q(`update platform_accounts set status = 'disconnected' where id = ?`, [account.id]);
  t.deepEqual(await pass(), { continue: false, reason: 'not_connected' });
});

test('refused credentials disconnect the account (credentials_invalid) and end the sync; its history replays', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  await makeMailAccount(account.id, 'sender-pw', 'a-wrong-password');
  await temporalJobs(services.temporal, taskQueue).start('mailbox-sync', {
    accountId: account.id,
    workspaceId: o.workspaceId,
  });
  const handle = services.temporal.workflow.getHandle(mailboxWorkflowIds.sync(account.id));
  t.deepEqual(await handle.result(), { ended: 'credentials_invalid' });
  t.like((await q(`select status, status_reason from platform_accounts where id = ?`, [account.id]))[0], {
    status: 'disconnected',
    status_reason: 'credentials_invalid',
  });
  t.is(
    (await q(`select 1 from webhook_events where workspace_id = ? and name = 'account.disconnected'`, [o.workspaceId]))
      .length,
    1,
  );
  // A sync started again for a disconnected account ends at once, with the disconnect's reason.
  await temporalJobs(services.temporal, taskQueue).start('mailbox-sync', {
    accountId: account.id,
    workspaceId: o.workspaceId,
  });
  t.deepEqual(await services.temporal.workflow.getHandle(mailboxWorkflowIds.sync(account.id)).result(), {
    ended: 'credentials_invalid',
  });
  t.true((await replayLive(services.temporal, mailboxWorkflowIds.sync(account.id))) > 0);
  // This run's history (the lifecycle), and one recorded before the session service (a long pass per
  // activity: the old branch) still replay.
  await replayFixture(services.temporal, 'mailboxSyncLifecycle', mailboxWorkflowIds.sync(account.id));
  await replayFixture(services.temporal, 'mailboxSync', mailboxWorkflowIds.sync(account.id));
});

test('a host the outbound policy refuses does not disconnect: the sync keeps retrying, the problem is on the account, and it follows the mailbox again once the host is allowed', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const address = await makeMailAccount(account.id);
  const seal = (over: Record<string, string>) =>
    encrypt(JSON.stringify(mailCredentials(address, 'sender-pw', over)), services.config.encryptionKey);
  // As after OUTBOUND_ALLOW_HOSTS was narrowed: the IMAP host is a loopback address no longer allowed.
  await q(`update platform_accounts set credentials_sealed = ? where id = ?`, [
    seal({ imap_host: '127.0.0.2' }),
    account.id,
  ]);
  await temporalJobs(services.temporal, taskQueue).start('mailbox-sync', {
    accountId: account.id,
    workspaceId: o.workspaceId,
  });
  t.teardown(async () => {
    await services.temporal.workflow
      .getHandle(mailboxWorkflowIds.sync(account.id))
      .terminate('test over')
      .catch(() => undefined);
    await q(`update platform_accounts set status = 'disconnected' where id = ?`, [account.id]);
  });
  const problem = await until(
    'the problem recorded',
    async () =>
      (
        await q<{ status: string; problem: { reason: string; detected_by: string } | null }>(
          `select status, connection_problem as problem from platform_accounts where id = ? and connection_problem is not null`,
          [account.id],
        )
      )[0],
  );
  t.like(problem, { status: 'connected', problem: { reason: 'blocked_destination', detected_by: 'sync' } });
  const handle = services.temporal.workflow.getHandle(mailboxWorkflowIds.sync(account.id));
  t.is((await handle.describe()).status.name, 'RUNNING', 'the sync retries instead of ending');
  t.is(
    (await q(`select 1 from webhook_events where workspace_id = ? and name = 'account.disconnected'`, [o.workspaceId]))
      .length,
    0,
  );

  // The host allowed again: the next retry logs in, follows the mailbox and clears the problem.
  await q(`update platform_accounts set credentials_sealed = ? where id = ?`, [seal({}), account.id]);
  await until(
    'the sync to follow the mailbox again',
    async () =>
      (
        await q(
          `select 1 from mailbox_cursors c join platform_accounts p on p.id = c.account_id
            where c.account_id = ? and c.uid_validity is not null and p.connection_problem is null`,
          [account.id],
        )
      )[0],
  );
  t.like((await q(`select status, status_reason from platform_accounts where id = ?`, [account.id]))[0], {
    status: 'connected',
    status_reason: null,
  });
});

test('the reader: IDLE wakes on new mail at once; without IDLE the next poll finds it', async (t) => {
  const { services } = await api();
  const address = await createMailbox(uniqueAddress('reader', 'sender.test'), 'pw');
  const imap = parseMailCredentials(mailCredentials(address, 'pw')).imap;
  const policy = { allowHosts: services.config.outboundAllowHosts };
  for (const forcePoll of [false, true]) {
    const r = await InboxReader.open(imap, policy, { forcePoll, pollMs: 1_000 });
    try {
      t.is(r.mode, forcePoll ? 'poll' : 'idle');
      const last = r.uidNext - 1;
      t.deepEqual(await r.listNew(last), []);
      const WAIT_MS = 60_000;
      const started = Date.now();
      const waiting = r.waitForMail(WAIT_MS);
      await sendAs(uniqueAddress('x', 'elsewhere.test'), { to: address, subject: 'ping', text: 'ping' });
      await waiting;
      const waited = Date.now() - started;
      let listed = await r.listNew(last);
      if (!forcePoll) {
        // IDLE: the wait ended before its deadline because the server announced the message (however long
        // the delivery took), so it is there at the first look.
        t.true(waited < WAIT_MS, `IDLE: woken after ${waited} ms`);
        t.is(r.mode, 'idle');
        t.is(listed.length, 1, 'IDLE: listed at the first look');
      }
      // Polling: a look may come before the delivery; the sync's loop then waits and looks again.
      const deadline = Date.now() + 60_000;
      while (!listed.length && Date.now() < deadline) {
        await r.waitForMail(1_000);
        listed = await r.listNew(last);
      }
      t.is(listed.length, 1, `${forcePoll ? 'poll' : 'IDLE'}: listed after ${Date.now() - started} ms`);
      const [m] = await r.fetch(listed);
      t.regex(m.source.toString(), /Subject: ping/);
    } finally {
      await r.close();
    }
  }
});
