// Schemas of the campaign-level scheduled-action routes, stats and impact (docs/executor.md, docs/campaigns.md).
import { z } from 'zod';
import { ACTION_STATES } from '../../db/entities/ScheduledAction.js';
import { ENROLLMENT_STATUSES } from '../../db/entities/Enrollment.js';
import { Timestamp } from '../schemas.js';
import { ScheduledActionView } from '../enrollments/schemas.js';

export const ActionListQuery = z
  .object({
    state: z.enum(ACTION_STATES).optional(),
    step_id: z.uuid().optional(),
    due_from: Timestamp.optional(),
    due_to: Timestamp.optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().min(1).max(200).optional(),
  })
  .strict();

export const ActionPage = z.object({ items: z.array(ScheduledActionView), next_cursor: z.string().nullable() });

export const BatchApproveBody = z.object({ ids: z.array(z.uuid()).min(1).max(500) }).strict();
export const BatchApproveView = z.object({
  items: z.array(
    z.object({
      id: z.uuid(),
      result: z.enum(['approved', 'not_found', 'invalid_state']),
      state: z.enum(ACTION_STATES).nullable(),
    }),
  ),
  approved: z.number().int(),
  not_found: z.number().int(),
  invalid_state: z.number().int(),
});

const Count = z.number().int().min(0);

export const InFlightImpactView = z.object({
  campaign_id: z.uuid(),
  campaign_status: z.string(),
  enrollments_by_status: z.partialRecord(z.enum(ENROLLMENT_STATUSES), Count),
  running_enrollments: Count,
  actions_by_state: z.partialRecord(z.enum(ACTION_STATES), Count),
  pending_actions_by_step: z.array(z.object({ step_id: z.uuid(), step_position: z.number().int(), pending: Count })),
  due_next_24h: Count,
  awaiting_approval_next_24h: Count,
});

const StepCounts = {
  sent: Count,
  accepted: Count,
  opened: Count.meta({
    description:
      'Emails opened by a person (the connector’s message.opened, or a tracking pixel load classified human: docs/tracking.md)',
  }),
  opened_machine: Count.meta({
    description:
      'Beyond the spec. Emails whose only opens were machines’ (privacy proxies prefetching, scanners): not in `opened`',
  }),
  clicked: Count.meta({ description: 'Beyond the spec. Emails with a tracked link followed by a person' }),
  clicked_machine: Count.meta({
    description: 'Beyond the spec. Emails whose only clicks were machines’ (link scanners): not in `clicked`',
  }),
  replied: Count,
  failed: Count,
  bounced: Count,
  reply_rate: z.number().min(0),
};

export const CampaignStatsView = z.object({
  campaign_id: z.uuid(),
  time_zone: z.string(),
  totals: z.object({
    enrolled: Count,
    replied_enrollments: Count,
    enrollment_failed: Count.describe(
      'enrollments that ended `failed` (an error retrying could not fix; each also notified)',
    ),
    ...StepCounts,
  }),
  steps: z.array(
    z.object({
      step_id: z.uuid(),
      step_position: z.number().int(),
      type: z.string(),
      enrolled: Count,
      ...StepCounts,
      variants: z
        .array(z.object({ variant_id: z.uuid(), name: z.string().nullable(), is_winner: z.boolean(), ...StepCounts }))
        .optional()
        .meta({
          description:
            'Beyond the spec. Per A/B variant of the step (present when its sends used variants); details: GET …/steps/{stepId}/variants',
        }),
    }),
  ),
  by_day: z.array(z.object({ day: z.string(), sent: Count, replied: Count, accepted: Count, failed: Count })),
});

export const StepRepliesView = z.object({
  campaign_id: z.uuid(),
  total_replies: Count,
  items: z.array(
    z.object({
      step_id: z.uuid(),
      step_position: z.number().int(),
      type: z.string(),
      replies: Count,
      reply_rate: z.number().min(0),
      latest: z.array(
        z.object({
          action_id: z.uuid(),
          lead_id: z.uuid(),
          enrollment_id: z.uuid(),
          replied_at: Timestamp,
          executed_at: Timestamp.nullable(),
        }),
      ),
    }),
  ),
});

const CountryRule = z.object({ mode: z.enum(['allow', 'block']), countries: z.array(z.string()) }).nullable();

export const CountryImpactView = z.object({
  campaign_id: z.uuid(),
  country_rule: CountryRule,
  actions: Count,
  enrollments: Count,
  by_country: z.array(z.object({ country: z.string().nullable(), actions: Count })),
  sample: z.array(
    z.object({
      action_id: z.uuid(),
      lead_id: z.uuid(),
      enrollment_id: z.uuid(),
      state: z.enum(ACTION_STATES),
      due_at: Timestamp,
      country: z.string().nullable(),
    }),
  ),
});

export const CountryCancelView = z.object({
  campaign_id: z.uuid(),
  canceled_actions: Count,
  stopped_enrollments: Count,
  signaled: Count,
});

export const ReplanView = z.object({
  campaign_id: z.uuid(),
  considered: Count,
  rescheduled: Count,
  no_window: Count.meta({ description: 'Actions for which no sending window ever opens (left unchanged)' }),
  first_due_at: Timestamp.nullable(),
  last_due_at: Timestamp.nullable(),
  items: z
    .array(z.object({ id: z.uuid(), previous_due_at: Timestamp, due_at: Timestamp }))
    .meta({ description: 'The moves (first 200)' }),
});
