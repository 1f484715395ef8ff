// Message review, first part (docs/message-review.md): the review policy, prices, the one-lead
// preview on the local (deterministic) model with its validation and credits, and example messages.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { creditBalance, debitCredits } from '../../domain/billing/credits.js';
import { runTool } from '../../domain/tools/registry.js';
import { findTool } from '../../domain/tools/index.js';
import { resolveActor } from '../../domain/workspaces.js';
import { api, call, closeApi, createUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, seedCampaign } from '../helpers/campaigns.js';
test.after.always(closeApi);

async function setup() {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [],
    steps: [
      {
        type: 'invitation',
        config: { note: 'Hi {{first_name}}, would love to connect about sales tooling' },
        messageMode: 'ai',
      },
      { type: 'wait', config: { amount: 24, unit: 'hours' } },
      {
        type: 'email',
        config: { subject: 'Hello {{first_name}}', body: 'Ask for a short call next week' },
        messageMode: 'ai',
      },
      { type: 'message', config: { body: 'A plain follow-up' } },
    ],
  });
  const token = u.accessToken;
  const base = `/api/campaigns/${campaign.id}`;
  return {
    u,
    o,
    token,
    campaign,
    base,
    steps: {
      invitation: campaign.stepIds[0],
      wait: campaign.stepIds[1],
      email: campaign.stepIds[2],
      message: campaign.stepIds[3],
    },
  };
}

test('policy: each mode with its parameter, 400 invalid_body without it, defaults filled in', async (t) => {
  const s = await setup();
  const r = await call('PUT', `${s.base}/message-review/policy`, {
    token: s.token,
    body: { mode: 'first_n', first_n: 3, blocked_phrases: [' guarantee ', 'guarantee', 'free money'] },
  });
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, {
    mode: 'first_n',
    first_n: 3,
    sample_rate: null,
    blocked_phrases: ['guarantee', 'free money'],
    max_length: null,
    on_deadline: 'skip',
    deadline_hours: 168,
  });
  const sample = await call('PUT', `${s.base}/message-review/policy`, {
    token: s.token,
    body: { mode: 'sample', sample_rate: 0.25, on_deadline: 'hold', deadline_hours: 2 },
  });
  t.like(sample.body, { mode: 'sample', sample_rate: 0.25, first_n: null, on_deadline: 'hold', deadline_hours: 2 });
  for (const body of [{ mode: 'first_n' }, { mode: 'sample' }, { mode: 'sample', sample_rate: 0.5, first_n: 2 }]) {
    const bad = await call('PUT', `${s.base}/message-review/policy`, { token: s.token, body });
    t.is(bad.status, 400);
    t.is(bad.body.error.code, 'invalid_body');
  }
  const invalid = await call('PUT', `${s.base}/message-review/policy`, { token: s.token, body: { mode: 'sometimes' } });
  t.is(invalid.body.error.code, 'invalid_body');
});

