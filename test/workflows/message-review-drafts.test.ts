// AI-written steps in the executor (docs/message-review.md): each action of an `ai` / `ai_review`
// step gets a draft from the local model; the review policy decides who reviews; a failed draft is
// never sent as it is; the deadline rule skips or holds. Real Temporal, sandbox network.
import test from 'ava';
import { MessageDraft } from '../../db/entities/MessageDraft.js';
import { ScheduledAction } from '../../db/entities/ScheduledAction.js';
import { creditBalance } from '../../domain/billing/credits.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { waitFor } from '../../scripts/children.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import type { EnrollmentState } from '../../workflows/enrollments.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { em } from '../helpers/billing.js';
import { campaignWithAccount, enrollWithReviewDeadline } from '../helpers/campaigns.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
test.after.always(closeApi);

const handleOf = async (campaignId: string, leadId: string) =>
  (await api()).services.temporal.workflow.getHandle(enrollmentWorkflowIds.enrollment(campaignId, leadId));
const stateOf = async (campaignId: string, leadId: string) =>
  (await handleOf(campaignId, leadId)).query<EnrollmentState>('state').catch(() => null);
const actionsOf = async (campaignId: string, leadId: string) =>
  (await em()).find(ScheduledAction, { campaign: campaignId, leadId }, { orderBy: { stepPosition: 'asc' } });
const draftsOf = async (campaignId: string) =>
  (await em()).find(MessageDraft, { campaign: campaignId }, { orderBy: { createdAt: 'asc' } });
const sentNotes = async (profileUrl: string) =>
  (
    await (
      await em()
    ).execute<{ body: string }[]>(`select body from sandbox_invitations where recipient = ?`, [profileUrl])
  ).map((r) => r.body);
const policy = (u: TestUser, campaignId: string, body: Record<string, unknown>) =>
  call('PUT', `/api/campaigns/${campaignId}/message-review/policy`, { token: u.accessToken, body });

async function setup(mode: 'ai' | 'ai_review', extra: { type: string; config: Record<string, unknown> }[] = []) {
  return campaignWithAccount('network', [
    { type: 'invitation', config: { note: 'Hi {{first_name}}, let us talk about outreach' }, messageMode: mode },
    ...extra,
  ]);
}

test.serial(
  'an ai step: the local model writes the note, the draft is auto-approved and sent once, one draft is charged; replays',
  async (t) => {
    const { u, o, campaign } = await setup('ai');
    const [lead] = await o.leads(1);
    const before = await creditBalance(await em(), o.workspaceId);
    const r = await call('POST', `/api/campaigns/${campaign.id}/leads`, {
      token: u.accessToken,
      body: { lead_ids: [lead.leadId] },
    });
    t.is(r.body.enrolled, 1, r.text);
    t.like(await (await handleOf(campaign.id, lead.leadId)).result(), { status: 'completed' });
    const [draft] = await draftsOf(campaign.id);
    t.like(draft, {
      status: 'approved',
      reviewRequired: false,
      autoApproved: true,
      channel: 'invitation',
      attempt: 1,
      credits: 1,
      errorCode: null,
      destination: lead.profileUrl,
    });
    t.true(draft.body.startsWith('Hi Grace,') && !draft.body.includes('{{'));
    const [action] = await actionsOf(campaign.id, lead.leadId);
    t.like(action, { state: 'executed' });
    t.is(action.content?.draft_id, draft.id);
    t.deepEqual(await sentNotes(lead.profileUrl), [draft.body], 'the draft’s text went out, once');
    t.is(await creditBalance(await em(), o.workspaceId), before - 1);
    const workflowId = enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId);
    t.true((await replayLive((await api()).services.temporal, workflowId)) > 0);
    await replayFixture((await api()).services.temporal, 'enrollment-ai', workflowId);
  },
);

