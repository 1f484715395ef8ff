// `drafts:<campaignId>:<operationId>`: a batch generation of AI-written drafts (docs/message-review.md).
// One long activity writes the frozen selection batch by batch, committing progress with each batch
// and heartbeating; a retried attempt resumes at the last committed batch. The history holds two
// activities whatever the selection's size.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { defineJob } from './job.js';
import { draftWorkflowIds } from '../lib/workflow-ids.js';
import type { MessageReviewActivities } from '../activities/message-review.js';

const { draftGenerationRun } = proxyActivities<MessageReviewActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 10, initialInterval: '2 seconds', maximumInterval: '1 minute' },
});
const { draftGenerationFinish } = proxyActivities<MessageReviewActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '1 second' },
});

export interface DraftGenerationResult {
  status: string;
  total: number;
  written: number;
  failed: number;
  credits: number;
}

export async function draftGeneration(input: { operationId: string }): Promise<DraftGenerationResult> {
  try {
    await draftGenerationRun(input.operationId);
    return await draftGenerationFinish(input.operationId, 'completed', null);
  } catch (err) {
    const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    const r = await draftGenerationFinish(input.operationId, 'failed', message);
    throw ApplicationFailure.nonRetryable(`draft generation failed: ${message}`, 'drafts_failed', r);
  }
}

export const draftsJob = defineJob('drafts', {
  workflow: draftGeneration,
  id: (k) => draftWorkflowIds.operation(k.campaignId, k.operationId),
  args: (s) => [{ operationId: s.operationId }],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => ({ operation_id: s.operationId, campaign_id: s.campaignId }),
  repeat: 'never-again',
});
