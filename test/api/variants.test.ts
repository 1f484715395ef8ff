// A/B variants of send steps (docs/campaigns.md "A/B variants"), beyond the spec: the step fields
// `variants` and `winner_rule`, the variant routes (statistics, manual winner, clearing it), the
// planner's deterministic choice and the automatic winner rule on seeded sends.
import test from 'ava';
import type { StepVariant } from '../../db/entities/CampaignStep.js';
import { rollupAnalytics } from '../../domain/analytics/rollup.js';
import { pickVariant, testWinner } from '../../domain/campaigns/variants.js';
import { planAction } from '../../domain/enrollments/executor.js';
import { AppError } from '../../domain/errors.js';
import { findTool } from '../../domain/tools/index.js';
import { needsConfirmation, runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { uuidv7 } from '../../lib/ids.js';
import { allOperations } from '../../api/operations.js';
import { buildOpenApi } from '../../api/openapi.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner } from '../helpers/campaigns.js';
import { addTeamMember } from '../helpers/db.js';
test.before(async () => void (await api()));
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown, headers: Record<string, string> = {}) => ({
  token: u.accessToken,
  headers,
  ...(body === undefined ? {} : { body }),
});
const NO_SUCH_ID = '0190f5d2-7c1a-7b3e-9a10-000000000000';
const ALL_WEEK = Object.fromEntries(
  ['1', '2', '3', '4', '5', '6', '7'].map((d) => [d, [{ start: '00:00', end: '24:00' }]]),
);

const AB_STEP = {
  type: 'email',
  config: { subject: 'Subject A {{first_name}}', body: 'Body A' },
  variants: [
    { name: 'Short' },
    { name: 'Long', weight: 3, config: { subject: 'Subject B {{first_name}}', body: 'Body B, longer' } },
  ],
  winner_rule: { metric: 'reply_rate', min_sends: 5, confidence: 0.95 },
};

async function setup() {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const c = await call(
    'POST',
    `/api/apps/${o.app.id}/campaigns`,
    as(u, { name: 'A/B', time_zone: 'Europe/Paris', sending_windows: ALL_WEEK }),
  );
  if (c.status !== 201) throw new Error(c.text);
  return { u, o, campaignId: c.body.id as string };
}

test('a step is created and replaced with variants: ids kept, names and weights defaulted, the step’s config for a variant without its own', async (t) => {
  const { u, campaignId } = await setup();
  const created = await call('POST', `/api/campaigns/${campaignId}/steps`, as(u, AB_STEP));
  t.is(created.status, 201, created.text);
  const [a, b] = created.body.variants;
  t.like(a, { name: 'Short', weight: 1, config: AB_STEP.config });
  t.like(b, { name: 'Long', weight: 3, config: AB_STEP.variants[1].config });
  t.deepEqual(created.body.winner_rule, AB_STEP.winner_rule);

  // Replace: keep B by id, drop A, add a new one (named by place).
  const replaced = await call(
    'PUT',
    `/api/campaigns/${campaignId}/steps/${created.body.id}`,
    as(u, { type: 'email', config: { subject: 'S', body: 'B' }, variants: [{ id: b.id }, {}] }),
  );
  t.is(replaced.status, 200, replaced.text);
  t.is(replaced.body.variants[0].id, b.id);
  t.like(
    replaced.body.variants[0],
    { name: 'A', weight: 1 },
    'a kept variant takes what the new input says (defaults when absent)',
  );
  t.not(replaced.body.variants[1].id, a.id);
  t.is(replaced.body.winner_rule, null, 'absent: no rule');
  // The version's snapshot carries the variants (what the executor reads).
  const [v] = await (
    await em()
  ).execute<{ steps: { variants?: StepVariant[] }[] }[]>(
    `select steps from campaign_step_versions where campaign_id = ? order by version desc limit 1`,
    [campaignId],
  );
  t.is(v.steps[0].variants?.length, 2);
  // Without variants: none.
  const plain = await call(
    'PUT',
    `/api/campaigns/${campaignId}/steps/${created.body.id}`,
    as(u, { type: 'email', config: { subject: 'S', body: 'B' } }),
  );
  t.is(plain.body.variants, null);
});

