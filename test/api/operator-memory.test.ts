// The Operator's memory (facts per user and product, upserted by key) and notification
// preferences: every rule and code, 404 for another workspace's and another user's facts, the
// Demo guard, memoryForContext and the remember / list_memory tools.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { DEMO_USER_ID, seedDemo } from '../../domain/demo/seed.js';
import { MAX_FACTS_PER_SCOPE, memoryForContext, notificationPreferences } from '../../domain/operator/memory.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const tok = (u: TestUser) => ({ token: u.accessToken });
const put = (u: TestUser, body: unknown, headers?: Record<string, string>) =>
  call('PUT', '/api/operator/memory', { ...tok(u), body, headers });
const keys = (items: { key: string; app_id: string | null }[]) =>
  items.map((f) => `${f.app_id ? 'app' : 'all'}:${f.key}`);

test('PUT upserts by key per scope (one product, or all products); GET lists newest first, by product with the global ones', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u, 'Memory product');
  const app2 = await createTestApp(u, 'Other product');
  const one = await put(u, { key: 'tone', value: 'Friendly, short sentences' });
  t.is(one.status, 200, one.text);
  t.is(one.body.length, 1);
  t.like(one.body[0], { app_id: null, key: 'tone', value: 'Friendly, short sentences' });

  const again = await put(u, { app_id: null, key: '  tone ', value: ' Formal ' });
  t.is(again.status, 200, again.text);
  t.like(again.body[0], { id: one.body[0].id, key: 'tone', value: 'Formal' }, 'same key, same fact, trimmed');
  t.true(again.body[0].updated_at >= one.body[0].updated_at);

  const many = await put(u, [
    { app_id: app.id, key: 'tone', value: 'Playful' },
    { app_id: app.id, key: 'competitor', value: 'Acme' },
    { app_id: app.id, key: 'competitor', value: 'Globex' },
    { app_id: app2.id, key: 'region', value: 'EMEA' },
  ]);
  t.is(many.status, 200, many.text);
  t.deepEqual(
    many.body.map((f: { key: string; value: string }) => `${f.key}=${f.value}`),
    ['tone=Playful', 'competitor=Globex', 'region=EMEA'],
    'the last value of a key repeated in one request wins',
  );
  t.not(many.body[0].id, one.body[0].id, 'the product’s "tone" is another fact than the global one');

  const all = await call('GET', '/api/operator/memory', tok(u));
  t.is(all.status, 200, all.text);
  // Facts written by one request share their millisecond, so only the older one's place is certain.
  t.deepEqual(keys(all.body.items).slice(0, 3).sort(), ['app:competitor', 'app:region', 'app:tone']);
  t.is(keys(all.body.items)[3], 'all:tone');
  t.is(all.body.next_cursor, null);
  const forApp = await call('GET', `/api/operator/memory?app_id=${app.id}`, tok(u));
  t.deepEqual(keys(forApp.body.items).slice(0, 2).sort(), ['app:competitor', 'app:tone']);
  t.is(keys(forApp.body.items)[2], 'all:tone');
  const p1 = await call('GET', '/api/operator/memory?limit=3', tok(u));
  t.is(p1.body.items.length, 3);
  const p2 = await call('GET', `/api/operator/memory?limit=3&cursor=${p1.body.next_cursor}`, tok(u));
  t.deepEqual(keys(p2.body.items), ['all:tone']);
  t.is(p2.body.next_cursor, null);

  // What the turn workflow puts in the model's context.
  const actor = await resolveActor(await em(), { userId: u.id, kind: 'session' }, undefined);
  const ctx = await memoryForContext(await em(), actor, app.id);
  t.deepEqual(
    ctx
      .slice(0, 2)
      .map((f) => `${f.key}=${f.value}`)
      .sort(),
    ['competitor=Globex', 'tone=Playful'],
  );
  t.deepEqual(ctx[2], { key: 'tone', value: 'Formal' });
  t.is(ctx.length, 3);
  t.deepEqual(await memoryForContext(await em(), actor, null), [{ key: 'tone', value: 'Formal' }]);
});