test('review the first N: the first draft waits for a person and is sent once after approval; the next is auto-approved', async (t) => {
  const { u, o, campaign } = await setup('ai_review');
  t.is((await policy(u, campaign.id, { mode: 'first_n', first_n: 1 })).status, 200);
  const [first] = await o.leads(1);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [first.leadId] },
  });
  await waitFor(
    'the first draft in review',
    async () => (await stateOf(campaign.id, first.leadId))?.reason === 'awaiting_review',
  );
  const [second] = await o.leads(1);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [second.leadId] },
  });
  t.like(await (await handleOf(campaign.id, second.leadId)).result(), { status: 'completed' });
  t.is((await sentNotes(second.profileUrl)).length, 1);
  t.deepEqual(await sentNotes(first.profileUrl), [], 'nothing sent before the approval');

  const [action] = await actionsOf(campaign.id, first.leadId);
  const ok = await call('POST', `/api/scheduled-actions/${action.id}/approve`, { token: u.accessToken });
  t.is(ok.status, 200, ok.text);
  t.like(await (await handleOf(campaign.id, first.leadId)).result(), { status: 'completed' });
  t.is((await sentNotes(first.profileUrl)).length, 1);
  const drafts = await draftsOf(campaign.id);
  t.deepEqual(
    drafts.map((d) => [d.leadId, d.reviewRequired, d.autoApproved]),
    [
      [first.leadId, true, false],
      [second.leadId, false, true],
    ],
  );
});

test('a draft failing validation is never sent as it is: approving it is 409 draft_failed; its action waits in review', async (t) => {
  const { u, o, campaign } = await setup('ai');
  // The lead's company (Navy) is in every note the local model writes.
  await policy(u, campaign.id, { mode: 'none', blocked_phrases: ['navy'] });
  const [lead] = await o.leads(1);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  await waitFor(
    'the failed draft in review',
    async () => (await stateOf(campaign.id, lead.leadId))?.reason === 'awaiting_review',
  );
  const [draft] = await draftsOf(campaign.id);
  t.like(draft, { status: 'failed', errorCode: 'invalid_message', reviewRequired: false });
  t.deepEqual(
    draft.problems.map((p) => p.code),
    ['blocked_phrase'],
  );
  const [action] = await actionsOf(campaign.id, lead.leadId);
  t.like(action.content, { draft_failed: 'invalid_message', draft_id: draft.id });
  const r = await call('POST', `/api/scheduled-actions/${action.id}/approve`, { token: u.accessToken });
  t.is(r.status, 409);
  t.is(r.body.error.code, 'draft_failed');
  t.deepEqual(await sentNotes(lead.profileUrl), []);
  t.is((await call('POST', `/api/scheduled-actions/${action.id}/skip`, { token: u.accessToken })).status, 200);
  t.like(await (await handleOf(campaign.id, lead.leadId)).result(), { status: 'completed' });
});

test('the deadline rule: skip goes on with the next step; hold keeps waiting (notified once) until a person approves', async (t) => {
  const skip = await setup('ai_review', [{ type: 'invitation', config: { note: 'Second try' } }]);
  await policy(skip.u, skip.campaign.id, { mode: 'all', on_deadline: 'skip' });
  const [a] = await skip.o.leads(1);
  await enrollWithReviewDeadline(skip.u, skip.campaign.id, [a.leadId], 2000);
  t.like(await (await handleOf(skip.campaign.id, a.leadId)).result(), { status: 'completed' });
  const skipped = await actionsOf(skip.campaign.id, a.leadId);
  t.deepEqual(
    skipped.map((x) => [x.state, x.errorCode ?? null]),
    [
      ['skipped', 'review_expired'],
      ['executed', null],
    ],
  );
  t.like((await draftsOf(skip.campaign.id))[0], { status: 'expired' });

  // The rule is read at the deadline: a policy changed to hold while the draft waits holds it.
  const hold = await setup('ai_review');
  await policy(hold.u, hold.campaign.id, { mode: 'all', on_deadline: 'skip' });
  const [b] = await hold.o.leads(1);
  await enrollWithReviewDeadline(hold.u, hold.campaign.id, [b.leadId], 6000);
  await waitFor('in review', async () => (await stateOf(hold.campaign.id, b.leadId))?.reason === 'awaiting_review');
  await policy(hold.u, hold.campaign.id, { mode: 'all', on_deadline: 'hold' });
  await waitFor('the review held', async () => (await stateOf(hold.campaign.id, b.leadId))?.reason === 'review_held');
  const [held] = await actionsOf(hold.campaign.id, b.leadId);
  t.like(held, { state: 'awaiting_approval', waitingReason: 'review_held' });
  t.like((await draftsOf(hold.campaign.id))[0], { status: 'held' });
  const notes = await (
    await em()
  ).execute<{ n: number }[]>(
    `select count(*)::int as n from notifications where workspace_id = ? and kind = 'draft_review_overdue'`,
    [hold.o.workspaceId],
  );
  t.is(notes[0].n, 1);
  t.is((await call('POST', `/api/scheduled-actions/${held.id}/approve`, { token: hold.u.accessToken })).status, 200);
  t.like(await (await handleOf(hold.campaign.id, b.leadId)).result(), { status: 'completed' });
  t.is((await sentNotes(b.profileUrl)).length, 1);
});

