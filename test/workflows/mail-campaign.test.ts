// Real email end to end (docs/email.md): a mailbox on the real local mail server (GreenMail) sends a
// two-step campaign; acting as the prospects over SMTP/IMAP, the test checks the headers received
// (Message-ID from the action id, threading, List-Unsubscribe + One-Click), then replies
// (→ message.received, the sequence stops), answers out of office with a return date (→ held),
// causes a delivery status notification (→ bounced and suppressed) and unsubscribes one-click
// (→ suppressed, every enrollment stopped). Then a worker killed between the SMTP send and its record:
// the retry finds the message in the Sent folder and does not send it twice.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { simpleParser, type ParsedMail } from 'mailparser';
import { temporalJobs } from '../../jobs/temporal.js';
import { enrollLeads } from '../../domain/enrollments/enrollments.js';
import { resolveActor } from '../../domain/workspaces.js';
import { enrollmentWorkflowIds, mailboxWorkflowIds } from '../../lib/workflow-ids.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, mailAccount, seedCampaign } from '../helpers/campaigns.js';
import {
  createMailbox,
  mailCredentials,
  openMailbox,
  sendAs,
  uniqueAddress,
  waitForMail,
} from '../helpers/mail-server.js';
import { imapAppendCutter } from '../helpers/imap-cut.js';
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });

const parsed = async (source: string): Promise<ParsedMail> => simpleParser(source);
/** A header's raw value (mailparser folds List-* headers into a structured `list` entry). */
const header = (m: ParsedMail, name: string) =>
  m.headerLines
    .find((h) => h.key === name)
    ?.line.replace(/^[^:]+:\s*/, '')
    .replace(/\r?\n\s+/g, ' ');
const listUnsubscribe = (m: ParsedMail) => {
  const raw = m.headerLines.find((h) => h.key === 'list-unsubscribe')?.line ?? '';
  return [...raw.matchAll(/<([^>]+)>/g)].map((x) => x[1]);
};

const actionsOf = async (campaignId: string, leadId: string) =>
  (await em()).execute<
    {
      id: string;
      step_position: number;
      state: string;
      waiting_reason: string | null;
      connector_message_id: string | null;
    }[]
  >(
    `select id, step_position, state, waiting_reason, connector_message_id from scheduled_actions where campaign_id = ? and lead_id = ? order by step_position`,
    [campaignId, leadId],
  );
const enrollmentOf = async (campaignId: string, leadId: string) =>
  (
    await (
      await em()
    ).execute<{ status: string; stop_reason: string | null }[]>(
      `select status, stop_reason from enrollments where campaign_id = ? and lead_id = ?`,
      [campaignId, leadId],
    )
  )[0];

