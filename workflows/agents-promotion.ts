// A bulk promotion (`promote-profiles:<agentId>:<operationId>`): promotes the rows the API selected
// for the operation (rejected_profiles.promote_operation_id), one batch per activity, in id order.
// The history holds only counts and a cursor; a very large selection continues as new. The
// `progress` query answers while it runs; promote-status reads the rows once it is done.
import { continueAsNew, defineQuery, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { defineJob } from './job.js';
import { promotionWorkflowIds } from '../lib/workflow-ids.js';
import type { AgentPromotionActivities } from '../activities/agents-promotion.js';

const { promoteProfileBatch } = proxyActivities<AgentPromotionActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 10, initialInterval: '2 seconds' },
});

export interface PromotionProgress {
  total: number;
  promoted: number;
  skipped: number;
  done: boolean;
}

export const promotionProgressQuery = defineQuery<PromotionProgress>('progress');

export interface PromoteProfilesInput {
  agentId: string;
  workspaceId: string;
  operationId: string;
  /** Who started it ("promoted by …" on each lead). */
  by: string;
  /** Rejections the selection named; `skipped` starts with those already promoted. */
  total: number;
  promoted: number;
  skipped: number;
  /** The last row id done (a continued run picks up after it). */
  cursor: string | null;
  /** Rows per activity (default 200) and activities per workflow run before continuing as new (default 100). */
  batchSize?: number;
  batchesPerRun?: number;
}

export async function promoteProfiles(input: PromoteProfilesInput): Promise<PromotionProgress> {
  const batchSize = input.batchSize ?? 200;
  const batchesPerRun = input.batchesPerRun ?? 100;
  let { promoted, skipped, cursor } = input;
  let done = false;
  setHandler(promotionProgressQuery, () => ({ total: input.total, promoted, skipped, done }));
  for (let batches = 0; ; batches++) {
    if (batches >= batchesPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof promoteProfiles>({ ...input, promoted, skipped, cursor });
    }
    const out = await promoteProfileBatch({
      agentId: input.agentId,
      operationId: input.operationId,
      by: input.by,
      after: cursor,
      limit: batchSize,
    });
    promoted += out.promoted;
    cursor = out.last ?? cursor;
    if (out.count < batchSize) break;
  }
  // Whatever the operation did not promote left its selection: already promoted when selected,
  // promoted by hand meanwhile, or selected again by a later operation.
  skipped = Math.max(0, input.total - promoted);
  done = true;
  return { total: input.total, promoted, skipped, done };
}

export const promoteProfilesJob = defineJob('promote-profiles', {
  workflow: promoteProfiles,
  id: (k) => promotionWorkflowIds.bulk(k.agentId, k.operationId),
  args: (s) => [
    {
      agentId: s.agentId,
      workspaceId: s.workspaceId,
      operationId: s.operationId,
      by: s.by,
      total: s.total,
      promoted: 0,
      skipped: s.skipped,
      cursor: null,
    },
  ],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => s.memo,
  repeat: 'while-open',
  queries: { progress: promotionProgressQuery },
});
