import { z } from 'zod';
import { ACTION_STATES, type IScheduledAction } from '../../db/entities/ScheduledAction.js';
import { ENROLLMENT_STATUSES, type IEnrollment } from '../../db/entities/Enrollment.js';
import { SKIP_REASONS } from '../../domain/enrollments/enrollments.js';
import { UNSENT_ACTION_STATES, WAITING_REASONS, type EnrollmentViewItem } from '../../domain/enrollments/view.js';
import { Timestamp, iso, text } from '../schemas.js';
import type { IEnrollOperation } from '../../db/entities/EnrollOperation.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';

export const CampaignIdParams = z.object({ campaignId: z.uuid() });
export const CampaignLeadParams = z.object({ campaignId: z.uuid(), leadId: z.uuid() });
export const LeadIdParams = z.object({ leadId: z.uuid() });

export const EnrollBody = z.object({ lead_ids: z.array(z.uuid()).min(1).max(1000) }).strict();
export const EnrollResultView = z.object({
  items: z.array(
    z.object({
      lead_id: z.uuid(),
      status: z.enum(['enrolled', 'skipped']),
      reason: z.enum([...SKIP_REASONS, 'start_failed']).nullable(),
      enrollment_id: z.uuid().nullable(),
    }),
  ),
  enrolled: z.number().int(),
  skipped: z.number().int(),
});

export const ReenrollBody = z
  .object({
    /** The campaign to start again in; default: the lead's latest enrollment's. */
    campaign_id: z.uuid().optional(),
    /** Start at this step of the campaign's current steps; default: the first. */
    step_id: z.uuid().optional(),
  })
  .strict();

export const EnrollmentView = z.object({
  id: z.uuid(),
  campaign_id: z.uuid(),
  lead_id: z.uuid(),
  status: z.enum(ENROLLMENT_STATUSES),
  step_version: z.number().int(),
  current_position: z.number().int().nullable(),
  current_step_id: z.uuid().nullable(),
  stop_reason: z.string().nullable(),
  run: z.number().int(),
  replied_at: Timestamp.nullable(),
  enrolled_at: Timestamp,
  finished_at: Timestamp.nullable(),
});
export const EnrollmentList = z.object({ items: z.array(EnrollmentView) });

export const toEnrollmentView = (e: IEnrollment): z.infer<typeof EnrollmentView> => ({
  id: e.id,
  campaign_id: e.campaign.id,
  lead_id: e.lead.id,
  status: e.status as z.infer<typeof EnrollmentView>['status'],
  step_version: e.stepVersion,
  current_position: e.currentPosition ?? null,
  current_step_id: e.currentStepId ?? null,
  stop_reason: e.stopReason ?? null,
  run: e.run,
  replied_at: iso(e.repliedAt),
  enrolled_at: iso(e.enrolledAt)!,
  finished_at: iso(e.finishedAt),
});

