// Operator threads: scoped to (user, product), title rules, every documented code, deletion of a
// thread with everything that hangs off it, the shared 20/min agent group, cross-workspace ids.
import test from 'ava';
import { AgentConfirmation } from '../../db/entities/AgentConfirmation.js';
import { AgentMessage } from '../../db/entities/AgentMessage.js';
import { AgentThread } from '../../db/entities/AgentThread.js';
import { AgentTurn } from '../../db/entities/AgentTurn.js';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import { MAX_TITLE } from '../../domain/operator/threads.js';
import { uuidv7 } from '../../lib/ids.js';
import { call, createTestApp, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
import { postSse } from '../helpers/sse.js';
test.after.always(closeApi);

const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });
const T = '/api/agent/threads';

test('create (title trimmed, or null), list newest first per (user, product), read, rename, delete', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const a = await call('POST', T, { ...auth(u), body: { app_id: app.id, title: '  Pipeline review  ' } });
  t.is(a.status, 201, a.text);
  t.like(a.body, { app_id: app.id, title: 'Pipeline review', message_count: 0, last_message_at: null });
  const b = await call('POST', T, { ...auth(u), body: { app_id: app.id } });
  t.is(b.body.title, null);
  const list = await call('GET', `${T}?app_id=${app.id}`, auth(u));
  t.deepEqual(
    list.body.map((x: { id: string }) => x.id),
    [b.body.id, a.body.id],
  );
  t.is((await call('GET', `${T}/${a.body.id}`, auth(u))).body.title, 'Pipeline review');
  const renamed = await call('PATCH', `${T}/${a.body.id}`, { ...auth(u), body: { title: ' Q3 ' } });
  t.is(renamed.status, 200);
  t.is(renamed.body.title, 'Q3');
  t.is((await call('DELETE', `${T}/${a.body.id}`, auth(u))).status, 204);
  t.is((await call('GET', `${T}/${a.body.id}`, auth(u))).status, 404);
  // Another product of the same user: its own (empty) list.
  const other = await createTestApp(u, 'Other');
  t.deepEqual((await call('GET', `${T}?app_id=${other.id}`, auth(u))).body, []);
});

test('every documented 4xx code of creating and listing threads', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const expect = async (
    method: string,
    path: string,
    body: unknown,
    status: number,
    code: string,
    headers?: Record<string, string>,
  ) => {
    const r = await call(method, path, { ...auth(u, headers), body });
    t.is(r.status, status, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`);
    t.is(r.body.error.code, code, `${method} ${path}`);
  };
  await expect('POST', T, {}, 400, 'invalid_app');
  await expect('POST', T, { app_id: 'x' }, 400, 'invalid_app');
  await expect('POST', T, { app_id: app.id, title: 5 }, 400, 'invalid_body');
  await expect('POST', T, { app_id: app.id, extra: 1 }, 400, 'invalid_body');
  await expect('POST', T, { app_id: app.id, title: '   ' }, 400, 'invalid_title');
  await expect('POST', T, { app_id: app.id, title: 'x'.repeat(MAX_TITLE + 1) }, 400, 'title_too_long');
  await expect('POST', T, { app_id: app.id }, 400, 'invalid_user', { 'x-acting-as': 'nope' });
  const stranger = await createOwner();
  const foreign = await createTestApp(stranger);
  await expect('POST', T, { app_id: foreign.id }, 403, 'app_not_owned');
  await expect('GET', T, undefined, 400, 'invalid_app');
  await expect('GET', `${T}?app_id=x`, undefined, 400, 'invalid_app');
});

test('every documented 4xx code of the routes that take a thread id', async (t) => {
  // A second user: the agent group allows 20 requests a minute per user.
  const u = await createOwner();
  const app = await createTestApp(u);
  const th = (await call('POST', T, { ...auth(u), body: { app_id: app.id } })).body.id;
  const expect = async (method: string, path: string, body: unknown, status: number, code: string) => {
    const r = await call(method, path, { ...auth(u), body });
    t.is(r.status, status, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`);
    t.is(r.body.error.code, code, `${method} ${path}`);
  };
  await expect('GET', `${T}/nope`, undefined, 400, 'invalid_thread');
  await expect('GET', `${T}/${uuidv7()}`, undefined, 404, 'not_found');
  await expect('PATCH', `${T}/nope`, { title: 'x' }, 400, 'invalid_thread');
  await expect('PATCH', `${T}/${th}`, { title: '' }, 400, 'invalid_title');
  await expect('PATCH', `${T}/${th}`, { title: 'y'.repeat(MAX_TITLE + 1) }, 400, 'title_too_long');
  await expect('PATCH', `${T}/${th}`, {}, 400, 'invalid_body');
  await expect('PATCH', `${T}/${uuidv7()}`, { title: 'x' }, 404, 'not_found');
  await expect('DELETE', `${T}/nope`, undefined, 400, 'invalid_thread');
  await expect('DELETE', `${T}/${uuidv7()}`, undefined, 404, 'not_found');
  await expect('GET', `${T}/nope/messages`, undefined, 400, 'invalid_thread');
  await expect('GET', `${T}/${uuidv7()}/messages`, undefined, 404, 'not_found');
});

