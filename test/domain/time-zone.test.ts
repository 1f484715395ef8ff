// A recipient's time zone (domain/contacts/time-zone.ts): valid names, a country's single zone from
// its code or name, the stored zone first, and the zone a send's window is read in.
import test from 'ava';
import { canonicalTimeZone } from '../../domain/accounts/accounts.js';
import {
  canonicalZone,
  isTimeZone,
  recipientTimeZone,
  windowZone,
  zoneOfCountry,
} from '../../domain/contacts/time-zone.js';

test('isTimeZone and canonicalZone follow canonicalTimeZone (campaigns, sender accounts) exactly', (t) => {
  for (const name of [
    'Europe/Berlin',
    'europe/berlin',
    'America/New_York',
    'UTC',
    'Etc/GMT+5',
    'US/Pacific',
    'Asia/Kolkata',
    'Mars/Olympus',
    'GMT+1',
    '+01:00',
    ' Europe/Berlin',
    '',
    'Europe//Paris',
  ]) {
    let expected: string | null;
    try {
      expected = canonicalTimeZone(name);
    } catch {
      expected = null;
    }
    t.is(canonicalZone(name), expected, JSON.stringify(name));
    t.is(isTimeZone(name), expected !== null, JSON.stringify(name));
  }
  t.is(canonicalZone('europe/berlin'), 'Europe/Berlin');
  t.false(isTimeZone('x'.repeat(65)));
});

test('zoneOfCountry: alpha-2 codes in any case, English names and a few aliases; a country with one zone only', (t) => {
  for (const [country, zone] of [
    ['FR', 'Europe/Paris'],
    ['fr', 'Europe/Paris'],
    [' France ', 'Europe/Paris'],
    ['FRANCE', 'Europe/Paris'],
    ['JP', 'Asia/Tokyo'],
    ['Japan', 'Asia/Tokyo'],
    ['GB', 'Europe/London'],
    ['United Kingdom', 'Europe/London'],
    ['UK', 'Europe/London'],
    ['England', 'Europe/London'],
    ['Türkiye', 'Europe/Istanbul'],
    ['turkiye', 'Europe/Istanbul'], // accents do not matter
    ['Turkey', 'Europe/Istanbul'],
    ['Czech Republic', 'Europe/Prague'],
    ['Netherlands', 'Europe/Amsterdam'], // a link to Europe/Brussels, named for the country
    ['Switzerland', 'Europe/Zurich'],
  ] as const) {
    t.is(zoneOfCountry(country), zone, country);
  }
  // Germany lists Europe/Berlin and (Büsingen) Europe/Zurich: the same offsets, so one zone, its own.
  t.is(zoneOfCountry('DE'), 'Europe/Berlin');
  t.is(zoneOfCountry('Germany'), 'Europe/Berlin');
  // Zones with different offsets: no single zone.
  for (const country of [
    'US',
    'us',
    'USA',
    'United States',
    'United States of America',
    'CA',
    'Canada',
    'RU',
    'Russia',
    'BR',
    'Brazil',
    'AU',
    'Australia',
    'ES',
    'MX',
  ]) {
    t.is(zoneOfCountry(country), null, country);
  }
  // Not a country.
  for (const country of [null, '', '  ', 'XX', 'Atlantis', 'Europe', 'Berlin, DE'])
    t.is(zoneOfCountry(country), null, String(country));
  // Cached answers are the same answers.
  t.is(zoneOfCountry('fr'), 'Europe/Paris');
  t.is(zoneOfCountry('US'), null);
});

test('recipientTimeZone: the stored zone when valid (canonical spelling), else the country’s, else null', (t) => {
  t.is(
    recipientTimeZone({ timeZone: 'America/Chicago', country: 'FR' }),
    'America/Chicago',
    'the stored zone wins over the country',
  );
  t.is(recipientTimeZone({ timeZone: 'america/chicago', country: null }), 'America/Chicago');
  t.is(
    recipientTimeZone({ timeZone: 'Mars/Olympus', country: 'FR' }),
    'Europe/Paris',
    'an invalid stored zone falls to the country',
  );
  t.is(recipientTimeZone({ timeZone: null, country: 'Germany' }), 'Europe/Berlin');
  t.is(recipientTimeZone({ timeZone: null, country: 'US' }), null);
  t.is(recipientTimeZone({ timeZone: 'Eastern', country: 'US' }), null);
  t.is(recipientTimeZone({ timeZone: null, country: null }), null);
});

test('windowZone: the campaign’s zone in campaign mode; in recipient mode the contact’s, its country’s, else the campaign’s', (t) => {
  const campaign = 'Europe/Paris';
  t.deepEqual(windowZone('campaign', campaign, { timeZone: 'Asia/Tokyo', country: 'JP' }), {
    zone: campaign,
    source: 'campaign',
  });
  t.deepEqual(windowZone('recipient', campaign, { timeZone: 'Asia/Tokyo', country: 'US' }), {
    zone: 'Asia/Tokyo',
    source: 'contact',
  });
  t.deepEqual(windowZone('recipient', campaign, { timeZone: 'asia/tokyo', country: null }), {
    zone: 'Asia/Tokyo',
    source: 'contact',
  });
  t.deepEqual(windowZone('recipient', campaign, { timeZone: null, country: 'JP' }), {
    zone: 'Asia/Tokyo',
    source: 'country',
  });
  t.deepEqual(windowZone('recipient', campaign, { timeZone: 'Nowhere/Land', country: 'de' }), {
    zone: 'Europe/Berlin',
    source: 'country',
  });
  t.deepEqual(windowZone('recipient', campaign, { timeZone: null, country: 'US' }), {
    zone: campaign,
    source: 'fallback',
  });
  t.deepEqual(windowZone('recipient', campaign, { timeZone: null, country: null }), {
    zone: campaign,
    source: 'fallback',
  });
  t.deepEqual(windowZone('recipient', campaign, null), { zone: campaign, source: 'fallback' }, 'no contact');
});
