// Operator tools of campaign enrollment and its scheduled actions (docs/executor.md, "Per-lead enrollment view", "Bulk enrollment", "Rescheduling").
import { z } from 'zod';
import { ENROLLMENT_STATUSES } from '../../db/entities/Enrollment.js';
import { pageQuery, page } from '../../lib/pagination.js';
import { startListEnrollment } from '../enrollments/bulk.js';
import { getEnrollmentView, listEnrollmentViews } from '../enrollments/view.js';
import { rescheduleOverdue, reschedulePlanned } from '../scheduled-actions/scheduled-actions.js';
import { defineTool } from './registry.js';

export const enrollmentTools = [
  defineTool({
    name: 'get_enrollments',
    ids: {
      campaign_id: 'campaign',
      enrollment_id: 'enrollment',
      step_id: { within: 'campaign_id', child: 'step' },
      lead_id: 'lead',
    },
    domain: 'enrollments',
    description:
      'Read leads’ enrollments in a campaign: status, current step, the next action with its due time, and why it has not happened yet (`waiting.reason`: campaign_paused, paused, waiting_for_window, waiting_step_delay, awaiting_review, gap, cap_daily, …; `waiting.until` when known). Give enrollment_id for one, or campaign_id with optional filters (status, step_id = current step, lead_id) and a cursor from a previous answer for the next page.',
    input: z
      .object({
        campaign_id: z.uuid().optional(),
        enrollment_id: z.uuid().optional(),
        status: z.enum(ENROLLMENT_STATUSES).optional(),
        step_id: z.uuid().optional(),
        lead_id: z.uuid().optional(),
        limit: z.number().int().min(1).max(50).optional(),
        cursor: pageQuery.cursor.describe('the next_cursor of a previous answer (by campaign)'),
      })
      .strict()
      .refine((i) => (i.campaign_id === undefined) !== (i.enrollment_id === undefined), {
        message: 'give exactly one of campaign_id and enrollment_id',
      }),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      if (input.enrollment_id)
        return { items: [await getEnrollmentView(em, actor, input.enrollment_id)], next_cursor: null };
      const limit = input.limit ?? 20;
      const rows = await listEnrollmentViews(
        em,
        actor,
        input.campaign_id!,
        { status: input.status, stepId: input.step_id, leadId: input.lead_id },
        { limit, after: input.cursor },
      );
      return page(rows, limit, (r) => r);
    },
  }),
  defineTool({
    name: 'enroll_list_in_campaign',
    ids: { campaign_id: 'campaign', list_id: 'list' },
    domain: 'enrollments',
    description:
      'Enroll every lead of a list in an active or paused campaign, as a job (each lead checked: already enrolled, no identity on the first step’s channel, blocked country, in another campaign). The same client_key returns the same operation.',
    input: z.object({ campaign_id: z.uuid(), list_id: z.uuid(), client_key: z.string().min(1).max(200) }).strict(),
    risk: 'send',
    run: async ({ em, actor, jobs }, input) => {
      const op = await startListEnrollment(em, jobs, actor, input.campaign_id, {
        listId: input.list_id,
        clientKey: input.client_key,
      });
      return {
        operation_id: op.id,
        status: op.status,
        total: op.total,
        processed: op.processed,
        enrolled: op.enrolled,
        skipped: op.skipped,
      };
    },
  }),
  defineTool({
    name: 'reschedule_campaign_actions',
    ids: { campaign_id: 'campaign' },
    domain: 'enrollments',
    description:
      'Re-plan a campaign’s pending actions into its current sending windows, spread under each sender account’s daily caps. which=overdue: actions whose time passed while paused move into the next windows (call before resuming). which=planned: actions not yet due follow changed windows or caps (wider windows bring them earlier). Returns how many moved and the first moves.',
    input: z.object({ campaign_id: z.uuid(), which: z.enum(['overdue', 'planned']) }).strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, input) =>
      input.which === 'overdue'
        ? rescheduleOverdue(em, actor, input.campaign_id)
        : reschedulePlanned(em, jobs, actor, input.campaign_id),
  }),
];
