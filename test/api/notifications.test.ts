// Notifications (docs/notifications.md): one row per recipient written by domain events according to
// each person's preferences; per-person read state; unread count from the partial index; read and
// read-all idempotent; cursor pages and the unread filter; product scoping; emails through the
// `notification-emails` workflow; the Operator tools; cross-workspace and cross-member 404s.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { PlatformAccount } from '../../db/entities/PlatformAccount.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { applyAccountStatus } from '../../domain/accounts/status.js';
import { notify } from '../../domain/notifications/notifications.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { sandboxInjectMessage } from '../../lib/connectors/sandbox-network.js';
import { uuidv7 } from '../../lib/ids.js';
import { waitFor } from '../../scripts/children.js';
import { notificationEmails } from '../../workflows/notifications.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { addTeamMember } from '../helpers/db.js';
import { deliverFor } from '../helpers/inbound.js';
import { postSse } from '../helpers/sse.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { peopleCsv, postCsv, importPath, waitImport } from '../helpers/imports.js';
import { lastEmailTo } from '../helpers/team.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const as = (u: TestUser, owner?: TestUser) => ({
  token: u.accessToken,
  headers: (owner ? { 'x-acting-as': owner.id } : {}) as Record<string, string>,
});
const list = (u: TestUser, q = '', owner?: TestUser) => call('GET', `/api/me/notifications${q}`, as(u, owner));
const unread = async (u: TestUser, owner?: TestUser) =>
  (await call('GET', '/api/me/notifications/unread-count', as(u, owner))).body.unread as number;
const setPrefs = (u: TestUser, body: Record<string, string>) =>
  call('PUT', '/api/operator/notification-preferences', { token: u.accessToken, body });