test('generate-message: the local model writes for the lead and step, the result is validated, one draft is charged', async (t) => {
  const s = await setup();
  const [lead] = await s.o.leads(1);
  const before = await creditBalance(await em(), s.o.workspaceId);
  const r = await call('POST', `/api/campaigns/${s.campaign.id}/generate-message`, {
    token: s.token,
    body: { lead_id: lead.leadId },
  });
  t.is(r.status, 200, r.text);
  t.like(r.body, {
    step_id: s.steps.invitation,
    channel: 'invitation',
    subject: null,
    valid: true,
    problems: [],
    credits: 1,
    model: 'local-deterministic-1',
  });
  t.true(r.body.body.startsWith('Hi Grace,'));
  t.true(r.body.body.includes('Navy'));
  t.false(r.body.body.includes('{{'));
  t.true([...r.body.body].length <= 300, 'the invitation note limit');
  t.is(await creditBalance(await em(), s.o.workspaceId), before - 1);
  // Deterministic: the same input writes the same message.
  const again = await call('POST', `/api/campaigns/${s.campaign.id}/generate-message`, {
    token: s.token,
    body: { lead_id: lead.leadId, step_id: s.steps.invitation },
  });
  t.is(again.body.body, r.body.body);

  // The email step: a subject; the policy's blocked phrases and maximum length are problems, not errors.
  await call('PUT', `${s.base}/message-review/policy`, {
    token: s.token,
    body: { mode: 'all', blocked_phrases: ['navy'], max_length: 40 },
  });
  const email = await call('POST', `/api/campaigns/${s.campaign.id}/generate-message`, {
    token: s.token,
    body: { lead_id: lead.leadId, step_id: s.steps.email },
  });
  t.is(email.status, 200, email.text);
  t.is(email.body.channel, 'email');
  t.truthy(email.body.subject);
  t.false(email.body.valid);
  t.deepEqual(
    email.body.problems.map((p: { code: string }) => p.code),
    ['blocked_phrase'],
  );
  t.true([...email.body.body].length <= 40, 'written within the policy’s maximum');

  // 400s: not a send step, a campaign without one; 404 for a lead of another workspace.
  const wait = await call('POST', `/api/campaigns/${s.campaign.id}/generate-message`, {
    token: s.token,
    body: { lead_id: lead.leadId, step_id: s.steps.wait },
  });
  t.is(wait.body.error.code, 'invalid_step');
  const waitsOnly = await seedCampaign(s.o.workspaceId, {
    appId: s.o.app.id,
    accountIds: [],
    steps: [{ type: 'wait', config: { amount: 1, unit: 'hours' } }],
  });
  t.is(
    (
      await call('POST', `/api/campaigns/${waitsOnly.id}/generate-message`, {
        token: s.token,
        body: { lead_id: lead.leadId },
      })
    ).body.error.code,
    'no_send_step',
  );
  const other = await setup();
  const [stranger] = await other.o.leads(1);
  const foreign = await call('POST', `/api/campaigns/${s.campaign.id}/generate-message`, {
    token: s.token,
    body: { lead_id: stranger.leadId },
  });
  t.is(foreign.status, 404);
});

test('402 insufficient_credits before any model call; the quote says so first', async (t) => {
  const s = await setup();
  const [lead] = await s.o.leads(1);
  const e = await em();
  const balance = await creditBalance(e, s.o.workspaceId);
  await debitCredits(e, s.o.workspaceId, balance, { reason: 'test: spend everything' });
  const q = await call('POST', `${s.base}/message-review/quote`, { token: s.token, body: { drafts: 3 } });
  t.is(q.status, 200, q.text);
  t.deepEqual(q.body, {
    drafts: 3,
    leads: null,
    steps: 1,
    credits_per_draft: 1,
    credits: 3,
    balance: 0,
    sufficient: false,
  });
  const r = await call('POST', `/api/campaigns/${s.campaign.id}/generate-message`, {
    token: s.token,
    body: { lead_id: lead.leadId },
  });
  t.is(r.status, 402);
  t.is(r.body.error.code, 'insufficient_credits');
  const ex = await call('POST', `${s.base}/message-review/examples/generate`, { token: s.token, body: { count: 2 } });
  t.is(ex.status, 402);
  t.is(await creditBalance(e, s.o.workspaceId), 0);
});

test('quote: a count, or a list’s leads × the AI-written send steps (or one step); nothing is charged', async (t) => {
  const s = await setup();
  await s.o.leads(4);
  const before = await creditBalance(await em(), s.o.workspaceId);
  const all = await call('POST', `${s.base}/message-review/quote`, { token: s.token, body: { list_id: s.o.listId } });
  t.is(all.status, 200, all.text);
  t.like(all.body, {
    leads: 4,
    steps: 2,
    drafts: 8,
    credits_per_draft: 1,
    credits: 8,
    balance: before,
    sufficient: true,
  });
  const one = await call('POST', `${s.base}/message-review/quote`, {
    token: s.token,
    body: { list_id: s.o.listId, step_id: s.steps.email },
  });
  t.like(one.body, { leads: 4, steps: 1, drafts: 4 });
  t.is(
    (
      await call('POST', `${s.base}/message-review/quote`, {
        token: s.token,
        body: { list_id: s.o.listId, step_id: s.steps.wait },
      })
    ).body.error.code,
    'invalid_step',
  );
  t.is(
    (await call('POST', `${s.base}/message-review/quote`, { token: s.token, body: { list_id: randomUUID() } })).status,
    404,
  );
  t.is(
    (await call('POST', `${s.base}/message-review/quote`, { token: s.token, body: { drafts: 1, list_id: s.o.listId } }))
      .body.error.code,
    'invalid_body',
  );
  t.is(
    (await call('POST', `${s.base}/message-review/quote`, { token: s.token, body: {} })).body.error.code,
    'invalid_body',
  );
  t.is(await creditBalance(await em(), s.o.workspaceId), before);
});

