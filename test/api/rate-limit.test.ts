import test from 'ava';
import { z } from 'zod';
import { defineOperation, type Operation } from '../../api/operation.js';
import { allOperations } from '../../api/operations.js';
import { createRateLimiter } from '../../lib/rate-limit.js';
import { connectRedis } from '../../lib/redis.js';
import { api, call, createUser, listen, closeApi } from '../helpers/api.js';
test.after.always(closeApi);
import { addTeamMember } from '../helpers/db.js';

// Two probe routes in the agent group (the Operator routes join it when they land) and one public.
const probe = (path: string, auth: 'user' | 'public'): Operation =>
  defineOperation({
    method: 'GET',
    path,
    summary: 'probe',
    tag: 'test',
    auth,
    responses: { 200: z.object({ ok: z.boolean() }) },
    handler: () => ({ ok: true }),
  });
const ops = [
  ...allOperations(),
  probe('/api/agent/probe-a', 'user'),
  probe('/api/agent/probe-b', 'user'),
  probe('/api/agent/public-probe', 'public'),
];

async function server(overrides: Record<string, unknown> = {}) {
  const { services } = await api();
  return (await listen({ ...services, ...overrides } as typeof services, ops)).base;
}

test('agent group: 20 requests per minute per user, shared across the group; the 21st is 429', async (t) => {
  const base = await server();
  const u = await createUser();
  for (let i = 0; i < 20; i++) {
    const r = await call('GET', i % 2 ? '/api/agent/probe-a' : '/api/agent/probe-b', { base, token: u.accessToken });
    t.is(r.status, 200, `request ${i + 1}`);
    if (i === 0) {
      t.is(r.headers.get('ratelimit-policy'), '"agent";q=20;w=60');
      t.regex(r.headers.get('ratelimit') ?? '', /^"agent";r=19;t=(59|60)$/);
    }
  }
  const r = await call('GET', '/api/agent/probe-a', { base, token: u.accessToken });
  t.is(r.status, 429);
  t.is(r.body.error.code, 'rate_limited');
  const retry = Number(r.headers.get('retry-after'));
  t.true(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  t.regex(r.headers.get('ratelimit') ?? '', /^"agent";r=0;t=\d+$/);
  // Another user has their own bucket; other groups are unaffected.
  t.is((await call('GET', '/api/agent/probe-a', { base, token: (await createUser()).accessToken })).status, 200);
  t.is((await call('GET', '/api/apps', { base, token: u.accessToken })).status, 200);
});

test('acting for another owner uses the caller’s own bucket', async (t) => {
  const base = await server();
  const owner = await createUser();
  const member = await createUser();
  await addTeamMember(owner.id, member.id);
  for (let i = 0; i < 20; i++)
    t.is(
      (
        await call('GET', '/api/agent/probe-a', {
          base,
          token: member.accessToken,
          headers: { 'x-acting-as': owner.id },
        })
      ).status,
      200,
    );
  t.is((await call('GET', '/api/agent/probe-a', { base, token: member.accessToken })).status, 429);
  t.is((await call('GET', '/api/agent/probe-a', { base, token: owner.accessToken })).status, 200);
});

test('unauthenticated requests are limited per IP', async (t) => {
  const { services } = await api();
  // A fresh key space, so that other tests' traffic from 127.0.0.1 does not interfere.
  const prefix = `t${Date.now()}`;
  const limiter = services.rateLimiter;
  const base = await server({
    rateLimiter: { check: (k: string, l: number, p: number) => limiter.check(`${prefix}:${k}`, l, p) },
  });
  for (let i = 0; i < 20; i++) t.is((await call('GET', '/api/agent/public-probe', { base })).status, 200);
  const r = await call('GET', '/api/agent/public-probe', { base });
  t.is(r.status, 429);
  t.truthy(r.headers.get('retry-after'));
});

test('sliding window in Redis: no double burst at a window edge; slots free up as old requests leave the window', async (t) => {
  const { services } = await api();
  const period = 5000;
  // The mid-window check proves something only if it ran inside the first request's window: a round
  // that a loaded machine stretched past it is inconclusive and is run again (at most three rounds).
  for (let round = 1; ; round++) {
    const key = `rl:test:${Date.now()}:${round}`;
    const results: boolean[] = [];
    const firstSent = Date.now(); // the first request was counted no earlier than this
    let firstDone = 0; // ... and no later than this
    for (let i = 0; i < 6; i++) {
      results.push((await services.rateLimiter.check(key, 5, period)).allowed);
      if (i === 0) firstDone = Date.now();
    }
    // Half a window later (where a fixed window might have rolled over) it is still full. The time
    // passing inside the window is the behaviour under test.
    await new Promise((r) => setTimeout(r, 2500));
    const mid = await services.rateLimiter.check(key, 5, period);
    const midDone = Date.now();
    if (midDone >= firstSent + period && round < 3) {
      t.log(
        `round ${round}: the mid-window check came ${midDone - firstSent} ms after the first request (window ${period} ms); again`,
      );
      continue;
    }
    t.deepEqual(results, [true, true, true, true, true, false]);
    t.false(mid.allowed);
    t.true(mid.retryAfter >= 1 && mid.retryAfter <= 5);
    // Once the first requests have left the window, requests are allowed again.
    await new Promise((r) => setTimeout(r, Math.max(0, firstDone + period + 200 - Date.now())));
    t.true((await services.rateLimiter.check(key, 5, period)).allowed);
    return;
  }
});

test('concurrent requests never exceed the limit (atomic check-and-update)', async (t) => {
  const { services } = await api();
  const key = `rl:test:conc:${Date.now()}`;
  const decisions = await Promise.all(Array.from({ length: 50 }, () => services.rateLimiter.check(key, 20, 60_000)));
  t.is(decisions.filter((d) => d.allowed).length, 20);
});

test('checks of one key made together share a script call and are decided in order, as separate calls would be', async (t) => {
  const { services } = await api();
  const key = `rl:test:order:${Date.now()}`;
  const first = await Promise.all(Array.from({ length: 5 }, () => services.rateLimiter.check(key, 3, 60_000)));
  t.deepEqual(
    first.map((d) => [d.allowed, d.remaining]),
    [
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ],
  );
  t.true(first[3].retryAfter >= 1 && first[3].retryAfter <= 60);
  // Another key checked in the same turn has its own count.
  const [a, b] = await Promise.all([
    services.rateLimiter.check(key, 3, 60_000),
    services.rateLimiter.check(`${key}:other`, 3, 60_000),
  ]);
  t.false(a.allowed);
  t.deepEqual([b.allowed, b.remaining], [true, 2]);
});

test('Redis down: the limiter degrades to in-process limits and still refuses the 21st request', async (t) => {
  const dead = connectRedis('redis://127.0.0.1:1');
  dead.on('error', () => {});
  t.teardown(() => dead.disconnect());
  let degraded = 0;
  const base = await server({ rateLimiter: createRateLimiter(dead, () => degraded++) });
  const u = await createUser();
  for (let i = 0; i < 20; i++)
    t.is((await call('GET', '/api/agent/probe-a', { base, token: u.accessToken })).status, 200);
  const r = await call('GET', '/api/agent/probe-a', { base, token: u.accessToken });
  t.is(r.status, 429);
  t.true(degraded >= 21);
});

test('other routes use the configurable default group, with limit headers on success', async (t) => {
  const { services } = await api();
  const base = await server({
    config: { ...services.config, rateLimit: { ...services.config.rateLimit, defaultPerMinute: 3 } },
  });
  const u = await createUser();
  for (let i = 0; i < 3; i++) {
    const ok = await call('GET', '/api/apps', { base, token: u.accessToken });
    t.is(ok.status, 200);
    t.is(ok.headers.get('ratelimit-policy'), '"default";q=3;w=60');
  }
  const r = await call('GET', '/api/apps', { base, token: u.accessToken });
  t.is(r.status, 429);
  t.is(r.body.error.code, 'rate_limited');
  // The agent group is a separate bucket.
  t.is((await call('GET', '/api/agent/probe-a', { base, token: u.accessToken })).status, 200);
});

test('unauthenticated entry points (login, sign-up, refresh) share a strict per-IP group', async (t) => {
  const { services } = await api();
  const prefix = `t${Date.now()}`;
  const limiter = services.rateLimiter;
  const base = await server({
    config: { ...services.config, rateLimit: { ...services.config.rateLimit, publicPerMinute: 3 } },
    rateLimiter: { check: (k: string, l: number, p: number) => limiter.check(`${prefix}:${k}`, l, p) },
  });
  const body = { email: 'nobody@example.test', password: 'wrong password 1' };
  for (let i = 0; i < 3; i++) {
    const r = await call('POST', i === 2 ? '/api/auth/refresh' : '/api/auth/login', {
      base,
      body: i === 2 ? { refresh_token: 'rt_x' } : body,
    });
    t.is(r.status, 401);
    t.is(r.headers.get('ratelimit-policy'), '"public";q=3;w=60');
  }
  const r = await call('POST', '/api/auth/login', { base, body });
  t.is(r.status, 429);
  t.is(r.body.error.code, 'rate_limited');
  t.truthy(r.headers.get('retry-after'));
});
