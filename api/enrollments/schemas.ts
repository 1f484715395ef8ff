import { z } from 'zod';
import { ACTION_STATES, type IScheduledAction } from '../../db/entities/ScheduledAction.js';
import { ENROLLMENT_STATUSES, type IEnrollment } from '../../db/entities/Enrollment.js';
import { SKIP_REASONS } from '../../domain/enrollments.js';
import { Timestamp, iso } from '../schemas.js';

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
  error_code: a.errorCode ?? null,
  error_message: a.errorMessage ?? null,
  attempts: a.attempts,
  created_at: iso(a.createdAt)!,
  updated_at: iso(a.updatedAt)!,
});