test('a two-step email campaign through a real mailbox: headers, reply, out-of-office, bounce and one-click unsubscribe', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const sender = await mailAccount(u);
  // Five prospects on the test server, one per outcome.
  const who = ['replier', 'away', 'bouncer', 'leaver', 'silent'] as const;
  const addresses = Object.fromEntries(who.map((w) => [w, uniqueAddress(w, 'prospect.test')])) as Record<
    (typeof who)[number],
    string
  >;
  const leads = Object.fromEntries(
    await Promise.all(who.map(async (w) => [w, (await o.leads(1, { email: addresses[w] }))[0]] as const)),
  ) as Record<(typeof who)[number], Awaited<ReturnType<typeof o.leads>>[number]>;
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [sender.id],
    steps: [
      {
        type: 'email',
        config: {
          subject: 'Hello {{first_name}}',
          body: 'Hi {{first_name}}, a short note.\nUnsubscribe: {{unsubscribe_url}}',
        },
      },
      // 0.003 h ≈ 11 s: time for the reactions to land before the follow-up is due.
      { type: 'wait', config: { unit: 'hours', amount: 0.003 } },
      { type: 'email', config: { subject: 'Hello again', body: 'Just following up, {{first_name}}.' } },
    ],
  });
  const enrolled = await call(
    'POST',
    `/api/campaigns/${campaign.id}/leads`,
    as(u, { lead_ids: who.map((w) => leads[w].leadId) }),
  );
  t.is(enrolled.status, 200, enrolled.text);

  // Step 1 reaches every prospect's mailbox with the headers a mailbox provider expects.
  const first: Record<string, ParsedMail> = {};
  for (const w of who) {
    const [msg] = await waitForMail(addresses[w], 1, 60_000);
    first[w] = await parsed(msg.source);
    const [a] = await actionsOf(campaign.id, leads[w].leadId);
    t.is(
      first[w].messageId,
      `<${a.id}@${sender.address.split('@')[1]}>`,
      'the Message-ID is derived from the action id',
    );
    t.is(first[w].subject, 'Hello Grace');
    t.truthy(first[w].html, 'an HTML alternative');
    const targets = listUnsubscribe(first[w]);
    t.true(
      targets.some((x) => x.startsWith('http')),
      'an https (here http on loopback) one-click URL',
    );
    t.true(
      targets.some((x) => x.startsWith('mailto:')),
      'a mailto unsubscribe',
    );
    t.is(header(first[w], 'list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
    t.true(
      first[w].text!.includes(targets.find((x) => x.startsWith('http'))!),
      '{{unsubscribe_url}} rendered in the body is the header’s URL',
    );
  }
  // A copy of each went to the sender's Sent folder.
  const box = await openMailbox(sender.address, 'sender-pw');
  try {
    const sent = (await box.list()).find((f) => f.specialUse === '\\Sent' || /^sent/i.test(f.path));
    t.truthy(sent, 'a Sent folder');
    const status = await box.status(sent!.path, { messages: true });
    t.true(((status && status.messages) || 0) >= who.length);
  } finally {
    await box.logout();
  }

  // The replier answers in the thread.
  await sendAs(addresses.replier, {
    to: sender.address,
    subject: `Re: ${first.replier.subject}`,
    text: 'Sounds good, let us talk Tuesday.',
    inReplyTo: first.replier.messageId,
    references: [first.replier.messageId!],
  });
  // The away prospect's mailbox answers automatically, naming a return date.
  const back = new Date(Date.now() + 10 * 86_400_000);
  const backText = back.toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });
  await sendAs(addresses.away, {
    to: sender.address,
    subject: `Automatic reply: ${first.away.subject}`,
    text: `I am out of the office and will be back on ${backText}. I have limited access to email.`,
    inReplyTo: first.away.messageId,
    headers: { 'Auto-Submitted': 'auto-replied', 'X-Autoreply': 'yes' },
  });
  // The bouncer's server reports a permanent failure (RFC 3464).
  const boundary = `dsn-${randomUUID()}`;
  await sendAs(`mailer-daemon@prospect.test`, {
    envelope: { from: 'mailer-daemon@prospect.test', to: sender.address },
    raw: [
      `From: Mail Delivery System <mailer-daemon@prospect.test>`,
      `To: ${sender.address}`,
      `Subject: Undelivered Mail Returned to Sender`,
      `Message-ID: <${randomUUID()}@prospect.test>`,
      `Date: ${new Date().toUTCString()}`,
      `MIME-Version: 1.0`,
      `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`,
      ``,
      `--${boundary}`,
      `Content-Type: text/plain; charset=us-ascii`,
      ``,
      `The mail system could not deliver your message to ${addresses.bouncer}: user unknown.`,
      ``,
      `--${boundary}`,
      `Content-Type: message/delivery-status`,
      ``,
      `Reporting-MTA: dns; mx.prospect.test`,
      ``,
      `Final-Recipient: rfc822; ${addresses.bouncer}`,
      `Action: failed`,
      `Status: 5.1.1`,
      `Diagnostic-Code: smtp; 550 5.1.1 user unknown`,
      ``,
      `--${boundary}`,
      `Content-Type: text/rfc822-headers`,
      ``,
      `From: ${sender.address}`,
      `To: ${addresses.bouncer}`,
      `Subject: ${first.bouncer.subject}`,
      `Message-ID: ${first.bouncer.messageId}`,
      ``,
      `--${boundary}--`,
      ``,
    ].join('\r\n'),
  });
  // The leaver clicks their mail client's unsubscribe button (RFC 8058: a POST with this body).
  // (The link names PUBLIC_BASE_URL; this test's API listens on a port of its own.)
  const oneClick = new URL(
    new URL(listUnsubscribe(first.leaver).find((x) => x.startsWith('http'))!).pathname,
    (await api()).base,
  );
  const res = await fetch(oneClick, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  t.is(res.status, 200);

  // Reply: recorded, message.received leaves, the sequence stops.
  await waitFor(
    'the reply to stop the replier’s sequence',
    async () => (await enrollmentOf(campaign.id, leads.replier.leadId))?.status === 'replied',
    60_000,
  );
  const received = await (
    await em()
  ).execute<{ body: string }[]>(
    `select body from webhook_events where workspace_id = ? and name = 'message.received'`,
    [o.workspaceId],
  );
  t.is(received.length, 1, 'one message.received: the reply (not the auto-reply, not the bounce)');
  t.true(received[0].body.includes(leads.replier.leadId));
  // Out of office: not a reply; the follow-up holds until the day after the return date.
  await waitFor(
    'the away prospect’s follow-up to hold',
    async () =>
      (await actionsOf(campaign.id, leads.away.leadId)).some(
        (a) => a.step_position === 2 && a.waiting_reason === 'out_of_office',
      ),
    90_000,
  );
  t.is((await enrollmentOf(campaign.id, leads.away.leadId)).status, 'active');
  const [ooo] = await (
    await em()
  ).execute<{ until: Date }[]>(`select out_of_office_until as until from contacts where id = ?`, [
    leads.away.contactId,
  ]);
  t.is(
    new Date(ooo.until).toISOString().slice(0, 10),
    new Date(back.getTime() + 86_400_000).toISOString().slice(0, 10),
  );
  // Bounce: hard, stopped, suppressed.
  await waitFor(
    'the bounce to stop the bouncer’s sequence',
    async () => (await enrollmentOf(campaign.id, leads.bouncer.leadId))?.status === 'stopped',
    60_000,
  );
  t.is((await enrollmentOf(campaign.id, leads.bouncer.leadId)).stop_reason, 'bounced');
  const suppressions = await (
    await em()
  ).execute<{ value: string; reason: string }[]>(
    `select value, reason from suppressions where workspace_id = ? order by value`,
    [o.workspaceId],
  );
  t.deepEqual(
    suppressions.map((s) => `${s.value} ${s.reason}`).sort(),
    [`${addresses.bouncer} hard_bounce`, `${addresses.leaver} unsubscribe`].sort(),
  );
  // Unsubscribe: stopped at once.
  t.like(await enrollmentOf(campaign.id, leads.leaver.leadId), { status: 'stopped', stop_reason: 'unsubscribed' });

  // The silent prospect gets the follow-up in the same thread; nobody else gets a second email.
  const [, second] = await waitForMail(addresses.silent, 2, 120_000);
  const follow = await parsed(second.source);
  t.is(follow.subject, 'Re: Hello Grace');
  t.is(follow.inReplyTo, first.silent.messageId);
  t.true(String(follow.references ?? '').includes(first.silent.messageId!));
  await waitFor(
    'the silent prospect’s enrollment to complete',
    async () => (await enrollmentOf(campaign.id, leads.silent.leadId))?.status === 'completed',
    60_000,
  );
  for (const w of ['replier', 'bouncer', 'leaver'] as const) {
    const c = await openMailbox(addresses[w]);
    try {
      t.is((await c.mailboxOpen('INBOX')).exists, 1, `${w} received only the first email`);
    } finally {
      await c.logout();
    }
  }
});

