// The campaign executor on the sandbox network (docs/executor.md): real Temporal, short waits
// (fractions of an hour), windows open all week, sender accounts without gap or warm-up.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { ScheduledAction } from '../../db/entities/ScheduledAction.js';
import { signalCampaignEnrollments } from '../../domain/enrollments/enrollments.js';
import { WebhookEvent } from '../../db/entities/WebhookEvent.js';
import {
  sandboxAcceptInvitation,
  sandboxInjectMessage,
  sandboxOpenMessage,
} from '../../lib/connectors/sandbox-network.js';
import { deliverFor } from '../helpers/inbound.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import type { EnrollmentState } from '../../workflows/enrollments.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import {
  ALL_WEEK,
  campaignOwner,
  campaignWithAccount,
  enrollWithReviewDeadline,
  fastAccount,
  seedCampaign,
} from '../helpers/campaigns.js';
import { startReceiver, verifySignature } from '../helpers/receiver.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { eventDelivery } from '../helpers/webhook-delivery.js';
test.after.always(closeApi);

/** Invitation, a wait of `seconds`, message. */
const inviteWaitMessage = (seconds: number) =>
  campaignWithAccount('network', [
    { type: 'invitation', config: { note: 'Hi {{first_name}}' } },
    { type: 'wait', config: { amount: seconds / 3600, unit: 'hours' } },
    { type: 'message', config: { body: 'Following up, {{first_name}}' } },
  ]);
const HOUR_OF_SECONDS = (s: number) => s / 3600;

const enroll = async (u: TestUser, campaignId: string, leadIds: string[]) => {
  const r = await call('POST', `/api/campaigns/${campaignId}/leads`, {
    token: u.accessToken,
    body: { lead_ids: leadIds },
  });
  if (r.status !== 200) throw new Error(`enroll failed: ${r.status} ${r.text}`);
  return r.body;
};
const enrollmentOf = async (campaignId: string, leadId: string) =>
  (
    await (
      await em()
    ).execute<{ id: string; status: string; stop_reason: string | null; replied_at: Date | null }[]>(
      `select id, status, stop_reason, replied_at from enrollments where campaign_id = ? and lead_id = ?`,
      [campaignId, leadId],
    )
  )[0];
const actionsOf = async (campaignId: string, leadId: string) =>
  (await em()).find(
    ScheduledAction,
    { campaign: campaignId, leadId },
    { orderBy: { stepPosition: 'asc', createdAt: 'asc' } },
  );
const handleOf = async (campaignId: string, leadId: string) =>
  (await api()).services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaignId, leadId));
const queryState = async (campaignId: string, leadId: string) =>
  (await handleOf(campaignId, leadId)).query<EnrollmentState>('state');
const waitReason = (campaignId: string, leadId: string, reason: string, timeoutMs = 60_000) =>
  waitFor(
    `reason ${reason}`,
    async () => (await queryState(campaignId, leadId).catch(() => null))?.reason === reason,
    timeoutMs,
  );
/** The account's due sandbox events, through the inbound pipeline (scoped: other files deliver their own). */
const deliverInbound = (connectorAccountId: string) => deliverFor(connectorAccountId);

