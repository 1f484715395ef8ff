// A recipient's time zone, for sending windows on the recipient's clock (a campaign's
// `window_time_zone: 'recipient'`; docs/contacts.md "Time zone"): the zone stored on the contact when
// it is a valid IANA name, else the zone of its country when that country has only one (all its zones
// share their UTC and DST offsets), else none, and the campaign's zone stands in. `windowZone` is the
// one rule the executor and the send-time rule apply. Pure apart from the runtime's tz database and
// the country data of `countries-and-timezones`; results are cached per process.
import ct from 'countries-and-timezones';
import type { WindowTimeZone } from '../../db/entities/Campaign.js';

/** What the rule reads of a contact (its `time_zone` and `country` columns). */
export interface RecipientZoneFields {
  timeZone: string | null;
  country: string | null;
}

export type ZoneSource = 'campaign' | 'contact' | 'country' | 'fallback';

export interface WindowZone {
  zone: string;
  /** campaign: the campaign's mode; contact / country: the recipient's stored or derived zone; fallback: recipient mode without one. */
  source: ZoneSource;
}

/** Distinct inputs a cache keeps before it starts over: free-text countries must not grow a worker's heap without bound. */
const CACHE_LIMIT = 10_000;

function remember<T>(cache: Map<string, T>, key: string, value: T): T {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

const zones = new Map<string, string | null>();

/**
 * The canonical spelling of an IANA time zone name (`europe/berlin` → `Europe/Berlin`), or null when
 * the runtime does not know it: the one rule for zones (`canonicalTimeZone` in
 * domain/accounts/accounts.ts, for campaigns and sender accounts, is it with a 400). A leaf module,
 * so that the executor and the list import can load it.
 */
export function canonicalZone(name: string): string | null {
  const hit = zones.get(name);
  if (hit !== undefined) return hit;
  let zone: string | null = null;
  // No IANA name is near the column's 64 characters: a longer one is not parsed at all.
  if (name.length <= 64) {
    try {
      zone = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      zone = null;
    }
  }
  return remember(zones, name, zone);
}

/** A valid IANA time zone name (per the runtime's `Intl`). */
export const isTimeZone = (s: string): boolean => canonicalZone(s) !== null;

/** Compared without case, accents or punctuation: "Türkiye", "turkiye" and "TURKIYE" are one key. */
const countryKey = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** Common spellings the package's names do not cover (its names: "United States of America", "United Kingdom", "Türkiye", "Czechia"…). */
const ALIASES: Record<string, string> = {
  usa: 'US',
  'united states': 'US',
  uk: 'GB',
  'great britain': 'GB',
  england: 'GB',
  scotland: 'GB',
  wales: 'GB',
  turkey: 'TR',
  'czech republic': 'CZ',
  'the netherlands': 'NL',
  holland: 'NL',
  'russian federation': 'RU',
};

let byName: Map<string, string> | undefined;
const codeOfName = (key: string): string | undefined => {
  byName ??= new Map(Object.values(ct.getAllCountries()).map((c) => [countryKey(c.name), c.id]));
  return byName.get(key);
};

/** The ISO 3166-1 alpha-2 code of a country given as a code (any case) or an English name (the package's, or an alias). */
function countryCode(country: string): string | undefined {
  const key = countryKey(country);
  if (!key) return undefined;
  if (ALIASES[key]) return ALIASES[key];
  if (/^[a-z]{2}$/.test(key) && ct.getCountry(key.toUpperCase())) return key.toUpperCase();
  return codeOfName(key);
}

/**
 * The single zone of a country: its zones (deprecated links left out) all have the same UTC and DST
 * offsets. The one named is the first whose main country it is, links included, so that it names the
 * country (Germany: Europe/Berlin, not the Büsingen enclave's Europe/Zurich; the Netherlands:
 * Europe/Amsterdam, a link to Europe/Brussels; Vietnam: Asia/Ho_Chi_Minh, not Asia/Bangkok), else the
 * first zone; in the runtime's canonical spelling, as stored zones are.
 */
function singleZone(code: string): string | null {
  const list = ct.getTimezonesForCountry(code) ?? [];
  if (!list.length || list.some((z) => z.utcOffset !== list[0].utcOffset || z.dstOffset !== list[0].dstOffset))
    return null;
  const named = (ct.getTimezonesForCountry(code, { deprecated: true }) ?? []).filter((z) => z.countries[0] === code);
  for (const z of [...named, ...list]) {
    const zone = canonicalZone(z.name);
    if (zone) return zone;
  }
  return null;
}

const countryZones = new Map<string, string | null>();

/**
 * The time zone of a country when it has one (see `singleZone`), else null: ambiguous (the US,
 * Canada, Russia, Brazil, Australia, Spain with the Canaries…) or not a country we know. `country` is
 * the contact's free text: an alpha-2 code in any case, or an English name, case- and accent-insensitive.
 */
export function zoneOfCountry(country: string | null): string | null {
  if (!country) return null;
  const hit = countryZones.get(country);
  if (hit !== undefined) return hit;
  const code = countryCode(country);
  return remember(countryZones, country, code ? singleZone(code) : null);
}

/** The recipient's own zone: the stored one when valid (canonical spelling), else its country's, else null. */
export function recipientTimeZone(c: RecipientZoneFields): string | null {
  return (c.timeZone ? canonicalZone(c.timeZone) : null) ?? zoneOfCountry(c.country);
}

/**
 * The zone a send's window is read in. `campaign` mode: the campaign's. `recipient` mode: the
 * recipient's stored zone, else its country's, else the campaign's (`fallback`; also when the
 * contact is gone).
 */
export function windowZone(
  mode: WindowTimeZone,
  campaignZone: string,
  contact: RecipientZoneFields | null,
): WindowZone {
  if (mode !== 'recipient') return { zone: campaignZone, source: 'campaign' };
  const stored = contact?.timeZone ? canonicalZone(contact.timeZone) : null;
  if (stored) return { zone: stored, source: 'contact' };
  const derived = zoneOfCountry(contact?.country ?? null);
  if (derived) return { zone: derived, source: 'country' };
  return { zone: campaignZone, source: 'fallback' };
}
