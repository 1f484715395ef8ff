// A campaign's sending windows, in its time zone or each recipient's: when the next one opens. Read
// by planning, the slot request and the send-time rule (domain/enrollments/send-rule.ts), all
// through `sendingZone`, so the planned time and the rule's answer never disagree on the zone.
import type { SendingWindows } from '../../db/entities/Campaign.js';
import { addDays, isoWeekday, localDate, parseClock, zonedTime } from '../governor/time.js';
import { windowZone } from '../contacts/time-zone.js';

/**
 * The zone the windows are read in: the campaign's (`window_time_zone` campaign), or the recipient's
 * (recipient: the contact's stored zone, else its country's when it has one, else the campaign's).
 * The governor's working hours stay the sender account's own.
 */
export function sendingZone(
  mode: string,
  campaignZone: string,
  contactZone: string | null,
  contactCountry: string | null,
): string {
  return mode === 'recipient'
    ? windowZone('recipient', campaignZone, { timeZone: contactZone, country: contactCountry }).zone
    : campaignZone;
}

/** `from` itself when inside a window, else the next opening; null when no window ever opens. */
export function nextWindowOpening(windows: SendingWindows, timeZone: string, from: Date): Date | null {
  const today = localDate(from, timeZone);
  for (let i = 0; i <= 7; i++) {
    const date = addDays(today, i);
    const slots = (windows[String(isoWeekday(date)) as keyof SendingWindows] ?? [])
      .map((w) => ({ open: parseClock(w.start), close: parseClock(w.end) }))
      .filter((w) => w.close > w.open)
      .sort((a, b) => a.open - b.open);
    for (const w of slots) {
      const opens = zonedTime(date, w.open, timeZone);
      const closes = zonedTime(date, w.close, timeZone);
      if (from >= closes) continue;
      return opens > from ? opens : from;
    }
  }
  return null;
}
