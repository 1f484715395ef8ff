// Sending windows and wait steps in the campaign's time zone (domain/enrollments/executor.ts).
import test from 'ava';
import { nextWindowOpening, waitEnd } from '../../domain/enrollments/executor.js';

const weekdays = Object.fromEntries(
  ['1', '2', '3', '4', '5'].map((d) => [
    d,
    [
      { start: '09:00', end: '12:00' },
      { start: '14:00', end: '17:30' },
    ],
  ]),
);

test('the next window opening: inside a window is now; between windows the next one; after Friday’s the next Monday, in the zone', (t) => {
  // Wednesday 2026-11-25, Paris is UTC+1 in winter.
  const at = (iso: string) => nextWindowOpening(weekdays, 'Europe/Paris', new Date(iso))?.toISOString();
  t.is(at('2026-11-25T09:30:00Z'), '2026-11-25T09:30:00.000Z'); // 10:30 local, inside
  t.is(at('2026-11-25T11:30:00Z'), '2026-11-25T13:00:00.000Z'); // 12:30 local → 14:00 local
  t.is(at('2026-11-27T17:00:00Z'), '2026-11-30T08:00:00.000Z'); // Friday 18:00 local → Monday 09:00 local
  t.is(at('2026-11-28T10:00:00Z'), '2026-11-30T08:00:00.000Z'); // Saturday
  t.is(nextWindowOpening({}, 'Europe/Paris', new Date('2026-11-25T09:30:00Z')), null);
  // New York, across the end of daylight saving (2026-11-01): 09:00 local is 13:00Z before, 14:00Z after.
  const ny = { '1': [{ start: '09:00', end: '10:00' }] };
  t.is(
    nextWindowOpening(ny, 'America/New_York', new Date('2026-10-27T00:00:00Z'))?.toISOString(),
    '2026-11-02T14:00:00.000Z',
  );
});

test('wait steps: hours (fractions too) and business days keeping the local time of day', (t) => {
  const from = new Date('2026-11-27T15:00:00Z'); // Friday 16:00 in Paris
  t.is(waitEnd({ amount: 2, unit: 'hours' }, 'Europe/Paris', from).toISOString(), '2026-11-27T17:00:00.000Z');
  t.is(waitEnd({ amount: 0.5, unit: 'hours' }, 'Europe/Paris', from).toISOString(), '2026-11-27T15:30:00.000Z');
  t.is(waitEnd({ amount: 1, unit: 'business_days' }, 'Europe/Paris', from).toISOString(), '2026-11-30T15:00:00.000Z'); // Monday
  t.is(waitEnd({ amount: 3, unit: 'business_days' }, 'Europe/Paris', from).toISOString(), '2026-12-02T15:00:00.000Z'); // Wednesday
  t.is(waitEnd({ amount: 0, unit: 'business_days' }, 'Europe/Paris', from).toISOString(), from.toISOString());
  // Over a DST change the local time is kept: Friday 2026-03-27 10:00 Paris (UTC+1) + 1 business day = Monday 10:00 (UTC+2).
  t.is(
    waitEnd({ amount: 1, unit: 'business_days' }, 'Europe/Paris', new Date('2026-03-27T09:00:00Z')).toISOString(),
    '2026-03-30T08:00:00.000Z',
  );
});

test('wait steps in minutes', (t) => {
  const from = new Date('2026-11-27T15:00:00Z');
  t.is(waitEnd({ amount: 90, unit: 'minutes' }, 'Europe/Paris', from).toISOString(), '2026-11-27T16:30:00.000Z');
  t.is(waitEnd({ amount: 1, unit: 'minutes' }, 'Europe/Paris', from).toISOString(), '2026-11-27T15:01:00.000Z');
  // A year of minutes is a year of hours.
  t.is(
    waitEnd({ amount: 525_600, unit: 'minutes' }, 'Europe/Paris', from).getTime(),
    waitEnd({ amount: 8760, unit: 'hours' }, 'Europe/Paris', from).getTime(),
  );
});
