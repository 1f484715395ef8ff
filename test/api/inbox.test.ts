// The unified inbox on the sandbox network (docs/inbox.md): inbound processing (matching, replies,
// message.received, auto-replies, bounces, reactions, duplicates), conversations, replies through the
// governor, live reads, live sends, attachments, AI drafts, sync, and their workflows' replays.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { SandboxNetwork, signInbound } from '../../lib/connectors/index.js';
import { sandboxInjectMessage } from '../../lib/connectors/sandbox-network.js';
import { deliverFor } from '../helpers/inbound.js';
import { enrollmentWorkflowIds, inboxWorkflowIds, webhookWorkflowIds } from '../../lib/workflow-ids.js';
import { classifyInbound } from '../../domain/inbox/ingest.js';
import { debitCredits } from '../../domain/billing/credits.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createUser, listen, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignWithAccount, fastAccount, campaignOwner, seedCampaign } from '../helpers/campaigns.js';
import { startReceiver, verifySignature } from '../helpers/receiver.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { whenStarted } from '../helpers/workflows.js';
import { eventDelivery } from '../helpers/webhook-delivery.js';
test.after.always(closeApi);

/** Polls until `read` gives a value (not undefined), which it returns. */
async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  let value: T | undefined;
  await waitFor(what, async () => (value = await read()) !== undefined, timeoutMs);
  return value!;
}
const SECRET = 'whsec-test-inbox';

/** Injects a message on the account and waits until the inbox stored it. */
async function inject(connectorAccountId: string, input: Parameters<typeof sandboxInjectMessage>[2]) {
  const r = await sandboxInjectMessage(await em(), connectorAccountId, input);
  await deliverFor(connectorAccountId);
  await waitFor(
    'the message in the inbox',
    async () =>
      (await (await em()).execute(`select 1 from inbox_messages where connector_message_id = ?`, [r.messageId]))
        .length > 0,
    60_000,
  );
  return r;
}

const conversations = (u: TestUser, query = '') =>
  call('GET', `/api/inbox/conversations${query}`, { token: u.accessToken });
const conversationOf = async (u: TestUser, threadId: string) =>
  (await conversations(u)).body.items.find((c: { chat_id: string }) => c.chat_id === threadId);

