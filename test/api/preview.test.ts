// POST /api/agents/{agentId}/preview: one page of one signal (saved or inline) qualified against the
// ICP, people the workspace already has marked `known`, nothing written; every documented code.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { DiscoveredLead } from '../../db/entities/DiscoveredLead.js';
import { DiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { DiscoveryRun } from '../../db/entities/DiscoveryRun.js';
import { RejectedProfile } from '../../db/entities/RejectedProfile.js';
import { DEMO_USER_ID, demoId, seedDemo } from '../../domain/demo/seed.js';
import { previewSignal } from '../../domain/agents/signal-preview.js';
import { resolveActor } from '../../domain/workspaces.js';
import { AppError } from '../../domain/errors.js';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseProfileUrl } from '../../lib/normalise.js';
import { LlmError, type ModelAdapter } from '../../lib/llm/types.js';
import { SourceError, type DiscoverySource } from '../../lib/sources/types.js';
import { api, call, closeApi, createTestApp, createUser, listen, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

interface Setup {
  u: TestUser;
  appId: string;
  agentId: string;
  signalId: string;
}

async function setup(): Promise<Setup> {
  const u = await createOwner();
  const app = await createTestApp(u, 'Pipeline Tool');
  await call('PUT', `/api/apps/${app.id}`, {
    token: u.accessToken,
    body: {
      icp_description: 'Revenue leaders at software companies',
      icp_filters: { titles: ['Chief Revenue Officer', 'Account Executive'], keywords: ['outbound', 'cold email'] },
    },
  });
  const agent = (
    await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Outbound talk' } })
  ).body;
  const signals = await call('PUT', `/api/agents/${agent.id}/signals`, {
    token: u.accessToken,
    body: {
      signals: [
        {
          key: 'outbound-talk',
          kind: 'post_keywords',
          name: 'Talks about outbound',
          keywords: ['cold email', 'outbound'],
        },
      ],
    },
  });
  await call('PUT', `/api/agents/${agent.id}/sources/newsforum`, { token: u.accessToken, body: { enabled: true } });
  return { u, appId: app.id, agentId: agent.id, signalId: signals.body[0].id };
}

const preview = (s: Setup, body: unknown, opts: { base?: string } = {}) =>
  call('POST', `/api/agents/${s.agentId}/preview`, { token: s.u.accessToken, body, ...opts });

async function rowCounts(agentId: string) {
  const e = await em();
  return [
    await e.count(DiscoveredLead, { agent: agentId }),
    await e.count(RejectedProfile, { agent: agentId }),
    await e.count(DiscoveryRun, { agent: agentId }),
  ];
}

test('a saved signal: sample candidates with score, verdict and reasons; nothing is written', async (t) => {
  const s = await setup();
  const r = await preview(s, { signal_id: s.signalId });
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.signal, {
    id: s.signalId,
    key: 'outbound-talk',
    kind: 'post_keywords',
    keywords: ['cold email', 'outbound'],
    filters: {},
    sources: ['newsforum'],
  });
  t.is(r.body.candidates.length, 10, 'default limit');
  for (const c of r.body.candidates) {
    t.false(c.known);
    t.true(Number.isInteger(c.score) && c.score >= 0 && c.score <= 100);
    t.is(c.verdict, c.score >= 60 ? 'qualified' : 'rejected');
    t.true(c.reasons.length > 0);
    t.is(c.evidence.kind, 'post_keywords');
    t.truthy(c.name);
  }
  t.deepEqual(await rowCounts(s.agentId), [0, 0, 0]);
  const five = await preview(s, { signal_id: s.signalId, limit: 5 });
  t.is(five.body.candidates.length, 5);
  t.deepEqual(five.body.candidates, r.body.candidates.slice(0, 5), 'deterministic on the local corpus');
});

test('an inline signal with filters; people the workspace already has are known and not qualified', async (t) => {
  const s = await setup();
  await call('PUT', `/api/agents/${s.agentId}/sources/pronet`, { token: s.u.accessToken, body: { enabled: true } });
  const body = { signal: { kind: 'people_search', keywords: ['sales'], filters: { countries: ['de'] } }, limit: 25 };
  const r = await preview(s, body);
  t.is(r.status, 200, r.text);
  t.like(r.body.signal, {
    id: null,
    key: null,
    kind: 'people_search',
    filters: { countries: ['de'] },
    sources: ['pronet'],
  });
  t.true(r.body.candidates.length > 1);
  t.true(
    r.body.candidates.every((c: any) => c.country === 'DE'),
    'the filter applies',
  );
  // The first person is now a rejection of this agent (as a run would have stored it).
  const first = r.body.candidates[0];
  const e = await em();
  const agent = await e.findOneOrFail(DiscoveryAgent, s.agentId);
  await e.insertMany(RejectedProfile, [
    {
      id: uuidv7(),
      workspace: agent.workspace.id,
      app: agent.app.id,
      agent: agent.id,
      signalKey: 'x',
      dedupeKey: `profile:${normaliseProfileUrl(first.profile_url)}`,
      candidate: {},
      score: 1,
      primaryReason: 'title',
      reasons: [],
      createdAt: new Date(),
    },
  ] as never);
  const again = await preview(s, body);
  t.like(again.body.candidates[0], { name: first.name, known: true, score: null, verdict: null, reasons: [] });
  t.true(again.body.candidates.slice(1).every((c: any) => !c.known && c.score !== null));
  t.deepEqual(await rowCounts(s.agentId), [0, 1, 0], 'only the row the test inserted');
});

