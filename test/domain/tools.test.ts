// The Operator's tool registry: one table of actions, validated input, ownership through `domain`.
import test from 'ava';
import { ZodError } from 'zod';
import { allTools, findTool } from '../../domain/tools/index.js';
import { needsConfirmation, RISKS, runTool } from '../../domain/tools/registry.js';
import { AppError } from '../../domain/errors.js';
import { resolveActor } from '../../domain/workspaces.js';
import { api, call, createTestApp, closeApi } from '../helpers/api.js';
import { createOwner } from '../helpers/billing.js';
import { discoveryWorkflowIds } from '../../workflows/ids.js';
test.after.always(closeApi);

test('every tool has a unique snake_case name, a description, a known risk and an object input schema', (t) => {
  const tools = allTools();
  t.true(tools.length >= 5);
  t.is(new Set(tools.map((x) => x.name)).size, tools.length);
  for (const tool of tools) {
    t.regex(tool.name, /^[a-z][a-z0-9_]*$/);
    t.true(tool.description.length > 10, tool.name);
    t.true((RISKS as readonly string[]).includes(tool.risk), tool.name);
    t.is(needsConfirmation(tool), tool.risk !== 'read');
  }
  t.is(findTool('list_agents')?.risk, 'read');
  t.is(findTool('set_agent_status')?.risk, 'change');
});

test('tools run as the caller, through the domain rules: ownership, transitions and input validation', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  const agent = (await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Scout' } })).body;
  const em = services.orm.em.fork();
  const ctx = { em, jobs: services.jobs, actor: await resolveActor(em as never, { userId: u.id, kind: 'session' }, undefined) };
  const listed = (await runTool(findTool('list_agents')!, ctx, { app_id: app.id })) as { id: string }[];
  t.deepEqual(listed.map((a) => a.id), [agent.id]);
  await runTool(findTool('set_agent_signals')!, ctx, { agent_id: agent.id, signals: [{ kind: 'hiring', name: 'Hiring' }] });
  const active = (await runTool(findTool('set_agent_status')!, ctx, { agent_id: agent.id, status: 'active' })) as { status: string };
  t.is(active.status, 'active');
  const bad = await t.throwsAsync(runTool(findTool('set_agent_status')!, ctx, { agent_id: agent.id, status: 'draft' }));
  t.true(bad instanceof AppError && bad.code === 'invalid_transition');
  await t.throwsAsync(runTool(findTool('get_agent')!, ctx, { agent_id: 'nope' }), { instanceOf: ZodError });
  // Another workspace's agent is not found, as over REST.
  const other = await createOwner();
  const otherCtx = { em: services.orm.em.fork(), jobs: services.jobs, actor: await resolveActor(services.orm.em.fork() as never, { userId: other.id, kind: 'session' }, undefined) };
  const nf = await t.throwsAsync(runTool(findTool('get_agent')!, otherCtx, { agent_id: agent.id }));
  t.true(nf instanceof AppError && nf.status === 404);
});

test('launch_discovery starts the same workflow as REST; get_discovery_funnel and list_recent_runs read what it produced', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  await call('PUT', `/api/apps/${app.id}`, { token: u.accessToken, body: { icp_description: 'Engineering leaders', icp_filters: { titles: ['CTO', 'Software Engineer'], keywords: ['kubernetes'] } } });
  const agent = (await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Scout', max_signals: 5 } })).body;
  await call('PUT', `/api/agents/${agent.id}/signals`, { token: u.accessToken, body: { signals: [{ kind: 'people_search', name: 'People' }] } });
  await call('PUT', `/api/agents/${agent.id}/sources/pronet`, { token: u.accessToken, body: { enabled: true } });
  const em = services.orm.em.fork();
  const ctx = { em, jobs: services.jobs, actor: await resolveActor(em as never, { userId: u.id, kind: 'session' }, undefined) };
  const tool = findTool('launch_discovery')!;
  t.is(tool.risk, 'spend');
  const launched = (await runTool(tool, ctx, { agent_id: agent.id })) as { run_id: string };
  await services.temporal.workflow.getHandle(discoveryWorkflowIds.run(agent.id, launched.run_id)).result();
  const f = (await runTool(findTool('get_discovery_funnel')!, { ...ctx, em: services.orm.em.fork() }, { agent_id: agent.id })) as { cohort: { qualified: number; candidates: number; rejected: number; pending: number } };
  t.is(f.cohort.qualified, 5);
  t.is(f.cohort.candidates, f.cohort.qualified + f.cohort.rejected + f.cohort.pending);
  const runs = (await runTool(findTool('list_recent_runs')!, { ...ctx, em: services.orm.em.fork() }, {})) as { id: string; status: string }[];
  t.like(runs[0], { id: launched.run_id, status: 'completed' });
});

test('list tools: create a list and see it listed with its size; names are unique per product', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  const em = services.orm.em.fork();
  const ctx = { em, jobs: services.jobs, actor: await resolveActor(em as never, { userId: u.id, kind: 'session' }, undefined) };
  const created = (await runTool(findTool('create_lead_list')!, ctx, { app_id: app.id, name: 'Founders' })) as { id: string; lead_count: number };
  t.is(created.lead_count, 0);
  const lists = (await runTool(findTool('list_lead_lists')!, { ...ctx, em: services.orm.em.fork() }, { app_id: app.id })) as { id: string }[];
  t.deepEqual(lists.map((l) => l.id), [created.id]);
  const dup = await t.throwsAsync(runTool(findTool('create_lead_list')!, { ...ctx, em: services.orm.em.fork() }, { app_id: app.id, name: 'founders' }));
  t.true(dup instanceof AppError && dup.status === 409);
});
