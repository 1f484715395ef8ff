// Follow-ups (docs/follow-ups.md): reminders from replies nobody answered and meetings without an
// outcome, pending count, completion, dismissal per lead, notes, the dashboard's next event.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sandboxInjectMessage } from '../../lib/connectors/sandbox-network.js';
import { deliverFor } from '../helpers/inbound.js';
import { uuidv7 } from '../../lib/ids.js';
import { waitFor } from '../../scripts/children.js';
import { call, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount } from '../helpers/campaigns.js';
test.after.always(closeApi);

const get = (u: TestUser, path: string) => call('GET', path, { token: u.accessToken });
const post = (u: TestUser, path: string, body?: unknown) => call('POST', path, { token: u.accessToken, body });

/** An owner with one lead who replied (a reply_waiting reminder, not due yet). */
async function replied() {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const [lead] = await o.leads(1);
  const m = await sandboxInjectMessage(await em(), account.connector_account_id, {
    from: lead.email,
    body: 'Interested, what does it cost?',
  });
  await deliverFor(account.connector_account_id);
  await waitFor(
    'the reminder',
    async () =>
      (await (await em()).execute(`select 1 from follow_up_reminders where lead_id = ?`, [lead.leadId])).length > 0,
    60_000,
  );
  return { u, o, account, lead, messageId: m.messageId };
}

async function seedMeeting(
  workspaceId: string,
  lead: { leadId: string; contactId: string },
  startsInMs: number,
  title = 'Intro call',
) {
  const id = uuidv7();
  const start = new Date(Date.now() + startsInMs);
  await (
    await em()
  ).execute(
    `insert into meetings (id, workspace_id, lead_id, contact_id, title, starts_at, ends_at, status, source, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, 'scheduled', 'manual', now(), now())`,
    [id, workspaceId, lead.leadId, lead.contactId, title, start, new Date(start.getTime() + 30 * 60_000)],
  );
  return id;
}

test('a reply opens a reminder due a day later; once due it is pending, listed and completed once (409 already_resolved after)', async (t) => {
  const { u, lead } = await replied();
  const [r] = (await get(u, '/api/follow-ups')).body.items;
  t.like(r, {
    kind: 'reply_waiting',
    state: 'open',
    due: false,
    summary: 'Interested, what does it cost?',
    lead: { id: lead.leadId, first_name: 'Grace', email: lead.email },
  });
  t.true(Date.parse(r.due_at) - Date.now() > 23 * 3_600_000);
  t.deepEqual((await get(u, '/api/follow-ups/pending-count')).body, { total: 0, reply_waiting: 0, meeting_outcome: 0 });
  t.is((await get(u, '/api/follow-ups?due=true')).body.items.length, 0);

  await (
    await em()
  ).execute(`update follow_up_reminders set due_at = now() - interval '1 minute' where id = ?`, [r.id]);
  t.deepEqual((await get(u, '/api/follow-ups/pending-count')).body, { total: 1, reply_waiting: 1, meeting_outcome: 0 });
  t.like((await get(u, '/api/follow-ups?due=true')).body.items, [{ id: r.id, due: true }]);

  const done = await post(u, `/api/follow-ups/reminders/${r.id}/complete`);
  t.is(done.status, 200, done.text);
  t.like(done.body, { id: r.id, state: 'completed' });
  const again = await post(u, `/api/follow-ups/reminders/${r.id}/complete`);
  t.is(again.status, 409);
  t.is(again.body.error.code, 'already_resolved');
  t.is((await get(u, '/api/follow-ups')).body.items.length, 0);
  t.like((await get(u, '/api/follow-ups?state=completed')).body.items, [{ id: r.id }]);
  t.deepEqual((await get(u, '/api/follow-ups/pending-count')).body, { total: 0, reply_waiting: 0, meeting_outcome: 0 });
});

