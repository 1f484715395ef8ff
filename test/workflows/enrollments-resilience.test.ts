// The executor when things go wrong or change: a worker killed between the connector's send and
// recording it (the retried activity sends once), and a step edit while enrollments run (version moves).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { temporalJobs } from '../../jobs/temporal.js';
import { ScheduledAction } from '../../db/entities/ScheduledAction.js';
import { WebhookEvent } from '../../db/entities/WebhookEvent.js';
import { enrollLeads } from '../../domain/enrollments/enrollments.js';
import { resolveActor } from '../../domain/workspaces.js';
import { sandboxDisconnect } from '../../lib/connectors/sandbox-network.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import type { EnrollmentState } from '../../workflows/enrollments.js';
import { api, call, closeApi } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign, seedVersion } from '../helpers/campaigns.js';
test.after.always(closeApi);

test('a worker killed after the connector sent but before the send was recorded: the retry on another worker sends once', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const { services } = await api();
  const account = await fastAccount(u, 'network');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'invitation', config: { note: 'Hi {{first_name}}' } }],
  });
  const [lead] = await o.leads(1);

  const taskQueue = `executor-crash-${randomUUID()}`;
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

  // The invitation has reached the network, and the activity sleeps before recording it.
  await waitFor(
    'the connector to have the invitation',
    async () => {
      const rows = await (
        await em()
      ).execute(`select count(*)::int as n from sandbox_invitations where recipient = ?`, [lead.profileUrl]);
      return rows[0].n === 1;
    },
    120_000,
  );
  // Killed at once, inside its pause: starting the replacement first could outlast the pause on a
  // loaded machine, and the first worker would record the send itself (no retry to see).
  first.kill('SIGKILL');
  await new Promise((res) => first.once('exit', res));
  const second = spawnTsx('workers/worker.ts', { ...env, EXECUTOR_TEST_PAUSE_AFTER_SEND_MS: '0' }, { quiet: true });
  t.teardown(() => stopChild(second));

  const handle = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId));
  const result = await handle.result();
  const [action] = await (await em()).find(ScheduledAction, { campaign: campaign.id, leadId: lead.leadId });
  t.like(
    result,
    { status: 'completed' },
    JSON.stringify({ state: action.state, error: action.errorCode, attempts: action.attempts }),
  );
  t.is(action.state, 'executed');
  // Retried after the kill (a loaded machine may time out another attempt too); sent once all the same.
  t.true(action.attempts >= 2, `attempts: ${action.attempts}`);
  const rows = await (
    await em()
  ).execute(`select count(*)::int as n from sandbox_invitations where recipient = ?`, [lead.profileUrl]);
  t.is(rows[0].n, 1);
  t.is(await (await em()).count(WebhookEvent, { workspaceId: o.workspaceId, name: 'action.executed' }), 1);
  const usage = await (
    await em()
  ).execute(`select sum(count)::int as n from account_usage where account_id = ?`, [account.id]);
  t.is(usage[0].n, 1);
});

test('a step edit applies at the next step boundary: the current step finishes as planned, steps not reached come from the new version', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const { services } = await api();
  const account = await fastAccount(u, 'network');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [
      { type: 'invitation', config: { note: 'v1 invite' } },
      { type: 'wait', config: { amount: 4 / 3600, unit: 'hours' } },
      { type: 'message', config: { body: 'v1 message' } },
    ],
  });
  const [lead] = await o.leads(1);
  const r = await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  t.is(r.body.enrolled, 1);
  const handle = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId));
  // Planned under version 1 while the wait runs (the message is the current step: it finishes as planned).
  await waitFor('the wait', async () => (await handle.query<EnrollmentState>('state')).reason === 'waiting_step_delay');
  const [inv, wait, msg] = campaign.stepIds;
  await seedVersion(campaign.id, 2, [
    { id: inv, type: 'invitation', config: { note: 'v2 invite' } },
    { id: wait, type: 'wait', config: { amount: 0, unit: 'hours' } },
    { id: msg, type: 'message', config: { body: 'v2 message' } },
    { type: 'message', config: { body: 'v2 added follow-up' } },
  ]);
  t.like(await handle.result(), { status: 'completed' });
  const actions = await (
    await em()
  ).find(ScheduledAction, { campaign: campaign.id, leadId: lead.leadId }, { orderBy: { createdAt: 'asc' } });
  t.deepEqual(
    actions.map((a) => [a.content?.note ?? a.content?.body, a.stepVersion, a.state]),
    [
      ['v1 invite', 1, 'executed'],
      ['v1 message', 1, 'executed'],
      ['v2 added follow-up', 2, 'executed'],
    ],
  );
  t.like(
    (
      await (
        await em()
      ).execute(`select step_version from enrollments where campaign_id = ? and lead_id = ?`, [
        campaign.id,
        lead.leadId,
      ])
    )[0],
    { step_version: 2 },
  );
});

test('a connector failure that is not retryable marks the action failed, gives the slot back and ends the enrollment failed', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const { services } = await api();
  const account = await fastAccount(u, 'network');
  // Disconnected at the connector, still connected in our records (no reconciliation yet): the governor grants, the send fails.
  await sandboxDisconnect(await em(), account.connector_account_id, 'checkpoint');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [{ type: 'invitation', config: { note: 'Hi' } }],
  });
  const [lead] = await o.leads(1);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  const handle = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId));
  t.like(await handle.result(), { status: 'failed', stop_reason: 'connector_invalid_request' });
  const [action] = await (await em()).find(ScheduledAction, { campaign: campaign.id, leadId: lead.leadId });
  t.like(action, { state: 'failed', errorCode: 'connector_invalid_request', attempts: 1 });
  const usage = await (
    await em()
  ).execute(`select coalesce(sum(count), 0)::int as n from account_usage where account_id = ?`, [account.id]);
  t.is(usage[0].n, 0);
  t.is(await (await em()).count(WebhookEvent, { workspaceId: o.workspaceId, name: 'action.executed' }), 0);
});

test('a long sequence continues as new and still runs to the end with its place kept', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const { services } = await api();
  const account = await fastAccount(u, 'network');
  const steps = [
    ...Array.from({ length: 26 }, () => ({ type: 'wait', config: { amount: 0, unit: 'hours' } })),
    { type: 'invitation', config: { note: 'Hi {{first_name}}' } },
  ];
  const campaign = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [account.id], steps });
  const [lead] = await o.leads(1);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  const handle = services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId));
  t.like(await handle.result(), { status: 'completed' });
  // Visibility is eventually consistent: wait for the earlier run to be listed.
  await waitFor(
    'a run that continued as new',
    async () => {
      const runs: string[] = [];
      for await (const w of services.temporal.workflow.list({
        query: `WorkflowId = '${enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId)}'`,
      }))
        runs.push(w.status.name);
      return runs.includes('CONTINUED_AS_NEW');
    },
    30_000,
  );
  t.pass();
  const actions = await (await em()).find(ScheduledAction, { campaign: campaign.id, leadId: lead.leadId });
  t.deepEqual(
    actions.map((a) => [a.type, a.state, a.stepPosition]),
    [['invitation', 'executed', 26]],
  );
});