/** A connected sender account of the workspace, disconnected through the domain's transition. */
async function disconnect(workspaceId: string, name = 'Ana') {
  const e = await em();
  const a = e.create(PlatformAccount, {
    workspace: e.getReference(Workspace, workspaceId),
    channel: 'email',
    displayName: name,
    timeZone: 'Europe/Berlin',
    workingHours: { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
    connector: `scripted-${randomUUID().slice(0, 8)}`,
    connectorAccountId: `acc_${randomUUID()}`,
    status: 'connected',
    connectedAt: new Date(),
  });
  await e.flush();
  t_assert(
    await applyAccountStatus(
      await em(),
      {
        connectorAccountId: a.connectorAccountId!,
        state: 'disconnected',
        reason: 'credentials_expired',
        address: null,
      },
      'inbound',
    ),
    'disconnected',
  );
  return a.id;
}
function t_assert(actual: unknown, expected: unknown) {
  if (actual !== expected) throw new Error(`expected ${String(expected)}, got ${String(actual)}`);
}

/** An owner (pro) with a member acting in their workspace. */
async function team(memberAccess?: { appIds?: string[] }) {
  const owner = await createOwner();
  const member = await createUser('Member');
  await addTeamMember(owner.id, member.id, memberAccess);
  return { owner, member, workspaceId: await workspaceIdOf(owner.id) };
}

test('an event notifies every member once; each one’s read state is their own; read and read-all are idempotent', async (t) => {
  const { owner, member, workspaceId } = await team();
  const accountId = await disconnect(workspaceId, 'Sales mailbox');
  const mine = (await list(owner)).body;
  t.is(mine.items.length, 1);
  t.like(mine.items[0], {
    kind: 'account.disconnected',
    title: 'Sales mailbox is disconnected',
    read: false,
    read_at: null,
    data: { platform_account_id: accountId, reason: 'credentials_expired' },
  });
  const theirs = (await list(member, '', owner)).body.items;
  t.is(theirs.length, 1);
  t.not(theirs[0].id, mine.items[0].id, 'a row per person');
  t.is(await unread(owner), 1);
  t.is(await unread(member, owner), 1);
  t.is(await unread(member), 0, 'the member’s own workspace has none');

  // The member reads theirs: the owner's stays unread.
  const r1 = await call('POST', `/api/me/notifications/${theirs[0].id}/read`, as(member, owner));
  t.is(r1.status, 200, r1.text);
  t.like(r1.body, { id: theirs[0].id, read: true });
  const r2 = await call('POST', `/api/me/notifications/${theirs[0].id}/read`, as(member, owner));
  t.is(r2.status, 200);
  t.is(r2.body.read_at, r1.body.read_at, 'the first read’s time stays');
  t.is(await unread(member, owner), 0);
  t.is(await unread(owner), 1, 'the owner’s copy is still unread');

  // Someone else's notification, from either side: 404; another workspace's: 404.
  t.is((await call('POST', `/api/me/notifications/${theirs[0].id}/read`, as(owner))).status, 404);
  t.is((await call('POST', `/api/me/notifications/${mine.items[0].id}/read`, as(member, owner))).status, 404);
  t.is((await call('POST', `/api/me/notifications/${mine.items[0].id}/read`, as(member))).status, 404);
  const stranger = await createUser();
  t.is((await call('POST', `/api/me/notifications/${mine.items[0].id}/read`, as(stranger))).status, 404);
  t.is((await call('POST', `/api/me/notifications/${uuidv7()}/read`, as(owner))).status, 404);
  t.is((await call('POST', '/api/me/notifications/not-a-uuid/read', as(owner))).body.error.code, 'invalid_id');
  t.is((await call('POST', '/api/me/notifications/read-all', as(stranger))).body.marked, 0);
  t.is(await unread(owner), 1, 'a stranger’s read-all touches nothing of ours');

  await disconnect(workspaceId, 'Second mailbox');
  const all = await call('POST', '/api/me/notifications/read-all', as(owner));
  t.is(all.status, 200, all.text);
  t.deepEqual(all.body, { marked: 2, unread: 0 });
  t.deepEqual((await call('POST', '/api/me/notifications/read-all', as(owner))).body, { marked: 0, unread: 0 });
  t.is(await unread(member, owner), 1, 'the member’s second one is untouched by the owner’s read-all');
});

test('list: newest first, cursor pages, unread filter; read-all up to a given notification leaves later ones unread', async (t) => {
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  const e = await em();
  for (let i = 0; i < 5; i++)
    await notify(e, ws, { kind: 'account.disconnected', title: `n${i}`, body: `body ${i}`, data: {} });
  const p1 = (await list(u, '?limit=2')).body;
  t.deepEqual(
    p1.items.map((n: { title: string }) => n.title),
    ['n4', 'n3'],
  );
  const p2 = (await list(u, `?limit=2&cursor=${p1.next_cursor}`)).body;
  t.deepEqual(
    p2.items.map((n: { title: string }) => n.title),
    ['n2', 'n1'],
  );
  const p3 = (await list(u, `?limit=2&cursor=${p2.next_cursor}`)).body;
  t.deepEqual(
    p3.items.map((n: { title: string }) => n.title),
    ['n0'],
  );
  t.is(p3.next_cursor, null);

  await call('POST', `/api/me/notifications/${p1.items[1].id}/read`, as(u)); // n3
  t.deepEqual(
    (await list(u, '?unread=true')).body.items.map((n: { title: string }) => n.title),
    ['n4', 'n2', 'n1', 'n0'],
  );
  t.deepEqual(
    (await list(u, '?unread=true&limit=1')).body.items.map((n: { title: string }) => n.title),
    ['n4'],
  );
  const upTo = p2.items[0].id; // n2: n2, n1, n0 are marked; n4 stays unread
  const r = await call('POST', '/api/me/notifications/read-all', { ...as(u), body: { up_to_id: upTo } });
  t.deepEqual(r.body, { marked: 3, unread: 1 });
  t.deepEqual(
    (await list(u, '?unread=true')).body.items.map((n: { title: string }) => n.title),
    ['n4'],
  );
  for (const q of ['?unread=yes', '?limit=0', '?cursor=abc', '?unread_only=true'])
    t.is((await list(u, q)).status, 400, q);
  t.is((await call('POST', '/api/me/notifications/read-all', { ...as(u), body: { up_to_id: 'x' } })).status, 400);
});

test('unread count is served by the partial index of unread rows (no scan of read notifications)', async (t) => {
  const u = await createUser();
  const ws = await workspaceIdOf(u.id);
  // The test database is small, where a sequential scan is cheapest; with it off, the planner shows
  // the path it takes on a real table: the partial index, index-only.
  const text = await (
    await em()
  ).transactional(async (tx) => {
    await tx.execute('set local enable_seqscan = off');
    const plan = await tx.execute(
      `explain (format json) select count(*) from notifications where user_id = ? and workspace_id = ? and read_at is null`,
      [u.id, ws],
    );
    return JSON.stringify(plan);
  });
  // The partial index serves it (index-only once the table is vacuumed; before that the planner may
  // take a plain or bitmap scan of the same index): never a scan of the table.
  t.regex(text, /"Index Name":"notifications_unread_index"/, text);
  t.notRegex(text, /Seq Scan/, text);
});

test('preferences decide: none → no notification; email → listed and mailed by the notification-emails workflow (which replays)', async (t) => {
  const { owner, member, workspaceId } = await team();
  t.like((await setPrefs(member, { account_disconnected: 'none' })).body, {
    account_disconnected: 'none',
    reply_received: 'in_app',
  });
  t.like((await setPrefs(owner, { account_disconnected: 'email' })).body, { account_disconnected: 'email' });
  await disconnect(workspaceId, 'Outbound box');
  t.is(await unread(member, owner), 0, 'the member chose none');
  const [n] = (await list(owner)).body.items;
  t.like(n, { kind: 'account.disconnected', title: 'Outbound box is disconnected' });
  const row = (await (await em()).execute(`select email_state from notifications where id = ?`, [n.id]))[0] as {
    email_state: string;
  };
  t.is(row.email_state, 'pending');

  const { services } = await api();
  const workflowId = `notification-emails:test-${randomUUID()}`;
  const r = await services.temporal.workflow.execute(notificationEmails, {
    taskQueue,
    workflowId,
    workflowExecutionTimeout: '2 minutes',
  });
  t.true(r.sent >= 1);
  const mail = await lastEmailTo(owner.email);
  t.truthy(mail);
  t.is(mail!.subject, 'Outbound box is disconnected');
  t.regex(mail!.text, /was disconnected \(credentials_expired\)/);
  const after = (
    await (await em()).execute(`select email_state, emailed_at from notifications where id = ?`, [n.id])
  )[0] as { email_state: string; emailed_at: Date | null };
  t.is(after.email_state, 'sent');
  t.truthy(after.emailed_at);
  // Sent once: a second run finds nothing of ours.
  await services.temporal.workflow.execute(notificationEmails, {
    taskQueue,
    workflowId: `${workflowId}-again`,
    workflowExecutionTimeout: '2 minutes',
  });
  t.is(
    (
      (await (await em()).execute(`select count(*)::int as n from sent_emails where "to" = ?`, [owner.email])) as {
        n: number;
      }[]
    )[0].n,
    1,
  );
  await replayLive(services.temporal, workflowId);
  await replayFixture(services.temporal, 'notificationEmails', workflowId);
});

test('a notification about a campaign goes only to members who can access its product', async (t) => {
  const owner = await createOwner();
  const o = await campaignOwner(owner);
  const otherApp = await createTestApp(owner, 'Other product');
  const scoped = await createUser('Scoped');
  const outsider = await createUser('Outsider');
  await addTeamMember(owner.id, scoped.id, { appIds: [o.app.id] });
  await addTeamMember(owner.id, outsider.id, { appIds: [otherApp.id] });
  const { id: campaignId } = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [], steps: [] });
  const written = await notify(await em(), o.workspaceId, {
    kind: 'draft_review_overdue',
    title: 'A message is waiting',
    body: 'Review it',
    data: { campaign_id: campaignId, action_id: uuidv7() },
  });
  t.is(written, 2, 'owner and the member with access to the product');
  t.is(await unread(owner), 1);
  t.is(await unread(scoped, owner), 1);
  t.is(await unread(outsider, owner), 0);
});

