// The AI tools of the Operator's registry run through the same domain functions as REST.
import test from 'ava';
import { findTool } from '../../domain/tools/index.js';
import { needsConfirmation, runTool } from '../../domain/tools/registry.js';
import { AppError } from '../../domain/errors.js';
import { resolveActor } from '../../domain/workspaces.js';
import { api, call, closeApi, createTestApp } from '../helpers/api.js';
import { createOwner } from '../helpers/billing.js';
test.after.always(closeApi);

test('AI tools: risks, keywords stored on the agent, suggestions, runs listed; another workspace’s agent is not found', async (t) => {
  t.is(findTool('generate_agent_keywords')?.risk, 'change');
  t.is(findTool('generate_newsforum_queries')?.risk, 'change');
  for (const name of ['analyze_product_text', 'propose_product_icp', 'list_specialist_runs'])
    t.false(needsConfirmation(findTool(name)!), name);

  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  await call('PUT', `/api/apps/${app.id}`, {
    token: u.accessToken,
    body: { description: 'Scheduling software for dental clinics in Spain.' },
  });
  const agent = (
    await call('POST', `/api/apps/${app.id}/agents`, {
      token: u.accessToken,
      body: { name: 'Scout', icp_description: 'Dental clinic owners' },
    })
  ).body;
  const ctx = {
    em: services.orm.em.fork(),
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(services.orm.em.fork() as never, { userId: u.id, kind: 'session' }, undefined),
  };

  const kw = (await runTool(findTool('generate_agent_keywords')!, ctx, { agent_id: agent.id })) as {
    keywords: string;
    stored: boolean;
  };
  t.true(kw.stored);
  t.is((await call('GET', `/api/agents/${agent.id}`, { token: u.accessToken })).body.keywords, kw.keywords);
  const q = (await runTool(findTool('generate_newsforum_queries')!, ctx, { agent_id: agent.id })) as {
    queries: string[];
  };
  t.true(q.queries.length > 0);
  const icp = (await runTool(findTool('propose_product_icp')!, ctx, { app_id: app.id })) as { icp_filters: object };
  t.truthy(icp.icp_filters);
  const s = (await runTool(findTool('analyze_product_text')!, ctx, {
    text: 'Acme helps clinics fill empty slots.',
    app_id: app.id,
  })) as { name: string };
  t.truthy(s.name);
  const listed = (await runTool(findTool('list_specialist_runs')!, ctx, { app_id: app.id })) as { kind: string }[];
  t.deepEqual(listed.map((r) => r.kind).sort(), ['icp', 'icp', 'keywords', 'product_profile', 'queries']);

  const other = await createOwner();
  const otherCtx = {
    em: services.orm.em.fork(),
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(services.orm.em.fork() as never, { userId: other.id, kind: 'session' }, undefined),
  };
  const nf = await t.throwsAsync(runTool(findTool('generate_agent_keywords')!, otherCtx, { agent_id: agent.id }));
  t.true(nf instanceof AppError && nf.status === 404);
});