test('the review queue and its decisions: approve once, edit (validated), revise, retry a failed draft; each sends once', async (t) => {
  const { u, o, campaign } = await setup('ai_review');
  await policy(u, campaign.id, { mode: 'all' });
  const leads = await o.leads(4);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: leads.map((l) => l.leadId) },
  });
  for (const l of leads)
    await waitFor('in review', async () => (await stateOf(campaign.id, l.leadId))?.reason === 'awaiting_review');
  const base = `/api/campaigns/${campaign.id}/message-review`;
  const q = await call('GET', `${base}?limit=3`, { token: u.accessToken });
  t.is(q.status, 200, q.text);
  t.is(q.body.items.length, 3);
  t.truthy(q.body.next_cursor);
  const rest = await call('GET', `${base}?limit=3&cursor=${q.body.next_cursor}`, { token: u.accessToken });
  const items = [...q.body.items, ...rest.body.items];
  t.is(new Set(items.map((i: { id: string }) => i.id)).size, 4);
  const byLead = new Map<string, any>(items.map((i: any) => [i.lead.id, i]));
  const item = (k: number) => byLead.get(leads[k].leadId) as { id: string; action_id: string; deadline_at: string };
  t.like(item(0), {
    destination: leads[0].profileUrl,
    status: 'awaiting_review',
    channel: 'invitation',
    lead: { name: 'Grace Hopper' },
  });
  t.truthy(item(0).deadline_at);
  const sent = async (k: number) => sentNotes(leads[k].profileUrl);

  // Approve: the send is released once; a second decision is 409.
  const a = await call('POST', `${base}/drafts/${item(0).id}/approve`, { token: u.accessToken });
  t.is(a.status, 200, a.text);
  t.is(a.body.status, 'approved');
  t.is(
    (await call('POST', `${base}/drafts/${item(0).id}/approve`, { token: u.accessToken })).body.error.code,
    'already_decided',
  );
  t.like(await (await handleOf(campaign.id, leads[0].leadId)).result(), { status: 'completed' });
  t.is((await sent(0)).length, 1);

  // Edit: validated (422 with the problems), kept waiting, then approved with the edit.
  const bad = await call('PUT', `${base}/drafts/${item(1).id}/edit`, {
    token: u.accessToken,
    body: { body: 'Hi {{first_name}}' },
  });
  t.is(bad.status, 422);
  t.is(bad.body.error.code, 'invalid_message');
  const kept = await call('PUT', `${base}/drafts/${item(1).id}/edit`, {
    token: u.accessToken,
    body: { body: 'Hello Grace, a short note from us.' },
  });
  t.like(kept.body, { status: 'awaiting_review', body: 'Hello Grace, a short note from us.' });
  t.deepEqual(await sent(1), []);
  const edited = await call('PUT', `${base}/drafts/${item(1).id}/edit`, {
    token: u.accessToken,
    body: { body: 'Hello Grace, the final note.', approve: true },
  });
  t.is(edited.body.status, 'approved');
  t.like(await (await handleOf(campaign.id, leads[1].leadId)).result(), { status: 'completed' });
  t.deepEqual(await sent(1), ['Hello Grace, the final note.']);

  // Revise: a new attempt replaces the draft (charged); the old item can no longer be decided.
  const before = await creditBalance(await em(), o.workspaceId);
  const rev = await call('POST', `${base}/drafts/${item(2).id}/revise`, {
    token: u.accessToken,
    body: { instructions: 'Shorter, and mention the webinar' },
  });
  t.is(rev.status, 201, rev.text);
  t.like(rev.body, { attempt: 2, status: 'awaiting_review', credits: 1 });
  t.true(rev.body.body.includes('Shorter, and mention the webinar'));
  t.is(await creditBalance(await em(), o.workspaceId), before - 1);
  t.is(
    (await call('POST', `${base}/drafts/${item(2).id}/approve`, { token: u.accessToken })).body.error.code,
    'draft_replaced',
  );
  t.is(
    (await call('POST', `${base}/drafts/${rev.body.id}/retry`, { token: u.accessToken })).body.error.code,
    'not_failed',
  );
  t.is((await call('POST', `${base}/drafts/${rev.body.id}/approve`, { token: u.accessToken })).status, 200);
  t.like(await (await handleOf(campaign.id, leads[2].leadId)).result(), { status: 'completed' });
  t.deepEqual(await sent(2), [rev.body.body]);

  // An action skipped elsewhere: approving its draft is 409 invalid_transition and leaves the draft undecided.
  t.is((await call('POST', `/api/scheduled-actions/${item(3).action_id}/skip`, { token: u.accessToken })).status, 200);
  const late = await call('POST', `${base}/drafts/${item(3).id}/approve`, { token: u.accessToken });
  t.is(late.body.error.code, 'invalid_transition');
  t.is((await draftsOf(campaign.id)).find((d) => d.id === item(3).id)?.status, 'awaiting_review');
});