test.serial(
  'a three-step campaign (invitation, wait, message) runs to completion; action.executed is delivered with exactly the spec’s fields; replays',
  async (t) => {
    const u = await createOwner();
    const o = await campaignOwner(u);
    const rx = await startReceiver();
    t.teardown(rx.close);
    const sub = (
      await call('POST', '/api/webhooks/outbound', {
        token: u.accessToken,
        body: { url: rx.url, events: ['action.executed'], active: true },
      })
    ).body;
    const account = await fastAccount(u, 'network');
    const campaign = await seedCampaign(o.workspaceId, {
      appId: o.app.id,
      accountIds: [account.id],
      steps: [
        { type: 'invitation', config: { note: 'Hi {{first_name}}, let us connect' } },
        // Long enough for the query below to be seen during the wait on a loaded machine (it polls).
        { type: 'wait', config: { amount: HOUR_OF_SECONDS(10), unit: 'hours' } },
        { type: 'message', config: { body: 'Hello {{first_name|there}} at {{company}}, from {{sender_name}}' } },
      ],
    });
    const [lead] = await o.leads(1);
    const r = await enroll(u, campaign.id, [lead.leadId]);
    t.like(r, { enrolled: 1, skipped: 0 });

    // During the wait the query says why step 3 has not gone out yet.
    await waitReason(campaign.id, lead.leadId, 'waiting_step_delay');
    const handle = await handleOf(campaign.id, lead.leadId);
    t.like(await handle.result(), { status: 'completed', stop_reason: null });
    t.like(await enrollmentOf(campaign.id, lead.leadId), { status: 'completed' });

    const actions = await actionsOf(campaign.id, lead.leadId);
    t.deepEqual(
      actions.map((a) => [a.type, a.state]),
      [
        ['invitation', 'executed'],
        ['message', 'executed'],
      ],
    );
    t.is(actions[0].content?.note, 'Hi Grace, let us connect');
    t.is(actions[1].content?.body, 'Hello Grace at Navy, from Ana network');
    t.true(actions[1].executedAt!.getTime() - actions[0].executedAt!.getTime() >= 9500);
    const e = await em();
    t.is(
      (
        await e.execute(`select count(*)::int as n from sandbox_invitations where idempotency_key = ?`, [actions[0].id])
      )[0].n,
      1,
    );
    t.is(
      (await e.execute(`select count(*)::int as n from sandbox_messages where idempotency_key = ?`, [actions[1].id]))[0]
        .n,
      1,
    );

    const events = await e.find(
      WebhookEvent,
      { workspaceId: o.workspaceId, name: 'action.executed' },
      { orderBy: { createdAt: 'asc' } },
    );
    t.is(events.length, 2);
    for (const ev of events) t.like(await eventDelivery((await api()).services.temporal, ev.id), { succeeded: 1 });
    t.is(rx.requests.length, 2);
    const bodies = rx.requests.map((req) => {
      t.true(verifySignature(sub.secret, req.raw, req.headers['x-service-signature']));
      return JSON.parse(req.raw.toString());
    });
    t.deepEqual(
      bodies.map((b) => b.data).sort((a, b) => a.action_type.localeCompare(b.action_type)),
      [
        { action_id: actions[0].id, action_type: 'invitation', lead_id: lead.leadId, campaign_id: campaign.id },
        { action_id: actions[1].id, action_type: 'message', lead_id: lead.leadId, campaign_id: campaign.id },
      ],
    );
    t.true(bodies.every((b) => b.event === 'action.executed'));

    const workflowId = enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId);
    t.true((await replayLive((await api()).services.temporal, workflowId)) > 0);
    // 'enrollment' was recorded before the local activities (the patch keeps it replaying); 'enrollment-local' after.
    await replayFixture((await api()).services.temporal, 'enrollment', workflowId);
    await replayFixture((await api()).services.temporal, 'enrollment-local', workflowId);
  },
);

test('a reply before step 3 stops the enrollment and step 3 is never sent; mark-replied stops another lead', async (t) => {
  const { u, o, account, campaign } = await inviteWaitMessage(600);
  const [lead, other] = await o.leads(2);
  await enroll(u, campaign.id, [lead.leadId, other.leadId]);
  for (const l of [lead, other]) await waitReason(campaign.id, l.leadId, 'waiting_step_delay');

  // The lead answers on the network: the inbound event is routed to its enrollment as `reply`.
  await sandboxInjectMessage(await em(), account.connector_account_id, {
    from: lead.profileUrl,
    body: 'Not interested, thanks',
  });
  await deliverInbound(account.connector_account_id);
  t.like(await (await handleOf(campaign.id, lead.leadId)).result(), { status: 'replied', stop_reason: 'replied' });
  const e = await enrollmentOf(campaign.id, lead.leadId);
  t.is(e.status, 'replied');
  t.truthy(e.replied_at);
  const actions = await actionsOf(campaign.id, lead.leadId);
  // Step 3 was planned when the wait began, and canceled by the reply.
  t.deepEqual(
    actions.map((a) => [a.type, a.state]),
    [
      ['invitation', 'executed'],
      ['message', 'canceled'],
    ],
  );
  t.is(actions[1].errorCode, 'replied');
  t.truthy(actions[0].repliedAt);
  const sent = await (
    await em()
  ).execute(`select count(*)::int as n from sandbox_messages where counterpart = ? and direction = 'out'`, [
    lead.profileUrl,
  ]);
  t.is(sent[0].n, 0);

  // A person marks the other lead as replied.
  const m = await call('POST', `/api/leads/${other.leadId}/mark-replied`, { token: u.accessToken });
  t.is(m.status, 200);
  t.is(m.body.items.length, 1);
  t.like(await (await handleOf(campaign.id, other.leadId)).result(), { status: 'replied' });
  t.deepEqual(
    (await actionsOf(campaign.id, other.leadId)).map((a) => [a.type, a.state]),
    [
      ['invitation', 'executed'],
      ['message', 'canceled'],
    ],
  );
});