test('400s: exactly one of signal_id and signal, limit 1–25, a post_keywords signal needs keywords, unknown filters; no enabled source', async (t) => {
  const s = await setup();
  for (const body of [
    {},
    { signal_id: s.signalId, signal: { kind: 'hiring' } },
    { signal_id: s.signalId, limit: 0 },
    { signal_id: s.signalId, limit: 26 },
    { signal: { kind: 'post_keywords' } },
    { signal: { kind: 'post_keywords', keywords: [] } },
    { signal: { kind: 'hiring', filters: { colour: ['red'] } } },
    { signal: { kind: 'hiring', filters: { countries: ['Germany'] } } },
    { signal: { kind: 'telepathy' } },
    { signal_id: 'nope' },
  ]) {
    const r = await preview(s, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body', JSON.stringify(body));
  }
  t.is(
    (await call('POST', '/api/agents/nope/preview', { token: s.u.accessToken, body: { signal_id: s.signalId } })).body
      .error.code,
    'invalid_id',
  );
  const none = await preview(s, { signal: { kind: 'hiring' } });
  t.is(none.status, 400);
  t.is(none.body.error.code, 'no_enabled_source');
});

test('404 for an unknown signal or another workspace’s agent; 403 not_assigned for a member without the product', async (t) => {
  const s = await setup();
  const unknown = await preview(s, { signal_id: randomUUID() });
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'not_found');
  const stranger = await createOwner();
  const cross = await call('POST', `/api/agents/${s.agentId}/preview`, {
    token: stranger.accessToken,
    body: { signal_id: s.signalId },
  });
  t.is(cross.status, 404);
  t.is(cross.body.error.code, 'not_found');
  // Another agent's signal is not this agent's.
  const other = await setup();
  t.is((await preview(s, { signal_id: other.signalId })).status, 404);
  const app2 = await createTestApp(s.u, 'other');
  const member = await createUser();
  await addTeamMember(s.u.id, member.id, { appIds: [app2.id] });
  const r = await call('POST', `/api/agents/${s.agentId}/preview`, {
    token: member.accessToken,
    headers: { 'x-acting-as': s.u.id },
    body: { signal_id: s.signalId },
  });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'not_assigned');
});

test('Demo workspace: preview runs (a read in spirit) and writes nothing', async (t) => {
  const e = await em();
  await seedDemo(e);
  const u = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken });
  const agentId = demoId(0x300);
  const before = await rowCounts(agentId);
  const r = await call('POST', `/api/agents/${agentId}/preview`, {
    token: u.accessToken,
    headers: { 'x-acting-as': DEMO_USER_ID },
    body: { signal_id: demoId(0x310), limit: 5 },
  });
  t.is(r.status, 200, r.text);
  t.like(r.body.signal, { key: 'bookkeeping-pain', sources: ['newsforum'] });
  t.deepEqual(await rowCounts(agentId), before);
});

test('503 source_unavailable and model_unavailable from failing providers; 504 preview_timeout at the deadline', async (t) => {
  const { services } = await api();
  const s = await setup();
  const failingSource = {
    name: 'newsforum',
    supports: () => true,
    search: async () => Promise.reject(new SourceError('newsforum', 'unavailable', 'down')),
  } as unknown as DiscoverySource;
  const failingModel = {
    ...services.llm,
    model: 'x',
    structured: async () => Promise.reject(new LlmError('unavailable', 'down')),
  } as unknown as ModelAdapter;
  const withSources = (source: DiscoverySource) => ({ ...services.sources, get: () => source });
  const down = await listen({ ...services, sources: withSources(failingSource) });
  const r1 = await preview(s, { signal_id: s.signalId }, { base: down.base });
  t.is(r1.status, 503, r1.text);
  t.is(r1.body.error.code, 'source_unavailable');
  const noModel = await listen({ ...services, llm: failingModel });
  const r2 = await preview(s, { signal_id: s.signalId }, { base: noModel.base });
  t.is(r2.status, 503, r2.text);
  t.is(r2.body.error.code, 'model_unavailable');

  // A source that never answers: the deadline (shortened here) gives up on it.
  const hanging = {
    name: 'newsforum',
    supports: () => true,
    search: () => new Promise(() => {}),
  } as unknown as DiscoverySource;
  const e = services.orm.em.fork();
  const actor = await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined);
  const err = await t.throwsAsync(
    previewSignal(
      e,
      actor,
      { llm: services.llm, sources: withSources(hanging) },
      s.agentId,
      { signalId: s.signalId, limit: 5 },
      { deadlineMs: 200 },
    ),
  );
  t.true(err instanceof AppError && err.status === 504 && err.code === 'preview_timeout');
  // Through HTTP with the default deadline, a slow model is still bounded: the route documents 504.
  t.deepEqual(
    (await call('GET', '/openapi.json')).body.paths['/api/agents/{agentId}/preview'].post['x-error-codes']['504'],
    ['preview_timeout'],
  );
});

test('the document states the rules: oneOf signal_id | signal, limit 1–25', async (t) => {
  const doc = (await call('GET', '/openapi.json')).body;
  const schema = doc.paths['/api/agents/{agentId}/preview'].post.requestBody.content['application/json'].schema;
  t.is(schema.oneOf.length, 2);
  t.deepEqual(
    schema.oneOf.map((b: any) => b.required),
    [['signal_id'], ['signal']],
  );
  t.like(schema.oneOf[0].properties.limit, { minimum: 1, maximum: 25 });
  const bulk =
    doc.paths['/api/agents/{agentId}/rejected-profiles/bulk-promote'].post.requestBody.content['application/json']
      .schema;
  t.deepEqual(
    bulk.oneOf.map((b: any) => b.required),
    [['ids'], ['reason']],
  );
  t.is(bulk.oneOf[0].properties.ids.maxItems, 1000);
});
