import { z } from 'zod';
import { FUNNEL_STAGES, MAX_RANGE_DAYS } from '../../domain/analytics/analytics.js';

const Day = z.iso.date().meta({ description: 'A local calendar day (YYYY-MM-DD) in `tz`' });
const Tz = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z][A-Za-z0-9_+\-/]*$/, 'an IANA time zone name')
  .default('UTC')
  .meta({
    description:
      'IANA time zone whose local days the range counts (default UTC); an unknown one is 400 invalid_time_zone',
  });
const rangeDoc = `Local days from \`from\` to \`to\` included (default: the 30 days ending today in \`tz\`); from ≤ to (400 invalid_range), at most ${MAX_RANGE_DAYS} days (400 range_too_long)`;

export const RangeQuery = z
  .object({
    from: Day.optional(),
    to: Day.optional(),
    tz: Tz,
    app_id: z.uuid().optional(),
    campaign_id: z.uuid().optional(),
  })
  .strict()
  .meta({ description: rangeDoc });
export const AppRangeQuery = z
  .object({ from: Day.optional(), to: Day.optional(), tz: Tz, app_id: z.uuid().optional() })
  .strict()
  .meta({ description: rangeDoc });
export const DayQuery = z
  .object({ date: Day.optional(), tz: Tz, app_id: z.uuid().optional(), campaign_id: z.uuid().optional() })
  .strict();

const n = z.number().int();
export const Counts = z.object({
  discovered: n,
  approved: n,
  rejected: n,
  enrolled: n,
  contacted: n.meta({ description: 'enrollments whose first send happened in the range' }),
  sent: n,
  opened: n,
  accepted: n,
  replied: n.meta({ description: 'replies to sends (as in the campaign stats)' }),
  failed: n,
  bounced: n,
  replied_leads: n.meta({ description: 'enrollments whose lead first replied in the range' }),
  meetings: n,
});
const rate = z.number().min(0);
export const Rates = z.object({
  reply_rate: rate,
  open_rate: rate,
  acceptance_rate: rate,
  approval_rate: rate,
  meeting_rate: rate,
});
const Range = z.object({
  from: z.string(),
  to: z.string(),
  tz: z.string(),
  days: n,
  app_id: z.uuid().nullable(),
  campaign_id: z.uuid().nullable(),
});

export const OverviewView = z.object({
  range: Range,
  totals: Counts,
  rates: Rates,
  previous: z
    .object({ from: z.string(), to: z.string(), totals: Counts, rates: Rates })
    .meta({ description: 'the same number of days just before the range' }),
});
export const DailyView = z.object({
  range: Range,
  items: z.array(Counts.extend({ day: z.string(), reply_rate: rate })),
});
export const DailyOverviewView = z.object({
  date: z.string(),
  tz: z.string(),
  app_id: z.uuid().nullable(),
  campaign_id: z.uuid().nullable(),
  totals: Counts,
  rates: Rates,
  previous_day: Counts,
  average_of_previous_7_days: z.object(
    Object.fromEntries(Object.keys(Counts.shape).map((k) => [k, z.number()])) as Record<
      keyof typeof Counts.shape,
      z.ZodNumber
    >,
  ),
});
export const FunnelView = z.object({
  range: Range,
  stages: z.array(z.object({ stage: z.enum(FUNNEL_STAGES), count: n, rate_from_previous: rate.nullable() })),
});
const discovery = { discovered: n, approved: n, rejected: n, approval_rate: rate };
export const SignalsView = z.object({
  range: Range,
  items: z.array(
    z.object({
      agent_id: z.uuid(),
      agent_name: z.string().nullable(),
      signal_key: z.string(),
      signal_name: z.string().nullable(),
      ...discovery,
    }),
  ),
});
export const SourcesView = z.object({ range: Range, items: z.array(z.object({ source: z.string(), ...discovery })) });
/** A step's (or a variant's) send figures in the range (domain/analytics/analytics.ts `bySteps`). */
const sendFigures = { sent: n, opened: n, accepted: n, replied: n, failed: n, bounced: n, reply_rate: rate };
export const StepsView = z.object({
  range: Range,
  items: z.array(
    z.object({
      campaign_id: z.uuid(),
      campaign_name: z.string().nullable(),
      step_id: z.uuid(),
      step_position: n.nullable(),
      type: z.string().nullable(),
      ...sendFigures,
      variants: z
        .array(
          z.object({
            variant_id: z.uuid(),
            name: z.string().nullable(),
            is_winner: z.boolean(),
            ...sendFigures,
            open_rate: rate,
          }),
        )
        .optional()
        .meta({
          description:
            'Beyond the spec. A step with A/B variants: its figures per variant in the step’s order (name null: removed from the step since); sends planned before the step had variants count only in the step’s figures',
        }),
    }),
  ),
});