test('a worker killed between the SMTP send and its record: the retry finds the message in Sent and does not send it twice', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const { services } = await api();
  const sender = await mailAccount(u);
  const prospect = uniqueAddress('once', 'prospect.test');
  const [lead] = await o.leads(1, { email: prospect });
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [sender.id],
    steps: [{ type: 'email', config: { subject: 'Once', body: 'Only once.' } }],
  });

  const taskQueue = `mail-crash-${randomUUID()}`;
  const env = {
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_SCHEDULES: 'off',
    WEBHOOK_DISPATCHER: 'off',
    MAILBOX_SESSIONS: 'off',
    EXECUTOR_TEST_PAUSE_AFTER_SEND_MS: '20000',
  };
  const first = spawnTsx('workers/worker.ts', env, { quiet: true });
  t.teardown(() => (first.exitCode === null ? stopChild(first) : undefined));
  const e = services.orm.em.fork();
  const actor = await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined);
  const [r] = await enrollLeads(
    e as never,
    temporalJobs(services.temporal, taskQueue),
    actor,
    campaign.id,
    [lead.leadId],
    new Set(),
  );
  t.is(r.status, 'enrolled');

  // The message is in the prospect's mailbox and its copy in the sender's Sent folder (filed before the
  // activity sleeps, so the kill lands between the send and its record, where the retry can tell).
  await waitForMail(prospect, 1, 120_000);
  await waitFor(
    'the copy in the sender’s Sent folder',
    async () => {
      const c = await openMailbox(sender.address, 'sender-pw');
      try {
        const sent = (await c.list()).find((f) => f.specialUse === '\\Sent' || /^sent/i.test(f.name));
        const status = sent && (await c.status(sent.path, { messages: true }));
        return Boolean(status && (status.messages ?? 0) >= 1);
      } finally {
        await c.logout().catch(() => undefined);
      }
    },
    120_000,
  );
  // Killed at once, inside its pause: starting the replacement first could outlast the pause on a
  // loaded machine, and the first worker would record the send itself (no retry to see).
  first.kill('SIGKILL');
  await new Promise((res) => first.once('exit', res));
  const second = spawnTsx('workers/worker.ts', { ...env, EXECUTOR_TEST_PAUSE_AFTER_SEND_MS: '0' }, { quiet: true });
  t.teardown(() => stopChild(second));

  const result = await services.temporal.workflow
    .getHandle(enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId))
    .result();
  t.like(result, { status: 'completed' });
  const [action] = await actionsOf(campaign.id, lead.leadId);
  t.is(action.state, 'executed');
  const [{ attempts }] = await (
    await em()
  ).execute<{ attempts: number }[]>(`select attempts from scheduled_actions where id = ?`, [action.id]);
  // Retried after the kill (a loaded machine may time out another attempt too); delivered once all the same.
  t.true(attempts >= 2, `the send was retried (attempts: ${attempts})`);
  const c = await openMailbox(prospect);
  try {
    t.is((await c.mailboxOpen('INBOX')).exists, 1, 'the prospect received it once');
  } finally {
    await c.logout();
  }
  t.is(action.connector_message_id, `<${action.id}@${sender.address.split('@')[1]}>`);
});

