// The send-time rule (docs/executor.md, "The send-time rule"): a paused campaign holds a follow-up
// that waits on the governor's gap, at once and for as long as it is paused; the claim reads every
// stop under row locks (a stop in flight is waited for, then seen); an error retrying cannot fix ends
// the enrollment `failed`, told once; a pause or a removal reaches an enrollment whose activity is
// being retried. Real Temporal, real PostgreSQL, the sandbox network.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { acquireSlot, claimSend, NOT_CONNECTED_RECHECK_MS } from '../../domain/enrollments/executor.js';
import { sendVerdict, type SendFacts } from '../../domain/enrollments/send-rule.js';
import { uuidv7 } from '../../lib/ids.js';
import type { EnrollmentState } from '../../workflows/enrollments.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });
const stateOf = async (campaignId: string, leadId: string) =>
  (await api()).services.temporal.workflow
    .getHandle(enrollmentWorkflowIds.enrollment(campaignId, leadId))
    .query<EnrollmentState>('state')
    .catch(() => null);
const actions = async (campaignId: string) =>
  (await em()).execute<
    {
      id: string;
      step_position: number;
      state: string;
      waiting_reason: string | null;
      error_code: string | null;
      claimed_at: Date | null;
      executed_at: Date | null;
    }[]
  >(
    `select id, step_position, state, waiting_reason, error_code, claimed_at, executed_at from scheduled_actions where campaign_id = ? order by step_position, created_at`,
    [campaignId],
  );
const enrollment = async (campaignId: string) =>
  (
    await (
      await em()
    ).execute<{ id: string; status: string; stop_reason: string | null }[]>(
      `select id, status, stop_reason from enrollments where campaign_id = ?`,
      [campaignId],
    )
  )[0];

const facts = (over: Partial<SendFacts> = {}): SendFacts => ({
  actionState: 'planned',
  actionType: 'email',
  enrollmentStatus: 'active',
  enrollmentStopReason: null,
  campaignStatus: 'active',
  stopOnReply: true,
  replied: false,
  bounced: false,
  unsubscribed: false,
  suppressed: false,
  outOfOfficeUntil: null,
  accountStatus: 'connected',
  windowOpen: true,
  ...over,
});

test('the rule: stops before holds, each with the gate’s reason', (t) => {
  t.deepEqual(sendVerdict(facts()), { send: true });
  t.deepEqual(
    sendVerdict(facts({ enrollmentStatus: 'removed', enrollmentStopReason: 'unenrolled', campaignStatus: 'paused' })),
    { send: false, stop: { status: 'removed', reason: 'unenrolled' } },
  );
  t.deepEqual(sendVerdict(facts({ campaignStatus: 'archived' })), {
    send: false,
    stop: { status: 'stopped', reason: 'campaign_archived' },
  });
  t.deepEqual(sendVerdict(facts({ campaignStatus: 'completed', replied: true })), {
    send: false,
    stop: { status: 'stopped', reason: 'campaign_completed' },
  });
  t.deepEqual(sendVerdict(facts({ unsubscribed: true, campaignStatus: 'paused' })), {
    send: false,
    stop: { status: 'stopped', reason: 'unsubscribed' },
  });
  t.deepEqual(sendVerdict(facts({ bounced: true })), { send: false, stop: { status: 'stopped', reason: 'bounced' } });
  t.deepEqual(sendVerdict(facts({ suppressed: true, campaignStatus: 'paused', bounced: true })), {
    send: false,
    stop: { status: 'stopped', reason: 'suppressed' },
  });
  t.deepEqual(
    sendVerdict(facts({ outOfOfficeUntil: new Date(Date.now() + 86_400_000), accountStatus: 'disconnected' })),
    { send: false, hold: 'out_of_office' },
  );
  t.deepEqual(sendVerdict(facts({ outOfOfficeUntil: new Date(), enrollmentStatus: 'paused' })), {
    send: false,
    hold: 'paused',
  });
  t.deepEqual(sendVerdict(facts({ replied: true, campaignStatus: 'paused' })), {
    send: false,
    stop: { status: 'replied', reason: 'replied' },
  });
  t.deepEqual(sendVerdict(facts({ replied: true, stopOnReply: false })), { send: true });
  t.deepEqual(sendVerdict(facts({ campaignStatus: 'paused', enrollmentStatus: 'paused' })), {
    send: false,
    hold: 'campaign_paused',
  });
  t.deepEqual(sendVerdict(facts({ enrollmentStatus: 'paused', accountStatus: 'disconnected' })), {
    send: false,
    hold: 'paused',
  });
  t.deepEqual(sendVerdict(facts({ accountStatus: null })), { send: false, hold: 'no_sender_account' });
  t.deepEqual(sendVerdict(facts({ accountStatus: 'disconnected', windowOpen: false })), {
    send: false,
    hold: 'not_connected',
  });
  t.deepEqual(sendVerdict(facts({ windowOpen: false })), { send: false, hold: 'waiting_for_window' });
});

