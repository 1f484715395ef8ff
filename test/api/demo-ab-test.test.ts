// The Demo workspace's finished A/B test (domain/demo/seed.ts, docs/campaigns.md "Demo workspace"),
// read by a visitor through the API: the recorded automatic winner is the one the rule's own test
// names, machine opens and clicks stay apart from human ones, and choosing or clearing a winner is
// refused like every Demo write.
import test from 'ava';
import type { StepVariant, WinnerRule } from '../../db/entities/CampaignStep.js';
import { pickVariant, testWinner, type VariantCounts } from '../../domain/campaigns/variants.js';
import { DEMO_AB_TEST, DEMO_USER_ID, seedDemo } from '../../domain/demo/seed.js';
import { call, closeApi, createUser } from '../helpers/api.js';
import { em } from '../helpers/billing.js';
test.after.always(closeApi);

const { campaignId, stepId, variantA, variantB } = DEMO_AB_TEST;
const variantsPath = `/api/campaigns/${campaignId}/steps/${stepId}/variants`;

/** A new user who joined the Demo, acting in it. */
async function visitor() {
  await seedDemo(await em()); // (the join seeds only a missing Demo; this database may hold an older one)
  const u = await createUser();
  const j = await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken });
  if (j.status !== 201) throw new Error(`join failed: ${j.status} ${j.text}`);
  return { token: u.accessToken, headers: { 'x-acting-as': DEMO_USER_ID } };
}

const counts = (v: Record<string, unknown>) => ({
  sent: v.sent,
  opened: v.opened,
  opened_machine: v.opened_machine,
  clicked: v.clicked,
  clicked_machine: v.clicked_machine,
  replied: v.replied,
});

test('the Demo holds a completed A/B test: recipient-local windows, opens and clicks tracked, one step with two variants and a winner rule', async (t) => {
  const demo = await visitor();
  const c = await call('GET', `/api/campaigns/${campaignId}`, demo);
  t.is(c.status, 200, c.text);
  t.like(c.body, {
    status: 'completed',
    window_time_zone: 'recipient',
    track_opens: true,
    track_clicks: true,
    step_count: 3,
  });
  t.truthy(c.body.activated_at);
  t.truthy(c.body.completed_at);
  const completed = await call('GET', `/api/apps/${c.body.app_id}/campaigns?status=completed`, demo);
  t.is(completed.status, 200, completed.text);
  t.deepEqual(
    completed.body.items.map((x: any) => x.id),
    [campaignId],
  );
  const steps = await call('GET', `/api/campaigns/${campaignId}/steps`, demo);
  t.is(steps.status, 200, steps.text);
  t.deepEqual(
    steps.body.items.map((s: any) => [s.type, s.variants?.length ?? 0]),
    [
      ['email', 2],
      ['wait', 0],
      ['email', 0],
    ],
  );
  const [ab] = steps.body.items;
  t.is(ab.id, stepId);
  t.deepEqual(
    ab.variants.map((v: any) => v.id),
    [variantA, variantB],
  );
  t.deepEqual(ab.winner_rule, { metric: 'reply_rate', min_sends: 5, confidence: 0.9 });
  // A subject-line test: the variants differ in their subject only.
  t.not(ab.variants[0].config.subject, ab.variants[1].config.subject);
  t.is(ab.variants[0].config.body, ab.variants[1].config.body);
});

