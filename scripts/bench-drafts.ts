// `npm run bench:drafts`: AI-written drafts for a 2,000-lead campaign (`BENCH_LEADS`) with the local
// model. The campaign has one `ai` invitation step (review policy `none`) and one planned action per
// lead, written directly (no enrollment workflows: the bench measures the writing). The generation goes
// through `POST /api/campaigns/{id}/message-review/drafts/generate`, served by the API in this process;
// the `drafts:<campaignId>:<operationId>` workflow runs on a worker in this process, on its own task
// queue. Prints drafts per second from the request to the operation's completion (goal ≥ 200/s).
// Own database (`outreach_<BENCH_DB_SUFFIX>`, default `outreach_bench_drafts`) and Redis database 3.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  benchApiOwner,
  benchStack,
  dropBenchOwner,
  seedCampaign,
  seedEnrollments,
  seedLeads,
  startApi,
} from './bench-fixtures.js';

const LEADS = Number(process.env.BENCH_LEADS ?? 2_000);
const { stack, log } = await benchStack('drafts', {
  suffix: process.env.BENCH_DB_SUFFIX ?? 'bench_drafts',
  redisDb: 3,
});

const { createWorker } = await import('../workers/worker.js');
const { createList } = await import('../domain/lists/lists.js');
const { grantCredits } = await import('../domain/billing/credits.js');

const { services, base, close } = await startApi();
const w = await createWorker();
const running = w.worker.run();
let benchUser: string | undefined;
try {
  const em = services.orm.em.fork() as EntityManager;
  const { actor, app, token: secret } = await benchApiOwner(em);
  benchUser = actor.userId;
  const ws = actor.workspaceId;
  await grantCredits(em, ws, LEADS * 2, { reason: 'bench', source: 'admin' });
  const list = await createList(em, actor, app.id, { name: 'Bench drafts list' });
  await em.execute(
    `update apps set value_proposition = 'outreach that books meetings without the busywork' where id = ?`,
    [app.id],
  );
  log(`seeding ${LEADS} leads, enrollments and planned actions`);
  await seedLeads(em, { workspaceId: ws, listId: list.id, count: LEADS, profiles: true });
  const { campaignId, stepId } = await seedCampaign(em, {
    workspaceId: ws,
    appId: app.id,
    name: 'Bench drafts',
    messageMode: 'ai',
    reviewPolicy: { mode: 'none' },
    step: {
      type: 'invitation',
      config: { note: 'Hi {{first_name}}, would love to connect about outreach' },
      messageMode: 'ai',
    },
  });
  await seedEnrollments(em, { workspaceId: ws, campaignId, listId: list.id });
  await em.execute(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, account_id, content, attempts, created_at, updated_at)
     select gen_random_uuid(), ?, ?, e.id, e.lead_id, ?, 0, 1, 'invitation', 'planned', now() + interval '1 day', null,
            jsonb_build_object('recipient', c.profile_url), 0, now(), now()
       from enrollments e join contacts c on c.id = e.contact_id where e.campaign_id = ?`,
    [ws, campaignId, stepId, campaignId],
  );

  const started = performance.now();
  const body = JSON.stringify({ client_key: 'bench', scope: 'missing' });
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const post = async () =>
    (
      await fetch(`${base}/api/campaigns/${campaignId}/message-review/drafts/generate`, {
        method: 'POST',
        headers,
        body,
      })
    ).json() as Promise<{
      status: string;
      processed: number;
      total: number;
      written: number;
      failed: number;
      credits: number;
    }>;
  let op = await post();
  let lastLog = 0;
  while (!['completed', 'failed'].includes(op.status)) {
    await new Promise((r) => setTimeout(r, 100));
    op = await post();
    if (performance.now() - lastLog > 5000) {
      lastLog = performance.now();
      log(`${((performance.now() - started) / 1000).toFixed(0)} s: ${op.processed} of ${op.total}`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const rate = op.written / seconds;
  console.log(`bench:drafts — ${LEADS.toLocaleString('en')} leads, one ai invitation step, local model, policy none`);
  console.log(
    `  operation ${op.status}: ${op.written} written, ${op.failed} failed, ${op.credits} credits in ${seconds.toFixed(2)} s`,
  );
  console.log(
    `  drafts/s (request → completed): ${rate.toFixed(0)} /s   (goal ≥ 200/s: ${rate >= 200 ? 'met' : 'MISSED'})`,
  );
} finally {
  await dropBenchOwner(services.orm.em.fork() as EntityManager, benchUser, log);
  w.worker.shutdown();
  await running.catch(() => undefined);
  await w.close();
  await close();
  if (process.env.CI) await stack.stop();
}
process.exit(0);
