// Bulk enrollment of a list (docs/executor.md, "Bulk enrollment"): exact counts and reasons, the
// receipt, idempotency by client key, resume after a failed activity attempt, the preview, and
// cross-workspace 404s. Real Temporal and the sandbox network.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { finishOperation } from '../../domain/enrollments/bulk.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { bulkEnroll } from '../../workflows/enrollments-bulk.js';
import { bulkEnrollWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { replayFixture } from '../helpers/replay.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;

/** A campaign whose first step is an email, blocking FR; a list of 10 leads: 5 fine, 2 in FR, 2 without email, 1 already enrolled. */
async function setup(u: TestUser) {
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    countryRule: { mode: 'block', countries: ['FR'] },
    steps: [{ type: 'email', config: { subject: 'Hi {{first_name}}', body: 'Hello {{first_name}}' } }],
  });
  const fine = await o.leads(5);
  const french = await o.leads(2, { country: 'fr' });
  const noEmail = await o.leads(2, { email: undefined });
  const [before] = await o.leads(1);
  const r = await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [before.leadId] },
  });
  if (r.status !== 200 || r.body.enrolled !== 1) throw new Error(`enroll failed: ${r.status} ${r.text}`);
  return { o, campaign, fine, french, noEmail, before };
}

const resultOf = async (campaignId: string, operationId: string) =>
  (await api()).services.temporal.workflow.getHandle(bulkEnrollWorkflowIds.operation(campaignId, operationId)).result();

test.serial(
  'a list enrolls with exact counts and reasons; the same client key returns the same operation; the receipt pages the skips; replays',
  async (t) => {
    const u = await createOwner();
    const { o, campaign, fine, french, noEmail, before } = await setup(u);

    const preview = await call('GET', `/api/campaigns/${campaign.id}/enrollment-preview?list_id=${o.listId}`, {
      token: u.accessToken,
    });
    t.is(preview.status, 200, preview.text);
    t.like(preview.body, {
      total: 10,
      would_enroll: 5,
      skipped: 5,
      skipped_by_reason: { already_enrolled: 1, blocked_country: 2, no_identity: 2 },
    });
    t.is(preview.body.sample.length, 5);
    const byIds = await call(
      'GET',
      `/api/campaigns/${campaign.id}/enrollment-preview?lead_ids=${fine[0].leadId},${french[0].leadId},${randomUUID()}`,
      { token: u.accessToken },
    );
    t.like(byIds.body, { total: 3, would_enroll: 1, skipped_by_reason: { blocked_country: 1, not_found: 1 } });
    // The preview wrote nothing.
    t.is(
      (await (await em()).execute(`select count(*)::int as n from enrollments where campaign_id = ?`, [campaign.id]))[0]
        .n,
      1,
    );

    const body = { list_id: o.listId, client_key: 'k-1' };
    const first = await call('POST', `/api/campaigns/${campaign.id}/enroll-list-contacts`, {
      token: u.accessToken,
      body,
    });
    t.is(first.status, 202, first.text);
    t.is(first.body.receipt_id, first.body.operation_id);
    t.is(first.body.total, 10);
    const again = await call('POST', `/api/campaigns/${campaign.id}/enroll-list-contacts`, {
      token: u.accessToken,
      body,
    });
    t.is(again.status, 202);
    t.is(again.body.operation_id, first.body.operation_id);
    const opId = first.body.operation_id as string;
    t.like(await resultOf(campaign.id, opId), { status: 'completed', processed: 10, enrolled: 5, skipped: 5 });

    const op = await call('GET', `/api/campaigns/${campaign.id}/enroll-list-contacts/operations/${opId}`, {
      token: u.accessToken,
    });
    t.like(op.body, { status: 'completed', total: 10, processed: 10, enrolled: 5, skipped: 5, error: null });
    // Once completed, the same key still answers the same operation and enrolls nothing more.
    const late = await call('POST', `/api/campaigns/${campaign.id}/enroll-list-contacts`, {
      token: u.accessToken,
      body,
    });
    t.like(late.body, { operation_id: opId, status: 'completed', enrolled: 5 });

    const e = await em();
    const rows = await e.execute<{ lead_id: string; operation_id: string | null }[]>(
      `select lead_id, operation_id from enrollments where campaign_id = ?`,
      [campaign.id],
    );
    t.is(rows.length, 6);
    t.deepEqual(
      rows
        .filter((r) => r.operation_id === opId)
        .map((r) => r.lead_id)
        .sort(),
      fine.map((l) => l.leadId).sort(),
    );

    const skips: { lead_id: string; reason: string }[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/api/campaigns/${campaign.id}/enroll-list-contacts/receipts/${opId}?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const r = await call('GET', q, { token: u.accessToken });
      t.is(r.status, 200, r.text);
      t.like(r.body, {
        enrolled: 5,
        skipped: 5,
        skipped_by_reason: { already_enrolled: 1, blocked_country: 2, no_identity: 2 },
      });
      t.true(r.body.skipped_leads.items.length <= 2);
      skips.push(...r.body.skipped_leads.items);
      cursor = r.body.skipped_leads.next_cursor;
    } while (cursor);
    const expected = [
      ...french.map((l) => ({ lead_id: l.leadId, reason: 'blocked_country' })),
      ...noEmail.map((l) => ({ lead_id: l.leadId, reason: 'no_identity' })),
      { lead_id: before.leadId, reason: 'already_enrolled' },
    ].sort((a, b) => a.lead_id.localeCompare(b.lead_id));
    t.deepEqual(skips, expected);

    // Another key on the same list: everything is already enrolled now.
    const second = await call('POST', `/api/campaigns/${campaign.id}/enroll-list-contacts`, {
      token: u.accessToken,
      body: { ...body, client_key: 'k-2' },
    });
    t.not(second.body.operation_id, opId);
    t.like(await resultOf(campaign.id, second.body.operation_id), { enrolled: 0, skipped: 10 });
    // The key again with another list of the campaign's product (an unknown list is 404 before any key is read).
    const other = await call('POST', `/api/apps/${o.app.id}/lists`, {
      token: u.accessToken,
      body: { name: `Other ${randomUUID()}` },
    });
    const reused = await call('POST', `/api/campaigns/${campaign.id}/enroll-list-contacts`, {
      token: u.accessToken,
      body: { list_id: other.body.id, client_key: 'k-2' },
    });
    t.is(reused.status, 409);
    t.is(reused.body.error.code, 'client_key_reused');

    await replayFixture(
      (await api()).services.temporal,
      'bulkEnroll',
      bulkEnrollWorkflowIds.operation(campaign.id, opId),
    );
  },
);

