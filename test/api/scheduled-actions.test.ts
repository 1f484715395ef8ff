// Campaign-level scheduled-action routes, stats, step replies and in-flight impact, on seeded
// enrollments and actions (no workflows run: signals to absent runs are no-ops).
import test from 'ava';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { acquireSlot } from '../../domain/enrollments/executor.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
test.before(async () => void (await api()));
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });
const NO_SUCH_ID = '0190f5d2-7c1a-7b3e-9a10-000000000000';
const STEPS = [
  { type: 'invitation', config: { note: 'Hi' } },
  { type: 'wait', config: { amount: 1, unit: 'hours' } },
  { type: 'message', config: { body: 'Hello' } },
];

async function enroll(
  workspaceId: string,
  campaignId: string,
  lead: { leadId: string; contactId: string },
  extra: { status?: string; repliedAt?: Date | null } = {},
) {
  const id = uuidv7();
  await (
    await em()
  ).execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, replied_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 1, 1, now(), ?, now(), now())`,
    [id, workspaceId, campaignId, lead.leadId, lead.contactId, extra.status ?? 'active', extra.repliedAt ?? null],
  );
  return id;
}

interface ActionSpec {
  stepId: string;
  position: number;
  type?: string;
  state?: string;
  dueAt?: Date;
  executedAt?: Date | null;
  acceptedAt?: Date | null;
  repliedAt?: Date | null;
  errorCode?: string | null;
}

async function action(workspaceId: string, campaignId: string, enrollmentId: string, leadId: string, s: ActionSpec) {
  const id = uuidv7();
  await (
    await em()
  ).execute(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, executed_at, accepted_at, replied_at, error_code, attempts, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, 0, now(), now())`,
    [
      id,
      workspaceId,
      campaignId,
      enrollmentId,
      leadId,
      s.stepId,
      s.position,
      s.type ?? 'invitation',
      s.state ?? 'planned',
      s.dueAt ?? new Date(Date.now() + 3600_000),
      s.executedAt ?? null,
      s.acceptedAt ?? null,
      s.repliedAt ?? null,
      s.errorCode ?? null,
    ],
  );
  return id;
}

async function setup(
  opts: { countryRule?: { mode: 'allow' | 'block'; countries: string[] } | null; timeZone?: string } = {},
) {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const c = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [],
    steps: STEPS,
    countryRule: opts.countryRule ?? null,
    timeZone: opts.timeZone,
  });
  return { u, o, c };
}

