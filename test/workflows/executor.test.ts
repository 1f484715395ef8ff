// The campaign executor on the sandbox network (docs/executor.md): real Temporal, short waits
// (fractions of an hour), windows open all week, sender accounts without gap or warm-up.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { ScheduledAction } from '../../db/entities/ScheduledAction.js';
import { WebhookEvent } from '../../db/entities/WebhookEvent.js';
import { sandboxInjectMessage } from '../../lib/connectors/sandbox-network.js';
import { deliverSandboxEvents } from '../../workflows/connector-events.js';
import { enrollmentWorkflowIds, webhookWorkflowIds } from '../../workflows/ids.js';
import type { EnrollmentState } from '../../workflows/enrollment.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { startReceiver, verifySignature } from '../helpers/receiver.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { whenStarted } from '../helpers/workflows.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const HOUR_OF_SECONDS = (s: number) => s / 3600;

const enroll = async (u: TestUser, campaignId: string, leadIds: string[]) => {
  const r = await call('POST', `/api/campaigns/${campaignId}/leads`, { token: u.accessToken, body: { lead_ids: leadIds } });
  if (r.status !== 200) throw new Error(`enroll failed: ${r.status} ${r.text}`);
  return r.body;
};
const enrollmentOf = async (campaignId: string, leadId: string) =>
  (await (await em()).execute<{ id: string; status: string; stop_reason: string | null; replied_at: Date | null }[]>(`select id, status, stop_reason, replied_at from enrollments where campaign_id = ? and lead_id = ?`, [campaignId, leadId]))[0];
const actionsOf = async (campaignId: string, leadId: string) =>
  (await em()).find(ScheduledAction, { campaign: campaignId, leadId }, { orderBy: { stepPosition: 'asc', createdAt: 'asc' } });
const handleOf = async (campaignId: string, leadId: string) => (await api()).services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaignId, leadId));
const queryState = async (campaignId: string, leadId: string) => (await handleOf(campaignId, leadId)).query<EnrollmentState>('state');
const waitReason = (campaignId: string, leadId: string, reason: string, timeoutMs = 60_000) =>
  waitFor(`reason ${reason}`, async () => (await queryState(campaignId, leadId).catch(() => null))?.reason === reason, timeoutMs);
const deliverInbound = async () =>
  (await api()).services.temporal.workflow.execute(deliverSandboxEvents, { taskQueue, workflowId: `sandbox:deliver-due:test-${randomUUID()}`, args: [], workflowExecutionTimeout: '2 minutes' });

test.serial('a three-step campaign (invitation, wait, message) runs to completion; action.executed is delivered with exactly the spec’s fields; replays', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const rx = await startReceiver();
  t.teardown(rx.close);
  const sub = (await call('POST', '/api/webhooks/outbound', { token: u.accessToken, body: { url: rx.url, events: ['action.executed'], active: true } })).body;
  const account = await fastAccount(u, 'network');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps: [
      { type: 'invitation', config: { note: 'Hi {{first_name}}, let us connect' } },
      { type: 'wait', config: { amount: HOUR_OF_SECONDS(4), unit: 'hours' } },
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
  t.deepEqual(actions.map((a) => [a.type, a.state]), [['invitation', 'executed'], ['message', 'executed']]);
  t.is(actions[0].content?.note, 'Hi Grace, let us connect');
  t.is(actions[1].content?.body, 'Hello Grace at Navy, from Ana network');
  t.true(actions[1].executedAt!.getTime() - actions[0].executedAt!.getTime() >= 3500);
  const e = await em();
  t.is((await e.execute(`select count(*)::int as n from sandbox_invitations where idempotency_key = ?`, [actions[0].id]))[0].n, 1);
  t.is((await e.execute(`select count(*)::int as n from sandbox_messages where idempotency_key = ?`, [actions[1].id]))[0].n, 1);

  const events = await e.find(WebhookEvent, { workspaceId: o.workspaceId, name: 'action.executed' }, { orderBy: { createdAt: 'asc' } });
  t.is(events.length, 2);
  for (const ev of events) t.like(await (await whenStarted((await api()).services.temporal.workflow.getHandle(webhookWorkflowIds.event(ev.id)))).result(), { succeeded: 1 });
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
  await replayFixture((await api()).services.temporal, 'enrollment', workflowId);
});