test('400 on variants that cannot be: one or six, on an invitation, an unknown or repeated id, a rule without variants, a bad rule, a broken template', async (t) => {
  const { u, campaignId } = await setup();
  const step = (await call('POST', `/api/campaigns/${campaignId}/steps`, as(u, AB_STEP))).body;
  const cases: [unknown, string, string?][] = [
    [{ ...AB_STEP, variants: [{}] }, 'invalid_body', 'variants'],
    [{ ...AB_STEP, variants: [{}, {}, {}, {}, {}, {}] }, 'invalid_body', 'variants'],
    [{ type: 'invitation', config: { note: 'x' }, variants: [{}, {}] }, 'invalid_body'],
    [{ ...AB_STEP, variants: [{ id: NO_SUCH_ID }, {}] }, 'invalid_body', 'variants.0.id'],
    [
      { ...AB_STEP, variants: [{ id: step.variants[0].id }, { id: step.variants[0].id }] },
      'invalid_body',
      'variants.1.id',
    ],
    [{ type: 'email', config: AB_STEP.config, winner_rule: AB_STEP.winner_rule }, 'invalid_body', 'winner_rule'],
    [
      { ...AB_STEP, winner_rule: { metric: 'reply_rate', min_sends: 5, confidence: 0.5 } },
      'invalid_body',
      'winner_rule.confidence',
    ],
    [
      { ...AB_STEP, winner_rule: { metric: 'bounce_rate', min_sends: 5, confidence: 0.95 } },
      'invalid_body',
      'winner_rule.metric',
    ],
    [{ ...AB_STEP, variants: [{}, { weight: 0 }] }, 'invalid_body', 'variants.1.weight'],
    [
      { ...AB_STEP, variants: [{}, { config: { subject: 'Hi {{first_name', body: 'x' } }] },
      'invalid_template',
      'variants.1.config.subject',
    ],
  ];
  for (const [body, code, path] of cases) {
    const r = await call('PUT', `/api/campaigns/${campaignId}/steps/${step.id}`, as(u, body));
    t.is(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    t.is(r.body.error.code, code, r.text);
    if (path) t.true(JSON.stringify(r.body.error.details ?? []).includes(path), `${path} in ${r.text}`);
  }
  // Nothing changed.
  t.deepEqual((await call('GET', `/api/campaigns/${campaignId}/steps`, as(u))).body.items[0].variants, step.variants);
});

test('the winner by hand: chosen, replaced, idempotent, cleared; 404 for another step’s variant; 409 on an archived campaign', async (t) => {
  const { u, campaignId } = await setup();
  const step = (await call('POST', `/api/campaigns/${campaignId}/steps`, as(u, AB_STEP))).body;
  const other = (await call('POST', `/api/campaigns/${campaignId}/steps`, as(u, AB_STEP))).body;
  const base = `/api/campaigns/${campaignId}/steps/${step.id}/variants`;

  const empty = await call('GET', base, as(u));
  t.is(empty.status, 200, empty.text);
  t.is(empty.body.winner, null);
  t.is(empty.body.variants.length, 2);
  t.like(empty.body.variants[0], {
    sent: 0,
    opened: 0,
    opened_machine: 0,
    clicked: 0,
    replied: 0,
    reply_rate: 0,
    is_winner: false,
  });
  t.like(empty.body.test, { winner: null, pending: 'min_sends', metric: 'reply_rate' });

  const chose = await call('POST', `${base}/${step.variants[1].id}/winner`, as(u));
  t.is(chose.status, 200, chose.text);
  t.like(chose.body.winner, { variant_id: step.variants[1].id, chosen_by: 'manual' });
  t.true(chose.body.variants[1].is_winner);
  const again = await call('POST', `${base}/${step.variants[1].id}/winner`, as(u));
  t.is(again.body.winner.chosen_at, chose.body.winner.chosen_at, 'choosing the same winner again changes nothing');
  const swapped = await call('POST', `${base}/${step.variants[0].id}/winner`, as(u));
  t.is(swapped.body.winner.variant_id, step.variants[0].id);

  for (const path of [
    `${base}/${other.variants[0].id}/winner`,
    `${base}/${NO_SUCH_ID}/winner`,
    `/api/campaigns/${campaignId}/steps/${NO_SUCH_ID}/variants/${step.variants[0].id}/winner`,
  ]) {
    const r = await call('POST', path, as(u));
    t.is(r.status, 404, `${path}: ${r.text}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.is((await call('POST', `${base}/not-a-uuid/winner`, as(u))).status, 400);

  const cleared = await call('DELETE', `${base}/winner`, as(u));
  t.is(cleared.status, 200, cleared.text);
  t.is(cleared.body.winner, null);
  t.is((await call('DELETE', `${base}/winner`, as(u))).status, 200, 'idempotent');

  // Removing the winning variant from the step clears the choice.
  await call('POST', `${base}/${step.variants[1].id}/winner`, as(u));
  await call(
    'PUT',
    `/api/campaigns/${campaignId}/steps/${step.id}`,
    as(u, { ...AB_STEP, variants: [{ id: step.variants[0].id }, {}] }),
  );
  t.is((await call('GET', base, as(u))).body.winner, null);

  await call('PATCH', `/api/campaigns/${campaignId}/status`, as(u, { status: 'archived' }));
  const archived = await call('POST', `${base}/${step.variants[0].id}/winner`, as(u));
  t.is(archived.status, 409, archived.text);
  t.is(archived.body.error.code, 'campaign_archived');
  t.is((await call('GET', base, as(u))).status, 200, 'still readable');
});

test('without credentials 401; another workspace’s step is 404; a member without the product is 403 not_assigned; the routes are marked beyond the spec', async (t) => {
  const { u, o, campaignId } = await setup();
  const step = (await call('POST', `/api/campaigns/${campaignId}/steps`, as(u, AB_STEP))).body;
  const base = `/api/campaigns/${campaignId}/steps/${step.id}/variants`;
  const stranger = await createOwner();
  for (const [m, p] of [
    ['GET', base],
    ['POST', `${base}/${step.variants[0].id}/winner`],
    ['DELETE', `${base}/winner`],
  ] as const) {
    const r = await call(m, p, as(stranger));
    t.is(r.status, 404, `${m} ${p}: ${r.text}`);
    t.is(r.body.error.code, 'not_found');
  }
  for (const [m, p] of [
    ['GET', base],
    ['POST', `${base}/${step.variants[0].id}/winner`],
    ['DELETE', `${base}/winner`],
  ] as const) {
    const r = await call(m, p, {});
    t.is(r.status, 401, `${m} ${p} without credentials: ${r.text}`);
    t.is(r.body.error.code, 'unauthorized');
  }
  const otherApp = await createTestApp(u, 'Other product');
  const limited = await createUser();
  await addTeamMember(u.id, limited.id, { appIds: [otherApp.id] });
  for (const [m, p] of [
    ['GET', base],
    ['POST', `${base}/${step.variants[0].id}/winner`],
    ['DELETE', `${base}/winner`],
  ] as const) {
    const r = await call(m, p, as(limited, undefined, { 'x-acting-as': u.id }));
    t.is(r.status, 403, `${m} ${p}: ${r.text}`);
    t.is(r.body.error.code, 'not_assigned');
  }
  const assigned = await createUser();
  await addTeamMember(u.id, assigned.id, { appIds: [o.app.id] });
  t.is((await call('GET', base, as(assigned, undefined, { 'x-acting-as': u.id }))).status, 200);

  const doc = buildOpenApi(allOperations()) as { paths: Record<string, Record<string, { 'x-beyond-spec'?: boolean }>> };
  t.true(doc.paths['/api/campaigns/{campaignId}/steps/{stepId}/variants'].get['x-beyond-spec']);
  t.true(doc.paths['/api/campaigns/{campaignId}/steps/{stepId}/variants/{variantId}/winner'].post['x-beyond-spec']);
  t.true(doc.paths['/api/campaigns/{campaignId}/steps/{stepId}/variants/winner'].delete['x-beyond-spec']);
});

test('the choice is the same on every re-run, follows the weights, and the winner rule’s test is a two-proportion z-test', (t) => {
  const variants: StepVariant[] = [
    { id: 'a', name: 'A', weight: 1, config: {} },
    { id: 'b', name: 'B', weight: 3, config: {} },
  ];
  const step = uuidv7();
  const counts = { a: 0, b: 0 } as Record<string, number>;
  for (let i = 0; i < 4000; i++) {
    const e = uuidv7();
    const v = pickVariant(e, step, variants);
    t.is(pickVariant(e, step, variants).id, v.id);
    counts[v.id]++;
  }
  t.true(counts.b / 4000 > 0.7 && counts.b / 4000 < 0.8, `B takes about 3/4: ${JSON.stringify(counts)}`);

  const rule = { metric: 'reply_rate' as const, min_sends: 20, confidence: 0.95 };
  const c = (a: number, an: number, b: number, bn: number) => [
    { variant_id: 'a', sent: an, replied: a, opened: 0, opened_machine: 0, clicked: 0, clicked_machine: 0 },
    { variant_id: 'b', sent: bn, replied: b, opened: 0, opened_machine: 0, clicked: 0, clicked_machine: 0 },
  ];
  t.like(testWinner(variants, c(10, 19, 0, 40), rule), { winner: null, pending: 'min_sends', leader: 'a' });
  // 10/40 against 2/40: pooled p = 0.15, z = 0.2 / √(0.15 · 0.85 · 2/40) ≈ 2.505 ≥ 1.645.
  const won = testWinner(variants, c(10, 40, 2, 40), rule);
  t.like(won, { winner: 'a', pending: null, z: 2.505 });
  // At 0.99 (z ≥ 2.326) it still holds; 8/40 against 2/40 (z ≈ 2.04) only at 0.95.
  t.like(testWinner(variants, c(10, 40, 2, 40), { ...rule, confidence: 0.99 }), { winner: 'a' });
  t.like(testWinner(variants, c(8, 40, 2, 40), { ...rule, confidence: 0.99 }), {
    winner: null,
    pending: 'not_significant',
  });
  t.like(testWinner(variants, c(8, 40, 2, 40), rule), { winner: 'a' });
  // 6/40 against 4/40: z ≈ 0.67, not significant.
  t.like(testWinner(variants, c(6, 40, 4, 40), rule), { winner: null, pending: 'not_significant', leader: 'a' });
  // No replies at all: nothing to tell apart.
  t.like(testWinner(variants, c(0, 40, 0, 40), rule), { winner: null, pending: 'not_significant' });
});

test('the planner records the variant on the action, the same on a re-run; the winner rule, once it holds, chooses and later plans use the winner', async (t) => {
  const { u, o, campaignId } = await setup();
  const even = { ...AB_STEP, variants: [{ name: 'Short' }, { name: 'Long', config: AB_STEP.variants[1].config }] };
  const step = (await call('POST', `/api/campaigns/${campaignId}/steps`, as(u, even))).body;
  const db = await em();
  const [{ step_version: version }] = await db.execute<{ step_version: number }[]>(
    `select step_version from campaigns where id = ?`,
    [campaignId],
  );
  const leads = await o.leads(40);
  const plan = async (lead: { leadId: string; contactId: string }, own = true) => {
    const enrollmentId = uuidv7();
    await db.execute(
      `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at) values (?, ?, ?, ?, ?, 'active', ?, 1, now(), now(), now())`,
      [enrollmentId, o.workspaceId, campaignId, lead.leadId, lead.contactId, version],
    );
    const actionId = uuidv7();
    const input = { enrollmentId, actionId, stepId: step.id, version, index: 0, notBefore: null };
    await planAction(db, input);
    await planAction(db, input);
    const [a] = await db.execute<{ variant_id: string; content: { subject: string } }[]>(
      `select variant_id, content from scheduled_actions where id = ?`,
      [actionId],
    );
    if (own) t.is(a.variant_id, pickVariant(enrollmentId, step.id, step.variants).id, 'the enrollment’s own variant');
    t.is(
      a.content.subject,
      a.variant_id === step.variants[0].id ? 'Subject A Grace' : 'Subject B Grace',
      'rendered from the variant',
    );
    return actionId;
  };
  // Plan until each variant has 5 sends, then mark them sent: every send of variant A replied, none of B.
  const byVariant = new Map<string, string[]>();
  for (const lead of leads) {
    const id = await plan(lead);
    const [{ variant_id }] = await db.execute<{ variant_id: string }[]>(
      `select variant_id from scheduled_actions where id = ?`,
      [id],
    );
    byVariant.set(variant_id, [...(byVariant.get(variant_id) ?? []), id]);
    if ([...byVariant.values()].filter((ids) => ids.length >= 5).length === 2) break;
  }
  const a = byVariant.get(step.variants[0].id) ?? [];
  const b = byVariant.get(step.variants[1].id) ?? [];
  t.true(a.length >= 5 && b.length >= 5, `5 each within 40 leads (${a.length}, ${b.length})`);
  await db.execute(`update scheduled_actions set state = 'executed', executed_at = now() where id = any(?::uuid[])`, [
    `{${[...a, ...b].join(',')}}`,
  ]);
  await db.execute(`update scheduled_actions set replied_at = now() where id = any(?::uuid[])`, [`{${a.join(',')}}`]);
  const before = (await call('GET', `/api/campaigns/${campaignId}/steps/${step.id}/variants`, as(u))).body;
  t.is(before.winner, null, 'no winner until a plan asks');
  t.is(before.test.winner, step.variants[0].id, 'the rule holds');

  // The next plans: the rule chooses A (once), and every later plan uses it whatever its own draw.
  const more = await o.leads(6);
  for (const lead of more) await plan(lead, false);
  const after = (await call('GET', `/api/campaigns/${campaignId}/steps/${step.id}/variants`, as(u))).body;
  t.like(after.winner, { variant_id: step.variants[0].id, chosen_by: 'auto' });
  t.is(after.winner.evidence.rule.metric, 'reply_rate');
  const later = await db.execute<{ variant_id: string }[]>(
    `select variant_id from scheduled_actions where campaign_id = ? and state = 'planned'`,
    [campaignId],
  );
  t.true(later.length >= 6);
  t.true(
    later.every((r) => r.variant_id === step.variants[0].id),
    'later sends use the winner',
  );
  // Each action shows its variant.
  const listed = (await call('GET', `/api/campaigns/${campaignId}/scheduled-actions?state=planned&limit=200`, as(u)))
    .body.items;
  t.true(listed.length >= 6 && listed.every((x: { variant_id: string }) => x.variant_id === step.variants[0].id));
  // Stats per variant in the campaign stats.
  const stats = (await call('GET', `/api/campaigns/${campaignId}/stats`, as(u))).body;
  const s = stats.steps.find((x: any) => x.step_id === step.id);
  t.is(s.variants.length, 2);
  t.like(
    s.variants.find((v: any) => v.variant_id === step.variants[0].id),
    { name: 'Short', is_winner: true, sent: a.length, replied: a.length },
  );
  t.like(
    s.variants.find((v: any) => v.variant_id === step.variants[1].id),
    { name: 'Long', is_winner: false, sent: b.length, replied: 0 },
  );
  // The same per variant in the analytics, once rolled up (beyond the spec), in the step's order.
  await rollupAnalytics(db, {
    from: new Date(Date.now() - 3_600_000),
    to: new Date(Date.now() + 3_600_000),
    workspaceId: o.workspaceId,
  });
  const day = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10);
  const an = await call('GET', `/api/analytics/steps?campaign_id=${campaignId}&from=${day(-1)}&to=${day(0)}`, as(u));
  t.is(an.status, 200, an.text);
  const item = an.body.items.find((x: any) => x.step_id === step.id);
  t.like(item, { sent: a.length + b.length, replied: a.length });
  t.deepEqual(
    item.variants.map((v: any) => [v.variant_id, v.name, v.is_winner, v.sent, v.replied, v.reply_rate]),
    [
      [step.variants[0].id, 'Short', true, a.length, a.length, 1],
      [step.variants[1].id, 'Long', false, b.length, 0, 0],
    ],
  );
  // A notification said so.
  const [n] = await db.execute<{ n: number }[]>(
    `select count(*)::int as n from notifications where workspace_id = ? and kind = 'campaign.variant_winner'`,
    [o.workspaceId],
  );
  t.true(n.n >= 1);
});

test('the Operator’s tools: read a step’s A/B test, choose and clear its winner (a change: the confirmation flow’s), with the routes’ scope', async (t) => {
  const { u, campaignId } = await setup();
  const step = (await call('POST', `/api/campaigns/${campaignId}/steps`, as(u, AB_STEP))).body;
  const { services } = await api();
  const ctxOf = async (userId: string, actingAs?: string) => {
    const e = services.orm.em.fork();
    return {
      em: e,
      jobs: services.jobs,
      config: services.config,
      providers: services,
      actor: await resolveActor(e as never, { userId, kind: 'session' }, actingAs),
    };
  };
  const ctx = await ctxOf(u.id);
  const read = findTool('get_step_variants')!;
  const choose = findTool('choose_variant_winner')!;
  const clear = findTool('clear_variant_winner')!;
  t.is(read.risk, 'read');
  t.true(needsConfirmation(choose) && needsConfirmation(clear), 'choosing and clearing wait for a person');
  const view = (await runTool(read, ctx, { campaign_id: campaignId, step_id: step.id })) as {
    variants: Record<string, unknown>[];
    winner: unknown;
  };
  t.is(view.variants.length, 2);
  t.false('config' in view.variants[0], 'figures without the full content');
  const chosen = (await runTool(choose, ctx, {
    campaign_id: campaignId,
    step_id: step.id,
    variant_id: step.variants[1].id,
  })) as { winner: { variant_id: string; chosen_by: string } };
  t.like(chosen.winner, { variant_id: step.variants[1].id, chosen_by: 'manual' });
  t.is(
    ((await runTool(clear, ctx, { campaign_id: campaignId, step_id: step.id })) as { winner: unknown }).winner,
    null,
  );

  const nf = await t.throwsAsync(
    runTool(choose, ctx, { campaign_id: campaignId, step_id: step.id, variant_id: NO_SUCH_ID }),
  );
  t.true(nf instanceof AppError && nf.status === 404, String(nf));
  const stranger = await createOwner();
  const cross = await t.throwsAsync(
    runTool(read, await ctxOf(stranger.id), { campaign_id: campaignId, step_id: step.id }),
  );
  t.true(cross instanceof AppError && cross.status === 404 && cross.code === 'not_found');
  const otherApp = await createTestApp(u, 'Other product');
  const limited = await createUser();
  await addTeamMember(u.id, limited.id, { appIds: [otherApp.id] });
  const na = await t.throwsAsync(
    runTool(choose, await ctxOf(limited.id, u.id), {
      campaign_id: campaignId,
      step_id: step.id,
      variant_id: step.variants[0].id,
    }),
  );
  t.true(na instanceof AppError && na.status === 403 && na.code === 'not_assigned');
});
