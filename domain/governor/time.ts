/**
 * Calendar arithmetic in an account's IANA time zone, on Intl (no tz library in the project): the
 * local calendar day and ISO week the governor counts in, and the account's working windows.
 * An unknown zone throws (RangeError from Intl) rather than silently falling back to UTC.
 */
import type { WorkingHours } from '../../db/entities/PlatformAccount.js';

/** A local calendar date as `YYYY-MM-DD` (how `account_usage.day` stores it). */
export type LocalDate = string;

interface LocalParts {
  date: LocalDate;
  /** Minutes since local midnight (seconds dropped). */
  minutes: number;
  /** ISO weekday, 1 = Monday … 7 = Sunday. */
  weekday: number;
}

// Building a DateTimeFormat costs far more than using one; a process sees few zones.
const formats = new Map<string, Intl.DateTimeFormat>();
function formatFor(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(timeZone, f);
  }
  return f;
}

function intlWallClockMs(at: Date, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const { type, value } of formatFor(timeZone).formatToParts(at)) if (type !== 'literal') p[type] = Number(value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
}

// UTC offsets per zone and quarter hour of UTC time. Every transition of a current zone falls on a
// quarter hour (offsets and change times are whole quarter hours), so one Intl call serves the whole
// bucket: a decision reads the clock in the same zone a few dozen times, and Intl was a tenth of a
// request's CPU.
const QUARTER_HOUR = 900_000;
const offsets = new Map<string, number>();
function offsetMs(ms: number, timeZone: string): number {
  const bucket = Math.floor(ms / QUARTER_HOUR) * QUARTER_HOUR;
  const key = `${timeZone}|${bucket}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    if (offsets.size >= 10_000) offsets.clear();
    offset = intlWallClockMs(new Date(bucket), timeZone) - bucket;
    offsets.set(key, offset);
  }
  return offset;
}

/** The wall-clock fields of `at` in `timeZone` (seconds precision), as a UTC timestamp. */
function wallClockMs(at: Date, timeZone: string): number {
  const ms = at.getTime();
  return Math.floor(ms / 1000) * 1000 + offsetMs(ms, timeZone);
}

export function localParts(at: Date, timeZone: string): LocalParts {
  const wall = new Date(wallClockMs(at, timeZone));
  return {
    date: wall.toISOString().slice(0, 10),
    minutes: wall.getUTCHours() * 60 + wall.getUTCMinutes(),
    weekday: wall.getUTCDay() === 0 ? 7 : wall.getUTCDay(),
  };
}

export const localDate = (at: Date, timeZone: string): LocalDate => localParts(at, timeZone).date;

export function addDays(date: LocalDate, days: number): LocalDate {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

export const isoWeekday = (date: LocalDate): number => new Date(`${date}T00:00:00Z`).getUTCDay() || 7;

/** Monday of the ISO week that contains `date`. */
export const weekStart = (date: LocalDate): LocalDate => addDays(date, 1 - isoWeekday(date));

/** Whole days from `a` to `b` (local dates). */
export const daysBetween = (a: LocalDate, b: LocalDate): number =>
  Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);

/**
 * The instant at which the wall clock in `timeZone` shows `date` + `minutes` (1440 = next midnight).
 * Offsets come from Intl at two probes, which settles DST changes. An ambiguous time (autumn
 * fall-back) resolves to its first occurrence; a time that does not exist (spring-forward gap)
 * to the later reading, i.e. just after the gap, so a window never opens early.
 */
export function zonedTime(date: LocalDate, minutes: number, timeZone: string): Date {
  const wall = Date.parse(`${date}T00:00:00Z`) + minutes * 60_000;
  const offsetAt = (ms: number) => wallClockMs(new Date(ms), timeZone) - Math.floor(ms / 1000) * 1000;
  const first = wall - offsetAt(wall);
  const candidates = [first, wall - offsetAt(first)];
  const exact = candidates.filter((ms) => wallClockMs(new Date(ms), timeZone) === wall);
  return new Date(exact.length ? Math.min(...exact) : Math.max(...candidates));
}

export const startOfNextDay = (at: Date, timeZone: string): Date =>
  zonedTime(addDays(localDate(at, timeZone), 1), 0, timeZone);

export const startOfNextWeek = (at: Date, timeZone: string): Date =>
  zonedTime(addDays(weekStart(localDate(at, timeZone)), 7), 0, timeZone);

/** "HH:MM" → minutes since midnight ("24:00" allowed as an end). */
export function parseClock(hhmm: string): number {
  const m = /^(\d{2}):(\d{2})$/.exec(hhmm);
  if (!m || Number(m[1]) > 24 || Number(m[2]) > 59 || (Number(m[1]) === 24 && Number(m[2]) !== 0))
    throw new RangeError(`invalid time of day "${hhmm}"`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/**
 * `from` itself when it falls inside the account's working hours (local day listed in `days`,
 * `start` ≤ local time < `end`), else the next local opening. Null when no day is a working day.
 */
export function nextWorkingTime(account: { timeZone: string; workingHours: WorkingHours }, from: Date): Date | null {
  const { days, start, end } = account.workingHours;
  const open = parseClock(start);
  const close = parseClock(end);
  if (!days.length || close <= open) return null;
  const today = localDate(from, account.timeZone);
  // Eight days: today's window may be over, and the same weekday a week later is then the next one.
  for (let i = 0; i <= 7; i++) {
    const date = addDays(today, i);
    if (!days.includes(isoWeekday(date))) continue;
    const opens = zonedTime(date, open, account.timeZone);
    if (i > 0) return opens;
    if (from < zonedTime(date, close, account.timeZone)) return opens > from ? opens : from;
  }
  return null;
}
