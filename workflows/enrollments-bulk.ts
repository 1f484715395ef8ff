// Bulk enrollment of a list into a campaign (`enroll:<campaignId>:<operationId>`, docs/executor.md):
// one long activity pages through the list's leads, committing progress with each page and
// heartbeating the cursor, so a retried attempt resumes after the last committed page. The history
// holds two or three activities whatever the list's size; progress lives in enroll_operations.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { defineJob } from './job.js';
import { bulkEnrollWorkflowIds } from '../lib/workflow-ids.js';
import type { BulkEnrollActivities } from '../activities/enrollments-bulk.js';

const { bulkEnrollPages } = proxyActivities<BulkEnrollActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 10, initialInterval: '1 second', maximumInterval: '30 seconds' },
});
const { bulkEnrollFinish } = proxyActivities<BulkEnrollActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '1 second' },
});

export interface BulkEnrollInput {
  operationId: string;
  /** Leads per page (default 500). */
  pageSize?: number;
  /** Tests only: the first attempt of the activity fails after committing this many pages. */
  failFirstAttemptAfterPages?: number;
}

export interface BulkEnrollResult {
  status: 'completed' | 'failed';
  processed: number;
  enrolled: number;
  skipped: number;
}

export async function bulkEnroll(input: BulkEnrollInput): Promise<BulkEnrollResult> {
  try {
    await bulkEnrollPages({
      operationId: input.operationId,
      pageSize: input.pageSize ?? 500,
      failFirstAttemptAfterPages: input.failFirstAttemptAfterPages ?? null,
    });
    return await bulkEnrollFinish(input.operationId, 'completed', null);
  } catch (err) {
    const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    const r = await bulkEnrollFinish(input.operationId, 'failed', message);
    throw ApplicationFailure.nonRetryable(`bulk enrollment failed: ${message}`, 'bulk_enroll_failed', r);
  }
}

export const bulkEnrollJob = defineJob('bulk-enroll', {
  workflow: bulkEnroll,
  id: (k) => bulkEnrollWorkflowIds.operation(k.campaignId, k.operationId),
  args: (s) => [{ operationId: s.operationId }],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => ({ operation_id: s.operationId, campaign_id: s.campaignId }),
  // Once per operation, even after it closed: a repeated request reads the same operation.
  repeat: 'never-again',
});