test('list: filters by state, step and due range; cursor pages cover everything once', async (t) => {
  const { u, o, c } = await setup();
  const leads = await o.leads(5);
  const base = Date.parse('2030-01-07T09:00:00Z');
  const ids: string[] = [];
  for (const [i, l] of leads.entries()) {
    const e = await enroll(o.workspaceId, c.id, l);
    ids.push(
      await action(o.workspaceId, c.id, e, l.leadId, {
        stepId: c.stepIds[0]!,
        position: 0,
        state: i < 3 ? 'planned' : 'executed',
        dueAt: new Date(base + i * 3600_000),
      }),
    );
    if (i === 0)
      ids.push(
        await action(o.workspaceId, c.id, e, l.leadId, {
          stepId: c.stepIds[2]!,
          position: 2,
          type: 'message',
          dueAt: new Date(base + 10 * 3600_000),
        }),
      );
  }
  const all = await call('GET', `/api/campaigns/${c.id}/scheduled-actions`, as(u));
  t.is(all.status, 200, all.text);
  t.is(all.body.items.length, 6);
  t.is(all.body.next_cursor, null);
  t.deepEqual(
    all.body.items.map((a: any) => a.due_at),
    [...all.body.items.map((a: any) => a.due_at)].sort(),
  );

  const planned = await call('GET', `/api/campaigns/${c.id}/scheduled-actions?state=planned`, as(u));
  t.is(planned.body.items.length, 4);
  const step3 = await call('GET', `/api/campaigns/${c.id}/scheduled-actions?step_id=${c.stepIds[2]}`, as(u));
  t.deepEqual(
    step3.body.items.map((a: any) => a.step_position),
    [2],
  );
  const range = await call(
    'GET',
    `/api/campaigns/${c.id}/scheduled-actions?due_from=${new Date(base + 3600_000).toISOString()}&due_to=${new Date(base + 3 * 3600_000).toISOString()}`,
    as(u),
  );
  t.is(range.body.items.length, 2);

  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const r: any = await call(
      'GET',
      `/api/campaigns/${c.id}/scheduled-actions?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      as(u),
    );
    t.is(r.status, 200, r.text);
    seen.push(...r.body.items.map((a: any) => a.id));
    cursor = r.body.next_cursor;
  } while (cursor);
  t.deepEqual([...seen].sort(), [...ids].sort());

  t.is(
    (await call('GET', `/api/campaigns/${c.id}/scheduled-actions?cursor=bad`, as(u))).body.error.code,
    'invalid_cursor',
  );
  t.is((await call('GET', `/api/campaigns/${c.id}/scheduled-actions?state=nope`, as(u))).status, 400);
  t.is((await call('GET', `/api/campaigns/${NO_SUCH_ID}/scheduled-actions`, as(u))).status, 404);
});

test('batch-approve: per-id results approved / not_found / invalid_state', async (t) => {
  const { u, o, c } = await setup();
  const [a, b, x] = await o.leads(3);
  const ea = await enroll(o.workspaceId, c.id, a!);
  const eb = await enroll(o.workspaceId, c.id, b!);
  const planned = await action(o.workspaceId, c.id, ea, a!.leadId, { stepId: c.stepIds[0]!, position: 0 });
  const awaiting = await action(o.workspaceId, c.id, eb, b!.leadId, {
    stepId: c.stepIds[0]!,
    position: 0,
    state: 'awaiting_approval',
  });
  const executed = await action(o.workspaceId, c.id, ea, a!.leadId, {
    stepId: c.stepIds[2]!,
    position: 2,
    state: 'executed',
    type: 'message',
  });
  // An action of another campaign of the same workspace is not_found here.
  const other = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [], steps: STEPS });
  const ex = await enroll(o.workspaceId, other.id, x!);
  const elsewhere = await action(o.workspaceId, other.id, ex, x!.leadId, { stepId: other.stepIds[0]!, position: 0 });

  const r = await call(
    'POST',
    `/api/campaigns/${c.id}/scheduled-actions/batch-approve`,
    as(u, { ids: [planned, awaiting, executed, elsewhere, NO_SUCH_ID] }),
  );
  t.is(r.status, 200, r.text);
  t.deepEqual(
    r.body.items.map((i: any) => [i.id, i.result, i.state]),
    [
      [planned, 'approved', 'approved'],
      [awaiting, 'approved', 'approved'],
      [executed, 'invalid_state', 'executed'],
      [elsewhere, 'not_found', null],
      [NO_SUCH_ID, 'not_found', null],
    ],
  );
  t.like(r.body, { approved: 2, not_found: 2, invalid_state: 1 });
  t.is((await call('GET', `/api/scheduled-actions/${elsewhere}`, as(u))).body.state, 'planned');
  // Approving again: invalid_state.
  t.is(
    (await call('POST', `/api/campaigns/${c.id}/scheduled-actions/batch-approve`, as(u, { ids: [planned] }))).body
      .items[0].result,
    'invalid_state',
  );
  t.is((await call('POST', `/api/campaigns/${c.id}/scheduled-actions/batch-approve`, as(u, { ids: [] }))).status, 400);
  t.is(
    (
      await call(
        'POST',
        `/api/campaigns/${c.id}/scheduled-actions/batch-approve`,
        as(u, { ids: Array.from({ length: 501 }, () => uuidv7()) }),
      )
    ).status,
    400,
  );
});

test('stats and step-replies: numbers from seeded actions, days in the campaign time zone', async (t) => {
  const { u, o, c } = await setup({ timeZone: 'America/New_York' });
  const leads = await o.leads(4);
  // 2026-03-10T03:00Z is 2026-03-09 in New York.
  const d1 = new Date('2026-03-10T03:00:00Z');
  const d2 = new Date('2026-03-10T15:00:00Z');
  const es = [];
  for (const l of leads) es.push(await enroll(o.workspaceId, c.id, l));
  const [s0, , s2] = c.stepIds as [string, string, string];
  await action(o.workspaceId, c.id, es[0]!, leads[0]!.leadId, {
    stepId: s0,
    position: 0,
    state: 'executed',
    executedAt: d1,
    acceptedAt: d2,
  });
  await action(o.workspaceId, c.id, es[1]!, leads[1]!.leadId, {
    stepId: s0,
    position: 0,
    state: 'executed',
    executedAt: d1,
    repliedAt: d2,
  });
  await action(o.workspaceId, c.id, es[2]!, leads[2]!.leadId, {
    stepId: s0,
    position: 0,
    state: 'failed',
    errorCode: 'connector_bounced',
  });
  await action(o.workspaceId, c.id, es[3]!, leads[3]!.leadId, { stepId: s0, position: 0, state: 'planned' });
  await action(o.workspaceId, c.id, es[0]!, leads[0]!.leadId, {
    stepId: s2,
    position: 2,
    type: 'message',
    state: 'executed',
    executedAt: d2,
    repliedAt: d2,
  });

  const r = await call('GET', `/api/campaigns/${c.id}/stats`, as(u));
  t.is(r.status, 200, r.text);
  t.like(r.body.totals, { enrolled: 4, sent: 3, accepted: 1, replied: 2, failed: 1, bounced: 1, reply_rate: 0.6667 });
  t.deepEqual(
    r.body.steps.map((s: any) => [
      s.step_id,
      s.enrolled,
      s.sent,
      s.accepted,
      s.replied,
      s.failed,
      s.bounced,
      s.reply_rate,
    ]),
    [
      [s0, 4, 2, 1, 1, 1, 1, 0.5],
      [s2, 1, 1, 0, 1, 0, 0, 1],
    ],
  );
  const day = (d: string) => r.body.by_day.find((x: any) => x.day === d);
  t.like(day('2026-03-09'), { sent: 2, replied: 0, accepted: 0 });
  t.like(day('2026-03-10'), { sent: 1, replied: 2, accepted: 1 });

  const sr = await call('GET', `/api/campaigns/${c.id}/step-replies`, as(u));
  t.is(sr.status, 200, sr.text);
  t.is(sr.body.total_replies, 2);
  t.deepEqual(
    sr.body.items.map((i: any) => [i.step_id, i.replies, i.latest.length]),
    [
      [s0, 1, 1],
      [s2, 1, 1],
    ],
  );
  t.is(sr.body.items[0].latest[0].lead_id, leads[1]!.leadId);
});

test('in-flight-impact: enrollments per status, actions per state, due in the next 24 h', async (t) => {
  const { u, o, c } = await setup();
  const leads = await o.leads(3);
  const e0 = await enroll(o.workspaceId, c.id, leads[0]!);
  const e1 = await enroll(o.workspaceId, c.id, leads[1]!, { status: 'paused' });
  await enroll(o.workspaceId, c.id, leads[2]!, { status: 'completed' });
  await action(o.workspaceId, c.id, e0, leads[0]!.leadId, {
    stepId: c.stepIds[0]!,
    position: 0,
    dueAt: new Date(Date.now() + 3600_000),
  });
  await action(o.workspaceId, c.id, e1, leads[1]!.leadId, {
    stepId: c.stepIds[0]!,
    position: 0,
    state: 'awaiting_approval',
    dueAt: new Date(Date.now() - 60_000),
  });
  await action(o.workspaceId, c.id, e1, leads[1]!.leadId, {
    stepId: c.stepIds[2]!,
    position: 2,
    type: 'message',
    dueAt: new Date(Date.now() + 3 * 86400_000),
  });
  const r = await call('GET', `/api/campaigns/${c.id}/in-flight-impact`, as(u));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.enrollments_by_status, { active: 1, paused: 1, completed: 1 });
  t.is(r.body.running_enrollments, 2);
  t.deepEqual(r.body.actions_by_state, { planned: 2, awaiting_approval: 1 });
  t.is(r.body.due_next_24h, 2);
  t.is(r.body.awaiting_approval_next_24h, 1);
  t.deepEqual(
    r.body.pending_actions_by_step.map((s: any) => [s.step_position, s.pending]),
    [
      [0, 2],
      [2, 1],
    ],
  );
});

test('country rules: impact counts and sample; cancel cancels actions and stops enrollments', async (t) => {
  const { u, o, c } = await setup({ countryRule: { mode: 'block', countries: ['FR'] } });
  const fr = await o.leads(2, { country: 'fr' });
  const de = await o.leads(1, { country: 'DE' });
  const ids: Record<string, string> = {};
  for (const l of [...fr, ...de]) {
    const e = await enroll(o.workspaceId, c.id, l);
    ids[l.leadId] = await action(o.workspaceId, c.id, e, l.leadId, { stepId: c.stepIds[0]!, position: 0 });
  }
  const e0 = (
    await (await em()).execute(`select enrollment_id from scheduled_actions where id = ?`, [ids[fr[0]!.leadId]])
  )[0].enrollment_id;
  await action(o.workspaceId, c.id, e0, fr[0]!.leadId, {
    stepId: c.stepIds[2]!,
    position: 2,
    type: 'message',
    state: 'executed',
  });

  const imp = await call('GET', `/api/campaigns/${c.id}/scheduled-actions/country-restriction-impact`, as(u));
  t.is(imp.status, 200, imp.text);
  t.like(imp.body, { actions: 2, enrollments: 2 });
  t.deepEqual(imp.body.by_country, [{ country: 'FR', actions: 2 }]);
  t.deepEqual(imp.body.sample.map((s: any) => s.lead_id).sort(), fr.map((l) => l.leadId).sort());

  const cancel = await call('POST', `/api/campaigns/${c.id}/scheduled-actions/cancel-country-restricted`, as(u));
  t.is(cancel.status, 200, cancel.text);
  t.like(cancel.body, { canceled_actions: 2, stopped_enrollments: 2 });
  const a = await call('GET', `/api/scheduled-actions/${ids[fr[0]!.leadId]}`, as(u));
  t.like(a.body, { state: 'canceled', error_code: 'blocked_country' });
  t.is((await call('GET', `/api/scheduled-actions/${ids[de[0]!.leadId]}`, as(u))).body.state, 'planned');
  const rows = await (
    await em()
  ).execute(`select lead_id, status, stop_reason from enrollments where campaign_id = ? order by lead_id`, [c.id]);
  t.deepEqual(
    rows
      .filter((r: any) => r.status === 'stopped')
      .map((r: any) => r.lead_id)
      .sort(),
    fr.map((l) => l.leadId).sort(),
  );
  t.true(rows.every((r: any) => r.status !== 'stopped' || r.stop_reason === 'blocked_country'));
  t.like((await call('GET', `/api/campaigns/${c.id}/scheduled-actions/country-restriction-impact`, as(u))).body, {
    actions: 0,
  });

  // An allow rule refuses unknown countries too.
  const allow = await setup({ countryRule: { mode: 'allow', countries: ['DE'] } });
  const [none] = await allow.o.leads(1, { country: null });
  const en = await enroll(allow.o.workspaceId, allow.c.id, none!);
  await action(allow.o.workspaceId, allow.c.id, en, none!.leadId, { stepId: allow.c.stepIds[0]!, position: 0 });
  t.like(
    (await call('GET', `/api/campaigns/${allow.c.id}/scheduled-actions/country-restriction-impact`, as(allow.u))).body,
    { actions: 1, by_country: [{ country: null, actions: 1 }] },
  );
  // No rule: nothing.
  const free = await setup();
  t.like(
    (await call('GET', `/api/campaigns/${free.c.id}/scheduled-actions/country-restriction-impact`, as(free.u))).body,
    { actions: 0, country_rule: null },
  );
});

test('another workspace’s campaign is 404 on every campaign-level route', async (t) => {
  const { c } = await setup();
  const stranger = await createOwner();
  const routes: [string, string, unknown?][] = [
    ['GET', `/api/campaigns/${c.id}/scheduled-actions`],
    ['POST', `/api/campaigns/${c.id}/scheduled-actions/batch-approve`, { ids: [NO_SUCH_ID] }],
    ['GET', `/api/campaigns/${c.id}/scheduled-actions/country-restriction-impact`],
    ['POST', `/api/campaigns/${c.id}/scheduled-actions/cancel-country-restricted`],
    ['GET', `/api/campaigns/${c.id}/in-flight-impact`],
    ['GET', `/api/campaigns/${c.id}/stats`],
    ['GET', `/api/campaigns/${c.id}/step-replies`],
    ['POST', `/api/campaigns/${c.id}/scheduled-actions/reschedule-overdue`],
    ['POST', `/api/campaigns/${c.id}/scheduled-actions/reschedule-planned`],
  ];
  for (const [m, p, body] of routes) {
    const r = await call(m, p, as(stranger, body));
    t.is(r.status, 404, `${m} ${p}: ${r.text}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.is((await call('GET', `/api/campaigns/${c.id}/stats`)).status, 401);
});

const PARIS = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Europe/Paris',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});
const paris = (iso: string) => {
  const p = Object.fromEntries(PARIS.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
  return { day: `${p.year}-${p.month}-${p.day}`, minutes: Number(p.hour) * 60 + Number(p.minute) };
};

test('pausing for a day then reschedule-overdue respects windows and caps; reschedule-planned follows new windows; the slot request honours the later due time', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const accA = await fastAccount(u, 'network', { caps: { invitation: { daily: 3, weekly: 100 } }, min_gap_seconds: 0 });
  const accB = await fastAccount(u, 'network', { caps: { invitation: { daily: 2, weekly: 100 } }, min_gap_seconds: 0 });
  // Two windows a day, neither open now (nor within 10 minutes of it): with a window open at the
  // moment of the call, the first action of each account is placed "now" and is due at once.
  const nowMinutes = paris(new Date().toISOString()).minutes;
  const clear = (from: number, to: number) => nowMinutes < from * 60 - 10 || nowMinutes >= to * 60 + 10;
  const H = [9, 1, 17].find((h) => clear(h, h + 3) && clear(h + 5, h + 7))!;
  const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;
  const morning = Object.fromEntries(
    ['1', '2', '3', '4', '5', '6', '7'].map((d) => [d, [{ start: hh(H), end: hh(H + 3) }]]),
  );
  const c = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [accA.id, accB.id],
    steps: STEPS,
    windows: morning,
    timeZone: 'Europe/Paris',
    status: 'paused',
  });
  const leads = await o.leads(9);
  const yesterday = Date.now() - 86_400_000;
  const byAccount: Record<string, string[]> = { [accA.id]: [], [accB.id]: [] };
  const order: string[] = [];
  for (const [i, l] of leads.entries()) {
    const e = await enroll(o.workspaceId, c.id, l, { status: i === 8 ? 'removed' : 'active' });
    const acc = i % 2 === 0 ? accA.id : accB.id;
    const id = await action(o.workspaceId, c.id, e, l.leadId, {
      stepId: c.stepIds[0]!,
      position: 0,
      dueAt: new Date(yesterday + i * 60_000),
    });
    await (
      await em()
    ).execute(`update scheduled_actions set account_id = ?, waiting_reason = 'campaign_paused' where id = ?`, [
      acc,
      id,
    ]);
    if (i < 8) {
      byAccount[acc]!.push(id);
      order.push(id);
    }
  }
  const before = Date.now();
  const r = await call('POST', `/api/campaigns/${c.id}/scheduled-actions/reschedule-overdue`, as(u));
  t.is(r.status, 200, r.text);
  t.like(r.body, { considered: 8, rescheduled: 8, no_window: 0 });

  const list = (await call('GET', `/api/campaigns/${c.id}/scheduled-actions?state=planned&limit=200`, as(u))).body
    .items as any[];
  const due = new Map(list.map((a) => [a.id, a.due_at as string]));
  for (const id of order) {
    const d = due.get(id)!;
    t.true(Date.parse(d) >= before - 1000, `${d} is not in the past`);
    const { minutes } = paris(d);
    t.true(minutes >= H * 60 && minutes < (H + 3) * 60, `${d} is inside ${hh(H)}–${hh(H + 3)} Paris`);
    t.is(list.find((a) => a.id === id).waiting_reason, 'rescheduled');
  }
  for (const [acc, cap] of [
    [accA.id, 3],
    [accB.id, 2],
  ] as const) {
    const perDay = new Map<string, string[]>();
    for (const id of byAccount[acc]!)
      perDay.set(paris(due.get(id)!).day, [...(perDay.get(paris(due.get(id)!).day) ?? []), due.get(id)!]);
    for (const [day, times] of perDay) {
      t.true(times.length <= cap, `${acc} has ${times.length} on ${day} (cap ${cap})`);
      const sorted = times.map(Date.parse).sort((a, b) => a - b);
      for (let i = 1; i < sorted.length; i++)
        t.true(sorted[i]! - sorted[i - 1]! >= 60_000, 'spread at least a minute apart');
    }
    t.true(perDay.size >= 2, 'more than one day was needed');
    // Earliest first: the account's actions keep their order.
    const times = byAccount[acc]!.map((id) => Date.parse(due.get(id)!));
    t.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
  }
  // The removed enrollment's action is left alone; nothing is overdue any more.
  t.like((await call('POST', `/api/campaigns/${c.id}/scheduled-actions/reschedule-overdue`, as(u))).body, {
    considered: 0,
    rescheduled: 0,
  });

  // The slot request honours the later due time instead of sending at once (once the campaign is
  // active again: while it is paused the send-time rule holds it as campaign_paused first).
  const first = order[0]!;
  t.like(await acquireSlot(await em(), first), { granted: false, reason: 'campaign_paused' });
  await (await em()).execute(`update campaigns set status = 'active' where id = ?`, [c.id]);
  const slot = await acquireSlot(await em(), first);
  t.deepEqual(slot, { granted: false, reason: 'rescheduled', retryAt: new Date(due.get(first)!).toISOString() });

  // A settings change: afternoon windows. reschedule-planned moves every pending action at or after its due time into them.
  const afternoon = Object.fromEntries(
    ['1', '2', '3', '4', '5', '6', '7'].map((d) => [d, [{ start: hh(H + 5), end: hh(H + 7) }]]),
  );
  await (
    await em()
  ).execute(`update campaigns set sending_windows = ?::jsonb where id = ?`, [JSON.stringify(afternoon), c.id]);
  const p = await call('POST', `/api/campaigns/${c.id}/scheduled-actions/reschedule-planned`, as(u));
  t.is(p.status, 200, p.text);
  t.like(p.body, { considered: 8, rescheduled: 8 });
  const after = new Map(
    (
      (await call('GET', `/api/campaigns/${c.id}/scheduled-actions?state=planned&limit=200`, as(u))).body.items as any[]
    ).map((a) => [a.id, a.due_at as string]),
  );
  for (const id of order) {
    const { minutes } = paris(after.get(id)!);
    t.true(
      minutes >= (H + 5) * 60 && minutes < (H + 7) * 60,
      `${after.get(id)} is inside ${hh(H + 5)}–${hh(H + 7)} Paris`,
    );
    t.true(Date.parse(after.get(id)!) >= Date.parse(due.get(id)!), 'never earlier');
  }
  for (const [acc, cap] of [
    [accA.id, 3],
    [accB.id, 2],
  ] as const) {
    const counts = new Map<string, number>();
    for (const id of byAccount[acc]!)
      counts.set(paris(after.get(id)!).day, (counts.get(paris(after.get(id)!).day) ?? 0) + 1);
    t.true([...counts.values()].every((n) => n <= cap));
  }
});

