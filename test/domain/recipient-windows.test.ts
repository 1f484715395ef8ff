// Recipient-local sending windows (docs/campaigns.md "Recipient-local windows"), with a fixed clock:
// the planner puts each first send at 09:00 in the recipient's own zone (stored, or derived from an
// unambiguous country; else the campaign's), across daylight-saving changes, and the send-time rule
// reads the same zone, so the planned time and the rule's "window open" agree to the minute.
import test from 'ava';
import { planAction } from '../../domain/enrollments/executor.js';
import { actionFacts } from '../../domain/enrollments/send-rule.js';
import { uuidv7 } from '../../lib/ids.js';
import { closeApi } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, seedCampaign } from '../helpers/campaigns.js';
test.after.always(closeApi);

const WEEKDAYS_9_TO_5 = Object.fromEntries(
  ['1', '2', '3', '4', '5'].map((d) => [d, [{ start: '09:00', end: '17:00' }]]),
);

/** Who the leads are: a stored zone, or a country (FR: one zone; US: several, so the campaign's). */
const PEOPLE = [
  { key: 'new_york', time_zone: 'America/New_York', country: null },
  { key: 'berlin', time_zone: 'Europe/Berlin', country: null },
  { key: 'tokyo', time_zone: 'Asia/Tokyo', country: null },
  { key: 'france', time_zone: null, country: 'FR' },
  { key: 'usa', time_zone: null, country: 'United States' },
] as const;

async function setup(mode: 'campaign' | 'recipient') {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const c = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [],
    timeZone: 'Europe/London',
    windows: WEEKDAYS_9_TO_5,
    steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hello' } }],
  });
  const db = await em();
  await db.execute(`update campaigns set window_time_zone = ? where id = ?`, [mode, c.id]);
  const leads = await o.leads(PEOPLE.length);
  const enrollments: Record<string, string> = {};
  for (const [i, p] of PEOPLE.entries()) {
    await db.execute(`update contacts set time_zone = ?, country = ? where id = ?`, [
      p.time_zone,
      p.country,
      leads[i].contactId,
    ]);
    const id = uuidv7();
    await db.execute(
      `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at) values (?, ?, ?, ?, ?, 'active', 1, 1, now(), now(), now())`,
      [id, o.workspaceId, c.id, leads[i].leadId, leads[i].contactId],
    );
    enrollments[p.key] = id;
  }
  return { db, campaignId: c.id, stepId: c.stepIds[0], enrollments };
}

async function planAll(mode: 'campaign' | 'recipient', now: Date) {
  const s = await setup(mode);
  const due: Record<string, { actionId: string; dueAt: string }> = {};
  for (const p of PEOPLE) {
    const actionId = uuidv7();
    const r = await planAction(
      s.db,
      { enrollmentId: s.enrollments[p.key], actionId, stepId: s.stepId, version: 1, index: 0, notBefore: null },
      now,
    );
    due[p.key] = { actionId, dueAt: r.dueAt };
  }
  return { ...s, due };
}

test('recipient mode: planned on a Saturday, each first send is due Monday 09:00 in the recipient’s zone (New York already on summer time), the send-time rule agrees', async (t) => {
  // Saturday 2026-03-07 12:00 UTC. The US changes to summer time on Sunday 2026-03-08; Europe on 2026-03-29.
  const { db, due } = await planAll('recipient', new Date('2026-03-07T12:00:00Z'));
  t.is(due.new_york.dueAt, '2026-03-09T13:00:00.000Z', '09:00 EDT (UTC−4): the new offset after the change');
  t.is(due.berlin.dueAt, '2026-03-09T08:00:00.000Z', '09:00 CET (UTC+1)');
  t.is(due.tokyo.dueAt, '2026-03-09T00:00:00.000Z', '09:00 JST (UTC+9), already Monday there');
  t.is(due.france.dueAt, '2026-03-09T08:00:00.000Z', 'France has one zone: Europe/Paris');
  t.is(due.usa.dueAt, '2026-03-09T09:00:00.000Z', 'the US has several: the campaign’s zone (London, UTC+0)');

  // The rule reads the same zone: a minute before the planned time the window is closed, at it open.
  for (const key of ['new_york', 'tokyo', 'usa'] as const) {
    const at = new Date(due[key].dueAt);
    t.false(
      (await actionFacts(db, due[key].actionId, { now: new Date(at.getTime() - 60_000) }))!.windowOpen,
      `${key}: closed a minute before`,
    );
    const open = await actionFacts(db, due[key].actionId, { now: at });
    t.true(open!.windowOpen, `${key}: open at the planned time`);
    t.is(open!.windowOpensAt?.toISOString(), due[key].dueAt);
  }
});

test('recipient mode across Europe’s change to summer time: Monday 09:00 in Berlin is 07:00 UTC, a week after it was 08:00', async (t) => {
  const before = await planAll('recipient', new Date('2026-03-21T12:00:00Z'));
  const after = await planAll('recipient', new Date('2026-03-28T12:00:00Z'));
  t.is(before.due.berlin.dueAt, '2026-03-23T08:00:00.000Z');
  t.is(after.due.berlin.dueAt, '2026-03-30T07:00:00.000Z');
  t.is(after.due.france.dueAt, '2026-03-30T07:00:00.000Z');
  t.is(after.due.new_york.dueAt, '2026-03-30T13:00:00.000Z', 'New York unchanged (changed three weeks earlier)');
  t.is(after.due.usa.dueAt, '2026-03-30T08:00:00.000Z', 'London changed too: 09:00 BST');
});

test('campaign mode (the default): every send is due at 09:00 in the campaign’s zone, whatever the recipient’s', async (t) => {
  const { due } = await planAll('campaign', new Date('2026-03-07T12:00:00Z'));
  for (const p of PEOPLE) t.is(due[p.key].dueAt, '2026-03-09T09:00:00.000Z', p.key);
});
