import test from 'ava';
import { z } from 'zod';
import { ServiceError, type Client } from '@temporalio/client';
import { defineOperation } from '../../api/operation.js';
import { temporalJobs } from '../../jobs/temporal.js';
import { allOperations } from '../../api/operations.js';
import { api, call, createUser, listen, closeApi } from '../helpers/api.js';
test.after.always(closeApi);

// How the Temporal client reports a call the server did not answer: a ServiceError around the gRPC
// status. The jobs port (the one door to Temporal) turns it into what the API answers.
const failingClient = (code: number) => {
  const fail = () => {
    throw new ServiceError('Failed to describe schedule', {
      cause: Object.assign(new Error(`${code} status`), { code }),
    });
  };
  return { workflow: { start: fail, getHandle: fail } } as unknown as Client;
};
const failing = (path: string, code: number) =>
  defineOperation({
    method: 'GET',
    path,
    summary: 'probe',
    tag: 'test',
    auth: 'user',
    responses: { 200: z.object({ ok: z.boolean() }) },
    handler: async () => {
      await temporalJobs(failingClient(code), 'q').start('list-import', {
        importId: 'i',
        workspaceId: 'w',
        appId: 'a',
      });
      return { ok: true };
    },
  });

test('a Temporal call that timed out or found the server unreachable is 503 unavailable with Retry-After; other Temporal failures stay 500 internal', async (t) => {
  const { services } = await api();
  const { base } = await listen(services, [
    ...allOperations(),
    failing('/api/test/deadline', 4),
    failing('/api/test/unavailable', 14),
    failing('/api/test/invalid', 3),
  ]);
  const u = await createUser();
  for (const path of ['/api/test/deadline', '/api/test/unavailable']) {
    const r = await call('GET', path, { base, token: u.accessToken });
    t.is(r.status, 503, path);
    t.is(r.body.error.code, 'unavailable');
    t.is(r.headers.get('retry-after'), '2');
    t.false(JSON.stringify(r.body).includes('describe schedule'), 'no internals in the body');
  }
  const r = await call('GET', '/api/test/invalid', { base, token: u.accessToken });
  t.is(r.status, 500);
  t.is(r.body.error.code, 'internal');
  t.false(JSON.stringify(r.body).includes('describe schedule'));
});