/** A planned action of a fresh enrollment (rows only, no workflow): for the claim's own tests. */
async function plannedAction() {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
  });
  const [lead] = await o.leads(1);
  const e = await em();
  const enrollmentId = uuidv7();
  await e.execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at) values (?, ?, ?, ?, ?, 'active', 1, 1, now(), now(), now())`,
    [enrollmentId, o.workspaceId, campaign.id, lead.leadId, lead.contactId],
  );
  const actionId = uuidv7();
  await e.execute(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, account_id, content, attempts, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 0, 1, 'email', 'planned', now(), ?, ?::jsonb, 0, now(), now())`,
    [
      actionId,
      o.workspaceId,
      campaign.id,
      enrollmentId,
      lead.leadId,
      campaign.stepIds[0],
      account.id,
      JSON.stringify({ subject: 'Hi', body: 'Hello', recipient: lead.email }),
    ],
  );
  return { u, o, account, campaign, lead, enrollmentId, actionId };
}

test('the claim: each stop and hold, recorded on the action and the enrollment', async (t) => {
  const e = await em();
  const paused = await plannedAction();
  await e.execute(`update campaigns set status = 'paused' where id = ?`, [paused.campaign.id]);
  t.deepEqual(await claimSend(e as never, paused.actionId), { outcome: 'held', reason: 'campaign_paused' });
  t.like((await actions(paused.campaign.id))[0], {
    state: 'planned',
    waiting_reason: 'campaign_paused',
    claimed_at: null,
  });

  const disconnected = await plannedAction();
  await e.execute(`update platform_accounts set status = 'disconnected' where id = ?`, [disconnected.account.id]);
  t.deepEqual(await claimSend(e as never, disconnected.actionId), { outcome: 'held', reason: 'not_connected' });

  const replied = await plannedAction();
  await e.execute(`update enrollments set replied_at = now() where id = ?`, [replied.enrollmentId]);
  t.like(await claimSend(e as never, replied.actionId), {
    outcome: 'canceled',
    status: 'replied',
    stopReason: 'replied',
  });
  t.like(await enrollment(replied.campaign.id), { status: 'replied', stop_reason: 'replied' });
  t.like((await actions(replied.campaign.id))[0], { state: 'canceled', error_code: 'replied' });

  const unsubscribed = await plannedAction();
  await e.execute(`update contacts set unsubscribed_at = now() where id = ?`, [unsubscribed.lead.contactId]);
  t.like(await claimSend(e as never, unsubscribed.actionId), {
    outcome: 'canceled',
    status: 'stopped',
    stopReason: 'unsubscribed',
  });

  const archived = await plannedAction();
  await e.execute(`update campaigns set status = 'archived' where id = ?`, [archived.campaign.id]);
  t.like(await claimSend(e as never, archived.actionId), {
    outcome: 'canceled',
    status: 'stopped',
    stopReason: 'campaign_archived',
  });
  t.like(await enrollment(archived.campaign.id), { status: 'stopped', stop_reason: 'campaign_archived' });

  const open = await plannedAction();
  t.like(await claimSend(e as never, open.actionId), { outcome: 'claimed' });
  const [claimed] = await actions(open.campaign.id);
  t.is(claimed.state, 'executing');
  t.truthy(claimed.claimed_at);
  // A retry of a claimed send goes on, whatever stopped since: the claim committed first.
  await e.execute(`update campaigns set status = 'paused' where id = ?`, [open.campaign.id]);
  t.like(await claimSend(e as never, open.actionId), { outcome: 'claimed' });
});