/** An email campaign that has sent its first step to one lead, waiting a while (an hour unless told) before the second. */
async function sentEmail(waitHours = 1) {
  const ctx = await campaignWithAccount('email', [
    {
      type: 'email',
      config: { subject: 'Hello {{first_name}}', body: 'Hi {{first_name}}, a question about {{company}}.' },
    },
    { type: 'wait', config: { amount: waitHours, unit: 'hours' } },
    { type: 'email', config: { subject: 'Again', body: 'Following up, {{first_name}}' } },
  ]);
  const [lead] = await ctx.o.leads(1);
  const r = await call('POST', `/api/campaigns/${ctx.campaign.id}/leads`, {
    token: ctx.u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  if (r.status !== 200) throw new Error(r.text);
  const action = await until(
    'the first email sent',
    async () =>
      (
        await (
          await em()
        ).execute<{ id: string; connector_thread_id: string }[]>(
          `select id, connector_thread_id from scheduled_actions where lead_id = ? and state = 'executed'`,
          [lead.leadId],
        )
      )[0],
  );
  return { ...ctx, lead, action };
}

test.serial(
  'a reply to an enrolled lead stops its enrollment and is delivered once as a signed message.received with the spec’s fields; a second reply is not first',
  async (t) => {
    const { u, o, account, campaign, lead, action } = await sentEmail();
    const rx = await startReceiver();
    t.teardown(rx.close);
    const sub = (
      await call('POST', '/api/webhooks/outbound', {
        token: u.accessToken,
        body: { url: rx.url, events: ['message.received'], active: true },
      })
    ).body;

    await inject(account.connector_account_id, {
      from: lead.email,
      body: 'Sounds interesting, tell me more?',
      threadId: action.connector_thread_id,
    });
    const handle = (await api()).services.temporal.workflow.getHandle(
      enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId),
    );
    t.like(await handle.result(), { status: 'replied', stop_reason: 'replied' });
    const states = await (
      await em()
    ).execute<{ state: string }[]>(`select state from scheduled_actions where lead_id = ? order by step_position`, [
      lead.leadId,
    ]);
    t.deepEqual(
      states.map((s) => s.state),
      ['executed', 'canceled'],
    );

    await waitFor('one delivery', async () => rx.requests.length >= 1, 60_000);
    const conv = await conversationOf(u, action.connector_thread_id);
    t.like(conv, {
      lead: { id: lead.leadId, first_name: 'Grace' },
      campaign_id: campaign.id,
      unread_count: 1,
      last_direction: 'in',
    });
    const body = JSON.parse(rx.requests[0].raw.toString());
    t.true(verifySignature(sub.secret, rx.requests[0].raw, rx.requests[0].headers['x-service-signature']));
    t.is(body.event, 'message.received');
    t.deepEqual(body.data, {
      conversation_id: conv.id,
      lead_id: lead.leadId,
      campaign_id: campaign.id,
      sender_name: 'Grace Hopper',
      sender_provider_id: lead.email,
      message: 'Sounds interesting, tell me more?',
      is_first_reply: true,
      first_name: 'Grace',
      last_name: 'Hopper',
    });

    // A second reply: not the first any more.
    await inject(account.connector_account_id, {
      from: lead.email,
      body: 'Also, pricing?',
      threadId: action.connector_thread_id,
    });
    await waitFor('a second delivery', async () => rx.requests.length >= 2, 60_000);
    t.is(JSON.parse(rx.requests[1].raw.toString()).data.is_first_reply, false);
    t.is(rx.requests.length, 2);

    // The conversation shows the campaign's send and both replies; reading it clears the unread count.
    const detail = (await call('GET', `/api/inbox/conversations/${conv.id}`, { token: u.accessToken })).body;
    t.deepEqual(
      detail.messages.map((m: { direction: string; kind: string; origin: string | null }) => [
        m.direction,
        m.kind,
        m.origin,
      ]),
      [
        ['out', 'sent', 'campaign'],
        ['in', 'reply', null],
        ['in', 'reply', null],
      ],
    );
    t.deepEqual((await call('GET', '/api/inbox/unread-count', { token: u.accessToken })).body, {
      conversations: 1,
      messages: 2,
    });
    t.is(
      (await call('POST', `/api/inbox/conversations/${conv.id}/read`, { token: u.accessToken })).body.unread_count,
      0,
    );
    t.deepEqual((await call('GET', '/api/inbox/unread-count', { token: u.accessToken })).body, {
      conversations: 0,
      messages: 0,
    });

    // A follow-up waits for an answer to the reply.
    const f = (await call('GET', `/api/follow-ups?lead_id=${lead.leadId}`, { token: u.accessToken })).body.items;
    t.like(f, [
      { kind: 'reply_waiting', conversation_id: conv.id, due: false, summary: 'Sounds interesting, tell me more?' },
    ]);
    void o;
  },
);

test.serial(
  'an unmatched message is stored without a lead and produces no event; a duplicated inbound event is stored once',
  async (t) => {
    const { services } = await api();
    const { base } = await listen({
      ...services,
      connector: new SandboxNetwork(services.config.sources.corpus, services.orm, SECRET),
    });
    const u = await createOwner();
    await campaignOwner(u);
    const account = await fastAccount(u, 'network');
    const stranger = `https://pronet.example/in/stranger-${randomUUID()}`;
    const event = {
      id: `evt_${randomUUID()}`,
      type: 'message.received',
      account_id: account.connector_account_id,
      created_at: new Date().toISOString(),
      data: {
        message: {
          id: `msg_${randomUUID()}`,
          thread_id: `thr_${randomUUID()}`,
          direction: 'in',
          from: stranger,
          body: 'Who are you?',
          sent_at: new Date().toISOString(),
          attachments: [],
        },
      },
    };
    const raw = JSON.stringify(event);
    const first = await call('POST', '/hooks/connector', {
      base,
      rawBody: raw,
      headers: { 'X-Connector-Signature': signInbound(SECRET, raw) },
    });
    t.deepEqual(first.body, { received: true, duplicate: false });
    const again = await call('POST', '/hooks/connector', {
      base,
      rawBody: raw,
      headers: { 'X-Connector-Signature': signInbound(SECRET, raw) },
    });
    t.deepEqual(again.body, { received: true, duplicate: true });
    // The same message under another event id (a connector's redelivery) is still one message.
    const other = JSON.stringify({ ...event, id: `evt_${randomUUID()}` });
    t.is(
      (
        await call('POST', '/hooks/connector', {
          base,
          rawBody: other,
          headers: { 'X-Connector-Signature': signInbound(SECRET, other) },
        })
      ).status,
      200,
    );

    const handle = services.temporal.workflow.getHandle(inboxWorkflowIds.inbound(account.id));
    await waitFor(
      'both events handled',
      async () =>
        Number(
          (
            await (
              await em()
            ).execute(
              `select count(*) from connector_events where connector_account_id = ? and handled_at is not null`,
              [account.connector_account_id],
            )
          )[0].count,
        ) === 2,
      60_000,
    );
    const e = await em();
    t.is(
      Number(
        (
          await e.execute(`select count(*) from inbox_messages where connector_message_id = ?`, [event.data.message.id])
        )[0].count,
      ),
      1,
    );
    const conv = (await conversations(u)).body.items[0];
    t.like(conv, { counterpart: stranger, lead: null, unread_count: 1 });
    t.is(
      Number(
        (
          await e.execute(
            `select count(*) from webhook_events where workspace_id = (select workspace_id from platform_accounts where id = ?)`,
            [account.id],
          )
        )[0].count,
      ),
      0,
    );
    await replayFixture(services.temporal, 'inboxInbound', (await whenStarted(handle)).workflowId);
  },
);

test.serial(
  'an out-of-office answer is an auto_reply: the sequence goes on and no message.received is emitted; reactions are internal only',
  async (t) => {
    const { u, account, campaign, lead, action } = await sentEmail();
    await inject(account.connector_account_id, {
      from: lead.email,
      body: 'Automatic reply: I am out of the office until Monday with limited access to email.',
      threadId: action.connector_thread_id,
    });
    const e = await em();
    const [m] = await e.execute<{ kind: string }[]>(
      `select kind from inbox_messages where lead_id = ? and direction = 'in'`,
      [lead.leadId],
    );
    t.is(m.kind, 'auto_reply');
    const [enr] = await e.execute<{ status: string; replied_at: Date | null }[]>(
      `select status, replied_at from enrollments where campaign_id = ? and lead_id = ?`,
      [campaign.id, lead.leadId],
    );
    t.like(enr, { status: 'active', replied_at: null });
    const ws = (
      await e.execute<{ workspace_id: string }[]>(`select workspace_id from platform_accounts where id = ?`, [
        account.id,
      ])
    )[0].workspace_id;
    t.is(
      Number(
        (
          await e.execute(`select count(*) from webhook_events where workspace_id = ? and name = 'message.received'`, [
            ws,
          ])
        )[0].count,
      ),
      0,
    );
    // No follow-up for an auto-reply.
    t.is((await call('GET', `/api/follow-ups?lead_id=${lead.leadId}`, { token: u.accessToken })).body.items.length, 0);

    // A reaction: stored as the internal event, which no subscription can ask for.
    const { services } = await api();
    const { base } = await listen({
      ...services,
      connector: new SandboxNetwork(services.config.sources.corpus, services.orm, SECRET),
    });
    const reaction = JSON.stringify({
      id: `evt_${randomUUID()}`,
      type: 'reaction.received',
      account_id: account.connector_account_id,
      created_at: new Date().toISOString(),
      data: {
        message_id: 'msg-x',
        thread_id: action.connector_thread_id,
        from: lead.email,
        reaction: '👍',
        reacted_at: new Date().toISOString(),
      },
    });
    t.is(
      (
        await call('POST', '/hooks/connector', {
          base,
          rawBody: reaction,
          headers: { 'X-Connector-Signature': signInbound(SECRET, reaction) },
        })
      ).status,
      200,
    );
    const ev = await until(
      'reaction.received',
      async () =>
        (
          await e.execute<{ id: string; body: string }[]>(
            `select id, body from webhook_events where workspace_id = ? and name = 'reaction.received'`,
            [ws],
          )
        )[0],
    );
    t.deepEqual(JSON.parse(ev.body).data, {
      lead_id: lead.leadId,
      campaign_id: campaign.id,
      conversation_id: (await conversationOf(u, action.connector_thread_id)).id,
      first_name: 'Grace',
      last_name: 'Hopper',
      reaction: '👍',
    });
    const sub = await call('POST', '/api/webhooks/outbound', {
      token: u.accessToken,
      body: { url: 'https://example.test/h', events: ['reaction.received'] },
    });
    t.is(sub.status, 400);
    t.is(sub.body.error.code, 'invalid_event');
    t.like(await eventDelivery(services.temporal, ev.id), { targets: 0, succeeded: 0 });
  },
);

const NDR = 'Delivery Status Notification (Failure). Your message could not be delivered: address not found.';
const bounceMarks = async (actionId: string, leadId: string) =>
  (
    await (
      await em()
    ).execute<{ action: Date | null; enrollment: Date | null; contact: Date | null }[]>(
      `select a.bounced_at as action, e.bounced_at as enrollment, k.email_bounced_at as contact
         from scheduled_actions a join enrollments e on e.id = a.enrollment_id join contacts k on k.id = e.contact_id where a.id = ? and a.lead_id = ?`,
      [actionId, leadId],
    )
  )[0];

test.serial(
  'a bounce of a campaign email ends the enrollment at once (signal after commit) and counts once as bounced; the contact is skipped by email campaigns until its address changes',
  async (t) => {
    // The follow-up is a day away: only the bounce signal can end the enrollment within the test.
    const { u, o, account, campaign, lead, action } = await sentEmail(24);
    const { services } = await api();
    const e = await em();
    const ws = (
      await e.execute<{ workspace_id: string }[]>(`select workspace_id from platform_accounts where id = ?`, [
        account.id,
      ])
    )[0].workspace_id;
    await inject(account.connector_account_id, {
      from: 'MAILER-DAEMON@mx.example.test',
      body: NDR,
      threadId: action.connector_thread_id,
    });
    const marks = await bounceMarks(action.id, lead.leadId);
    t.truthy(marks.action);
    t.truthy(marks.enrollment);
    t.truthy(marks.contact);

    const handle = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId));
    t.like(
      await Promise.race([
        handle.result(),
        new Promise((r) => setTimeout(() => r('still waiting for the follow-up'), 60_000)),
      ]),
      { status: 'stopped', stop_reason: 'bounced' },
    );
    t.true((await replayLive(services.temporal, handle.workflowId)) > 0, 'the history with its bounce signal replays');
    const states = await e.execute<{ state: string; error_code: string | null }[]>(
      `select state, error_code from scheduled_actions where lead_id = ? order by step_position`,
      [lead.leadId],
    );
    t.deepEqual(
      states.map((s) => [s.state, s.error_code]),
      [
        ['executed', null],
        ['canceled', 'bounced'],
      ],
    );
    const [enr] = await e.execute<{ status: string; stop_reason: string | null; replied_at: Date | null }[]>(
      `select status, stop_reason, replied_at from enrollments where campaign_id = ? and lead_id = ?`,
      [campaign.id, lead.leadId],
    );
    t.like(enr, { status: 'stopped', stop_reason: 'bounced', replied_at: null });
    t.is(
      (
        await e.execute(`select count(*)::int as n from sandbox_messages where counterpart = ? and direction = 'out'`, [
          lead.email,
        ])
      )[0].n,
      1,
      'only the first email went out',
    );

    // Not a reply: no event, no reminder, not unread.
    t.is(
      Number(
        (
          await e.execute(`select count(*) from webhook_events where workspace_id = ? and name = 'message.received'`, [
            ws,
          ])
        )[0].count,
      ),
      0,
    );
    t.is((await call('GET', `/api/follow-ups?lead_id=${lead.leadId}`, { token: u.accessToken })).body.items.length, 0);
    t.like(await conversationOf(u, action.connector_thread_id), { unread_count: 0 });

    // A second report for the same send: still one bounce in the stats.
    await inject(account.connector_account_id, {
      from: 'postmaster@mx.example.test',
      body: NDR,
      threadId: action.connector_thread_id,
    });
    const stats = (await call('GET', `/api/campaigns/${campaign.id}/stats`, { token: u.accessToken })).body;
    t.like(stats.totals, { sent: 1, bounced: 1, failed: 0 });
    t.like(stats.steps[0], { step_position: 0, sent: 1, bounced: 1 });

    // The contact's address bounced: an email-first campaign skips it; a network-first one does not.
    const lead2 = await call(
      'GET',
      `/api/contacts/${(await e.execute<{ contact_id: string }[]>(`select contact_id from leads where id = ?`, [lead.leadId]))[0].contact_id}`,
      { token: u.accessToken },
    );
    t.truthy(lead2.body.email_bounced_at);
    const emailFirst = await seedCampaign(o.workspaceId, {
      appId: o.app.id,
      accountIds: [account.id],
      steps: [{ type: 'email', config: { subject: 'Hi', body: 'Another note' } }],
      status: 'paused',
    });
    const networkFirst = await seedCampaign(o.workspaceId, {
      appId: o.app.id,
      accountIds: [],
      steps: [
        { type: 'invitation', config: { note: 'Hi' } },
        { type: 'email', config: { subject: 'Hi', body: 'x' } },
      ],
    });
    const preview = await call('GET', `/api/campaigns/${emailFirst.id}/enrollment-preview?lead_ids=${lead.leadId}`, {
      token: u.accessToken,
    });
    t.like(preview.body, { would_enroll: 0, skipped_by_reason: { email_bounced: 1 } });
    const skipped = await call('POST', `/api/campaigns/${emailFirst.id}/leads`, {
      token: u.accessToken,
      body: { lead_ids: [lead.leadId] },
    });
    t.deepEqual(
      skipped.body.items.map((i: { status: string; reason: string | null }) => [i.status, i.reason]),
      [['skipped', 'email_bounced']],
    );
    t.like(
      (
        await call('GET', `/api/campaigns/${networkFirst.id}/enrollment-preview?lead_ids=${lead.leadId}`, {
          token: u.accessToken,
        })
      ).body,
      { would_enroll: 1 },
    );

    // The same address again keeps the mark; a new one clears it, and the lead can be enrolled.
    const same = await call('PATCH', `/api/leads/${lead.leadId}`, {
      token: u.accessToken,
      body: { email: lead.email.toUpperCase() },
    });
    t.is(same.status, 200, same.text);
    t.truthy(same.body.contact.email_bounced_at);
    const changed = await call('PATCH', `/api/leads/${lead.leadId}`, {
      token: u.accessToken,
      body: { email: `grace-new-${randomUUID()}@example.test` },
    });
    t.is(changed.status, 200, changed.text);
    t.is(changed.body.contact.email_bounced_at, null);
    t.like(
      (
        await call('GET', `/api/campaigns/${emailFirst.id}/enrollment-preview?lead_ids=${lead.leadId}`, {
          token: u.accessToken,
        })
      ).body,
      { would_enroll: 1 },
    );
  },
);