test('the why-not-yet query reports each reason: window, review, paused, campaign paused, daily new-lead cap, governor caps and gap', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const { services } = await api();
  const emailAccount = await fastAccount(u, 'email');
  const email = [{ type: 'email', config: { subject: 'Hi {{first_name}}', body: 'Hello {{first_name}}' } }];

  // waiting_for_window: the only window is on another weekday.
  const today = new Date().getUTCDay() || 7;
  const otherDay = String((today % 7) + 1); // tomorrow's weekday (UTC)
  const closed = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [emailAccount.id],
    steps: email,
    windows: { [otherDay]: [{ start: '10:00', end: '11:00' }] },
    timeZone: 'UTC',
  });
  const [l1] = await o.leads(1);
  await enroll(u, closed.id, [l1.leadId]);
  await waitReason(closed.id, l1.leadId, 'waiting_for_window');
  t.is((await actionsOf(closed.id, l1.leadId))[0].waitingReason, 'waiting_for_window');

  // awaiting_review, then approve (one lead) and skip (another); approve again is 409.
  const reviewed = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [emailAccount.id],
    steps: email,
    reviewRequired: true,
  });
  const [l2, l3] = await o.leads(2);
  await enroll(u, reviewed.id, [l2.leadId, l3.leadId]);
  for (const l of [l2, l3]) await waitReason(reviewed.id, l.leadId, 'awaiting_review');
  const [a2] = await actionsOf(reviewed.id, l2.leadId);
  const [a3] = await actionsOf(reviewed.id, l3.leadId);
  t.like((await call('GET', `/api/scheduled-actions/${a2.id}`, { token: u.accessToken })).body, {
    state: 'awaiting_approval',
    waiting_reason: 'awaiting_review',
  });
  t.like((await call('POST', `/api/scheduled-actions/${a2.id}/approve`, { token: u.accessToken })).body, {
    state: 'approved',
  });
  t.like((await call('POST', `/api/scheduled-actions/${a3.id}/skip`, { token: u.accessToken })).body, {
    state: 'skipped',
  });
  t.like(await (await handleOf(reviewed.id, l2.leadId)).result(), { status: 'completed' });
  t.like(await (await handleOf(reviewed.id, l3.leadId)).result(), { status: 'completed' });
  t.like((await call('GET', `/api/scheduled-actions/${a2.id}`, { token: u.accessToken })).body, { state: 'executed' });
  t.is((await call('POST', `/api/scheduled-actions/${a2.id}/approve`, { token: u.accessToken })).status, 409);
  t.is((await call('POST', `/api/scheduled-actions/${a3.id}/skip`, { token: u.accessToken })).status, 409);

  // paused (the enrollment) and campaign_paused (the campaign), each resumed in place.
  const held = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [emailAccount.id],
    steps: [{ type: 'wait', config: { amount: HOUR_OF_SECONDS(3), unit: 'hours' } }, ...email],
    status: 'paused',
  });
  const [l4] = await o.leads(1);
  await enroll(u, held.id, [l4.leadId]);
  await services.jobs.signal('enrollment', { campaignId: held.id, leadId: l4.leadId }, 'pause');
  await waitReason(held.id, l4.leadId, 'paused');
  t.is((await enrollmentOf(held.id, l4.leadId)).status, 'paused');
  await services.jobs.signal('enrollment', { campaignId: held.id, leadId: l4.leadId }, 'resume');
  await waitReason(held.id, l4.leadId, 'campaign_paused');
  t.is((await actionsOf(held.id, l4.leadId))[0].waitingReason, 'campaign_paused');
  await (await em()).execute(`update campaigns set status = 'active' where id = ?`, [held.id]);
  t.is(await signalCampaignEnrollments(services.orm.em.fork() as never, services.jobs, held.id, 'campaign_resumed'), 1);
  t.like(await (await handleOf(held.id, l4.leadId)).result(), { status: 'completed' });
  // The review, pause and campaign-pause paths replay too (fixtures pin them).
  await replayFixture(
    services.temporal,
    'enrollmentReviewed',
    enrollmentWorkflowIds.enrollment(reviewed.id, l2.leadId),
  );
  await replayFixture(services.temporal, 'enrollmentPaused', enrollmentWorkflowIds.enrollment(held.id, l4.leadId));

  // daily_new_lead_cap: one new lead a day.
  const capped = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [emailAccount.id],
    steps: email,
    dailyNewLeadCap: 1,
  });
  const [l5, l6] = await o.leads(2);
  await enroll(u, capped.id, [l5.leadId]);
  t.like(await (await handleOf(capped.id, l5.leadId)).result(), { status: 'completed' });
  await enroll(u, capped.id, [l6.leadId]);
  await waitReason(capped.id, l6.leadId, 'daily_new_lead_cap');

  // The governor: cap_daily on one account, gap on another.
  const oneADay = await fastAccount(u, 'network', { caps: { invitation: { daily: 1, weekly: 5 } } });
  const invite = [{ type: 'invitation', config: { note: 'Hi' } }];
  const cc = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [oneADay.id], steps: invite });
  const [l7, l8] = await o.leads(2);
  await enroll(u, cc.id, [l7.leadId]);
  t.like(await (await handleOf(cc.id, l7.leadId)).result(), { status: 'completed' });
  await enroll(u, cc.id, [l8.leadId]);
  await waitReason(cc.id, l8.leadId, 'cap_daily');
  const slow = await fastAccount(u, 'network', { min_gap_seconds: 3600 });
  const gc = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [slow.id], steps: invite });
  const [l9, l10] = await o.leads(2);
  await enroll(u, gc.id, [l9.leadId]);
  t.like(await (await handleOf(gc.id, l9.leadId)).result(), { status: 'completed' });
  await enroll(u, gc.id, [l10.leadId]);
  await waitReason(gc.id, l10.leadId, 'gap');
  const st = await queryState(gc.id, l10.leadId);
  t.truthy(st.until);
  t.is((await actionsOf(gc.id, l10.leadId))[0].waitingReason, 'gap');

  // Unenroll: the planned action is canceled and the workflow ends `removed`; a second DELETE is 409.
  const del = await call('DELETE', `/api/campaigns/${gc.id}/leads/${l10.leadId}`, { token: u.accessToken });
  t.like(del.body, { status: 'removed', stop_reason: 'unenrolled' });
  t.like(await (await handleOf(gc.id, l10.leadId)).result(), { status: 'removed' });
  t.is((await actionsOf(gc.id, l10.leadId))[0].state, 'canceled');
  t.is((await call('DELETE', `/api/campaigns/${gc.id}/leads/${l10.leadId}`, { token: u.accessToken })).status, 409);
  // Re-enrolled: a new run under the same id.
  const re = await call('POST', `/api/leads/${l10.leadId}/reenroll`, {
    token: u.accessToken,
    body: { campaign_id: gc.id },
  });
  t.like(re.body, { status: 'active', run: 2 });
  await waitReason(gc.id, l10.leadId, 'gap');
  await call('DELETE', `/api/campaigns/${gc.id}/leads/${l10.leadId}`, { token: u.accessToken });
  for (const [c, l] of [
    [closed.id, l1.leadId],
    [capped.id, l6.leadId],
    [cc.id, l8.leadId],
  ])
    await services.jobs.signal('enrollment', { campaignId: c, leadId: l }, 'unenroll');
});