test('a send refused for a disconnected account asks again within minutes, not an hour (a reconnection is picked up soon)', async (t) => {
  const p = await plannedAction();
  const e = await em();
  await e.execute(`update platform_accounts set status = 'disconnected' where id = ?`, [p.account.id]);
  const now = new Date();
  const slot = await acquireSlot(e as never, p.actionId, now);
  t.like(slot, { granted: false, reason: 'not_connected' });
  t.is(Date.parse((slot as { retryAt: string }).retryAt), now.getTime() + NOT_CONNECTED_RECHECK_MS);
  t.like((await actions(p.campaign.id))[0], { waiting_reason: 'not_connected' });
});

test('the claim waits for a stop in flight and then sees it (the row locks)', async (t) => {
  const p = await plannedAction();
  const { services } = await api();
  const pool = services.orm.em.getConnection().getKnex();
  const stopper = await pool.client.acquireConnection();
  try {
    await stopper.query('begin');
    await stopper.query(`update campaigns set status = 'paused', updated_at = now() where id = $1`, [p.campaign.id]);
    let settled = false;
    const claim = claimSend(services.orm.em.fork() as never, p.actionId).finally(() => (settled = true));
    // The claim is blocked on the campaign's row while the pause is uncommitted.
    await waitFor('the claim to wait on the lock', async () => {
      const [r] = await (
        await em()
      ).execute<{ n: number }[]>(
        `select count(*)::int as n from pg_locks where not granted and locktype in ('transactionid', 'tuple')`,
      );
      return r.n > 0 || settled;
    });
    t.false(settled, 'the claim did not go past an uncommitted pause');
    await stopper.query('commit');
    t.deepEqual(await claim, { outcome: 'held', reason: 'campaign_paused' });
  } finally {
    await stopper.query('rollback').catch(() => {});
    await pool.client.releaseConnection(stopper);
  }
});

test('the reproduction: a follow-up waiting on the governor’s gap is held by a pause at once, stays unsent while paused, and goes after resume', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  // Long enough that the pause below lands inside the gap on a loaded machine (15 s was not, with 12 files in parallel).
  const GAP = 30;
  const account = await fastAccount(u, 'email', { min_gap_seconds: GAP });
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [
      { type: 'email', config: { subject: 'Hi {{first_name}}', body: 'One' } },
      { type: 'email', config: { subject: 'Again', body: 'Two' } },
    ],
  });
  const [lead] = await o.leads(1);
  t.is((await call('POST', `/api/campaigns/${campaign.id}/leads`, as(u, { lead_ids: [lead.leadId] }))).status, 200);
  await waitFor(
    'step 2 to wait on the gap',
    async () => (await stateOf(campaign.id, lead.leadId))?.reason === 'gap',
    60_000,
  );
  const gapUntil = Date.parse((await stateOf(campaign.id, lead.leadId))!.until!);
  // The enrollment view reads the same answer from stored state, with the governor's retry time.
  const enrollmentId = (await enrollment(campaign.id)).id;
  // (the refusal's reason is stored before the workflow's state says it)
  const view = (await call('GET', `/api/enrollments/${enrollmentId}`, as(u))).body;
  t.is(view.waiting.reason, 'gap');
  t.is(Date.parse(view.waiting.until), gapUntil);
  t.like(await call('PATCH', `/api/campaigns/${campaign.id}/status`, as(u, { status: 'paused' })), { status: 200 });
  // At once: the workflow and the stored action say why.
  await waitFor(
    'campaign_paused',
    async () => (await stateOf(campaign.id, lead.leadId))?.reason === 'campaign_paused',
    30_000,
  );
  const [, second] = await actions(campaign.id);
  t.is(second.waiting_reason, 'campaign_paused');
  const r = await call('GET', `/api/scheduled-actions/${second.id}`, as(u));
  t.is(r.body.waiting_reason, 'campaign_paused');
  t.deepEqual((await call('GET', `/api/enrollments/${enrollmentId}`, as(u))).body.waiting, {
    reason: 'campaign_paused',
    until: null,
  });
  // Past the gap's end (and a governor's retry after it), step 2 is still unsent.
  await waitFor('the gap to pass', async () => Date.now() > gapUntil + 3000, GAP * 1000 + 30_000);
  t.like((await actions(campaign.id))[1], { state: 'planned', waiting_reason: 'campaign_paused' });
  t.is((await stateOf(campaign.id, lead.leadId))?.reason, 'campaign_paused');

  const resumedAt = new Date();
  t.like(await call('PATCH', `/api/campaigns/${campaign.id}/status`, as(u, { status: 'active' })), { status: 200 });
  await waitFor(
    'step 2 to be sent after the resume',
    async () => (await actions(campaign.id))[1]?.state === 'executed',
    60_000,
  );
  const sent = (await actions(campaign.id))[1];
  t.true(new Date(sent.claimed_at!).getTime() >= resumedAt.getTime(), 'claimed after the resume');
  // The enrollment completes at the step boundary that follows the send's commit (a moment later).
  await waitFor(
    'the enrollment to complete',
    async () => (await enrollment(campaign.id))?.status === 'completed',
    15_000,
  ).catch(() => undefined);
  t.like(await enrollment(campaign.id), { status: 'completed' });
});