test.serial(
  'a failed activity attempt resumes after the last committed page: nothing doubled, nothing lost',
  async (t) => {
    const u = await createOwner();
    const o = await campaignOwner(u);
    const account = await fastAccount(u, 'network');
    const campaign = await seedCampaign(o.workspaceId, {
      appId: o.app.id,
      accountIds: [account.id],
      steps: [{ type: 'invitation', config: {} }],
    });
    const leads = await o.leads(23);
    const e = await em();
    const opId = randomUUID();
    await e.execute(
      `insert into enroll_operations (id, workspace_id, campaign_id, list_id, client_key, user_id, status, total, processed, enrolled, skipped, created_at, updated_at)
     values (?, ?, ?, ?, 'resume', ?, 'queued', 23, 0, 0, 0, now(), now())`,
      [opId, o.workspaceId, campaign.id, o.listId, u.id],
    );
    const handle = await (
      await api()
    ).services.temporal.workflow.start(bulkEnroll, {
      taskQueue,
      workflowId: bulkEnrollWorkflowIds.operation(campaign.id, opId),
      args: [{ operationId: opId, pageSize: 5, failFirstAttemptAfterPages: 2 }],
    });
    t.like(await handle.result(), { status: 'completed', processed: 23, enrolled: 23, skipped: 0 });
    const history = await handle.fetchHistory();
    const failed = history.events!.filter(
      (ev) => ev.activityTaskStartedEventAttributes?.attempt && ev.activityTaskStartedEventAttributes.attempt > 1,
    );
    t.true(failed.length >= 1, 'the paging activity ran a second attempt');
    const rows = await e.execute<{ lead_id: string }[]>(`select lead_id from enrollments where operation_id = ?`, [
      opId,
    ]);
    t.deepEqual(rows.map((r) => r.lead_id).sort(), leads.map((l) => l.leadId).sort());
    t.is((await e.execute(`select count(*)::int as n from enroll_skips where operation_id = ?`, [opId]))[0].n, 0);
    // Every enrollment's workflow started, including the pages the failed attempt committed.
    const client = (await api()).services.temporal;
    for (const l of leads) {
      const d = await client.workflow.getHandle(`enrollment:${campaign.id}:${l.leadId}`).describe();
      t.truthy(d.status.name);
    }
    await finishOperation(e, opId, { status: 'completed' }); // a no-op once completed
    t.like((await e.execute(`select status, processed, enrolled from enroll_operations where id = ?`, [opId]))[0], {
      status: 'completed',
      processed: 23,
      enrolled: 23,
    });
  },
);