test('the governor’s caps hold across two campaigns sharing an account', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const { services } = await api();
  const shared = await fastAccount(u, 'network', { caps: { invitation: { daily: 2, weekly: 10 } } });
  const invite = [{ type: 'invitation', config: { note: 'Hi {{first_name}}' } }];
  const a = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [shared.id], steps: invite });
  const b = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [shared.id], steps: invite });
  const la = await o.leads(3);
  const lb = await o.leads(3);
  await enroll(
    u,
    a.id,
    la.map((l) => l.leadId),
  );
  await enroll(
    u,
    b.id,
    lb.map((l) => l.leadId),
  );
  const all = [...la.map((l) => [a.id, l.leadId]), ...lb.map((l) => [b.id, l.leadId])];
  await waitFor('two sends and four cap refusals', async () => {
    const states = await Promise.all(all.map(([c, l]) => queryState(c, l).catch(() => null)));
    return (
      states.filter((s) => s?.finished).length === 2 && states.filter((s) => s?.reason === 'cap_daily').length === 4
    );
  });
  const executed = await (
    await em()
  ).execute(`select count(*)::int as n from scheduled_actions where account_id = ? and state = 'executed'`, [
    shared.id,
  ]);
  t.is(executed[0].n, 2);
  const usage = await (
    await em()
  ).execute(`select sum(count)::int as n from account_usage where account_id = ? and action = 'invitation'`, [
    shared.id,
  ]);
  t.is(usage[0].n, 2);
  for (const [c, l] of all) await services.jobs.signal('enrollment', { campaignId: c, leadId: l }, 'unenroll');
});