test('a reply notifies every member once per conversation, named after the lead; the batch processed again notifies nobody twice', async (t) => {
  const { owner, member } = await team();
  const o = await campaignOwner(owner);
  const account = await fastAccount(owner, 'email');
  const [lead] = await o.leads(1);
  await sandboxInjectMessage(await em(), account.connector_account_id, {
    from: lead.email,
    body: 'Interested, what does it cost?',
  });
  await deliverFor(account.connector_account_id);
  await waitFor('the reply notification', async () => (await unread(owner)) > 0, 60_000);
  const [n] = (await list(owner)).body.items;
  t.like(n, {
    kind: 'reply.received',
    title: 'Grace Hopper replied',
    body: 'Interested, what does it cost?',
    data: { lead_id: lead.leadId, replies: 1 },
  });
  t.truthy(n.data.conversation_id);
  t.like((await list(member, '', owner)).body.items, [{ kind: 'reply.received', title: 'Grace Hopper replied' }]);
  // The same fact again (a retried batch): keyed by the message, nothing new.
  const { notifyReplies } = await import('../../domain/notifications/notifications.js');
  const again = await notifyReplies(await em(), o.workspaceId, [
    {
      id: n.data.message_id,
      conversation_id: n.data.conversation_id,
      lead_id: lead.leadId,
      sender: lead.email,
      body: 'Interested, what does it cost?',
      sent_at: new Date().toISOString(),
    },
  ]);
  t.is(again, 0);
  t.is((await list(owner)).body.items.length, 1);
});