test('an answer from the inbox replies to the prospect’s message it answers: In-Reply-To that message, References the whole chain', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const sender = await mailAccount(u);
  const prospect = uniqueAddress('talker', 'prospect.test');
  const [lead] = await o.leads(1, { email: prospect });
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [sender.id],
    steps: [{ type: 'email', config: { subject: 'Hello {{first_name}}', body: 'Hi {{first_name}}, a short note.' } }],
  });
  const enrolled = await call('POST', `/api/campaigns/${campaign.id}/leads`, as(u, { lead_ids: [lead.leadId] }));
  t.is(enrolled.status, 200, enrolled.text);
  const [got] = await waitForMail(prospect, 1, 60_000);
  const first = await parsed(got.source);

  /** The prospect writes in the thread; returns the stored message's conversation once the sync has it. */
  const prospectWrites = async (text: string, inReplyTo: string, references: string[]) => {
    const id = `<${randomUUID()}@prospect.test>`;
    await sendAs(prospect, {
      to: sender.address,
      subject: 'Re: Hello Grace',
      text,
      messageId: id,
      inReplyTo,
      references,
    });
    let conversation = '';
    await waitFor(
      `the prospect’s message ${id} stored`,
      async () => {
        const [m] = await (
          await em()
        ).execute<{ conversation_id: string }[]>(
          `select conversation_id from inbox_messages where platform_account_id = ? and connector_message_id = ?`,
          [sender.id, id],
        );
        conversation = m?.conversation_id ?? '';
        return !!m;
      },
      60_000,
    );
    return { id, conversation };
  };
  const answer = async (conversation: string, body: string, count: number) => {
    const r = await call('POST', `/api/inbox/conversations/${conversation}/reply`, as(u, { body }));
    t.is(r.status, 202, r.text);
    const all = await waitForMail(prospect, count, 60_000);
    return parsed(all[count - 1].source);
  };

  const r1 = await prospectWrites('Sounds good. What does it cost?', first.messageId!, [first.messageId!]);
  const a1 = await answer(r1.conversation, 'It costs nothing to try.', 2);
  t.is(a1.inReplyTo, r1.id, 'In-Reply-To: the prospect’s message, not our first email');
  t.is(header(a1, 'references'), `${first.messageId} ${r1.id}`, 'References: the thread, then that message');

  // The prospect answers our answer; ours to that carries the whole chain, in order, once each.
  const r2 = await prospectWrites('Great, send the link.', a1.messageId!, [first.messageId!, r1.id, a1.messageId!]);
  t.is(r2.conversation, r1.conversation);
  const a2 = await answer(r2.conversation, 'Here it is.', 3);
  t.is(a2.inReplyTo, r2.id);
  t.is(header(a2, 'references'), [first.messageId, r1.id, a1.messageId, r2.id].join(' '));
});