test.serial('a bounce with no campaign send of the lead in its thread changes nothing', async (t) => {
  const { account, campaign, lead, action } = await sentEmail();
  // A mail system's report in a thread of its own (matched to no lead), and a delivery failure from
  // the lead's own address in another thread (matched to the lead, but about no send of the campaign).
  await inject(account.connector_account_id, {
    from: 'MAILER-DAEMON@mx.example.test',
    body: NDR,
    threadId: `thr_${randomUUID()}`,
  });
  await inject(account.connector_account_id, {
    from: lead.email,
    body: 'Message not delivered: the mail server of the recipient refused it.',
    threadId: `thr_${randomUUID()}`,
  });
  const e = await em();
  const kinds = await e.execute<{ kind: string; lead_id: string | null }[]>(
    `select kind, lead_id from inbox_messages where platform_account_id = ? and direction = 'in' order by created_at`,
    [account.id],
  );
  t.deepEqual(
    kinds.map((k) => [k.kind, k.lead_id]),
    [
      ['bounce', null],
      ['bounce', lead.leadId],
    ],
  );
  t.deepEqual(await bounceMarks(action.id, lead.leadId), { action: null, enrollment: null, contact: null });
  t.like(
    (
      await e.execute(`select status from enrollments where campaign_id = ? and lead_id = ?`, [
        campaign.id,
        lead.leadId,
      ])
    )[0],
    { status: 'active' },
  );
  const q = await (
    await api()
  ).services.temporal.workflow
    .getHandle(enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId))
    .query<{ finished: unknown; reason: string | null }>('state');
  t.like(q, { finished: null, reason: 'waiting_step_delay' });
});