test('another user’s thread is 404 on every thread route, even inside the same workspace', async (t) => {
  const owner = await createOwner();
  const app = await createTestApp(owner);
  const th = (await call('POST', T, { ...auth(owner), body: { app_id: app.id } })).body.id;
  const member = await createUser();
  await addTeamMember(owner.id, member.id);
  const stranger = await createOwner();
  for (const [u, headers] of [
    [stranger, {}],
    [member, { 'x-acting-as': owner.id }],
  ] as const) {
    for (const [method, path, body] of [
      ['GET', `${T}/${th}`, undefined],
      ['PATCH', `${T}/${th}`, { title: 'mine now' }],
      ['GET', `${T}/${th}/messages`, undefined],
      ['DELETE', `${T}/${th}`, undefined],
    ] as const) {
      const r = await call(method, path, { ...auth(u, headers), body });
      t.is(r.status, 404, `${method} ${path}: ${r.text}`);
    }
  }
  t.is((await call('GET', `${T}/${th}`, auth(owner))).status, 200);
});

test('deleting a thread deletes its messages, turns (cost records) and confirmations in one transaction', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const agent = await call('POST', `/api/apps/${app.id}/agents`, { ...auth(u), body: { name: 'Scout' } });
  const r = await postSse('/api/agent/messages', u.accessToken, {
    app_id: app.id,
    message: `set agent status ${agent.body.id} status: paused`,
  });
  t.is(r.events.at(-1)?.event, 'approval_required', r.events.map((e) => e.event).join(','));
  const thread = r.events[0].data.thread_id;
  const e = await em();
  t.true((await e.count(AgentMessage, { thread })) > 0);
  t.is(await e.count(AgentConfirmation, { thread }), 1);
  t.is((await call('DELETE', `${T}/${thread}`, auth(u))).status, 204);
  const after = await em();
  t.is(await after.count(AgentThread, { id: thread }), 0);
  t.is(await after.count(AgentMessage, { thread }), 0);
  t.is(await after.count(AgentTurn, { thread }), 0);
  t.is(await after.count(AgentConfirmation, { thread }), 0);
});

test('the Demo workspace: thread writes are 403 demo_read_only', async (t) => {
  const u = await createUser();
  t.is((await call('POST', '/api/me/workspaces/demo/join', auth(u))).status, 201);
  const apps = await call('GET', '/api/apps', auth(u, { 'x-acting-as': DEMO_USER_ID }));
  const appId = (apps.body.items ?? apps.body)[0].id;
  const r = await call('POST', T, { ...auth(u, { 'x-acting-as': DEMO_USER_ID }), body: { app_id: appId } });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'demo_read_only');
  const m = await postSse(
    '/api/agent/messages',
    u.accessToken,
    { app_id: appId, message: 'hello' },
    { headers: { 'x-acting-as': DEMO_USER_ID } },
  );
  t.is(m.status, 403);
  t.is(m.error.error.code, 'demo_read_only');
});

test('the agent group is shared: the 21st request of a minute (threads and messages mixed) is 429', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await call('GET', `${T}?app_id=${app.id}`, auth(u))).status);
  for (let i = 0; i < 10; i++)
    statuses.push((await postSse('/api/agent/messages', u.accessToken, { app_id: app.id })).status); // 400s count too
  t.deepEqual([...new Set(statuses)].sort(), [200, 400]);
  const r = await call('GET', `${T}?app_id=${app.id}`, auth(u));
  t.is(r.status, 429);
  t.truthy(r.headers.get('retry-after'));
});