test('its stats split the A/B step by variant, machine opens and clicks counted apart from human ones', async (t) => {
  const demo = await visitor();
  const r = await call('GET', `/api/campaigns/${campaignId}/stats`, demo);
  t.is(r.status, 200, r.text);
  const [first, followUp] = r.body.steps;
  t.is(first.step_id, stepId);
  t.is(first.variants.length, 2);
  const [a, b] = first.variants;
  t.like(a, { variant_id: variantA, name: 'Short subject', is_winner: false });
  t.like(b, { variant_id: variantB, name: 'Question subject', is_winner: true });
  t.deepEqual(counts(a), { sent: 5, opened: 3, opened_machine: 1, clicked: 1, clicked_machine: 0, replied: 0 });
  t.deepEqual(counts(b), { sent: 9, opened: 6, opened_machine: 2, clicked: 1, clicked_machine: 1, replied: 5 });
  t.like(first, { sent: 14, opened: 9, opened_machine: 3, clicked: 2, clicked_machine: 1, replied: 5 });
  // The follow-up has no variants; one prefetch and one scanner among its opens.
  t.is(followUp.variants, undefined);
  t.like(followUp, { sent: 8, opened: 1, opened_machine: 2, clicked: 0, clicked_machine: 1 });

  // Against the rows: an action whose opens (clicks) were all machine has no opened_at (clicked_at),
  // and those are exactly the machine figures; every human event set its action's first open or click.
  const rows = await (
    await em()
  ).execute<{ kind: string; human: number; machine: number; first_at: string | null; first_human: Date | null }[]>(
    `select t.kind, count(*) filter (where t.class = 'human')::int as human, count(*) filter (where t.class = 'machine')::int as machine,
            case when t.kind = 'open' then a.opened_at else a.clicked_at end as first_at, min(t.occurred_at) filter (where t.class = 'human') as first_human
       from tracking_events t join scheduled_actions a on a.id = t.action_id where a.campaign_id = ? group by t.action_id, t.kind, a.opened_at, a.clicked_at`,
    [campaignId],
  );
  for (const x of rows) {
    if (x.human) t.is(new Date(x.first_at!).toISOString(), new Date(x.first_human!).toISOString());
    else t.is(x.first_at, null);
  }
  t.is(rows.filter((x) => x.kind === 'open' && !x.human).length, first.opened_machine + followUp.opened_machine);
  t.is(rows.filter((x) => x.kind === 'click' && !x.human).length, first.clicked_machine + followUp.clicked_machine);
  t.true(
    rows.some((x) => x.kind === 'open' && x.human && x.machine),
    'a prefetch before the person’s own open',
  );
  // And opened_at is the person's first open or click, as recordTrackingHit keeps it.
  const [{ n }] = await (
    await em()
  ).execute<{ n: number }[]>(
    `select count(*)::int as n from scheduled_actions a where a.campaign_id = ? and exists (select 1 from tracking_events t where t.action_id = a.id)
        and a.opened_at is distinct from (select min(t.occurred_at) from tracking_events t where t.action_id = a.id and t.class = 'human')`,
    [campaignId],
  );
  t.is(n, 0);
  const reasons = await (
    await em()
  ).execute<{ reason: string; source: string }[]>(
    `select distinct reason, source from tracking_events where campaign_id = ? and class = 'machine' order by 1`,
    [campaignId],
  );
  t.deepEqual(reasons, [
    { reason: 'proxy_prefetch', source: 'apple_mpp' },
    { reason: 'scanner_agent', source: 'security_gateway' },
  ]);
});

test('its analytics (rolled up by the seed) give the same figures per variant over the days of the test', async (t) => {
  const demo = await visitor();
  const stats = (await call('GET', `/api/campaigns/${campaignId}/stats`, demo)).body;
  const r = await call(
    'GET',
    `/api/analytics/steps?campaign_id=${campaignId}&from=2026-09-01&to=2026-09-30&tz=Europe/Berlin`,
    demo,
  );
  t.is(r.status, 200, r.text);
  const first = r.body.items.find((x: any) => x.step_id === stepId);
  const figures = (v: any) => ({ sent: v.sent, opened: v.opened, replied: v.replied, reply_rate: v.reply_rate });
  t.like(first, figures(stats.steps[0]));
  t.deepEqual(
    first.variants.map((v: any) => ({ variant_id: v.variant_id, name: v.name, is_winner: v.is_winner, ...figures(v) })),
    stats.steps[0].variants.map((v: any) => ({
      variant_id: v.variant_id,
      name: v.name,
      is_winner: v.is_winner,
      ...figures(v),
    })),
  );
  t.deepEqual(
    first.variants.map((v: any) => v.variant_id),
    [variantA, variantB],
  );
  t.is(r.body.items.find((x: any) => x.step_id !== stepId)?.variants, undefined, 'the follow-up has none');
});