test('memoryForContext is bounded to the 50 most recently written facts of the product and of all products', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const other = await createTestApp(u, 'Elsewhere');
  t.is(
    (
      await put(
        u,
        Array.from({ length: 40 }, (_, i) => ({ key: `g${i}`, value: `global ${i}` })),
      )
    ).status,
    200,
  );
  t.is(
    (
      await put(
        u,
        Array.from({ length: 30 }, (_, i) => ({ app_id: app.id, key: `a${i}`, value: `app ${i}` })),
      )
    ).status,
    200,
  );
  t.is((await put(u, { app_id: other.id, key: 'x', value: 'not this product' })).status, 200);
  await new Promise((r) => setTimeout(r, 20)); // clock separation (a later updated_at than the writes above), not a wait on the system
  t.is((await put(u, { key: 'g0', value: 'rewritten last' })).status, 200);
  const actor = await resolveActor(await em(), { userId: u.id, kind: 'session' }, undefined);
  const ctx = await memoryForContext(await em(), actor, app.id);
  t.is(ctx.length, 50);
  t.deepEqual(ctx[0], { key: 'g0', value: 'rewritten last' });
  t.false(ctx.some((f) => f.key === 'x'));
  // Another user of the workspace sees none of them.
  const member = await createUser();
  await addTeamMember(u.id, member.id);
  const memberActor = await resolveActor(await em(), { userId: member.id, kind: 'session' }, u.id);
  t.deepEqual(await memoryForContext(await em(), memberActor, app.id), []);
});

test('validation: 400 for bad keys, values, lists and fields; 403 for another workspace’s or an unassigned product', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  for (const body of [
    {},
    { key: '', value: 'x' },
    { key: '   ', value: 'x' },
    { key: 'k'.repeat(101), value: 'x' },
    { key: 'k', value: '' },
    { key: 'k', value: 'v'.repeat(2001) },
    { key: 'k' },
    { key: 'k', value: 'v', extra: 1 },
    { key: 'k', value: 'v', app_id: 'nope' },
    { key: 5, value: 'v' },
    [],
    Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: 'v' })),
    [{ key: 'ok', value: 'v' }, { key: 'bad' }],
    'text',
  ]) {
    const r = await put(u, body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is((await put(u, { key: 'k'.repeat(100), value: 'v'.repeat(2000) })).status, 200, 'the limits themselves are fine');
  t.is((await call('GET', '/api/operator/memory', tok(u))).body.items.length, 1, 'nothing else stored');

  const stranger = await createOwner();
  const foreign = await createTestApp(stranger);
  const r = await put(u, { app_id: foreign.id, key: 'k', value: 'v' });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'app_not_owned');
  t.is((await call('GET', `/api/operator/memory?app_id=${foreign.id}`, tok(u))).body.error.code, 'app_not_owned');
  t.is((await call('GET', '/api/operator/memory?app_id=nope', tok(u))).body.error.code, 'invalid_query');

  const member = await createUser();
  const other = await createTestApp(u, 'Other');
  await addTeamMember(u.id, member.id, { appIds: [other.id] });
  const asMember = { 'x-acting-as': u.id };
  const nope = await put(member, { app_id: app.id, key: 'k', value: 'v' }, asMember);
  t.is(nope.status, 403);
  t.is(nope.body.error.code, 'not_assigned');
  t.is((await put(member, { app_id: other.id, key: 'k', value: 'v' }, asMember)).status, 200);
});

test(`at most ${MAX_FACTS_PER_SCOPE} facts per scope: 409 memory_full, nothing written; replacing a key still works`, async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  for (let b = 0; b < MAX_FACTS_PER_SCOPE / 50; b++) {
    const r = await put(
      u,
      Array.from({ length: 50 }, (_, i) => ({ app_id: app.id, key: `k${b}-${i}`, value: 'v' })),
    );
    t.is(r.status, 200, r.text);
  }
  const full = await put(u, [
    { app_id: app.id, key: 'k0-0', value: 'changed' },
    { app_id: app.id, key: 'one-more', value: 'v' },
  ]);
  t.is(full.status, 409, full.text);
  t.is(full.body.error.code, 'memory_full');
  const replaced = await put(u, { app_id: app.id, key: 'k0-0', value: 'changed' });
  t.is(replaced.status, 200, replaced.text);
  t.is((await put(u, { key: 'global-still-fine', value: 'v' })).status, 200, 'the all-products scope has its own room');
});

test('DELETE: 204, then 404; another workspace’s or another user’s fact is 404 and stays; 400 invalid_id', async (t) => {
  const u = await createOwner();
  const [fact] = (await put(u, { key: 'k', value: 'v' })).body;
  const stranger = await createUser();
  const member = await createUser();
  await addTeamMember(u.id, member.id);
  for (const opts of [tok(stranger), { token: member.accessToken, headers: { 'x-acting-as': u.id } }]) {
    const r = await call('DELETE', `/api/operator/memory/${fact.id}`, opts);
    t.is(r.status, 404);
    t.is(r.body.error.code, 'not_found');
  }
  t.is((await call('GET', '/api/operator/memory', tok(u))).body.items.length, 1);
  t.is(
    (await call('GET', '/api/operator/memory', { token: member.accessToken, headers: { 'x-acting-as': u.id } })).body
      .items.length,
    0,
    'the member has no facts of their own',
  );
  t.is((await call('DELETE', '/api/operator/memory/nope', tok(u))).body.error.code, 'invalid_id');
  const del = await call('DELETE', `/api/operator/memory/${fact.id}`, tok(u));
  t.is(del.status, 204, del.text);
  t.is((await call('DELETE', `/api/operator/memory/${fact.id}`, tok(u))).status, 404);
  t.is((await call('DELETE', `/api/operator/memory/${randomUUID()}`, tok(u))).status, 404);
  t.is((await call('GET', '/api/operator/memory', tok(u))).body.items.length, 0);
});