test('retry: a failed draft is written again (402 when the balance is short), then approved and sent once; other workspaces get 404', async (t) => {
  const { u, o, campaign } = await setup('ai');
  await policy(u, campaign.id, { mode: 'none', blocked_phrases: ['navy'] });
  const [lead] = await o.leads(1);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  await waitFor(
    'the failed draft in review',
    async () => (await stateOf(campaign.id, lead.leadId))?.reason === 'awaiting_review',
  );
  const base = `/api/campaigns/${campaign.id}/message-review`;
  const [failed] = (await call('GET', base, { token: u.accessToken })).body.items;
  t.like(failed, { status: 'failed', error_code: 'invalid_message' });
  t.is(
    (await call('POST', `${base}/drafts/${failed.id}/approve`, { token: u.accessToken })).body.error.code,
    'draft_failed',
  );

  const stranger = (await setup('ai')).u;
  for (const [method, path, body] of [
    ['GET', base, undefined],
    ['POST', `${base}/drafts/${failed.id}/approve`, undefined],
    ['PUT', `${base}/drafts/${failed.id}/edit`, { body: 'x' }],
    ['POST', `${base}/drafts/${failed.id}/revise`, { instructions: 'x' }],
    ['POST', `${base}/drafts/${failed.id}/retry`, undefined],
  ] as const) {
    t.is((await call(method, path, { token: stranger.accessToken, body })).status, 404, `${method} ${path}`);
  }

  const e = await em();
  const { debitCredits } = await import('../../domain/billing/credits.js');
  const balance = await creditBalance(e, o.workspaceId);
  await debitCredits(e, o.workspaceId, balance, { reason: 'test: spend everything' });
  const broke = await call('POST', `${base}/drafts/${failed.id}/retry`, { token: u.accessToken });
  t.is(broke.status, 402);
  t.is((await draftsOf(campaign.id)).length, 1, 'no draft written');
  const { grantCredits } = await import('../../domain/billing/credits.js');
  await grantCredits(e, o.workspaceId, 10, { reason: 'test', source: 'admin' });
  await policy(u, campaign.id, { mode: 'none' });
  const retried = await call('POST', `${base}/drafts/${failed.id}/retry`, { token: u.accessToken });
  t.is(retried.status, 201, retried.text);
  t.like(retried.body, { attempt: 2, status: 'awaiting_review', error_code: null });
  t.is((await call('POST', `${base}/drafts/${retried.body.id}/approve`, { token: u.accessToken })).status, 200);
  t.like(await (await handleOf(campaign.id, lead.leadId)).result(), { status: 'completed' });
  t.deepEqual(await sentNotes(lead.profileUrl), [retried.body.body]);
});

test('Operator tools: list_message_drafts (read) and approve_message_draft (risk send) act on the queue as the caller', async (t) => {
  const { u, o, campaign } = await setup('ai_review');
  const [lead] = await o.leads(1);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  await waitFor('in review', async () => (await stateOf(campaign.id, lead.leadId))?.reason === 'awaiting_review');
  const { services } = await api();
  const e = services.orm.em.fork();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined),
  };
  t.is(findTool('list_message_drafts')?.risk, 'read');
  t.is(findTool('approve_message_draft')?.risk, 'send');
  const listed = (await runTool(findTool('list_message_drafts')!, ctx, { campaign_id: campaign.id })) as {
    items: { id: string; destination: string }[];
  };
  t.is(listed.items.length, 1);
  t.is(listed.items[0].destination, lead.profileUrl);
  t.like(
    await runTool(findTool('approve_message_draft')!, ctx, { campaign_id: campaign.id, draft_id: listed.items[0].id }),
    { status: 'approved' },
  );
  t.like(await (await handleOf(campaign.id, lead.leadId)).result(), { status: 'completed' });
  t.is((await sentNotes(lead.profileUrl)).length, 1);
});