test('enrollment checks each lead, draft campaigns refuse, and every id-taking route is 404 for another workspace', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
    reviewRequired: true,
    countryRule: { mode: 'block', countries: ['FR'] },
  });
  const [ok] = await o.leads(1);
  const [noEmail] = await o.leads(1, { email: null });
  const [french] = await o.leads(1, { country: 'fr' });
  const r = await enroll(u, campaign.id, [ok.leadId, noEmail.leadId, french.leadId, randomUUID()]);
  t.deepEqual(
    r.items.map((i: { status: string; reason: string | null }) => [i.status, i.reason]),
    [
      ['enrolled', null],
      ['skipped', 'no_identity'],
      ['skipped', 'blocked_country'],
      ['skipped', 'not_found'],
    ],
  );
  t.deepEqual(
    (await enroll(u, campaign.id, [ok.leadId])).items.map((i: { reason: string }) => i.reason),
    ['already_enrolled'],
  );
  const draft = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
    status: 'draft',
  });
  const d = await call('POST', `/api/campaigns/${draft.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [ok.leadId] },
  });
  t.is(d.status, 409);
  t.is(d.body.error.code, 'invalid_transition');

  await waitReason(campaign.id, ok.leadId, 'awaiting_review');
  const [action] = await actionsOf(campaign.id, ok.leadId);
  const stranger = await createUser();
  const routes: [string, string, unknown?][] = [
    ['POST', `/api/campaigns/${campaign.id}/leads`, { lead_ids: [ok.leadId] }],
    ['DELETE', `/api/campaigns/${campaign.id}/leads/${ok.leadId}`],
    ['POST', `/api/leads/${ok.leadId}/reenroll`, {}],
    ['POST', `/api/leads/${ok.leadId}/mark-replied`],
    ['GET', `/api/scheduled-actions/${action.id}`],
    ['POST', `/api/scheduled-actions/${action.id}/approve`],
    ['POST', `/api/scheduled-actions/${action.id}/skip`],
  ];
  for (const [method, path, body] of routes) {
    const res = await call(method, path, { token: stranger.accessToken, body });
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.error.code, 'not_found');
  }
  // Nothing changed for the owner.
  t.like((await call('GET', `/api/scheduled-actions/${action.id}`, { token: u.accessToken })).body, {
    state: 'awaiting_approval',
  });
  t.is((await enrollmentOf(campaign.id, ok.leadId)).status, 'active');
  t.is(
    (await call('DELETE', `/api/campaigns/${campaign.id}/leads/${ok.leadId}`, { token: u.accessToken })).status,
    200,
  );
  t.like(await (await handleOf(campaign.id, ok.leadId)).result(), { status: 'removed' });
});

test('an unsubscribed contact is never enrolled, and one who unsubscribes while enrolled gets no further send', async (t) => {
  const { u, o, account, campaign } = await inviteWaitMessage(20);
  const [before, during] = await o.leads(2);
  const unsubscribe = (leadId: string, unsubscribed: boolean) =>
    call('PATCH', `/api/leads/${leadId}`, { token: u.accessToken, body: { unsubscribed } });
  const r1 = await unsubscribe(before.leadId, true);
  t.is(r1.status, 200, r1.text);
  t.truthy(r1.body.contact.unsubscribed_at);
  t.deepEqual(r1.body.contact.edited_fields, [], 'not an edited field');
  const preview = await call('GET', `/api/campaigns/${campaign.id}/enrollment-preview?lead_ids=${before.leadId}`, {
    token: u.accessToken,
  });
  t.like(preview.body, { would_enroll: 0, skipped_by_reason: { unsubscribed: 1 } });
  const r = await enroll(u, campaign.id, [before.leadId, during.leadId]);
  t.deepEqual(
    r.items.map((i: { status: string; reason: string | null }) => [i.status, i.reason]),
    [
      ['skipped', 'unsubscribed'],
      ['enrolled', null],
    ],
  );

  // The other contact unsubscribes during the wait: the gate before the message stops the enrollment.
  await waitReason(campaign.id, during.leadId, 'waiting_step_delay');
  t.is((await unsubscribe(during.leadId, true)).status, 200);
  t.like(await (await handleOf(campaign.id, during.leadId)).result(), {
    status: 'stopped',
    stop_reason: 'unsubscribed',
  });
  t.like(await enrollmentOf(campaign.id, during.leadId), { status: 'stopped', stop_reason: 'unsubscribed' });
  const actions = await actionsOf(campaign.id, during.leadId);
  t.deepEqual(
    actions.map((a) => [a.type, a.state, a.errorCode ?? null]),
    [
      ['invitation', 'executed', null],
      ['message', 'canceled', 'unsubscribed'],
    ],
  );
  const sent = await (
    await em()
  ).execute(`select count(*)::int as n from sandbox_messages where counterpart = ? and direction = 'out'`, [
    during.profileUrl,
  ]);
  t.is(sent[0].n, 0);

  // false clears the record: the contact can be enrolled again.
  const cleared = await unsubscribe(before.leadId, false);
  t.is(cleared.body.contact.unsubscribed_at, null);
  t.deepEqual(
    (await enroll(u, campaign.id, [before.leadId])).items.map((i: { status: string }) => i.status),
    ['enrolled'],
  );
});

test('a reply recorded whose signal never arrived still stops the enrollment at the gate before its next send', async (t) => {
  const { u, o, campaign } = await inviteWaitMessage(10);
  const [lead] = await o.leads(1);
  t.deepEqual(
    (await enroll(u, campaign.id, [lead.leadId])).items.map((i: { status: string }) => i.status),
    ['enrolled'],
  );
  await waitReason(campaign.id, lead.leadId, 'waiting_step_delay');
  // Inbound processing records the reply, commits, then signals: here the signal is lost (a crash between the two).
  await (
    await em()
  ).execute(`update enrollments set replied_at = now() where campaign_id = ? and lead_id = ?`, [
    campaign.id,
    lead.leadId,
  ]);
  t.like(await (await handleOf(campaign.id, lead.leadId)).result(), { status: 'replied', stop_reason: 'replied' });
  const actions = await actionsOf(campaign.id, lead.leadId);
  t.deepEqual(
    actions.map((a) => [a.type, a.state]),
    [
      ['invitation', 'executed'],
      ['message', 'canceled'],
    ],
  );
  const sent = await (
    await em()
  ).execute(`select count(*)::int as n from sandbox_messages where counterpart = ? and direction = 'out'`, [
    lead.profileUrl,
  ]);
  t.is(sent[0].n, 0);
});

test('an action still awaiting review at its deadline is canceled (review_expired), never sent, and the enrollment stops', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
    reviewRequired: true,
  });
  const [lead] = await o.leads(1);
  // Enrolled as the route does, with a start that shortens the 7-day deadline to 3 s.
  t.like((await enrollWithReviewDeadline(u, campaign.id, [lead.leadId], 3000))[0], { status: 'enrolled' });
  await waitReason(campaign.id, lead.leadId, 'awaiting_review');
  t.like(await (await handleOf(campaign.id, lead.leadId)).result(), {
    status: 'stopped',
    stop_reason: 'review_expired',
  });
  const [action] = await actionsOf(campaign.id, lead.leadId);
  t.like(action, { state: 'canceled', errorCode: 'review_expired' });
  t.like(await enrollmentOf(campaign.id, lead.leadId), { status: 'stopped', stop_reason: 'review_expired' });
  t.is(
    (
      await (
        await em()
      ).execute(`select count(*)::int as n from sandbox_messages where idempotency_key = ?`, [action.id])
    )[0].n,
    0,
  );
  // A late approval finds nothing to approve.
  const late = await call('POST', `/api/scheduled-actions/${action.id}/approve`, { token: u.accessToken });
  t.is(late.status, 409, late.text);
});

/**
 * A send, a short wait, a condition on that send, a follow-up: `mark` makes the condition true for one
 * lead's first action, the other lead's stays unmarked. Both enrollments are run to their end.
 */
async function conditionCampaign(o: {
  channel: 'network' | 'email';
  check: 'accepted' | 'opened';
  first: { type: string; config: Record<string, unknown> };
  next: { type: string; config: Record<string, unknown> };
  mark: (connectorMessageId: string) => Promise<unknown>;
}) {
  const u = await createOwner();
  const owner = await campaignOwner(u);
  const account = await fastAccount(u, o.channel);
  const campaign = await seedCampaign(owner.workspaceId, {
    appId: owner.app.id,
    accountIds: [account.id],
    // The mark must be recorded (through the connector event's own workflow) before the wait ends and
    // the condition is read: a wait long enough for a loaded machine, and the mark made as soon as the
    // first lead waits (the second lead is not waited for: its condition fails either way).
    steps: [
      o.first,
      { type: 'wait', config: { amount: HOUR_OF_SECONDS(30), unit: 'hours' } },
      { type: 'condition', config: { check: o.check, expect: true } },
      o.next,
    ],
  });
  const [yes, no] = await owner.leads(2);
  await enroll(u, campaign.id, [yes.leadId, no.leadId]);
  await waitReason(campaign.id, yes.leadId, 'waiting_step_delay');
  const [first] = await actionsOf(campaign.id, yes.leadId);
  if (!(await o.mark(first.connectorMessageId!))) throw new Error('the mark found nothing');
  await deliverInbound(account.connector_account_id);
  const results = [
    await (await handleOf(campaign.id, yes.leadId)).result(),
    await (await handleOf(campaign.id, no.leadId)).result(),
  ];
  return {
    u,
    campaign,
    results,
    yes: await actionsOf(campaign.id, yes.leadId),
    no: await actionsOf(campaign.id, no.leadId),
    noEnrollment: await enrollmentOf(campaign.id, no.leadId),
  };
}

test('a condition on the previous step: an accepted invitation goes on to the message, one not accepted ends with condition_not_met', async (t) => {
  const r = await conditionCampaign({
    channel: 'network',
    check: 'accepted',
    first: { type: 'invitation', config: { note: 'Hi {{first_name}}' } },
    next: { type: 'message', config: { body: 'Thanks for connecting, {{first_name}}' } },
    mark: async (id) => sandboxAcceptInvitation(await em(), id),
  });
  t.like(r.results, [
    { status: 'completed', stop_reason: null },
    { status: 'completed', stop_reason: 'condition_not_met' },
  ]);
  t.truthy(r.yes[0].acceptedAt);
  t.deepEqual(
    r.yes.map((a) => [a.type, a.state]),
    [
      ['invitation', 'executed'],
      ['message', 'executed'],
    ],
  );
  t.deepEqual(
    r.no.map((a) => [a.type, a.state]),
    [['invitation', 'executed']],
  );
  t.like(r.noEnrollment, { status: 'completed', stop_reason: 'condition_not_met' });
});

test('a condition on opened: an email the connector reports opened goes on to the follow-up, one not opened ends; stats count the open', async (t) => {
  t.is(await sandboxOpenMessage(await em(), 'msg_unknown'), null);
  const r = await conditionCampaign({
    channel: 'email',
    check: 'opened',
    first: { type: 'email', config: { subject: 'Hello', body: 'Hi {{first_name}}' } },
    next: { type: 'email', config: { subject: 'Re: Hello', body: 'Glad you read it, {{first_name}}' } },
    mark: async (id) => sandboxOpenMessage(await em(), id),
  });
  t.like(r.results, [
    { status: 'completed', stop_reason: null },
    { status: 'completed', stop_reason: 'condition_not_met' },
  ]);
  t.truthy(r.yes[0].openedAt);
  t.deepEqual(
    r.yes.map((a) => [a.type, a.state]),
    [
      ['email', 'executed'],
      ['email', 'executed'],
    ],
  );
  t.deepEqual(
    r.no.map((a) => [a.type, a.state]),
    [['email', 'executed']],
  );
  const stats = await call('GET', `/api/campaigns/${r.campaign.id}/stats`, { token: r.u.accessToken });
  t.like(stats.body.totals, { sent: 3, opened: 1 });
  t.like(stats.body.steps[0], { step_position: 0, sent: 2, opened: 1 });
});

test('reply routing by thread on email; a message from someone else in another thread reaches no enrollment', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [
      { type: 'email', config: { subject: 'Hello {{first_name}}', body: 'A first note' } },
      { type: 'wait', config: { amount: HOUR_OF_SECONDS(600), unit: 'hours' } },
      { type: 'email', config: { subject: 'Re: Hello', body: 'A follow-up' } },
    ],
  });
  const [lead] = await o.leads(1);
  await enroll(u, campaign.id, [lead.leadId]);
  await waitReason(campaign.id, lead.leadId, 'waiting_step_delay');
  const [first] = await actionsOf(campaign.id, lead.leadId);
  t.truthy(first.connectorThreadId);

  await sandboxInjectMessage(await em(), account.connector_account_id, {
    from: `someone-${randomUUID()}@example.test`,
    body: 'Unrelated',
  });
  await deliverInbound(account.connector_account_id);
  t.is((await queryState(campaign.id, lead.leadId)).finished, null);
  t.is((await enrollmentOf(campaign.id, lead.leadId)).replied_at, null);

  // The reply comes from another address of the lead's company, in the campaign's thread.
  await sandboxInjectMessage(await em(), account.connector_account_id, {
    from: `assistant-${randomUUID()}@example.test`,
    body: 'Replying for Grace',
    threadId: first.connectorThreadId!,
  });
  await deliverInbound(account.connector_account_id);
  t.like(await (await handleOf(campaign.id, lead.leadId)).result(), { status: 'replied' });
  t.deepEqual(
    (await actionsOf(campaign.id, lead.leadId)).map((a) => [a.type, a.state]),
    [
      ['email', 'executed'],
      ['email', 'canceled'],
    ],
  );
});

test('a contact whose address bounced in one campaign gets no email from another: an action approved after the bounce is canceled at the send', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const first = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [
      { type: 'email', config: { subject: 'Hello', body: 'A first note' } },
      { type: 'wait', config: { amount: HOUR_OF_SECONDS(600), unit: 'hours' } },
      { type: 'email', config: { subject: 'Re: Hello', body: 'A follow-up' } },
    ],
  });
  const reviewed = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Other', body: 'Another note' } }],
    reviewRequired: true,
  });
  const [lead] = await o.leads(1);
  // Past the gate of the reviewed campaign (awaiting a person) before the bounce.
  await enroll(u, reviewed.id, [lead.leadId]);
  await waitReason(reviewed.id, lead.leadId, 'awaiting_review');
  await enroll(u, first.id, [lead.leadId]);
  await waitReason(first.id, lead.leadId, 'waiting_step_delay');
  const [sent] = await actionsOf(first.id, lead.leadId);

  await sandboxInjectMessage(await em(), account.connector_account_id, {
    from: 'MAILER-DAEMON@mx.example.test',
    body: 'Delivery Status Notification (Failure)',
    threadId: sent.connectorThreadId!,
  });
  await deliverInbound(account.connector_account_id);
  await waitFor(
    'the bounce recorded on the contact',
    async () =>
      !!(
        await (
          await em()
        ).execute(`select 1 from contacts where id = ? and email_bounced_at is not null`, [lead.contactId])
      ).length,
    60_000,
  );

  const [pending] = await actionsOf(reviewed.id, lead.leadId);
  t.is((await call('POST', `/api/scheduled-actions/${pending.id}/approve`, { token: u.accessToken })).status, 200);
  t.like(await (await handleOf(reviewed.id, lead.leadId)).result(), { status: 'stopped', stop_reason: 'bounced' });
  t.like(await enrollmentOf(reviewed.id, lead.leadId), { status: 'stopped', stop_reason: 'bounced' });
  t.deepEqual(
    (await actionsOf(reviewed.id, lead.leadId)).map((a) => [a.state, a.errorCode ?? null]),
    [['canceled', 'bounced']],
  );
  const out = await (
    await em()
  ).execute(`select count(*)::int as n from sandbox_messages where counterpart = ? and direction = 'out'`, [
    lead.email,
  ]);
  t.is(out[0].n, 1, 'only the first campaign’s email went out');
});

test('reschedule-planned after wider windows brings a waiting action earlier: its workflow is signalled and sends now; replays. A first send under a new-lead cap keeps no earliest time', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'network');
  // One hour a week, two days from now: the invitation waits for that window.
  const later = new Date(Date.now() + 2 * 86_400_000);
  const weekday = String(((later.getUTCDay() + 6) % 7) + 1);
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'invitation', config: { note: 'Hi {{first_name}}' } }],
    windows: { [weekday]: [{ start: '10:00', end: '11:00' }] },
    timeZone: 'UTC',
  });
  const [lead] = await o.leads(1);
  const enrolledAt = Date.now();
  await enroll(u, campaign.id, [lead.leadId]);
  await waitReason(campaign.id, lead.leadId, 'waiting_for_window');
  const [planned] = await actionsOf(campaign.id, lead.leadId);
  t.true(planned.dueAt.getTime() > Date.now() + 86_400_000, 'due in the one weekly window');
  t.true(Math.abs(planned.notBefore!.getTime() - enrolledAt) < 60_000, 'its earliest time is when it was planned');

  await (
    await em()
  ).execute(`update campaigns set sending_windows = ?::jsonb where id = ?`, [JSON.stringify(ALL_WEEK), campaign.id]);
  const r = await call('POST', `/api/campaigns/${campaign.id}/scheduled-actions/reschedule-planned`, {
    token: u.accessToken,
  });
  t.is(r.status, 200, r.text);
  t.like(r.body, { considered: 1, rescheduled: 1, no_window: 0 });
  t.true(Date.parse(r.body.items[0].due_at) < Date.parse(r.body.items[0].previous_due_at), 'moved earlier');
  t.true(Date.parse(r.body.items[0].due_at) <= Date.now() + 1000);

  // Without the signal the timer would fire in two days.
  const handle = await handleOf(campaign.id, lead.leadId);
  t.like(
    await Promise.race([
      handle.result(),
      new Promise((res) => setTimeout(() => res('still waiting for the old time'), 60_000)),
    ]),
    { status: 'completed' },
  );
  t.deepEqual(
    (await actionsOf(campaign.id, lead.leadId)).map((a) => a.state),
    ['executed'],
  );
  t.true((await replayLive((await api()).services.temporal, handle.workflowId)) > 0);

  // Under a daily new-lead cap the re-plan does not count new leads, so a first send is never pulled earlier.
  const capped = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'invitation', config: { note: 'Hi' } }],
    windows: { [weekday]: [{ start: '10:00', end: '11:00' }] },
    timeZone: 'UTC',
    dailyNewLeadCap: 5,
  });
  const [lead2] = await o.leads(1);
  await enroll(u, capped.id, [lead2.leadId]);
  await waitReason(capped.id, lead2.leadId, 'waiting_for_window');
  const [first] = await actionsOf(capped.id, lead2.leadId);
  t.is(first.notBefore ?? null, null);
  await (
    await em()
  ).execute(`update campaigns set sending_windows = ?::jsonb where id = ?`, [JSON.stringify(ALL_WEEK), capped.id]);
  t.like(
    (await call('POST', `/api/campaigns/${capped.id}/scheduled-actions/reschedule-planned`, { token: u.accessToken }))
      .body,
    { considered: 1, rescheduled: 0 },
  );
  await (await handleOf(capped.id, lead2.leadId)).signal('unenroll');
});