test('notification preferences: defaults, partial updates, per user (also when acting for an owner), 400 for unknown values', async (t) => {
  const u = await createOwner();
  const empty = await call('PUT', '/api/operator/notification-preferences', { ...tok(u), body: {} });
  t.is(empty.status, 200, empty.text);
  t.deepEqual(empty.body, {
    task_finished: 'in_app',
    confirmation_pending: 'in_app',
    account_disconnected: 'in_app',
    reply_received: 'in_app',
    import_finished: 'in_app',
    review_overdue: 'in_app',
    updated_at: null,
  });
  const a = await call('PUT', '/api/operator/notification-preferences', {
    ...tok(u),
    body: { task_finished: 'email' },
  });
  t.like(a.body, { task_finished: 'email', confirmation_pending: 'in_app' });
  t.truthy(a.body.updated_at);
  const b = await call('PUT', '/api/operator/notification-preferences', {
    ...tok(u),
    body: { confirmation_pending: 'none' },
  });
  t.like(b.body, { task_finished: 'email', confirmation_pending: 'none' });
  t.like(await notificationPreferences(await em(), u.id), { taskFinished: 'email', confirmationPending: 'none' });
  t.like((await call('PUT', '/api/operator/notification-preferences', { ...tok(u), body: {} })).body, {
    task_finished: 'email',
    confirmation_pending: 'none',
  });
  for (const body of [{ task_finished: 'sms' }, { confirmation_pending: null }, { other: 'email' }, []]) {
    const r = await call('PUT', '/api/operator/notification-preferences', { ...tok(u), body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  const member = await createUser();
  await addTeamMember(u.id, member.id);
  const m = await call('PUT', '/api/operator/notification-preferences', {
    token: member.accessToken,
    headers: { 'x-acting-as': u.id },
    body: { task_finished: 'none' },
  });
  t.like(m.body, { task_finished: 'none', confirmation_pending: 'in_app' });
  t.like(await notificationPreferences(await em(), u.id), { taskFinished: 'email' }, 'the owner’s stay theirs');
  t.like(await notificationPreferences(await em(), member.id), { taskFinished: 'none' });
});

test('Demo workspace: memory reads work, writes are 403 demo_read_only', async (t) => {
  await seedDemo(await em());
  const u = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', tok(u));
  const demo = { token: u.accessToken, headers: { 'x-acting-as': DEMO_USER_ID } };
  t.is((await call('GET', '/api/operator/memory', demo)).status, 200);
  for (const [method, path, body] of [
    ['PUT', '/api/operator/memory', { key: 'k', value: 'v' }],
    ['DELETE', `/api/operator/memory/${randomUUID()}`, undefined],
    ['PUT', '/api/operator/notification-preferences', { task_finished: 'email' }],
  ] as [string, string, unknown][]) {
    const r = await call(method, path, { ...demo, body });
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'demo_read_only');
  }
});

test('Operator tools: remember (change) upserts, list_memory (read) lists, as the caller', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const app = await createTestApp(u);
  t.is(findTool('remember')?.risk, 'change');
  t.is(findTool('list_memory')?.risk, 'read');
  const e = await em();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e, { userId: u.id, kind: 'session' }, undefined),
  };
  const a = (await runTool(findTool('remember')!, ctx, { app_id: app.id, key: 'icp', value: 'CTOs' })) as {
    id: string;
  };
  const b = (await runTool(findTool('remember')!, ctx, {
    app_id: app.id,
    key: 'icp',
    value: 'VPs of Engineering',
  })) as { id: string; value: string };
  t.is(b.id, a.id);
  await runTool(findTool('remember')!, ctx, { key: 'signature', value: 'Ada' });
  const listed = (await runTool(findTool('list_memory')!, { ...ctx, em: await em() }, { app_id: app.id })) as {
    key: string;
    value: string;
  }[];
  t.deepEqual(listed.map((f) => `${f.key}=${f.value}`).sort(), ['icp=VPs of Engineering', 'signature=Ada']);
  const other = await createOwner();
  const oe = await em();
  const otherCtx = {
    em: oe,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(oe, { userId: other.id, kind: 'session' }, undefined),
  };
  t.deepEqual(await runTool(findTool('list_memory')!, otherCtx, {}), []);
  t.like(await t.throwsAsync(runTool(findTool('remember')!, otherCtx, { app_id: app.id, key: 'k', value: 'v' })), {
    status: 403,
    code: 'app_not_owned',
  });
});
