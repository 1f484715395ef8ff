// The Operator's tool registry: one table of actions, validated input, ownership through `domain`.
import test from 'ava';
import { ZodError } from 'zod';
import { allTools, findTool } from '../../domain/tools/index.js';
import { needsConfirmation, requiresAppId, RISKS, runTool } from '../../domain/tools/registry.js';
import { AppError } from '../../domain/errors.js';
import { resolveActor } from '../../domain/workspaces.js';
import { api, call, createTestApp, closeApi } from '../helpers/api.js';
import { createOwner } from '../helpers/billing.js';
import { discoveryWorkflowIds } from '../../lib/workflow-ids.js';
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
  const agent = (await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Scout' } }))
    .body;
  const em = services.orm.em.fork();
  const ctx = {
    em,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(em as never, { userId: u.id, kind: 'session' }, undefined),
  };
  const listed = (await runTool(findTool('list_agents')!, ctx, { app_id: app.id })) as { id: string }[];
  t.deepEqual(
    listed.map((a) => a.id),
    [agent.id],
  );
  await runTool(findTool('set_agent_signals')!, ctx, {
    agent_id: agent.id,
    signals: [{ kind: 'hiring', name: 'Hiring' }],
  });
  const active = (await runTool(findTool('set_agent_status')!, ctx, { agent_id: agent.id, status: 'active' })) as {
    status: string;
  };
  t.is(active.status, 'active');
  const bad = await t.throwsAsync(runTool(findTool('set_agent_status')!, ctx, { agent_id: agent.id, status: 'draft' }));
  t.true(bad instanceof AppError && bad.code === 'invalid_transition');
  await t.throwsAsync(runTool(findTool('get_agent')!, ctx, { agent_id: 'nope' }), { instanceOf: ZodError });
  // Another workspace's agent is not found, as over REST.
  const other = await createOwner();
  const otherCtx = {
    em: services.orm.em.fork(),
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(services.orm.em.fork() as never, { userId: other.id, kind: 'session' }, undefined),
  };
  const nf = await t.throwsAsync(runTool(findTool('get_agent')!, otherCtx, { agent_id: agent.id }));
  t.true(nf instanceof AppError && nf.status === 404);
});

test('launch_discovery starts the same workflow as REST; get_discovery_funnel and list_recent_runs read what it produced', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  await call('PUT', `/api/apps/${app.id}`, {
    token: u.accessToken,
    body: {
      icp_description: 'Engineering leaders',
      icp_filters: { titles: ['CTO', 'Software Engineer'], keywords: ['kubernetes'] },
    },
  });
  const agent = (
    await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Scout', max_signals: 5 } })
  ).body;
  await call('PUT', `/api/agents/${agent.id}/signals`, {
    token: u.accessToken,
    body: { signals: [{ kind: 'people_search', name: 'People' }] },
  });
  await call('PUT', `/api/agents/${agent.id}/sources/pronet`, { token: u.accessToken, body: { enabled: true } });
  const em = services.orm.em.fork();
  const ctx = {
    em,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(em as never, { userId: u.id, kind: 'session' }, undefined),
  };
  const tool = findTool('launch_discovery')!;
  t.is(tool.risk, 'spend');
  const launched = (await runTool(tool, ctx, { agent_id: agent.id })) as { run_id: string };
  await services.temporal.workflow.getHandle(discoveryWorkflowIds.run(agent.id, launched.run_id)).result();
  const f = (await runTool(
    findTool('get_discovery_funnel')!,
    { ...ctx, em: services.orm.em.fork() },
    { agent_id: agent.id },
  )) as { cohort: { qualified: number; candidates: number; rejected: number; pending: number } };
  t.is(f.cohort.qualified, 5);
  t.is(f.cohort.candidates, f.cohort.qualified + f.cohort.rejected + f.cohort.pending);
  const runs = (await runTool(findTool('list_recent_runs')!, { ...ctx, em: services.orm.em.fork() }, {})) as {
    id: string;
    status: string;
  }[];
  t.like(runs[0], { id: launched.run_id, status: 'completed' });
});