test('the step’s variants show the automatic winner, and the rule’s test on today’s counts names the same one', async (t) => {
  const demo = await visitor();
  const r = await call('GET', variantsPath, demo);
  t.is(r.status, 200, r.text);
  t.is(r.body.variants.length, 2);
  t.like(r.body.winner, { variant_id: variantB, chosen_by: 'auto' });
  t.like(r.body.winner.evidence, { rule: { metric: 'reply_rate', min_sends: 5, confidence: 0.9 } });
  t.like(r.body.test, { winner: variantB, leader: variantB, pending: null, metric: 'reply_rate' });
  t.is(r.body.test.winner, r.body.winner.variant_id);
  t.true(r.body.test.z >= 1.2816, String(r.body.test.z));
  t.deepEqual(
    r.body.variants.map((v: any) => [v.id, v.is_winner, v.opened, v.opened_machine, v.reply_rate]),
    [
      [variantA, false, 3, 1, 0],
      [variantB, true, 6, 2, 0.5556],
    ],
  );
});

test('the seeded history is what the planner would have done: the hash split before the decision, the winner after, the evidence the test at that moment', async (t) => {
  const e = await em();
  await seedDemo(e);
  const [step] = await e.execute<{ variants: StepVariant[]; winner_rule: WinnerRule }[]>(
    `select variants, winner_rule from campaign_steps where id = ?`,
    [stepId],
  );
  const [won] = await e.execute<{ variant_id: string; chosen_at: Date; evidence: Record<string, unknown> }[]>(
    `select variant_id, chosen_at, evidence from step_winners where step_id = ?`,
    [stepId],
  );
  const sends = await e.execute<
    { enrollment_id: string; variant_id: string; enrolled_at: Date; executed_at: Date; replied_at: Date | null }[]
  >(
    `select a.enrollment_id, a.variant_id, e.enrolled_at, a.executed_at, a.replied_at from scheduled_actions a join enrollments e on e.id = a.enrollment_id where a.step_id = ? order by a.executed_at`,
    [stepId],
  );
  const chosenAt = new Date(won.chosen_at).getTime();
  // Sent before the decision (planned at activation), and after it (enrolled as it was made: their plan made it).
  const before = sends.filter((s) => new Date(s.executed_at).getTime() < chosenAt);
  const after = sends.filter((s) => new Date(s.executed_at).getTime() >= chosenAt);
  for (const s of before) t.true(new Date(s.enrolled_at).getTime() < chosenAt - 86_400_000);
  for (const s of after) t.true(Math.abs(new Date(s.enrolled_at).getTime() - chosenAt) < 5_000);
  t.is(before.length, 12);
  t.is(after.length, 2);
  for (const s of before) t.is(s.variant_id, pickVariant(s.enrollment_id, stepId, step.variants).id, s.enrollment_id);
  for (const s of after) t.is(s.variant_id, won.variant_id, s.enrollment_id);
  t.true(
    after.some((s) => pickVariant(s.enrollment_id, stepId, step.variants).id !== won.variant_id),
    'the winner overrode the hash',
  );

  // The rule's test on the sends executed and the replies received before the decision.
  const at: VariantCounts[] = step.variants.map((v) => {
    const mine = before.filter((s) => s.variant_id === v.id);
    return {
      variant_id: v.id,
      sent: mine.length,
      opened: 0,
      opened_machine: 0,
      clicked: 0,
      clicked_machine: 0,
      replied: mine.filter((s) => s.replied_at && new Date(s.replied_at).getTime() < chosenAt).length,
    };
  });
  const then = testWinner(step.variants, at, step.winner_rule);
  t.is(then.winner, won.variant_id);
  t.deepEqual(won.evidence, { rule: step.winner_rule, z: then.z, rates: then.rates });
});

test('choosing or clearing the winner in the Demo is 403 demo_read_only and changes nothing', async (t) => {
  const demo = await visitor();
  const set = await call('POST', `${variantsPath}/${variantA}/winner`, demo);
  t.is(set.status, 403, set.text);
  t.is(set.body.error.code, 'demo_read_only');
  const clear = await call('DELETE', `${variantsPath}/winner`, demo);
  t.is(clear.status, 403, clear.text);
  t.is(clear.body.error.code, 'demo_read_only');
  t.like((await call('GET', variantsPath, demo)).body.winner, { variant_id: variantB, chosen_by: 'auto' });
});