test('a meeting that ended without an outcome needs one; recording it resolves the reminder; the next event is the sooner of meeting and follow-up', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const [a, b] = await o.leads(2);
  t.deepEqual((await get(u, '/api/dashboard/next-event')).body, { next: null, meeting: null, follow_up: null });

  const future = await seedMeeting(o.workspaceId, b, 2 * 3_600_000, 'Demo with Grace');
  let next = (await get(u, '/api/dashboard/next-event')).body;
  t.like(next, {
    next: { type: 'meeting', meeting: { id: future, title: 'Demo with Grace', lead_id: b.leadId } },
    follow_up: null,
  });

  const past = await seedMeeting(o.workspaceId, a, -2 * 3_600_000, 'Call that happened');
  const items = (await get(u, '/api/follow-ups?kind=meeting_outcome')).body.items;
  t.like(items, [
    { kind: 'meeting_outcome', meeting_id: past, due: true, summary: 'Call that happened', lead: { id: a.leadId } },
  ]);
  t.deepEqual((await get(u, '/api/follow-ups/pending-count')).body, { total: 1, reply_waiting: 0, meeting_outcome: 1 });
  next = (await get(u, '/api/dashboard/next-event')).body;
  t.like(next, { next: { type: 'follow_up', follow_up: { meeting_id: past } }, meeting: { id: future } });

  await (await em()).execute(`update meetings set outcome = 'held', outcome_at = now() where id = ?`, [past]);
  t.deepEqual((await get(u, '/api/follow-ups/pending-count')).body, { total: 0, reply_waiting: 0, meeting_outcome: 0 });
  t.like((await get(u, '/api/follow-ups?state=completed')).body.items, [{ meeting_id: past, state: 'completed' }]);
  t.like((await get(u, '/api/dashboard/next-event')).body, { next: { type: 'meeting' }, follow_up: null });
});

test('dismiss closes every open follow-up of the lead, and only that lead’s; a repeat dismisses nothing', async (t) => {
  const { u, o, lead } = await replied();
  const [other] = await o.leads(1);
  await seedMeeting(o.workspaceId, lead, -3_600_000);
  await seedMeeting(o.workspaceId, other, -3_600_000);
  t.is((await get(u, '/api/follow-ups')).body.items.length, 3);
  const r = await post(u, `/api/follow-ups/leads/${lead.leadId}/dismiss`);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { lead_id: lead.leadId, dismissed: 2 });
  t.deepEqual((await post(u, `/api/follow-ups/leads/${lead.leadId}/dismiss`)).body, {
    lead_id: lead.leadId,
    dismissed: 0,
  });
  t.like((await get(u, '/api/follow-ups')).body.items, [{ lead: { id: other.leadId } }]);
  t.is((await get(u, '/api/follow-ups?state=dismissed')).body.items.length, 2);
});

test('notes per lead: written, listed newest first with cursor pages, validated', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const [lead] = await o.leads(1);
  const path = `/api/follow-ups/leads/${lead.leadId}/notes`;
  for (const body of ['First call went well', 'Sent pricing', 'Asked for a demo'])
    t.is((await post(u, path, { body })).status, 201);
  const p1 = (await get(u, `${path}?limit=2`)).body;
  t.deepEqual(
    p1.items.map((n: { body: string }) => n.body),
    ['Asked for a demo', 'Sent pricing'],
  );
  t.like(p1.items[0], { lead_id: lead.leadId, author_id: u.id });
  const p2 = (await get(u, `${path}?limit=2&cursor=${p1.next_cursor}`)).body;
  t.deepEqual(
    p2.items.map((n: { body: string }) => n.body),
    ['First call went well'],
  );
  t.is(p2.next_cursor, null);
  for (const body of [{ body: '   ' }, { body: 'x'.repeat(5001) }, {}, { body: 'ok', extra: 1 }]) {
    const r = await post(u, path, body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 40));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is((await get(u, `/api/follow-ups/leads/${randomUUID()}/notes`)).status, 404);
});

test('every id-taking follow-up route answers 404 for another workspace’s reminder or lead, and changes nothing', async (t) => {
  const { u, lead } = await replied();
  const [r] = (await get(u, '/api/follow-ups')).body.items;
  const other = await createUser();
  for (const [method, path, body] of [
    ['POST', `/api/follow-ups/reminders/${r.id}/complete`],
    ['POST', `/api/follow-ups/leads/${lead.leadId}/dismiss`],
    ['GET', `/api/follow-ups/leads/${lead.leadId}/notes`],
    ['POST', `/api/follow-ups/leads/${lead.leadId}/notes`, { body: 'hi' }],
  ] as [string, string, unknown?][]) {
    const res = await call(method, path, { token: other.accessToken, body });
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.error.code, 'not_found');
  }
  t.like((await get(u, '/api/follow-ups')).body.items, [{ id: r.id, state: 'open' }]);
  t.is((await get(u, `/api/follow-ups/leads/${lead.leadId}/notes`)).body.items.length, 0);
  t.is((await get(other, '/api/follow-ups')).body.items.length, 0);
  t.deepEqual((await get(other, '/api/dashboard/next-event')).body, { next: null, meeting: null, follow_up: null });
});