test('list tools: create a list and see it listed with its size; names are unique per product', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  const em = services.orm.em.fork();
  const ctx = {
    em,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(em as never, { userId: u.id, kind: 'session' }, undefined),
  };
  const created = (await runTool(findTool('create_lead_list')!, ctx, { app_id: app.id, name: 'Founders' })) as {
    id: string;
    lead_count: number;
  };
  t.is(created.lead_count, 0);
  const lists = (await runTool(
    findTool('list_lead_lists')!,
    { ...ctx, em: services.orm.em.fork() },
    { app_id: app.id },
  )) as { id: string }[];
  t.deepEqual(
    lists.map((l) => l.id),
    [created.id],
  );
  const dup = await t.throwsAsync(
    runTool(
      findTool('create_lead_list')!,
      { ...ctx, em: services.orm.em.fork() },
      { app_id: app.id, name: 'founders' },
    ),
  );
  t.true(dup instanceof AppError && dup.status === 409);
});

test('with a product in the context (an Operator thread’s or task’s), a tool that requires app_id defaults to it; optional app_id keeps meaning all products', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  const other = await createTestApp(u, 'Other');
  const agent = (await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Scout' } }))
    .body;
  const otherAgent = (
    await call('POST', `/api/apps/${other.id}/agents`, { token: u.accessToken, body: { name: 'Elsewhere' } })
  ).body;
  const actor = await resolveActor(services.orm.em.fork() as never, { userId: u.id, kind: 'session' }, undefined);
  const ctx = (appId?: string) => ({
    em: services.orm.em.fork(),
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor,
    ...(appId ? { appId } : {}),
  });
  const ids = (v: unknown) => (v as { id: string }[]).map((a) => a.id);

  t.true(requiresAppId(findTool('list_agents')!));
  t.true(requiresAppId(findTool('create_lead_list')!));
  t.false(requiresAppId(findTool('list_lead_lists')!));
  t.false(requiresAppId(findTool('get_agent')!));

  // Without a product in the context app_id is required, as before (MCP).
  await t.throwsAsync(runTool(findTool('list_agents')!, ctx(), {}), { instanceOf: ZodError });
  // With one, it is the default; an explicit app_id still wins.
  t.deepEqual(ids(await runTool(findTool('list_agents')!, ctx(app.id), {})), [agent.id]);
  t.deepEqual(ids(await runTool(findTool('list_agents')!, ctx(app.id), undefined)), [agent.id]);
  t.deepEqual(ids(await runTool(findTool('list_agents')!, ctx(app.id), { app_id: other.id })), [otherAgent.id]);
  const list = (await runTool(findTool('create_lead_list')!, ctx(other.id), { name: 'Founders' })) as {
    app_id: string;
  };
  t.is(list.app_id, other.id);
  // A tool whose app_id is optional still lists every product without one.
  const lists = (await runTool(findTool('list_lead_lists')!, ctx(app.id), {})) as { app_id: string }[];
  t.true(lists.some((l) => l.app_id === other.id));
  // The product still goes through the ownership rules: another workspace's product is not found.
  const stranger = await createOwner();
  const strangerApp = await createTestApp(stranger);
  const nf = await t.throwsAsync(runTool(findTool('list_agents')!, ctx(strangerApp.id), {}));
  t.true(nf instanceof AppError && nf.status === 404, String(nf));

  // create_task: actions that leave app_id out are stored with the task's product.
  const task = (await runTool(findTool('create_task')!, ctx(app.id), {
    title: 'Look around',
    actions: [{ tool: 'list_agents', args: {} }, { tool: 'list_lead_lists' }],
  })) as { id: string; app_id: string };
  t.is(task.app_id, app.id);
  const stored = await services.orm.em
    .fork()
    .execute<{ tool: string; args: Record<string, unknown> }[]>(
      `select tool, args from operator_task_actions where task_id = ? order by position`,
      [task.id],
    );
  t.deepEqual(
    stored.map((a) => [a.tool, a.args]),
    [
      ['list_agents', { app_id: app.id }],
      ['list_lead_lists', {}],
    ],
  );
});
