// `npm run bench:drafts`: AI-written drafts for a 2,000-lead campaign (`BENCH_LEADS`) with the local
// model. The campaign has one `ai` invitation step (review policy `none`) and one planned action per
// lead, written directly (no enrollment workflows: the bench measures the writing). The generation goes
// through `POST /api/campaigns/{id}/message-review/drafts/generate`, served by the API in this process;
// the `drafts:<campaignId>:<operationId>` workflow runs on a worker in this process, on its own task
// queue. Prints drafts per second from the request to the operation's completion (goal ≥ 200/s).
// Own database (`outreach_<BENCH_DB_SUFFIX>`, default `outreach_bench_drafts`) and Redis database 3.
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { stackWithSchema } from './stack-env.js';

const LEADS = Number(process.env.BENCH_LEADS ?? 2_000);
const log = (msg: string) => console.error(`[bench:drafts] ${msg}`);
const { stack, env } = await stackWithSchema(log, { suffix: process.env.BENCH_DB_SUFFIX ?? 'bench_drafts', redisDb: 3 });
Object.assign(process.env, env, { TEMPORAL_TASK_QUEUE: `bench-drafts-${process.pid}`, TEMPORAL_SCHEDULES: 'off', WEBHOOK_DISPATCHER: 'off', LOG_LEVEL: 'warn' });

const { createServices } = await import('../api/services-factory.js');
const { createApp } = await import('../api/app.js');
const { createWorker } = await import('../workers/worker.js');
const { benchOwner } = await import('./bench-fixtures.js');
const { createToken } = await import('../domain/api-tokens.js');
const { createList } = await import('../domain/lists.js');
const { grantCredits } = await import('../domain/credits.js');
const { uuidv7 } = await import('../lib/ids.js');

const services = await createServices();
const server = createApp(services).listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const w = await createWorker();
const running = w.worker.run();
let benchUser: string | undefined;
try {
  const em = services.orm.em.fork() as EntityManager;
  const { actor, app } = await benchOwner(em);
  benchUser = actor.userId;
  const ws = actor.workspaceId;
  await grantCredits(em, ws, LEADS * 2, { reason: 'bench', source: 'admin' });
  const { secret } = await createToken(em, actor.userId, 'bench');
  const list = await createList(em, actor, app.id, { name: 'Bench drafts list' });
  await em.execute(`update apps set value_proposition = 'outreach that books meetings without the busywork' where id = ?`, [app.id]);
  log(`seeding ${LEADS} leads, enrollments and planned actions`);
  await em.execute(
    `insert into contacts (id, workspace_id, email, email_normalised, profile_url, profile_url_normalised, first_name, last_name, company, created_at, updated_at)
     select gen_random_uuid(), ?, 'p' || i || '@company.example', 'p' || i || '@company.example', 'https://pronet.example/in/bench-' || i, 'pronet.example/in/bench-' || i,
            'First' || i, 'Last' || i, 'Company ' || (i % 997), now(), now() from generate_series(1, ?) as i`,
    [ws, LEADS],
  );
  await em.execute(`insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at) select gen_random_uuid(), ?, ?, c.id, 'import', now(), now() from contacts c where c.workspace_id = ?`, [ws, list.id, ws]);
  const campaignId = uuidv7();
  const stepId = uuidv7();
  await em.execute(
    `insert into campaigns (id, workspace_id, app_id, name, status, time_zone, sending_windows, account_ids, rotation, daily_new_lead_cap, stop_on_reply, country_rule,
       review_required, message_mode, exclusive_leads, step_version, review_policy, created_at, updated_at)
     values (?, ?, ?, 'Bench drafts', 'active', 'UTC', '{}'::jsonb, '[]'::jsonb, 'round_robin', null, true, null, false, 'ai', false, 1, '{"mode":"none"}'::jsonb, now(), now())`,
    [campaignId, ws, app.id],
  );
  const step = { id: stepId, position: 0, type: 'invitation', config: { note: 'Hi {{first_name}}, would love to connect about outreach' }, messageMode: 'ai', hasAttachment: false };
  await em.execute(`insert into campaign_steps (id, campaign_id, position, type, config, message_mode, created_at, updated_at) values (?, ?, 0, 'invitation', ?::jsonb, 'ai', now(), now())`, [stepId, campaignId, JSON.stringify(step.config)]);
  await em.execute(`insert into campaign_step_versions (campaign_id, version, steps, created_at) values (?, 1, ?::jsonb, now())`, [campaignId, JSON.stringify([step])]);
  await em.execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at)
     select gen_random_uuid(), ?, ?, l.id, l.contact_id, 'active', 1, 1, now(), now(), now() from leads l where l.list_id = ?`,
    [ws, campaignId, list.id],
  );
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
  const post = async () => (await fetch(`${base}/api/campaigns/${campaignId}/message-review/drafts/generate`, { method: 'POST', headers, body })).json() as Promise<{ status: string; processed: number; total: number; written: number; failed: number; credits: number }>;
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
  console.log(`  operation ${op.status}: ${op.written} written, ${op.failed} failed, ${op.credits} credits in ${seconds.toFixed(2)} s`);
  console.log(`  drafts/s (request → completed): ${rate.toFixed(0)} /s   (goal ≥ 200/s: ${rate >= 200 ? 'met' : 'MISSED'})`);
} finally {
  if (benchUser) await services.orm.em.fork().execute('delete from users where id = ?', [benchUser]).catch((err) => log(`cleanup: ${String(err)}`));
  server.close();
  w.worker.shutdown();
  await running.catch(() => undefined);
  await w.close();
  await services.close();
  if (process.env.CI) await stack.stop();
}
process.exit(0);