test.serial('409 on a draft campaign; other workspaces get 404 on every id-taking route', async (t) => {
  const u = await createOwner();
  const { o, campaign } = await setup(u);
  const draft = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [],
    status: 'draft',
    steps: [{ type: 'email', config: { subject: 's', body: 'b' } }],
  });
  const d = await call('POST', `/api/campaigns/${draft.id}/enroll-list-contacts`, {
    token: u.accessToken,
    body: { list_id: o.listId, client_key: 'x' },
  });
  t.is(d.status, 409);
  t.is(d.body.error.code, 'invalid_transition');

  const op = await call('POST', `/api/campaigns/${campaign.id}/enroll-list-contacts`, {
    token: u.accessToken,
    body: { list_id: o.listId, client_key: 'x' },
  });
  t.is(op.status, 202);
  const opId = op.body.operation_id;
  await resultOf(campaign.id, opId);

  const other = await createUser();
  const otherOwner = await campaignOwner(other);
  const otherCampaign = await seedCampaign(otherOwner.workspaceId, {
    appId: otherOwner.app.id,
    accountIds: [],
    steps: [{ type: 'email', config: { subject: 's', body: 'b' } }],
  });
  for (const [method, path, body] of [
    ['POST', `/api/campaigns/${campaign.id}/enroll-list-contacts`, { list_id: o.listId, client_key: 'y' }],
    ['GET', `/api/campaigns/${campaign.id}/enroll-list-contacts/operations/${opId}`],
    ['GET', `/api/campaigns/${campaign.id}/enroll-list-contacts/receipts/${opId}`],
    ['GET', `/api/campaigns/${otherCampaign.id}/enroll-list-contacts/operations/${opId}`],
    ['GET', `/api/campaigns/${otherCampaign.id}/enroll-list-contacts/receipts/${opId}`],
    ['GET', `/api/campaigns/${campaign.id}/enrollment-preview?list_id=${o.listId}`],
    // The other owner's campaign with this owner's list.
    ['POST', `/api/campaigns/${otherCampaign.id}/enroll-list-contacts`, { list_id: o.listId, client_key: 'z' }],
    ['GET', `/api/campaigns/${otherCampaign.id}/enrollment-preview?list_id=${o.listId}`],
  ] as const) {
    const r = await call(method, path, { token: other.accessToken, body });
    t.is(r.status, 404, `${method} ${path}: ${r.text}`);
    t.is(r.body.error.code, 'not_found');
  }
  const missing = await call('GET', `/api/campaigns/${campaign.id}/enroll-list-contacts/operations/${randomUUID()}`, {
    token: u.accessToken,
  });
  t.is(missing.status, 404);
});

test.serial(
  'the Operator tool enroll_list_in_campaign (risk send) starts the same operation as the route',
  async (t) => {
    const u = await createOwner();
    const { o, campaign } = await setup(u);
    const tool = findTool('enroll_list_in_campaign')!;
    t.is(tool.risk, 'send');
    const { services } = await api();
    const e = services.orm.em.fork();
    const ctx = {
      em: e,
      jobs: services.jobs,
      config: services.config,
      providers: services,
      actor: await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined),
    };
    const r = (await runTool(tool, ctx, { campaign_id: campaign.id, list_id: o.listId, client_key: 'tool' })) as {
      operation_id: string;
    };
    t.like(await resultOf(campaign.id, r.operation_id), { status: 'completed', enrolled: 5, skipped: 5 });
    const same = await call('POST', `/api/campaigns/${campaign.id}/enroll-list-contacts`, {
      token: u.accessToken,
      body: { list_id: o.listId, client_key: 'tool' },
    });
    t.is(same.body.operation_id, r.operation_id);
  },
);