test('a Sent copy that fails twice: the email is sent, the action executed, and the failure shows on the action', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  // Every APPEND through this relay breaks its connection: both the kept session's copy and the retry fail.
  const cutter = await imapAppendCutter(Infinity);
  const address = await createMailbox(uniqueAddress('sender'), 'sender-pw');
  const account = (
    await call(
      'POST',
      '/api/platform-accounts',
      as(u, { channel: 'email', display_name: 'Ana Sender', time_zone: 'Europe/Paris' }),
    )
  ).body as { id: string };
  const connected = await call(
    'POST',
    `/api/platform-accounts/${account.id}/connect`,
    as(u, { credentials: mailCredentials(address, 'sender-pw', { imap_port: String(cutter.port) }) }),
  );
  t.is(connected.status, 200, connected.text);
  // Over: the account's mailbox sync (which follows the INBOX through the relay) ends before the relay does.
  t.teardown(async () => {
    const { services } = await api();
    await services.temporal.workflow
      .getHandle(mailboxWorkflowIds.sync(account.id))
      .terminate('test over')
      .catch(() => undefined);
    await (await em()).execute(`update platform_accounts set status = 'disconnected' where id = ?`, [account.id]);
    await cutter.close();
  });
  await (
    await em()
  ).execute(
    `update platform_accounts set min_gap_seconds = 0, jitter_seconds = 0, warmup_skipped_at = now(), working_hours = '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb where id = ?`,
    [account.id],
  );
  const prospect = uniqueAddress('copyless', 'prospect.test');
  const [lead] = await o.leads(1, { email: prospect });
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hello', body: 'Hi there.' } }],
  });
  const enrolled = await call('POST', `/api/campaigns/${campaign.id}/leads`, as(u, { lead_ids: [lead.leadId] }));
  t.is(enrolled.status, 200, enrolled.text);

  await waitForMail(prospect, 1, 60_000);
  await waitFor(
    'the enrollment to complete',
    async () => (await enrollmentOf(campaign.id, lead.leadId))?.status === 'completed',
    60_000,
  );
  const [action] = await actionsOf(campaign.id, lead.leadId);
  const view = await call('GET', `/api/scheduled-actions/${action.id}`, as(u));
  t.is(view.status, 200, view.text);
  t.like(view.body, { state: 'executed', error_code: 'sent_copy_failed' });
  t.regex(String(view.body.error_message), /Sent folder/);
  t.is(cutter.appends, 2, 'the copy was tried on the kept session and once more on a fresh one');
  const box = await openMailbox(address, 'sender-pw');
  try {
    const sent = (await box.list()).find((f) => f.specialUse === '\\Sent' || /^sent/i.test(f.path));
    const status = sent && (await box.status(sent.path, { messages: true }));
    t.is(status ? (status.messages ?? 0) : 0, 0, 'no copy in Sent');
  } finally {
    await box.logout();
  }
});