test('a finished list import notifies the person who started it (not the rest of the team)', async (t) => {
  const { owner, member } = await team();
  const app = await createTestApp(owner);
  const tag = randomUUID().slice(0, 8);
  const r = await postCsv(member, importPath(app.id), peopleCsv(3, tag), {
    fields: { list_name: `Fair ${tag}` },
    headers: { 'x-acting-as': owner.id },
  });
  t.is(r.status, 202, r.text);
  await waitImport(owner, app.id, r.body.id);
  await waitFor('the import notification', async () => (await unread(member, owner)) > 0, 30_000);
  const [n] = (await list(member, '', owner)).body.items;
  t.like(n, {
    kind: 'list_import.completed',
    data: { list_import_id: r.body.id, status: 'completed', leads_added: 3 },
  });
  t.regex(n.body, /3 leads added into "Fair /);
  t.is(await unread(owner), 0, 'the owner did not start it');
});

test('a pending Operator confirmation notifies its user; a finished Operator task too', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const agent = (await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Scout' } }))
    .body;
  const ws = await workspaceIdOf(u.id);
  const leadId = uuidv7();
  await (
    await em()
  ).execute(
    `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, profile_url,
       full_name, evidence, score, reasons, status, promoted, created_at, updated_at)
     values (?, ?, ?, ?, 'sig', ?, 'pronet', ?, ?, ?, 'Ada Lovelace', '{}', 80, '[]', 'new', false, now(), now())`,
    [leadId, ws, app.id, agent.id, leadId.slice(0, 32), leadId, `k:${leadId}`, `https://pronet.example/in/${leadId}`],
  );
  const r = await postSse('/api/agent/messages', u.accessToken, {
    app_id: app.id,
    message: `reject discovered lead ${leadId} reason: "not a fit"`,
  });
  const approval = r.events.find((e) => e.event === 'approval_required');
  t.truthy(approval, r.events.map((e) => e.event).join(','));
  const [n] = (await list(u, '?unread=true')).body.items;
  t.like(n, {
    kind: 'operator.confirmation_pending',
    data: { confirmation_id: approval!.data.confirmation_id, app_id: app.id },
  });

  const { createTask } = await import('../../domain/operator/tasks.js');
  const { services } = await api();
  const actor = await resolveActor(await em(), { userId: u.id, kind: 'session' }, undefined);
  const task = await createTask(await em(), actor, services.jobs, {
    appId: app.id,
    title: 'Make lists',
    actions: [{ tool: 'create_lead_list', args: { app_id: app.id, name: `L ${randomUUID()}` } }],
  });
  await waitFor(
    'the task notification',
    async () => (await list(u)).body.items.some((x: { kind: string }) => x.kind.startsWith('operator_task.')),
    60_000,
  );
  const done = (await list(u)).body.items.find((x: { kind: string }) => x.kind.startsWith('operator_task.'));
  t.like(done, { kind: 'operator_task.completed', title: 'Task finished: Make lists', data: { task_id: task.id } });
});

test('Operator tools: list_notifications reads the caller’s, mark_notifications_read marks given ids or all', async (t) => {
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  for (const title of ['a', 'b', 'c'])
    await notify(await em(), ws, { kind: 'account.disconnected', title, body: title, data: {} });
  const { services } = await api();
  const ctx = {
    em: await em(),
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(await em(), { userId: u.id, kind: 'session' }, undefined),
  };
  const listed = (await runTool(findTool('list_notifications')!, ctx, { unread_only: true })) as {
    unread: number;
    notifications: { id: string; title: string }[];
  };
  t.is(listed.unread, 3);
  t.deepEqual(
    listed.notifications.map((n) => n.title),
    ['c', 'b', 'a'],
  );
  t.is(findTool('mark_notifications_read')!.risk, 'change');
  t.deepEqual(
    await runTool(findTool('mark_notifications_read')!, ctx, {
      notification_ids: [listed.notifications[0].id, uuidv7()],
    }),
    { marked: 1, unread: 2 },
  );
  t.deepEqual(await runTool(findTool('mark_notifications_read')!, ctx, { all: true }), { marked: 2, unread: 0 });
  await t.throwsAsync(runTool(findTool('mark_notifications_read')!, ctx, {}));
});