test('examples: proposals vary and are charged, saved ones are kept and edited, generation follows them; at most 50', async (t) => {
  const s = await setup();
  const [lead] = await s.o.leads(1);
  const before = await creditBalance(await em(), s.o.workspaceId);
  const g = await call('POST', `${s.base}/message-review/examples/generate`, {
    token: s.token,
    body: { step_id: s.steps.email, count: 3 },
  });
  t.is(g.status, 200, g.text);
  t.is(g.body.items.length, 3);
  t.is(new Set(g.body.items.map((i: { body: string }) => i.body)).size, 3, 'three different proposals');
  t.true(
    g.body.items.every((i: { body: string; valid: boolean }) => i.valid && i.body.includes('Alex')),
    'a sample person when no lead is named',
  );
  t.is(await creditBalance(await em(), s.o.workspaceId), before - 3);

  const saved = await call('POST', `${s.base}/message-review/examples/save`, {
    token: s.token,
    body: {
      step_id: s.steps.email,
      items: [
        { subject: 'Quick idea for your team', body: g.body.items[0].body, source: 'generated' },
        { body: 'Short and friendly.' },
      ],
    },
  });
  t.is(saved.status, 201, saved.text);
  t.deepEqual(
    saved.body.items.map((i: { source: string; step_id: string }) => [i.source, i.step_id]),
    [
      ['generated', s.steps.email],
      ['user', s.steps.email],
    ],
  );
  const email = await call('POST', `/api/campaigns/${s.campaign.id}/generate-message`, {
    token: s.token,
    body: { lead_id: lead.leadId, step_id: s.steps.email },
  });
  t.is(email.body.subject, 'Quick idea for your team', 'the step’s first example sets the subject');

  const id = saved.body.items[1].id;
  const put = await call('PUT', `${s.base}/message-review/examples/${id}`, {
    token: s.token,
    body: { subject: 'Edited', body: 'Edited body' },
  });
  t.is(put.status, 200, put.text);
  t.like(put.body, { id, subject: 'Edited', body: 'Edited body', source: 'user' });
  t.is(
    (
      await call('POST', `${s.base}/message-review/examples/save`, {
        token: s.token,
        body: { step_id: s.steps.wait, items: [{ body: 'x' }] },
      })
    ).body.error.code,
    'invalid_step',
  );

  const many = Array.from({ length: 20 }, (_, i) => ({ body: `Example ${i}` }));
  t.is(
    (await call('POST', `${s.base}/message-review/examples/save`, { token: s.token, body: { items: many } })).status,
    201,
  );
  t.is(
    (await call('POST', `${s.base}/message-review/examples/save`, { token: s.token, body: { items: many } })).status,
    201,
  );
  const over = await call('POST', `${s.base}/message-review/examples/save`, { token: s.token, body: { items: many } });
  t.is(over.status, 409);
  t.is(over.body.error.code, 'too_many_examples');
});

