// The pace of calls to a service per credential (lib/provider-pace.ts), on a simulated clock: calls
// wait for a token rather than fail, a pause (a 429's reset) holds the credential, credentials are
// independent, and generated sequences never exceed the rate in any window.
import test from 'ava';
import fc from 'fast-check';
import { PaceExceeded, ProviderPace } from '../../lib/provider-pace.js';

function clock() {
  let now = 1_000_000;
  return { now: () => now, sleep: async (ms: number) => void (now += ms), advance: (ms: number) => void (now += ms) };
}

test('a burst goes at once, the next call waits one interval; another credential does not wait', async (t) => {
  const c = clock();
  const pace = new ProviderPace({ burst: 2, everyMs: 100 }, c.now, c.sleep);
  const start = c.now();
  await pace.take('key-a');
  await pace.take('key-a');
  t.is(c.now(), start);
  await pace.take('key-a');
  t.is(c.now(), start + 100);
  await pace.take('key-b');
  t.is(c.now(), start + 100);
});

test('a pause holds the credential until its time; past the longest wait the call is refused', async (t) => {
  const c = clock();
  const pace = new ProviderPace({ burst: 5, everyMs: 10 }, c.now, c.sleep);
  pace.pause('key', new Date(c.now() + 5_000));
  const start = c.now();
  await pace.take('key');
  t.is(c.now(), start + 5_000);
  pace.pause('key', new Date(c.now() + 10 * 60_000));
  await t.throwsAsync(() => pace.take('key'), { instanceOf: PaceExceeded });
});

test('generated call times: any span of L ms holds at most burst + L / everyMs calls (the seed is printed)', async (t) => {
  const seed = Number(process.env.PACE_SEED ?? Date.now() % 1_000_000);
  t.log(`seed ${seed} (PACE_SEED replays it)`);
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 10, max: 500 }),
      fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 60 }),
      async (burst, everyMs, gaps) => {
        const c = clock();
        const pace = new ProviderPace({ burst, everyMs }, c.now, c.sleep);
        const times: number[] = [];
        for (const gap of gaps) {
          c.advance(gap);
          await pace.take('key');
          times.push(c.now());
        }
        // Over any span of length L, at most burst + L / everyMs calls.
        for (let i = 0; i < times.length; i++)
          for (let j = i; j < times.length; j++)
            if (j - i + 1 > burst + (times[j] - times[i]) / everyMs + 1e-9) return false;
        return true;
      },
    ),
    { seed, numRuns: 200 },
  );
  t.pass();
});
