import test from 'ava';
import { grpcCode, retryTransient } from '../../jobs/connection.js';

// Shaped like the client's ServiceError: the gRPC status sits on `cause`.
const serviceError = (code: number) =>
  Object.assign(new Error('Failed to describe schedule'), { cause: Object.assign(new Error(`${code}`), { code }) });

test('grpcCode reads the status on the error or its cause', (t) => {
  t.is(grpcCode(serviceError(4)), 4);
  t.is(grpcCode(Object.assign(new Error('x'), { code: 14 })), 14);
  t.is(grpcCode(new Error('plain')), undefined);
  t.is(grpcCode(undefined), undefined);
});

test('retryTransient repeats a call the server timed out, then returns its result', async (t) => {
  let calls = 0;
  const result = await retryTransient(
    async () => {
      calls++;
      if (calls < 3) throw serviceError(4 /* DEADLINE_EXCEEDED */);
      return 'described';
    },
    { baseMs: 1 },
  );
  t.is(result, 'described');
  t.is(calls, 3);
});

test('retryTransient gives up after its attempts with the last error, and never repeats a non-transient one', async (t) => {
  let calls = 0;
  const err = await t.throwsAsync(
    retryTransient(
      async () => {
        calls++;
        throw serviceError(14 /* UNAVAILABLE */);
      },
      { attempts: 3, baseMs: 1 },
    ),
  );
  t.is(calls, 3);
  t.is(grpcCode(err), 14);

  calls = 0;
  await t.throwsAsync(
    retryTransient(
      async () => {
        calls++;
        throw serviceError(5 /* NOT_FOUND */);
      },
      { baseMs: 1 },
    ),
    { message: 'Failed to describe schedule' },
  );
  t.is(calls, 1);
});