/** A trigger that refuses inserts of this campaign's scheduled actions with `sqlstate` (a fault in a real run). */
async function refusePlans(campaignId: string, sqlstate: string) {
  const name = `fault_${randomUUID().replace(/-/g, '')}`;
  const e = await em();
  await e.execute(
    `create function ${name}() returns trigger language plpgsql as $$ begin if new.campaign_id = '${campaignId}' then raise exception 'injected fault' using errcode = '${sqlstate}'; end if; return new; end $$`,
  );
  await e.execute(`create trigger ${name} before insert on scheduled_actions for each row execute function ${name}()`);
  return async () => {
    await e.execute(`drop trigger if exists ${name} on scheduled_actions`);
    await e.execute(`drop function if exists ${name}()`);
  };
}

test('an error retrying cannot fix ends the enrollment failed at once: the code, a notification, enrollment_failed in the stats', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
  });
  const heal = await refusePlans(campaign.id, '23514'); // check_violation: a constraint
  t.teardown(heal);
  const [lead] = await o.leads(1);
  t.is((await call('POST', `/api/campaigns/${campaign.id}/leads`, as(u, { lead_ids: [lead.leadId] }))).status, 200);
  const handle = (await api()).services.temporal.workflow.getHandle(
    enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId),
  );
  t.deepEqual(await handle.result(), { status: 'failed', stop_reason: 'constraint_violation' });
  t.like(await enrollment(campaign.id), { status: 'failed', stop_reason: 'constraint_violation' });
  const stats = await call('GET', `/api/campaigns/${campaign.id}/stats`, as(u));
  t.is(stats.status, 200, stats.text);
  t.is(stats.body.totals.enrollment_failed, 1);
  const notes = await call('GET', '/api/me/notifications', as(u));
  t.true(
    (notes.body.items ?? notes.body.notifications ?? notes.body).some(
      (n: { kind: string; data?: { lead_id?: string } }) =>
        n.kind === 'enrollment.failed' && n.data?.lead_id === lead.leadId,
    ),
    JSON.stringify(notes.body).slice(0, 500),
  );
});