test('another workspace gets 404 on every id-taking route, and nothing changes', async (t) => {
  const s = await setup();
  const [lead] = await s.o.leads(1);
  const saved = await call('POST', `${s.base}/message-review/examples/save`, {
    token: s.token,
    body: { items: [{ body: 'Mine' }] },
  });
  const stranger = await createUser();
  const other = await setup();
  const routes: [string, string, unknown][] = [
    ['PUT', `${s.base}/message-review/policy`, { mode: 'none' }],
    ['POST', `${s.base}/message-review/quote`, { drafts: 1 }],
    ['POST', `/api/campaigns/${s.campaign.id}/generate-message`, { lead_id: lead.leadId }],
    ['POST', `${s.base}/message-review/examples/generate`, { count: 1 }],
    ['POST', `${s.base}/message-review/examples/save`, { items: [{ body: 'x' }] }],
    ['PUT', `${s.base}/message-review/examples/${saved.body.items[0].id}`, { body: 'Theirs' }],
  ];
  for (const [method, path, body] of routes) {
    const r = await call(method, path, { token: stranger.accessToken, body });
    t.is(r.status, 404, `${method} ${path}`);
  }
  // Another campaign's example id under one's own campaign is 404 too.
  const mine = await call('PUT', `${other.base}/message-review/examples/${saved.body.items[0].id}`, {
    token: other.token,
    body: { body: 'Theirs' },
  });
  t.is(mine.status, 404);
  const e = await em();
  t.is((await e.execute(`select body from message_examples where id = ?`, [saved.body.items[0].id]))[0].body, 'Mine');
});

test('Operator tools: preview_campaign_message, set_review_policy and save_message_examples (all risk change) run as the caller', async (t) => {
  const s = await setup();
  const [lead] = await s.o.leads(1);
  const { services } = await api();
  const e = services.orm.em.fork();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined),
  };
  for (const name of ['preview_campaign_message', 'set_review_policy', 'save_message_examples'])
    t.is(findTool(name)?.risk, 'change', name);
  const preview = (await runTool(findTool('preview_campaign_message')!, ctx, {
    campaign_id: s.campaign.id,
    lead_id: lead.leadId,
  })) as { body: string; valid: boolean };
  const rest = await call('POST', `/api/campaigns/${s.campaign.id}/generate-message`, {
    token: s.token,
    body: { lead_id: lead.leadId },
  });
  t.is(preview.body, rest.body.body);
  t.true(preview.valid);
  t.like(
    await runTool(findTool('set_review_policy')!, ctx, { campaign_id: s.campaign.id, mode: 'first_n', first_n: 2 }),
    { mode: 'first_n', firstN: 2 },
  );
  const saved = (await runTool(findTool('save_message_examples')!, ctx, {
    campaign_id: s.campaign.id,
    items: [{ body: 'From the Operator' }],
  })) as { saved: { id: string }[] };
  t.is(saved.saved.length, 1);
  const stranger = await createUser();
  const e2 = services.orm.em.fork();
  const other = {
    ...ctx,
    em: e2,
    actor: await resolveActor(e2 as never, { userId: stranger.id, kind: 'session' }, undefined),
  };
  await t.throwsAsync(runTool(findTool('set_review_policy')!, other, { campaign_id: s.campaign.id, mode: 'none' }), {
    message: /not found/i,
  });
});

test('a model that fails: 503 model_unavailable when worth retrying, 502 otherwise, and nothing is charged', async (t) => {
  const s = await setup();
  const [lead] = await s.o.leads(1);
  const { LlmError } = await import('../../lib/llm/types.js');
  const { previewMessage } = await import('../../domain/message-review/writing.js');
  const failing = (code: 'unavailable' | 'bad_request') => ({
    name: 'failing',
    model: 'failing-1',
    structured: async () => {
      throw new LlmError(code, 'the model failed');
    },
    stream: () => {
      throw new LlmError(code, 'the model failed');
    },
  });
  const { services } = await api();
  const e = services.orm.em.fork();
  const actor = await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined);
  const before = await creditBalance(await em(), s.o.workspaceId);
  for (const [code, status] of [
    ['unavailable', 503],
    ['bad_request', 502],
  ] as const) {
    const err = await t.throwsAsync(
      previewMessage(e as never, failing(code) as never, actor, s.campaign.id, {
        leadId: lead.leadId,
        requestId: randomUUID(),
      }),
    );
    t.like(err, { status, code: 'model_unavailable' });
  }
  t.is(await creditBalance(await em(), s.o.workspaceId), before);
});
