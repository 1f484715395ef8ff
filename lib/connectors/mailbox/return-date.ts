// The return date an out-of-office reply names (docs/email.md "Auto-replies and out-of-office"), so
// the contact's sends hold until the day after it. Only a date right after a return word counts
// ("back on Monday 7 December", "return on 12/07/2026", "until December 7th", "returning 7 Dec",
// "2026-12-07"; a few German and French forms), resolved against the message's date: a date without a
// year is its next occurrence, and only dates from that day to ~6 months on are believed (an older or
// far date is a quoted message, a signature or a typo, and holding on it would lose the lead).
const DAY_MS = 86_400_000;
/** How far ahead a return date is believed. */
export const MAX_AHEAD_DAYS = 183;

const MONTHS: Record<string, number> = {
  jan: 1,
  january: 1,
  januar: 1,
  janvier: 1,
  feb: 2,
  february: 2,
  februar: 2,
  fevrier: 2,
  février: 2,
  mar: 3,
  march: 3,
  märz: 3,
  maerz: 3,
  mars: 3,
  apr: 4,
  april: 4,
  avril: 4,
  may: 5,
  mai: 5,
  jun: 6,
  june: 6,
  juni: 6,
  juin: 6,
  jul: 7,
  july: 7,
  juli: 7,
  juillet: 7,
  aug: 8,
  august: 8,
  août: 8,
  aout: 8,
  sep: 9,
  sept: 9,
  september: 9,
  septembre: 9,
  oct: 10,
  okt: 10,
  october: 10,
  oktober: 10,
  octobre: 10,
  nov: 11,
  november: 11,
  novembre: 11,
  dec: 12,
  dez: 12,
  december: 12,
  dezember: 12,
  décembre: 12,
  decembre: 12,
};
const WEEKDAYS: Record<string, number> = {
  sun: 0,
  sunday: 0,
  sonntag: 0,
  dimanche: 0,
  mon: 1,
  monday: 1,
  montag: 1,
  lundi: 1,
  tue: 2,
  tues: 2,
  tuesday: 2,
  dienstag: 2,
  mardi: 2,
  wed: 3,
  wednesday: 3,
  mittwoch: 3,
  mercredi: 3,
  thu: 4,
  thur: 4,
  thurs: 4,
  thursday: 4,
  donnerstag: 4,
  jeudi: 4,
  fri: 5,
  friday: 5,
  freitag: 5,
  vendredi: 5,
  sat: 6,
  saturday: 6,
  samstag: 6,
  samedi: 6,
};
const alt = (words: string[]) => words.sort((a, b) => b.length - a.length).join('|');
// Word edges that know accented letters (\\b does not: "à", "März").
const B = '(?<![\\p{L}\\p{N}])';
const E = '(?![\\p{L}\\p{N}])';
const MONTH = `${B}(${alt(Object.keys(MONTHS))})${E}`;
const WEEKDAY = `${B}(${alt(Object.keys(WEEKDAYS))})${E}`;

/** Words after which a date is the return (or the last day away: the hold is to the day after it anyway). */
const ANCHOR = new RegExp(
  `${B}(back|return(?:s|ing)?|returned|until|till|til|through|thru|in the office|available|zurück|wieder|bis|ab|retour|jusqu'?au|à partir du)${E}`,
  'giu',
);
/** How far after a return word its date may start. */
const WINDOW = 60;

const DATE_FORMS: { re: RegExp; read: (m: RegExpExecArray) => Candidate[] }[] = [
  { re: /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/u, read: (m) => [{ y: +m[1], mo: +m[2], d: +m[3] }] },
  {
    // 7 December, 7th of Dec, 7. Dezember 2026
    re: new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th|er|\\.)?(?:\\s+of)?\\s+${MONTH}\\.?(?:,?\\s+(\\d{4}))?`, 'iu'),
    read: (m) => [{ y: m[3] ? +m[3] : null, mo: MONTHS[m[2].toLowerCase()], d: +m[1] }],
  },
  {
    // December 7th, Dec. 7, 2026
    re: new RegExp(`${MONTH}\\.?\\s+(?:the\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4}))?`, 'iu'),
    read: (m) => [{ y: m[3] ? +m[3] : null, mo: MONTHS[m[1].toLowerCase()], d: +m[2] }],
  },
  {
    // 12/07/2026 (month first or day first: whichever is a plausible return), 07.12.2026 and 7.12. (day first)
    re: /\b(\d{1,2})([./])(\d{1,2})(?:\2(\d{4}|\d{2}))?(?!\d)/u,
    read: (m) => {
      const a = +m[1];
      const b = +m[3];
      const y = m[4] ? (m[4].length === 2 ? 2000 + +m[4] : +m[4]) : null;
      if (m[2] === '.') return [{ y, mo: b, d: a }];
      return [
        { y, mo: a, d: b },
        { y, mo: b, d: a },
      ];
    },
  },
];

interface Candidate {
  y: number | null;
  mo: number;
  d: number;
}

const utcDay = (t: Date) => Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate());
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The candidate as a day (UTC ms) in [sent day, sent day + MAX_AHEAD_DAYS], or null. */
function resolve(c: Candidate, sent: Date): number | null {
  if (c.mo < 1 || c.mo > 12 || c.d < 1 || c.d > 31) return null;
  const from = utcDay(sent);
  const at = (y: number) => {
    const ms = Date.UTC(y, c.mo - 1, c.d);
    return new Date(ms).getUTCDate() === c.d ? ms : null; // 31 February is no date
  };
  let ms = at(c.y ?? sent.getUTCFullYear());
  if (c.y === null && ms !== null && ms < from) ms = at(sent.getUTCFullYear() + 1);
  return ms !== null && ms >= from && ms <= from + MAX_AHEAD_DAYS * DAY_MS ? ms : null;
}

/** The first date named in `s` (earliest position; among the readings of one, the nearest plausible), or null. */
function firstDate(s: string, sent: Date): number | null {
  let best: { index: number; ms: number } | null = null;
  for (const f of DATE_FORMS) {
    const m = f.re.exec(s);
    if (!m || (best && best.index <= m.index)) continue;
    const days = f
      .read(m)
      .map((c) => resolve(c, sent))
      .filter((x): x is number => x !== null);
    if (days.length) best = { index: m.index, ms: Math.min(...days) };
  }
  if (best) return best.ms;
  // A weekday alone ("back on Monday"): its next occurrence after the message's day.
  const w = new RegExp(`^[^\\p{L}\\p{N}]*(?:[\\p{L}']+[^\\p{L}\\p{N}]+){0,3}?${WEEKDAY}`, 'iu').exec(s);
  if (!w) return null;
  const from = utcDay(sent);
  const ahead = (WEEKDAYS[w[1].toLowerCase()] - new Date(from).getUTCDay() + 7) % 7 || 7;
  return from + ahead * DAY_MS;
}

/**
 * The return date (YYYY-MM-DD) an out-of-office text names, or null. With several (away from the 1st
 * until the 4th, back on the 7th) the latest is the return.
 */
export function extractReturnDate(text: string, sent: Date): string | null {
  const head = text.slice(0, 4000);
  let latest: number | null = null;
  for (const a of head.matchAll(ANCHOR)) {
    const after = head.slice(a.index + a[0].length, a.index + a[0].length + WINDOW).split(/\n\s*\n/)[0];
    const ms = firstDate(after, sent);
    if (ms !== null && (latest === null || ms > latest)) latest = ms;
  }
  return latest === null ? null : iso(latest);
}
