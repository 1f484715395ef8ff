// Operator tools of campaign enrollment and its scheduled actions (docs/executor.md, "Bulk enrollment", "Rescheduling").
import { z } from 'zod';
import { startListEnrollment } from '../bulk-enroll.js';
import { rescheduleOverdue, reschedulePlanned } from '../scheduled-actions.js';
import { defineTool } from './registry.js';

export const enrollmentTools = [
  defineTool({
    name: 'enroll_list_in_campaign',
    domain: 'enrollments',
    description:
      'Enroll every lead of a list in an active or paused campaign, as a job (each lead checked: already enrolled, no identity on the first step’s channel, blocked country, in another campaign). The same client_key returns the same operation.',
    input: z.object({ campaign_id: z.uuid(), list_id: z.uuid(), client_key: z.string().min(1).max(200) }).strict(),
    risk: 'send',
    run: async ({ em, actor, jobs }, input) => {
      const op = await startListEnrollment(em, jobs, actor, input.campaign_id, { listId: input.list_id, clientKey: input.client_key });
      return { operation_id: op.id, status: op.status, total: op.total, processed: op.processed, enrolled: op.enrolled, skipped: op.skipped };
    },
  }),
  defineTool({
    name: 'reschedule_campaign_actions',
    domain: 'enrollments',
    description:
      'Re-plan a campaign’s pending actions into its current sending windows, spread under each sender account’s daily caps. which=overdue: actions whose time passed while paused move into the next windows (call before resuming). which=planned: actions not yet due follow changed windows or caps (wider windows bring them earlier). Returns how many moved and the first moves.',
    input: z.object({ campaign_id: z.uuid(), which: z.enum(['overdue', 'planned']) }).strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, input) =>
      input.which === 'overdue' ? rescheduleOverdue(em, actor, input.campaign_id) : reschedulePlanned(em, jobs, actor, input.campaign_id),
  }),
];
