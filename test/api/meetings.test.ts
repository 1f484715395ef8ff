// Meetings per lead (docs/meetings.md): created by hand, listed by start time, outcome and time
// changed under the transition rules; ownership (another workspace's ids are 404), product access,
// the Demo workspace, and the Operator tools list_meetings / log_meeting.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { em } from '../helpers/billing.js';
import { at, withLead } from '../helpers/meetings.js';
import { addMemberViaInvite } from '../helpers/team.js';
test.after.always(closeApi);

const create = (u: TestUser, leadId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call('POST', `/api/leads/${leadId}/meetings`, { token: u.accessToken, body, headers });
const patch = (u: TestUser, id: string, body: Record<string, unknown>) =>
  call('PATCH', `/api/meetings/${id}`, { token: u.accessToken, body });

test('a meeting is logged by hand, listed by start time, and its outcome and time are changed', async (t) => {
  const { u, leadId, contactId } = await withLead();
  const later = await create(u, leadId, {
    title: '  Demo call ',
    starts_at: at(48),
    ends_at: at(49),
    location: 'https://meet.example.test/x',
  });
  t.is(later.status, 201, later.text);
  t.like(later.body, {
    lead_id: leadId,
    contact_id: contactId,
    title: 'Demo call',
    status: 'scheduled',
    outcome: null,
    source: 'manual',
    booking_provider_id: null,
    external_id: null,
    created_by_user_id: u.id,
  });
  const past = await create(u, leadId, {
    title: 'Intro',
    starts_at: at(-26),
    ends_at: at(-25),
    outcome: 'held',
    notes: 'Went well',
  });
  t.is(past.status, 201, past.text);
  t.like(past.body, { outcome: 'held', notes: 'Went well' });
  t.truthy(past.body.outcome_at);

  const list = await call('GET', `/api/leads/${leadId}/meetings?limit=1`, { token: u.accessToken });
  t.is(list.status, 200);
  t.deepEqual(
    list.body.items.map((m: { id: string }) => m.id),
    [past.body.id],
    'soonest start first',
  );
  const next = await call('GET', `/api/leads/${leadId}/meetings?limit=1&cursor=${list.body.next_cursor}`, {
    token: u.accessToken,
  });
  t.deepEqual(
    next.body.items.map((m: { id: string }) => m.id),
    [later.body.id],
  );
  t.is(next.body.next_cursor, null);

  // Moved into the past, then recorded as a no-show; then canceled (outcome cleared in the same change).
  const moved = await patch(u, later.body.id, { starts_at: at(-3), ends_at: at(-2) });
  t.is(moved.status, 200, moved.text);
  t.is(moved.body.starts_at, new Date(moved.body.starts_at).toISOString());
  const noShow = await patch(u, later.body.id, { outcome: 'no_show' });
  t.like(noShow.body, { outcome: 'no_show', status: 'scheduled' });
  const canceled = await patch(u, later.body.id, { status: 'canceled', outcome: null, location: '' });
  t.like(canceled.body, { status: 'canceled', outcome: null, outcome_at: null, location: null });
  t.truthy(canceled.body.canceled_at);
  const filtered = await call('GET', `/api/leads/${leadId}/meetings?status=canceled`, { token: u.accessToken });
  t.deepEqual(
    filtered.body.items.map((m: { id: string }) => m.id),
    [later.body.id],
  );
  const back = await patch(u, later.body.id, { status: 'scheduled' });
  t.like(back.body, { status: 'scheduled', canceled_at: null });
});

test('validation: 400 invalid_time_range, invalid_outcome, invalid_body, invalid_id, invalid_query, invalid_cursor', async (t) => {
  const { u, leadId } = await withLead();
  const code = async (p: Promise<{ status: number; body: { error: { code: string } } }>) => {
    const r = await p;
    return `${r.status} ${r.body.error?.code}`;
  };
  t.is(await code(create(u, leadId, { title: 'x', starts_at: at(2), ends_at: at(1) })), '400 invalid_time_range');
  const same = at(2); // one instant: two calls of at() may differ by a millisecond
  t.is(await code(create(u, leadId, { title: 'x', starts_at: same, ends_at: same })), '400 invalid_time_range');
  t.is(
    await code(create(u, leadId, { title: 'x', starts_at: at(2), ends_at: at(27) })),
    '400 invalid_time_range',
    'over 24 hours',
  );
  t.is(
    await code(create(u, leadId, { title: 'x', starts_at: at(3 * 365 * 24), ends_at: at(3 * 365 * 24 + 1) })),
    '400 invalid_time_range',
    'years ahead',
  );
  t.is(
    await code(create(u, leadId, { title: 'x', starts_at: at(2), ends_at: at(3), outcome: 'held' })),
    '400 invalid_outcome',
  );
  t.is(await code(create(u, leadId, { title: '   ', starts_at: at(2), ends_at: at(3) })), '400 invalid_body');
  t.is(await code(create(u, leadId, { title: 'x'.repeat(301), starts_at: at(2), ends_at: at(3) })), '400 invalid_body');
  t.is(await code(create(u, leadId, { title: 'x', starts_at: 'tomorrow', ends_at: at(3) })), '400 invalid_body');
  t.is(
    await code(create(u, leadId, { title: 'x', starts_at: at(2), ends_at: at(3), color: 'red' })),
    '400 invalid_body',
  );
  t.is(
    await code(create(u, leadId, { title: 'x', starts_at: at(2), ends_at: at(3), notes: 'n'.repeat(5001) })),
    '400 invalid_body',
  );
  t.is(await code(create(u, 'not-a-uuid', { title: 'x', starts_at: at(2), ends_at: at(3) })), '400 invalid_id');
  const m = await create(u, leadId, { title: 'x', starts_at: at(2), ends_at: at(3) });
  t.is(await code(patch(u, m.body.id, {})), '400 invalid_body');
  t.is(
    await code(patch(u, m.body.id, { ends_at: at(1) })),
    '400 invalid_time_range',
    'checked against the stored start',
  );
  t.is(await code(call('GET', `/api/leads/${leadId}/meetings?limt=5`, { token: u.accessToken })), '400 invalid_query');
  t.is(
    await code(call('GET', `/api/leads/${leadId}/meetings?cursor=AZq6CzJ2c7qDdSZEe0y2Rw`, { token: u.accessToken })),
    '400 invalid_cursor',
  );
  t.is((await call('GET', `/api/leads/${leadId}/meetings`)).status, 401);
});

test('outcome transitions: held or no_show only once started, no outcome on a canceled meeting (409 invalid_transition)', async (t) => {
  const { u, leadId } = await withLead();
  const future = await create(u, leadId, { title: 'Soon', starts_at: at(5), ends_at: at(6) });
  for (const outcome of ['held', 'no_show']) {
    const r = await patch(u, future.body.id, { outcome });
    t.is(r.status, 409, outcome);
    t.is(r.body.error.code, 'invalid_transition');
  }
  t.is(
    (await patch(u, future.body.id, { outcome: 'rescheduled' })).body.outcome,
    'rescheduled',
    'rescheduled needs no start',
  );
  const past = await create(u, leadId, { title: 'Done', starts_at: at(-5), ends_at: at(-4), outcome: 'held' });
  const cancel = await patch(u, past.body.id, { status: 'canceled' });
  t.is(cancel.status, 409, 'a held meeting cannot be canceled without clearing its outcome');
  t.is(cancel.body.error.code, 'invalid_transition');
  await patch(u, past.body.id, { status: 'canceled', outcome: null });
  const onCanceled = await patch(u, past.body.id, { outcome: 'no_show' });
  t.is(onCanceled.status, 409);
  const later = await patch(u, past.body.id, { status: 'scheduled', starts_at: at(10), ends_at: at(11) });
  t.is(later.status, 200);
  t.is((await patch(u, past.body.id, { outcome: 'held' })).status, 409, 'moved to the future: not held yet');
});

test('another workspace’s lead or meeting is 404; a member without the lead’s product is 403 not_assigned', async (t) => {
  const a = await withLead();
  const b = await withLead();
  const mine = await create(a.u, a.leadId, { title: 'Mine', starts_at: at(2), ends_at: at(3) });
  const theirs = await create(b.u, b.leadId, { title: 'Theirs', starts_at: at(2), ends_at: at(3) });
  t.is((await call('GET', `/api/leads/${b.leadId}/meetings`, { token: a.u.accessToken })).status, 404);
  const created = await create(a.u, b.leadId, { title: 'x', starts_at: at(2), ends_at: at(3) });
  t.is(created.status, 404);
  t.is(created.body.error.code, 'not_found');
  const p = await patch(a.u, theirs.body.id, { title: 'Hijacked' });
  t.is(p.status, 404);
  t.is(p.body.error.code, 'not_found');
  t.is((await patch(a.u, randomUUID(), { title: 'x' })).status, 404);
  t.is((await call('GET', `/api/leads/${randomUUID()}/meetings`, { token: a.u.accessToken })).status, 404);

  // A member given another product only.
  const other = await createTestApp(a.u, 'Other product');
  const { user: member } = await addMemberViaInvite(a.u, { role: 'member', all_apps: false, app_ids: [other.id] });
  const as = { 'x-acting-as': a.u.id };
  const read = await call('GET', `/api/leads/${a.leadId}/meetings`, { token: member.accessToken, headers: as });
  t.is(read.status, 403);
  t.is(read.body.error.code, 'not_assigned');
  t.is(
    (await create(member, a.leadId, { title: 'x', starts_at: at(2), ends_at: at(3) }, as)).body.error.code,
    'not_assigned',
  );
  t.is(
    (
      await call('PATCH', `/api/meetings/${mine.body.id}`, {
        token: member.accessToken,
        headers: as,
        body: { title: 'x' },
      })
    ).body.error.code,
    'not_assigned',
  );
});

test('the Demo workspace is read-only: logging a meeting there is 403 demo_read_only', async (t) => {
  const u = await createUser();
  t.is((await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken })).status, 201);
  const r = await create(
    u,
    randomUUID(),
    { title: 'x', starts_at: at(2), ends_at: at(3) },
    { 'x-acting-as': DEMO_USER_ID },
  );
  t.is(r.status, 403);
  t.is(r.body.error.code, 'demo_read_only');
  const p = await call('PATCH', `/api/meetings/${randomUUID()}`, {
    token: u.accessToken,
    headers: { 'x-acting-as': DEMO_USER_ID },
    body: { title: 'x' },
  });
  t.is(p.body.error.code, 'demo_read_only');
});