test('a pause reaches an enrollment whose activity is being retried; after resume the step is tried again and sent; a removal ends another', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
  });
  const heal = await refusePlans(campaign.id, 'P0001'); // a plain exception: retryable
  t.teardown(heal);
  const [a, b] = await o.leads(2);
  t.is(
    (await call('POST', `/api/campaigns/${campaign.id}/leads`, as(u, { lead_ids: [a.leadId, b.leadId] }))).status,
    200,
  );
  const { services } = await api();
  const historyHasRetries = async (leadId: string) => {
    const h = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, leadId));
    const d = await h.describe().catch(() => null);
    return (
      (d?.raw.pendingActivities?.length ?? 0) > 0 ||
      (await h.fetchHistory().catch(() => null))?.events?.some((ev) => !!ev.timerStartedEventAttributes) === true
    );
  };
  // Both are retrying their plan (a local activity past its retry threshold backs off on a timer).
  await waitFor(
    'the plans to be retried',
    async () => (await historyHasRetries(a.leadId)) && (await historyHasRetries(b.leadId)),
    90_000,
  );

  t.is((await call('DELETE', `/api/campaigns/${campaign.id}/leads/${b.leadId}`, as(u))).status, 200);
  t.like(await call('PATCH', `/api/campaigns/${campaign.id}/status`, as(u, { status: 'paused' })), { status: 200 });
  // Within one retry interval (≤ 1 minute) the retrying enrollment holds, and the removed one ends.
  await waitFor(
    'a to hold on the pause',
    async () => (await stateOf(campaign.id, a.leadId))?.reason === 'campaign_paused',
    90_000,
  );
  const hb = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, b.leadId));
  t.like(await hb.result(), { status: 'removed', stop_reason: 'unenrolled' });

  await heal();
  t.like(await call('PATCH', `/api/campaigns/${campaign.id}/status`, as(u, { status: 'active' })), { status: 200 });
  const ha = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, a.leadId));
  t.deepEqual(await ha.result(), { status: 'completed', stop_reason: null });
  const sent = (await actions(campaign.id)).filter((x) => x.state === 'executed');
  t.is(sent.length, 1, 'one send, for the lead still enrolled');
});

test('a send retried after its slot was granted, then halted by the campaign’s completion, gives the slot back (the account’s day is not charged)', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
  });
  // The claim fails (retryable) after the slot is granted and recorded: the send activity is retried.
  const name = `fault_${randomUUID().replace(/-/g, '')}`;
  const e = await em();
  await e.execute(
    `create function ${name}() returns trigger language plpgsql as $$ begin
       if new.campaign_id = '${campaign.id}' and new.state = 'executing' and old.state <> 'executing' then raise exception 'injected fault' using errcode = 'P0001'; end if;
       return new; end $$`,
  );
  await e.execute(`create trigger ${name} before update on scheduled_actions for each row execute function ${name}()`);
  t.teardown(async () => {
    await e.execute(`drop trigger if exists ${name} on scheduled_actions`);
    await e.execute(`drop function if exists ${name}()`);
  });
  const [lead] = await o.leads(1);
  t.is((await call('POST', `/api/campaigns/${campaign.id}/leads`, as(u, { lead_ids: [lead.leadId] }))).status, 200);
  const usage = async () =>
    Number(
      (
        await (
          await em()
        ).execute<{ n: number }[]>(
          `select coalesce(sum(count), 0)::int as n from account_usage where account_id = ? and action = 'email'`,
          [account.id],
        )
      )[0].n,
    );
  const granted = async () =>
    (
      await (
        await em()
      ).execute<{ g: Date | null }[]>(`select slot_granted_at as g from scheduled_actions where campaign_id = ?`, [
        campaign.id,
      ])
    )[0]?.g ?? null;
  await waitFor(
    'the slot granted and the send retrying',
    async () => (await granted()) !== null && (await usage()) === 1,
    90_000,
  );
  t.like(await call('PATCH', `/api/campaigns/${campaign.id}/status`, as(u, { status: 'completed' })), { status: 200 });
  const handle = (await api()).services.temporal.workflow.getHandle(
    enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId),
  );
  t.like(await handle.result(), { status: 'stopped' });
  t.is(await granted(), null, 'the recorded grant is cleared');
  t.is(await usage(), 0, 'the account’s day is not charged for a send that never happened');
  t.is((await actions(campaign.id)).filter((x) => x.state === 'executed').length, 0);
});