test('classification: bounces by sender or delivery failure, auto-replies by their wording, the rest replies', (t) => {
  t.is(classifyInbound('MAILER-DAEMON@mx.example.test', 'Delivery Status Notification (Failure)'), 'bounce');
  t.is(classifyInbound('postmaster@example.test', 'anything'), 'bounce');
  t.is(classifyInbound('grace@example.test', 'Your message could not be delivered to the mail server'), 'bounce');
  t.is(classifyInbound('grace@example.test', 'I am currently on vacation and will be back on the 3rd.'), 'auto_reply');
  t.is(classifyInbound('grace@example.test', 'Out of office: back Monday'), 'auto_reply');
  t.is(classifyInbound('grace@example.test', 'I was out of office last week, but yes, let us talk'), 'auto_reply');
  t.is(classifyInbound('grace@example.test', 'Yes, let us talk on Tuesday.'), 'reply');
});

test.serial(
  'a reply from the inbox is queued, sent through the governor once, recorded, and answers the follow-up; replays',
  async (t) => {
    const { u, account, lead, action } = await sentEmail();
    await inject(account.connector_account_id, {
      from: lead.email,
      body: 'When can we talk?',
      threadId: action.connector_thread_id,
    });
    const conv = await conversationOf(u, action.connector_thread_id);

    t.is(
      (await call('POST', `/api/inbox/conversations/${conv.id}/reply`, { token: u.accessToken, body: { body: '   ' } }))
        .body.error.code,
      'invalid_body',
    );
    const long = await call('POST', `/api/inbox/conversations/${conv.id}/reply`, {
      token: u.accessToken,
      body: { body: 'x'.repeat(20_001) },
    });
    t.is(long.status, 400);

    const r = await call('POST', `/api/inbox/conversations/${conv.id}/reply`, {
      token: u.accessToken,
      body: { body: 'Tuesday at 10?', subject: 'Re: Hello' },
    });
    t.is(r.status, 202, r.text);
    t.like(r.body, { state: 'queued', direction: 'out', origin: 'inbox', kind: 'sent' });
    const handle = (await api()).services.temporal.workflow.getHandle(inboxWorkflowIds.reply(r.body.id));
    t.like(await (await whenStarted(handle)).result(), { state: 'sent' });
    const e = await em();
    const sent = await e.execute<{ body: string; thread_id: string }[]>(
      `select body, thread_id from sandbox_messages where idempotency_key = ?`,
      [r.body.id],
    );
    t.deepEqual(sent, [{ body: 'Tuesday at 10?', thread_id: action.connector_thread_id }]);
    const detail = (await call('GET', `/api/inbox/conversations/${conv.id}`, { token: u.accessToken })).body;
    t.like(detail.messages.at(-1), { id: r.body.id, state: 'sent', body: 'Tuesday at 10?' });
    t.is(detail.last_direction, 'out');
    t.is((await call('GET', `/api/follow-ups?lead_id=${lead.leadId}`, { token: u.accessToken })).body.items.length, 0);
    t.like(
      (await call('GET', `/api/follow-ups?lead_id=${lead.leadId}&state=completed`, { token: u.accessToken })).body
        .items,
      [{ kind: 'reply_waiting', state: 'completed' }],
    );
    await replayFixture((await api()).services.temporal, 'inboxReply', handle.workflowId);

    // A disconnected account cannot reply.
    await e.execute(`update platform_accounts set status = 'disconnected' where id = ?`, [account.id]);
    const refused = await call('POST', `/api/inbox/conversations/${conv.id}/reply`, {
      token: u.accessToken,
      body: { body: 'Hello?' },
    });
    t.is(refused.status, 409);
    t.is(refused.body.error.code, 'account_not_connected');
  },
);

