// A CSV import into a lead list (`list-import:<importId>`, docs/imports.md). begin (queued →
// running) → import (one activity that streams the stored file from the committed cursor and writes
// chunk transactions, heartbeating its position; called again until the file ends) → end
// (completed, or canceled after a cancel, or failed with the import's code). The history holds
// counts only; a long import continues as new. Progress: the `progress` query (what the last
// committed chunk recorded) and the import row, which the draft route reads.
// Cancel: the `cancel` signal, sent after the cancel is recorded in the import row (`canceling`):
// it cancels the running activity, which stops after the chunk it is writing; a chunk that starts
// after the cancel sees `canceling` under the row lock and writes nothing.
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { defineJob } from './job.js';
import { listImportWorkflowIds } from '../lib/workflow-ids.js';
import type { ListActivities } from '../activities/lists.js';
import type { ImportProgress } from '../domain/lists/imports.js';

const { beginListImport, endListImport } = proxyActivities<ListActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '1 second', maximumInterval: '30 seconds' },
});
// The import: each call stops after its own limits (a minute at most), heartbeating after every
// committed chunk; a killed worker is noticed after the heartbeat timeout and the retry resumes at
// the committed cursor. Waits for the activity to stop when canceled (it finishes its chunk).
const { importListRows } = proxyActivities<ListActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    maximumAttempts: 10,
    initialInterval: '1 second',
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: ['invalid_csv', 'list_deleted'],
  },
});

export const listImportProgressQuery = defineQuery<ImportProgress | null>('progress');
export const cancelListImportSignal = defineSignal('cancel');

export interface ListImportInput {
  importId: string;
  /** Set by continueAsNew: the run already began, and its last known progress. */
  progress?: ImportProgress;
  /** Activity calls per workflow run before continuing as new (default 50). */
  callsPerRun?: number;
  /** Records per activity call (default: until the activity's time limit). */
  recordsPerCall?: number;
}

export async function listImport(input: ListImportInput): Promise<ImportProgress> {
  let progress: ImportProgress | null = input.progress ?? null;
  let cancelRequested = false;
  let scope: CancellationScope | undefined;
  setHandler(listImportProgressQuery, () => progress);
  setHandler(cancelListImportSignal, () => {
    cancelRequested = true;
    scope?.cancel();
  });

  // The end is recorded even when the workflow itself is canceled (e.g. from the Temporal UI).
  const end = async (outcome: { canceled?: boolean; failure?: { code: string; message: string } }) =>
    (progress = await CancellationScope.nonCancellable(() => endListImport(input.importId, outcome)));

  if (!input.progress) {
    const begun = await beginListImport(input.importId);
    progress = begun.progress;
    if (!begun.runnable) return end({});
  }
  const callsPerRun = input.callsPerRun ?? 50;
  for (let calls = 0; ; calls++) {
    if (calls >= callsPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof listImport>({ ...input, progress: progress ?? undefined });
    }
    if (cancelRequested) return end({ canceled: true });
    try {
      scope = new CancellationScope();
      const step = await scope.run(() =>
        importListRows({ importId: input.importId, maxRecords: input.recordsPerCall }),
      );
      progress = step.progress;
      if (step.done || step.stopped) break;
    } catch (err) {
      if (isCancellation(err)) return end({ canceled: true });
      const cause = err instanceof ActivityFailure ? err.cause : err;
      const code =
        cause instanceof ApplicationFailure && cause.type && cause.nonRetryable ? cause.type : 'import_failed';
      const message = cause instanceof Error ? cause.message : String(cause);
      return end({ failure: { code, message } });
    } finally {
      scope = undefined;
    }
  }
  return end({ canceled: cancelRequested });
}

export const listImportJob = defineJob('list-import', {
  workflow: listImport,
  id: (k) => listImportWorkflowIds.run(k.importId),
  args: (s) => [{ importId: s.importId }],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => ({ import_id: s.importId }),
  repeat: 'while-open',
  signals: { cancel: cancelListImportSignal },
});
