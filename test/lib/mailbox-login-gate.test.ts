// The login gate and the reconnect backoff of the mailbox sessions (lib/connectors/mailbox/login-gate.ts):
// a burst of handshakes (a fleet's start, a mail server's restart) is spread: never more than the cap
// at once, never more than the rate per second; backoff doubles to its ceiling with half of it random.
import test from 'ava';
import { LoginGate, reconnectDelay } from '../../lib/connectors/mailbox/login-gate.js';

test('a burst of handshakes: at most `concurrency` at once and `perSecond` started in any second', async (t) => {
  const gate = new LoginGate({ concurrency: 3, perSecond: 20 });
  let active = 0;
  let peak = 0;
  const starts: number[] = [];
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: 30 }, () =>
      gate.run(async () => {
        starts.push(Date.now());
        peak = Math.max(peak, ++active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
      }),
    ),
  );
  t.is(starts.length, 30);
  t.true(peak <= 3, `peak ${peak} in flight`);
  // Spaced by the rate: 30 starts at 20/s take at least 29 intervals of 50 ms.
  t.true(Date.now() - t0 >= 29 * 50 - 5, `took ${Date.now() - t0} ms`);
  for (const s of starts) t.true(starts.filter((x) => x >= s && x < s + 1000).length <= 21);
  t.true(gate.peakPerSecond <= 21, `peak ${gate.peakPerSecond}/s`);
  t.is(gate.started, 30);
});

test('a handshake that fails frees its slot; one aborted while queued never runs', async (t) => {
  const gate = new LoginGate({ concurrency: 1, perSecond: 1000 });
  await t.throwsAsync(
    gate.run(() => Promise.reject(new Error('refused'))),
    { message: 'refused' },
  );
  const ac = new AbortController();
  let ran = false;
  const blocker = gate.run(() => new Promise((r) => setTimeout(r, 50)));
  const queued = gate.run(async () => void (ran = true), ac.signal);
  ac.abort(new Error('stopping'));
  await t.throwsAsync(queued, { message: 'stopping' });
  await blocker;
  t.false(ran);
  t.is(await gate.run(async () => 'next'), 'next');
});

test('reconnect backoff: doubles from 1 s to the 5-minute ceiling, half fixed and half random', (t) => {
  for (let attempt = 1; attempt <= 12; attempt++) {
    const ceiling = Math.min(300_000, 1000 * 2 ** (attempt - 1));
    t.is(
      reconnectDelay(attempt, 1000, 300_000, () => 0),
      ceiling / 2,
    );
    t.is(
      reconnectDelay(attempt, 1000, 300_000, () => 1),
      ceiling,
    );
    const d = reconnectDelay(attempt);
    t.true(d >= ceiling / 2 && d <= ceiling);
  }
});