test('generate-all-messages and drafts/generate: a job writes the selection in batches with exact progress, once per client key; 402 and 400 first; replays', async (t) => {
  const { u, o, campaign } = await setup('ai_review', [{ type: 'message', config: { body: 'A template follow-up' } }]);
  await policy(u, campaign.id, { mode: 'all' });
  const leads = await o.leads(3);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: leads.map((l) => l.leadId) },
  });
  for (const l of leads)
    await waitFor('in review', async () => (await stateOf(campaign.id, l.leadId))?.reason === 'awaiting_review');
  const before = await creditBalance(await em(), o.workspaceId);

  const all = (key: string, extra: Record<string, unknown> = {}) =>
    call('POST', `/api/campaigns/${campaign.id}/generate-all-messages`, {
      token: u.accessToken,
      body: { client_key: key, ...extra },
    });
  const r = await all('rewrite-1');
  t.is(r.status, 202, r.text);
  t.like(r.body, { scope: 'all', total: 3, workflow_id: `drafts:${campaign.id}:${r.body.operation_id}` });
  const handle = (await api()).services.temporal.workflow.getHandle(r.body.workflow_id);
  t.like(await handle.result(), { status: 'completed', total: 3, written: 3, failed: 0, credits: 3 });
  const again = await all('rewrite-1');
  t.like(again.body, {
    operation_id: r.body.operation_id,
    status: 'completed',
    processed: 3,
    written: 3,
    percent: 100,
  });
  t.is(await creditBalance(await em(), o.workspaceId), before - 3);
  const queue = (await call('GET', `/api/campaigns/${campaign.id}/message-review`, { token: u.accessToken })).body
    .items;
  t.deepEqual(
    queue.map((i: { attempt: number; status: string }) => [i.attempt, i.status]),
    [
      [2, 'awaiting_review'],
      [2, 'awaiting_review'],
      [2, 'awaiting_review'],
    ],
  );

  // Nothing is missing: an empty job, completed at once.
  const missing = await call('POST', `/api/campaigns/${campaign.id}/message-review/drafts/generate`, {
    token: u.accessToken,
    body: { client_key: 'fill-1' },
  });
  t.like(missing.body, { scope: 'missing', total: 0, status: 'completed' });
  // The template step is not AI-written.
  const [, templateStep] = (
    await (
      await em()
    ).execute<{ steps: { id: string }[] }[]>(`select steps from campaign_step_versions where campaign_id = ?`, [
      campaign.id,
    ])
  )[0].steps;
  t.is((await all('rewrite-2', { step_id: templateStep.id })).body.error.code, 'not_ai_step');
  // Another workspace: 404 on both routes.
  const stranger = (await setup('ai')).u;
  t.is(
    (
      await call('POST', `/api/campaigns/${campaign.id}/generate-all-messages`, {
        token: stranger.accessToken,
        body: { client_key: 'x' },
      })
    ).status,
    404,
  );
  t.is(
    (
      await call('POST', `/api/campaigns/${campaign.id}/message-review/drafts/generate`, {
        token: stranger.accessToken,
        body: { client_key: 'x' },
      })
    ).status,
    404,
  );
  // A balance that cannot cover the selection: 402 before anything starts.
  const e = await em();
  const { debitCredits } = await import('../../domain/billing/credits.js');
  await debitCredits(e, o.workspaceId, await creditBalance(e, o.workspaceId), { reason: 'test: spend everything' });
  const broke = await all('rewrite-3');
  t.is(broke.status, 402);
  t.is(
    (await e.execute(`select count(*)::int as n from draft_operations where campaign_id = ?`, [campaign.id]))[0].n,
    2,
  );

  await replayFixture((await api()).services.temporal, 'draftGeneration', r.body.workflow_id);
});

test('a policy changed to none releases the drafts waiting for review: each is approved and sent once', async (t) => {
  const { u, o, campaign } = await setup('ai_review');
  await policy(u, campaign.id, { mode: 'all' });
  const [lead] = await o.leads(1);
  await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  await waitFor('in review', async () => (await stateOf(campaign.id, lead.leadId))?.reason === 'awaiting_review');
  t.deepEqual(await sentNotes(lead.profileUrl), []);
  t.is((await policy(u, campaign.id, { mode: 'none' })).status, 200);
  t.like(await (await handleOf(campaign.id, lead.leadId)).result(), { status: 'completed' });
  t.like((await draftsOf(campaign.id))[0], { status: 'approved', autoApproved: true });
  t.is((await sentNotes(lead.profileUrl)).length, 1);
});
