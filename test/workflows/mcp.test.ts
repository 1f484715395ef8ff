// The `mcp-approval:<id>` workflow (docs/mcp.md): an approved call runs once; an unapproved request
// expires on its durable timer; an approval whose signal was lost still runs when the timer fires.
// Replay tests pin the histories.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { api, call, closeApi, createTestApp } from '../helpers/api.js';
import { createOwner, workspaceIdOf } from '../helpers/billing.js';
import { replayFixture } from '../helpers/replay.js';
import { argsHash } from '../../domain/mcp/approvals.js';
import { mcpWorkflowIds } from '../../lib/workflow-ids.js';

test.after.always(closeApi);

/** A registered client, a grant and an approval row for `user`, as a tool call over MCP leaves them. */
async function approvalRow(userId: string, args: Record<string, unknown>, expiresInMs: number, status = 'pending') {
  const { services } = await api();
  const conn = services.orm.em.fork().getConnection();
  const workspaceId = await workspaceIdOf(userId);
  const [client] = await conn.execute(
    `insert into mcp_clients (id, client_name, redirect_uris, created_at) values (gen_random_uuid(), 'Replay client', '[]', now()) returning id`,
  );
  const [grant] = await conn.execute(
    `insert into mcp_grants (id, client_id, user_id, workspace_id, scope, resource, redirect_uri, code_hash, code_challenge, code_expires_at, created_at)
     values (gen_random_uuid(), ?, ?, ?, 'mcp', 'http://x/mcp', 'http://127.0.0.1/cb', ?, 'c', now(), now()) returning id`,
    [client.id, userId, workspaceId, randomBytes(32).toString('hex')],
  );
  const expiresAt = new Date(Date.now() + expiresInMs);
  const [row] = await conn.execute(
    `insert into mcp_approvals (id, workspace_id, user_id, client_id, grant_id, tool_name, risk, args, args_hash, status, expires_at, created_at)
     values (gen_random_uuid(), ?, ?, ?, ?, 'create_lead_list', 'change', ?::jsonb, ?, ?, ?, now()) returning id`,
    [workspaceId, userId, client.id, grant.id, JSON.stringify(args), argsHash(args), status, expiresAt],
  );
  await services.jobs.start('mcp-approval', { approvalId: row.id, workspaceId, expiresAt: expiresAt.toISOString() });
  return { id: row.id as string, workflowId: mcpWorkflowIds.approval(row.id) };
}

const statusOf = async (id: string) => {
  const { services } = await api();
  const [r] = await services.orm.em
    .fork()
    .getConnection()
    .execute(`select status, result from mcp_approvals where id = ?`, [id]);
  return r as { status: string; result: { status: string; result: any } | null };
};

test('approved through the REST route: the workflow runs the call exactly once (replayed)', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const { services } = await api();
  const a = await approvalRow(u.id, { app_id: app.id, name: 'Approved list' }, 10 * 60_000);
  const r = await call('POST', '/api/mcp/approvals/approve', { token: u.accessToken, body: { approval_id: a.id } });
  t.is(r.status, 200);
  t.is(await services.temporal.workflow.getHandle(a.workflowId).result(), 'executed');
  const row = await statusOf(a.id);
  t.is(row.status, 'executed');
  t.is(row.result!.result.name, 'Approved list');
  t.is((await call('GET', `/api/apps/${app.id}/lists`, { token: u.accessToken })).body.items.length, 1);
  await replayFixture(services.temporal, 'mcpApproval', a.workflowId);
});

test('not approved in time: the timer expires the request and nothing runs (replayed)', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const { services } = await api();
  const a = await approvalRow(u.id, { app_id: app.id, name: 'Never' }, 1500);
  t.is(await services.temporal.workflow.getHandle(a.workflowId).result(), 'expired');
  t.is((await statusOf(a.id)).status, 'expired');
  t.is((await call('GET', `/api/apps/${app.id}/lists`, { token: u.accessToken })).body.items.length, 0);
  const late = await call('POST', '/api/mcp/approvals/approve', { token: u.accessToken, body: { approval_id: a.id } });
  t.is(late.status, 409);
  await replayFixture(services.temporal, 'mcpApproval-expired', a.workflowId);
});

test('an approval whose signal was lost still runs once when the timer fires', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const { services } = await api();
  // The row says approved (as the route commits it) but no signal reaches the workflow.
  const a = await approvalRow(u.id, { app_id: app.id, name: 'Lost signal' }, 1500, 'approved');
  t.is(await services.temporal.workflow.getHandle(a.workflowId).result(), 'executed');
  t.is((await statusOf(a.id)).status, 'executed');
  t.is((await call('GET', `/api/apps/${app.id}/lists`, { token: u.accessToken })).body.items.length, 1);
});