export const ScheduledActionView = z.object({
  id: z.uuid(),
  campaign_id: z.uuid(),
  enrollment_id: z.uuid(),
  lead_id: z.uuid(),
  step_id: z.uuid(),
  step_position: z.number().int(),
  step_version: z.number().int(),
  type: z.string(),
  state: z.enum(ACTION_STATES),
  due_at: Timestamp,
  account_id: z.uuid().nullable(),
  content: z.record(z.string(), z.unknown()).nullable(),
  waiting_reason: z.string().nullable(),
  approved_at: Timestamp.nullable(),
  approved_by: z.uuid().nullable(),
  executed_at: Timestamp.nullable(),
  connector_message_id: z.string().nullable(),
  connector_thread_id: z.string().nullable(),
  accepted_at: Timestamp.nullable(),
  replied_at: Timestamp.nullable(),
  opened_at: Timestamp.nullable().meta({
    description: 'Beyond the spec. A person’s first open (machine opens never set it: docs/tracking.md)',
  }),
  clicked_at: Timestamp.nullable().meta({ description: 'Beyond the spec. A person’s first click on a tracked link' }),
  variant_id: z.uuid().nullable().meta({
    description:
      'Beyond the spec. The A/B variant this send uses (null: the step has none; docs/campaigns.md "A/B variants")',
  }),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  attempts: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toActionView = (a: IScheduledAction): z.infer<typeof ScheduledActionView> => ({
  id: a.id,
  campaign_id: a.campaign.id,
  enrollment_id: a.enrollment.id,
  lead_id: a.leadId,
  step_id: a.stepId,
  step_position: a.stepPosition,
  step_version: a.stepVersion,
  type: a.type,
  state: a.state as z.infer<typeof ScheduledActionView>['state'],
  due_at: iso(a.dueAt)!,
  account_id: a.accountId ?? null,
  content: a.content ?? null,
  waiting_reason: a.waitingReason ?? null,
  approved_at: iso(a.approvedAt),
  approved_by: a.approvedBy ?? null,
  executed_at: iso(a.executedAt),
  connector_message_id: a.connectorMessageId ?? null,
  connector_thread_id: a.connectorThreadId ?? null,
  accepted_at: iso(a.acceptedAt),
  replied_at: iso(a.repliedAt),
  opened_at: iso(a.openedAt),
  clicked_at: iso(a.clickedAt),
  variant_id: a.variantId ?? null,
  error_code: a.errorCode ?? null,
  error_message: a.errorMessage ?? null,
  attempts: a.attempts,
  created_at: iso(a.createdAt)!,
  updated_at: iso(a.updatedAt)!,
});

// Bulk enrollment of a list (docs/executor.md, "Bulk enrollment").
export const EnrollListBody = z
  .object({
    list_id: z.uuid(),
    /** The caller's idempotency key: the same key on the same campaign returns the same operation. */
    client_key: text({ max: 200, min: 1, trim: true }),
  })
  .strict();
export const OperationParams = z.object({ campaignId: z.uuid(), operationId: z.uuid() });
export const ReceiptParams = z.object({ campaignId: z.uuid(), receiptId: z.uuid() });
export const ReceiptQuery = z.object(pageQuery).strict();

export const EnrollOperationView = z.object({
  operation_id: z.uuid(),
  receipt_id: z.uuid(),
  campaign_id: z.uuid(),
  list_id: z.uuid(),
  client_key: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed']),
  total: z.number().int(),
  processed: z.number().int(),
  enrolled: z.number().int(),
  skipped: z.number().int(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: Timestamp,
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
});
export const toEnrollOperationView = (o: IEnrollOperation): z.infer<typeof EnrollOperationView> => ({
  operation_id: o.id,
  receipt_id: o.id,
  campaign_id: o.campaign.id,
  list_id: o.listId,
  client_key: o.clientKey,
  status: o.status as z.infer<typeof EnrollOperationView>['status'],
  total: o.total,
  processed: o.processed,
  enrolled: o.enrolled,
  skipped: o.skipped,
  error: o.errorCode ? { code: o.errorCode, message: o.errorMessage ?? '' } : null,
  created_at: o.createdAt.toISOString(),
  started_at: iso(o.startedAt),
  finished_at: iso(o.finishedAt),
});

const SkipReason = z.enum(SKIP_REASONS);
export const EnrollReceiptView = z.object({
  receipt_id: z.uuid(),
  operation_id: z.uuid(),
  campaign_id: z.uuid(),
  list_id: z.uuid(),
  status: z.literal('completed'),
  processed: z.number().int(),
  enrolled: z.number().int(),
  skipped: z.number().int(),
  /** Skipped leads per reason (absent reasons: 0). */
  skipped_by_reason: z.record(z.string(), z.number().int()),
  finished_at: Timestamp.nullable(),
  /** The skipped leads, by lead id, paginated with `limit` and `cursor`. */
  skipped_leads: pageSchema(z.object({ lead_id: z.uuid(), reason: SkipReason })),
});

export const PreviewParams = z.object({ id: z.uuid() });
export const PreviewQuery = z
  .object({
    list_id: z.uuid().optional(),
    /** Comma-separated lead ids (up to 1000), instead of or beside a list. */
    lead_ids: z
      .string()
      .meta({ examples: ['0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a01,0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a02'] })
      .optional()
      .transform((s) =>
        s
          ? s
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean)
          : undefined,
      )
      .pipe(z.array(z.uuid()).max(1000).optional()),
  })
  .strict()
  .refine((q) => q.list_id || q.lead_ids?.length, { message: 'give list_id or lead_ids' });
export const EnrollmentPreviewView = z.object({
  total: z.number().int(),
  would_enroll: z.number().int(),
  skipped: z.number().int(),
  skipped_by_reason: z.record(z.string(), z.number().int()),
  /** Up to 20 skipped leads with their reason. */
  sample: z.array(z.object({ lead_id: z.uuid(), reason: SkipReason })),
});

// The per-lead enrollment view (beyond the spec; domain/enrollments/view.ts, docs/executor.md).
export const EnrollmentListQuery = z
  .object({
    ...pageQuery,
    status: z.enum(ENROLLMENT_STATUSES).optional(),
    /** Enrollments whose current step is this one. */
    step_id: z.uuid().optional(),
    lead_id: z.uuid().optional(),
  })
  .strict();

export const EnrollmentDetailView = z.object({
  id: z.uuid(),
  campaign_id: z.uuid(),
  lead_id: z.uuid(),
  contact_id: z.uuid(),
  status: z.enum(ENROLLMENT_STATUSES),
  stop_reason: z.string().nullable(),
  run: z.number().int(),
  step_version: z.number().int(),
  /** The step in progress (null before the first and after the last); `type` from the enrollment's step version. */
  current_step: z.object({ id: z.uuid(), position: z.number().int(), type: z.string().nullable() }).nullable(),
  replied_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
  created_at: Timestamp,
  /** The enrollment's send not made yet (planned, awaiting approval, approved or executing), if any. */
  next_action: z
    .object({
      id: z.uuid(),
      type: z.string(),
      state: z.enum(UNSENT_ACTION_STATES),
      due_at: Timestamp,
      waiting_reason: z.string().nullable(),
    })
    .nullable(),
  /** Why the next send has not happened yet, from stored state; `until` is known for the timed reasons (the action's due time). */
  waiting: z.object({ reason: z.enum(WAITING_REASONS).nullable(), until: Timestamp.nullable() }),
});
export const EnrollmentDetailPage = pageSchema(EnrollmentDetailView);
/** The domain's view is the response (the assignment is the type check). */
export const toEnrollmentDetailView = (v: EnrollmentViewItem): z.infer<typeof EnrollmentDetailView> => v;
