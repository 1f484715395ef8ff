// Times of day as the API and the Operator tools accept them (working hours, sending windows): one
// rule for both, so a window the REST API refuses is refused by a tool too.
import { z } from 'zod';

/** A time of day, `HH:MM` on the 24-hour clock. */
export const ClockTime = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'HH:MM, 24-hour clock');
/** The end of a window: a time of day, or 24:00 (the end of the day; docs/governor.md). */
export const ClockEnd = z
  .string()
  .regex(/^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$/, 'HH:MM, 24-hour clock, or 24:00')
  .meta({ examples: ['17:00'] });