/** A POST with the Idempotency-Key header sent twice (fetch would join them into one line). */
function postTwoKeys(base: string, path: string, token: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'Idempotency-Key': ['k-1', 'k-2'],
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

test.serial(
  'Idempotency-Key on reply, the rule of every operation that creates something (docs/idempotency.md): a repeat answers the first answer and queues nothing; concurrent repeats queue one reply; another request with the key is 422; a bad key is 400; after 24 hours the key queues anew',
  async (t) => {
    const { u, account, lead, action } = await sentEmail();
    await inject(account.connector_account_id, {
      from: lead.email,
      body: 'When can we talk?',
      threadId: action.connector_thread_id,
    });
    const conv = await conversationOf(u, action.connector_thread_id);
    const path = `/api/inbox/conversations/${conv.id}/reply`;
    const post = (key: string | undefined, body: unknown, where = path) =>
      call('POST', where, { token: u.accessToken, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
    const e = await em();
    const outbound = async () =>
      Number(
        (
          await e.execute(`select count(*) from inbox_messages where conversation_id = ? and origin = 'inbox'`, [
            conv.id,
          ])
        )[0].count,
      );

    // Malformed keys: 400, nothing stored.
    for (const bad of ['', 'x'.repeat(256), 'caf\u00e9', 'a\tb']) {
      const r = await post(bad, { body: 'Tuesday?' });
      t.is(r.status, 400, JSON.stringify(bad));
      t.is(r.body.error.code, 'invalid_idempotency_key');
    }
    const twice = await postTwoKeys((await api()).base, path, u.accessToken, { body: 'Tuesday?' });
    t.is(twice.status, 400);
    t.is(twice.body.error.code, 'invalid_idempotency_key');
    t.is(await outbound(), 0);

    // The first request queues; its repeat answers the same answer (202, marked replayed) and queues nothing.
    const key = `retry-${randomUUID()} with spaces/and~symbols`;
    const first = await post(key, { body: 'Tuesday at 10?', subject: 'Re: Hello' });
    t.is(first.status, 202, first.text);
    t.is(first.headers.get('idempotent-replayed'), null);
    const again = await post(key, { body: 'Tuesday at 10?', subject: 'Re: Hello' });
    t.is(again.status, 202, again.text);
    t.deepEqual(again.body, first.body);
    t.is(again.headers.get('idempotent-replayed'), 'true');
    t.is(await outbound(), 1);
    await (
      await whenStarted((await api()).services.temporal.workflow.getHandle(inboxWorkflowIds.reply(first.body.id)))
    ).result();
    // Once sent, a repeat still answers what the first request answered (the message as it was queued).
    t.deepEqual((await post(key, { body: 'Tuesday at 10?', subject: 'Re: Hello' })).body, first.body);
    t.is(
      Number(
        (await e.execute(`select count(*) from sandbox_messages where idempotency_key = ?`, [first.body.id]))[0].count,
      ),
      1,
    );

    // The key with another body, subject or conversation: 422, nothing queued.
    const other = await inject(account.connector_account_id, {
      from: `someone-${randomUUID()}@example.test`,
      body: 'Hi',
    });
    const otherConv = (
      await e.execute<{ conversation_id: string }[]>(
        `select conversation_id from inbox_messages where connector_message_id = ?`,
        [other.messageId],
      )
    )[0].conversation_id;
    for (const [body, where] of [
      [{ body: 'Wednesday at 10?', subject: 'Re: Hello' }, path],
      [{ body: 'Tuesday at 10?' }, path],
      [{ body: 'Tuesday at 10?', subject: 'Re: Hello' }, `/api/inbox/conversations/${otherConv}/reply`],
    ] as const) {
      const r = await post(key, body, where);
      t.is(r.status, 422, r.text);
      t.is(r.body.error.code, 'idempotency_key_mismatch');
    }
    t.is(await outbound(), 1);

    // Concurrent requests with one key queue one reply; each of the others is the replay or 409 (still in flight).
    const key2 = `concurrent-${randomUUID()}`;
    const all = await Promise.all(Array.from({ length: 5 }, () => post(key2, { body: 'All at once' })));
    const queued = all.filter((r) => r.status === 202);
    t.true(queued.length >= 1, all.map((r) => r.text).join('\n'));
    t.is(new Set(queued.map((r) => r.body.id)).size, 1);
    for (const r of all)
      if (r.status !== 202) t.like(r.body, { error: { code: 'idempotency_key_in_flight' } }, `${r.status} ${r.text}`);
    t.is(await outbound(), 2);
    // Without a key, a repeat is a second reply.
    t.not((await post(undefined, { body: 'Twice' })).body.id, (await post(undefined, { body: 'Twice' })).body.id);

    // A retry answers what the first request got, even once the account is disconnected.
    await e.execute(`update platform_accounts set status = 'disconnected' where id = ?`, [account.id]);
    t.like(await post(key2, { body: 'All at once' }), { status: 202, body: { id: queued[0].body.id } });
    t.is((await post(`fresh-${randomUUID()}`, { body: 'All at once' })).body.error.code, 'account_not_connected');
    await e.execute(`update platform_accounts set status = 'connected' where id = ?`, [account.id]);

    // After 24 hours (the key's row backdated) the same request queues a new reply.
    await e.execute(
      `update idempotency_keys set created_at = now() - interval '25 hours', expires_at = now() - interval '1 hour' where user_id = ? and key = ?`,
      [u.id, key],
    );
    const later = await post(key, { body: 'Tuesday at 10?', subject: 'Re: Hello' });
    t.is(later.status, 202, later.text);
    t.not(later.body.id, first.body.id);
    t.is(later.headers.get('idempotent-replayed'), null);

    // The document declares the shared header and the codes.
    const doc = (await call('GET', '/openapi.json')).body;
    const op = doc.paths['/api/inbox/conversations/{conversationId}/reply'].post;
    t.true(op.parameters.some((p: { $ref?: string }) => p.$ref === '#/components/parameters/IdempotencyKey'));
    t.like(doc.components.parameters.IdempotencyKey, { name: 'Idempotency-Key', in: 'header', required: false });
    t.true(op['x-error-codes']['400'].includes('invalid_idempotency_key'));
    t.true(op['x-error-codes']['409'].includes('idempotency_key_in_flight'));
    t.true(op['x-error-codes']['422'].includes('idempotency_key_mismatch'));
  },
);

test.serial(
  'AI-drafted replies: drafted with credits, kept until deleted, never sent; 402, 404 no_ai_reply and 409 nothing_to_answer',
  async (t) => {
    const { u, account, lead, action } = await sentEmail();
    await inject(account.connector_account_id, {
      from: lead.email,
      body: 'Can you send pricing?',
      threadId: action.connector_thread_id,
    });
    const conv = await conversationOf(u, action.connector_thread_id);
    const e = await em();
    const balance = async () =>
      Number(
        (
          await e.execute(
            `select coalesce(sum(amount), 0) as b from credit_ledger where workspace_id = (select workspace_id from platform_accounts where id = ?)`,
            [account.id],
          )
        )[0].b,
      );
    const before = await balance();
    const r = await call('POST', `/api/inbox/conversations/${conv.id}/ai-reply`, {
      token: u.accessToken,
      body: { request_id: 'r1' },
    });
    t.is(r.status, 201, r.text);
    t.regex(r.body.body, /^Hi Grace,/);
    t.is(r.body.credits, 1);
    t.is(await balance(), before - 1);
    // The same request id does not charge again.
    t.is(
      (
        await call('POST', `/api/inbox/conversations/${conv.id}/ai-reply`, {
          token: u.accessToken,
          body: { request_id: 'r1' },
        })
      ).status,
      201,
    );
    t.is(await balance(), before - 1);
    t.like((await call('GET', `/api/inbox/conversations/${conv.id}`, { token: u.accessToken })).body.ai_reply, {
      body: r.body.body,
    });
    t.is(
      Number(
        (
          await e.execute(
            `select count(*) from sandbox_messages where connector_account_id = ? and direction = 'out'`,
            [account.connector_account_id],
          )
        )[0].count,
      ),
      1,
    );
    t.is((await call('DELETE', `/api/inbox/conversations/${conv.id}/ai-reply`, { token: u.accessToken })).status, 204);
    const gone = await call('DELETE', `/api/inbox/conversations/${conv.id}/ai-reply`, { token: u.accessToken });
    t.is(gone.status, 404);
    t.is(gone.body.error.code, 'no_ai_reply');

    // No credits left: 402 before any model call.
    const ws = (
      await e.execute<{ workspace_id: string }[]>(`select workspace_id from platform_accounts where id = ?`, [
        account.id,
      ])
    )[0].workspace_id;
    await debitCredits(e, ws, await balance(), { reason: 'test: spend everything' });
    t.is(await balance(), 0);
    const poor = await call('POST', `/api/inbox/conversations/${conv.id}/ai-reply`, { token: u.accessToken, body: {} });
    t.is(poor.status, 402);
    t.is(poor.body.error.code, 'insufficient_credits');

    // A conversation with only our own message has nothing to answer.
    const live = await call('POST', `/api/inbox/conversations/new-chat/reply-live`, {
      token: u.accessToken,
      body: { account_id: account.id, recipient: `nobody-${randomUUID()}@example.test`, body: 'Hello there' },
    });
    t.is(live.status, 201, live.text);
    const nothing = await call('POST', `/api/inbox/conversations/${live.body.conversation_id}/ai-reply`, {
      token: u.accessToken,
      body: {},
    });
    t.is(nothing.status, 409);
    t.is(nothing.body.error.code, 'nothing_to_answer');
  },
);

test.serial(
  'live reads come from the connector (stored messages, flagged, when it cannot answer); reply-live sends at once; attachments stream',
  async (t) => {
    const { u, account, lead, action } = await sentEmail();
    const injected = await inject(account.connector_account_id, {
      from: lead.email,
      body: 'Here is our brief',
      threadId: action.connector_thread_id,
      attachments: [{ name: 'brief.pdf', contentType: 'application/pdf', data: Buffer.from('%PDF-1.4 brief') }],
    });
    const conv = await conversationOf(u, action.connector_thread_id);
    const live = (await call('GET', `/api/inbox/conversations/${conv.id}/messages/live`, { token: u.accessToken }))
      .body;
    t.is(live.source, 'live');
    t.is(live.conversation_id, conv.id);
    t.deepEqual(
      live.messages.map((m: { direction: string; body: string }) => m.direction),
      ['out', 'in'],
    );
    const att = live.messages[1].attachments[0];
    t.like(att, { name: 'brief.pdf', size: 14 });

    // The attachment, streamed with its type, by our message id and by the connector's.
    const stored = (
      await call('GET', `/api/inbox/conversations/${conv.id}`, { token: u.accessToken })
    ).body.messages.at(-1);
    for (const mid of [stored.id, injected.messageId]) {
      const res = await fetch(
        `${(await api()).base}/api/inbox/conversations/${conv.id}/messages/${mid}/attachments/${att.id}`,
        { headers: { authorization: `Bearer ${u.accessToken}` } },
      );
      t.is(res.status, 200, `${mid}: ${res.status === 200 ? '' : await res.clone().text()}`);
      t.is(res.headers.get('content-type'), 'application/pdf');
      t.regex(res.headers.get('content-disposition')!, /attachment; filename="brief.pdf"/);
      t.is(await res.text(), '%PDF-1.4 brief');
    }
    const missing = await call(
      'GET',
      `/api/inbox/conversations/${conv.id}/messages/${stored.id}/attachments/att-nope`,
      { token: u.accessToken },
    );
    t.is(missing.status, 404);

    // By the connector's chat id: account_id is needed.
    const noAccount = await call('GET', `/api/inbox/conversations/${action.connector_thread_id}/messages/live`, {
      token: u.accessToken,
    });
    t.is(noAccount.status, 400);
    t.is(noAccount.body.error.code, 'account_required');
    t.is(
      (
        await call(
          'GET',
          `/api/inbox/conversations/${action.connector_thread_id}/messages/live?account_id=${account.id}`,
          { token: u.accessToken },
        )
      ).body.source,
      'live',
    );

    // reply-live in a chat not stored yet: needs a recipient, then sends at once and stores the conversation.
    const noRecipient = await call('POST', `/api/inbox/conversations/new-thread/reply-live`, {
      token: u.accessToken,
      body: { account_id: account.id, body: 'Hi' },
    });
    t.is(noRecipient.body.error.code, 'recipient_required');
    const to = `ada-${randomUUID()}@example.test`;
    const sent = await call('POST', `/api/inbox/conversations/new-thread/reply-live`, {
      token: u.accessToken,
      body: { account_id: account.id, recipient: to, body: 'Hi Ada', subject: 'Hello' },
    });
    t.is(sent.status, 201, sent.text);
    const e = await em();
    t.is(
      Number(
        (
          await e.execute(`select count(*) from sandbox_messages where id = ? and counterpart = ?`, [
            sent.body.connector_message_id,
            to,
          ])
        )[0].count,
      ),
      1,
    );
    t.like(
      (await call('GET', `/api/inbox/conversations/${sent.body.conversation_id}`, { token: u.accessToken })).body,
      {
        counterpart: to,
        messages: [{ id: sent.body.message_id, direction: 'out', origin: 'inbox', body: 'Hi Ada', subject: 'Hello' }],
      },
    );

    // The governor refuses a send past the account's daily cap.
    await e.execute(`update platform_accounts set caps = '{"email":{"daily":1,"weekly":100}}'::jsonb where id = ?`, [
      account.id,
    ]);
    const capped = await call('POST', `/api/inbox/conversations/${sent.body.conversation_id}/reply-live`, {
      token: u.accessToken,
      body: { body: 'One more' },
    });
    t.is(capped.status, 409);
    t.is(capped.body.error.code, 'account_limit_reached');

    // A disconnected account: the stored messages answer, flagged.
    await e.execute(`update platform_accounts set status = 'disconnected' where id = ?`, [account.id]);
    const fallback = (await call('GET', `/api/inbox/conversations/${conv.id}/messages/live`, { token: u.accessToken }))
      .body;
    t.like(fallback, { source: 'stored', fallback_reason: 'account_not_connected', conversation_id: conv.id });
    t.is(fallback.messages.length, 2);
  },
);

test.serial(
  'sync pages through the connector’s chats and stores their messages once; a fresh sync is reported, not repeated; replays',
  async (t) => {
    const { u, account, action } = await sentEmail();
    const e = await em();
    // Forget what the inbox knows of the account, as if it had never received anything.
    await e.execute(`delete from conversations where platform_account_id = ?`, [account.id]);
    const r = await call('GET', `/api/inbox/conversations/sync?account_id=${account.id}`, { token: u.accessToken });
    t.is(r.status, 200, r.text);
    t.like(r.body.items, [
      { account_id: account.id, started: true, state: 'running', run: 1, workflow_id: `inbox-sync:${account.id}` },
    ]);
    const handle = (await api()).services.temporal.workflow.getHandle(inboxWorkflowIds.sync(account.id));
    await (await whenStarted(handle)).result();
    const again = (
      await call('GET', `/api/inbox/conversations/sync?account_id=${account.id}`, { token: u.accessToken })
    ).body.items[0];
    t.like(again, { started: false, state: 'completed', run: 1, chats_seen: 1, messages_stored: 1 });
    const conv = await conversationOf(u, action.connector_thread_id);
    t.like(conv, { last_direction: 'out', unread_count: 0 });
    t.like((await call('GET', `/api/inbox/conversations/${conv.id}`, { token: u.accessToken })).body.messages, [
      { direction: 'out', kind: 'sent', origin: 'campaign', scheduled_action_id: action.id },
    ]);
    await replayFixture((await api()).services.temporal, 'inboxSync', handle.workflowId);
    // force=true starts another run, which stores nothing new.
    const forced = (
      await call('GET', `/api/inbox/conversations/sync?account_id=${account.id}&force=true`, { token: u.accessToken })
    ).body.items[0];
    t.like(forced, { started: true, run: 2 });
    await waitFor(
      'run 2 done',
      async () =>
        (await call('GET', `/api/inbox/conversations/sync?account_id=${account.id}`, { token: u.accessToken })).body
          .items[0].state === 'completed',
      60_000,
    );
    t.is(
      Number(
        (await e.execute(`select count(*) from inbox_messages where platform_account_id = ?`, [account.id]))[0].count,
      ),
      1,
    );
    t.is(
      (await call('GET', `/api/inbox/conversations/sync?account_id=${randomUUID()}`, { token: u.accessToken })).status,
      404,
    );
  },
);

test.serial('conversation list: filters, text search and cursor pages', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const [lead] = await o.leads(1);
  for (let i = 0; i < 3; i++)
    await inject(account.connector_account_id, {
      from: `person${i}-${randomUUID()}@example.test`,
      body: `Message number ${i}`,
    });
  await inject(account.connector_account_id, { from: lead.email, body: 'From the lead' });
  const all = (await conversations(u)).body.items;
  t.is(all.length, 4);
  t.is(all[0].last_message_preview, 'From the lead');
  const p1 = (await conversations(u, '?limit=3')).body;
  t.is(p1.items.length, 3);
  const p2 = (await conversations(u, `?limit=3&cursor=${p1.next_cursor}`)).body;
  t.deepEqual(
    [...p1.items, ...p2.items].map((c: { id: string }) => c.id),
    all.map((c: { id: string }) => c.id),
  );
  t.is(p2.next_cursor, null);
  t.is((await conversations(u, '?q=number%201')).body.items.length, 1);
  t.is((await conversations(u, `?lead_id=${lead.leadId}`)).body.items.length, 1);
  t.is((await conversations(u, '?q=grace')).body.items.length, 1);
  await call('POST', `/api/inbox/conversations/${all[0].id}/read`, { token: u.accessToken });
  t.is((await conversations(u, '?unread=true')).body.items.length, 3);
  t.is((await conversations(u, '?unread=false')).body.items.length, 1);
  // An account id that is not the workspace's is 404, like a path id (domain/access.ts).
  t.is((await conversations(u, `?account_id=${randomUUID()}`)).status, 404);
  t.is((await conversations(u, '?cursor=%25%25')).status, 400);
  t.is((await conversations(u, '?cursor=123_nothex')).status, 400);
});

test.serial(
  'every id-taking inbox route answers 404 for another workspace’s conversation, chat, account and message',
  async (t) => {
    const { u, account, lead, action } = await sentEmail();
    const injected = await inject(account.connector_account_id, {
      from: lead.email,
      body: 'With a file',
      threadId: action.connector_thread_id,
      attachments: [{ name: 'a.txt', contentType: 'text/plain', data: Buffer.from('hi') }],
    });
    const conv = await conversationOf(u, action.connector_thread_id);
    const [att] = (await call('GET', `/api/inbox/conversations/${conv.id}`, { token: u.accessToken })).body.messages.at(
      -1,
    ).attachments;
    const other = await createUser();
    const token = other.accessToken;
    const cases: [string, string, unknown?][] = [
      ['GET', `/api/inbox/conversations/${conv.id}`],
      ['POST', `/api/inbox/conversations/${conv.id}/read`],
      ['POST', `/api/inbox/conversations/${conv.id}/reply`, { body: 'hi' }],
      ['POST', `/api/inbox/conversations/${conv.id}/ai-reply`, {}],
      ['DELETE', `/api/inbox/conversations/${conv.id}/ai-reply`],
      ['GET', `/api/inbox/conversations/${conv.id}/messages/live`],
      ['GET', `/api/inbox/conversations/${action.connector_thread_id}/messages/live?account_id=${account.id}`],
      ['POST', `/api/inbox/conversations/${conv.id}/reply-live`, { body: 'hi' }],
      [
        'POST',
        `/api/inbox/conversations/${action.connector_thread_id}/reply-live`,
        { body: 'hi', account_id: account.id, recipient: lead.email },
      ],
      ['GET', `/api/inbox/conversations/${conv.id}/messages/${injected.messageId}/attachments/${att.id}`],
      [
        'GET',
        `/api/inbox/conversations/${action.connector_thread_id}/messages/${injected.messageId}/attachments/${att.id}?account_id=${account.id}`,
      ],
      ['GET', `/api/inbox/conversations/sync?account_id=${account.id}`],
    ];
    for (const [method, path, body] of cases) {
      const r = await call(method, path, { token, body });
      t.is(r.status, 404, `${method} ${path}: ${r.text}`);
    }
    // Nothing leaked or changed.
    t.is((await call('GET', '/api/inbox/conversations', { token })).body.items.length, 0);
    t.is((await call('GET', `/api/inbox/conversations/${conv.id}`, { token: u.accessToken })).body.unread_count, 1);
  },
);