test('reschedule routes: 409 for a draft campaign, 404 for an unknown one', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const c = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [], steps: STEPS, status: 'draft' });
  for (const p of ['reschedule-overdue', 'reschedule-planned']) {
    const r = await call('POST', `/api/campaigns/${c.id}/scheduled-actions/${p}`, as(u));
    t.is(r.status, 409, r.text);
    t.is(r.body.error.code, 'invalid_transition');
    t.is((await call('POST', `/api/campaigns/${NO_SUCH_ID}/scheduled-actions/${p}`, as(u))).status, 404);
  }
});

test('the Operator tool reschedule_campaign_actions (risk change) re-plans like the routes, for the caller’s campaigns only', async (t) => {
  const { u, o, c } = await setup();
  const [lead] = await o.leads(1);
  const e = await enroll(o.workspaceId, c.id, lead);
  const id = await action(o.workspaceId, c.id, e, lead.leadId, {
    stepId: c.stepIds[0]!,
    position: 0,
    dueAt: new Date(Date.now() - 86_400_000),
  });
  const tool = findTool('reschedule_campaign_actions')!;
  t.is(tool.risk, 'change');
  const { services } = await api();
  const ctxOf = async (userId: string) => {
    const m = services.orm.em.fork();
    return {
      em: m,
      jobs: services.jobs,
      config: services.config,
      providers: services,
      actor: await resolveActor(m as never, { userId, kind: 'session' }, undefined),
    };
  };
  const r = (await runTool(tool, await ctxOf(u.id), { campaign_id: c.id, which: 'overdue' })) as {
    rescheduled: number;
    items: { id: string }[];
  };
  t.like(r, { considered: 1, rescheduled: 1 });
  t.is(r.items[0]!.id, id);
  t.like(await runTool(tool, await ctxOf(u.id), { campaign_id: c.id, which: 'planned' }), { rescheduled: 0 }); // already in the windows
  // Another workspace's user: not found, nothing moves.
  const other = await createOwner();
  await t.throwsAsync(runTool(tool, await ctxOf(other.id), { campaign_id: c.id, which: 'planned' }), {
    message: /not found/,
  });
  t.throws(() => tool.input.parse({ campaign_id: c.id, which: 'all' }));
});