test('Operator tools: log_meeting logs one and records an outcome; list_meetings reads a lead’s and the workspace’s', async (t) => {
  const { services } = await api();
  const { u, leadId } = await withLead();
  const e = await em();
  const ctx = {
    em: e as never,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined),
  };
  const log = findTool('log_meeting')!;
  const list = findTool('list_meetings')!;
  t.is(log.risk, 'change');
  t.is(list.risk, 'read');
  const logged = (await runTool(log, ctx, { lead_id: leadId, title: 'Call', starts_at: at(-2), ends_at: at(-1) })) as {
    id: string;
    outcome: string | null;
  };
  t.is(logged.outcome, null);
  const held = (await runTool(log, ctx, { meeting_id: logged.id, outcome: 'held' })) as { outcome: string };
  t.is(held.outcome, 'held');
  await t.throwsAsync(runTool(log, ctx, { lead_id: leadId, title: 'No times' }));
  const ofLead = (await runTool(list, ctx, { lead_id: leadId })) as {
    meetings: { id: string }[];
    unmatched_bookings: number;
  };
  t.deepEqual(
    ofLead.meetings.map((m) => m.id),
    [logged.id],
  );
  const ofWorkspace = (await runTool(list, ctx, {})) as { meetings: { id: string; outcome: string }[] };
  t.deepEqual(
    ofWorkspace.meetings.map((m) => [m.id, m.outcome]),
    [[logged.id, 'held']],
  );
  const other = await withLead();
  const err = await t.throwsAsync(runTool(list, ctx, { lead_id: other.leadId }));
  t.is((err as { code?: string }).code, 'not_found');
});
