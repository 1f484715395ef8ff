// A company decision-maker import (`cdm-import:<jobId>`, docs/company-imports.md). Each run of the
// workflow is one numbered run of the job: a search (creation, then each retry of failed companies)
// or a confirm. Search: one activity per batch of companies; transient source errors are retried by
// Temporal for the companies still pending, and after the last attempt those companies fail with
// `source_unavailable` (any other failure: `search_failed`), so a batch never blocks the job.
// Confirm: one activity per chunk of approved people until none is left. The state lives in
// PostgreSQL; the history holds ids and counts only, and a long search continues as new.
import {
  ActivityFailure,
  ApplicationFailure,
  defineQuery,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { defineJob } from './job.js';
import { cdmImportWorkflowIds } from '../lib/workflow-ids.js';
import type { CdmImportActivities } from '../activities/cdm-imports.js';

const { beginCdmSearch, failCdmBatch, finishCdmSearch } = proxyActivities<CdmImportActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '1 second', maximumInterval: '30 seconds' },
});
// A batch: up to 50 companies, each one or a few source requests with the source's own deadline.
const { searchCdmBatch } = proxyActivities<CdmImportActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
const { confirmCdmChunk } = proxyActivities<CdmImportActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 10, initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export interface CdmImportInput {
  jobId: string;
  run: number;
  phase: 'search' | 'confirm';
}

export interface CdmImportProgress {
  jobId: string;
  run: number;
  phase: 'search' | 'confirm';
  /** Batches (search) or chunks (confirm) this run has worked through so far (this history only). */
  steps: number;
  /** The batch being searched, or null. */
  batch: number | null;
  added: number;
}

export const cdmImportProgressQuery = defineQuery<CdmImportProgress>('progress');

/** Continue as new before the history grows large (a 1,000-company search is 100 batches or more). */
const MAX_HISTORY = 2000;

export async function cdmImport(input: CdmImportInput): Promise<CdmImportProgress> {
  const progress: CdmImportProgress = {
    jobId: input.jobId,
    run: input.run,
    phase: input.phase,
    steps: 0,
    batch: null,
    added: 0,
  };
  setHandler(cdmImportProgressQuery, () => progress);
  const tooLong = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > MAX_HISTORY;
  // The memo names the run, which a repeated start compares (jobs/temporal.ts): carried over explicitly.
  const again = () =>
    makeContinueAsNewFunc<typeof cdmImport>({
      memo: workflowInfo().memo,
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
    })(input);

  if (input.phase === 'confirm') {
    for (;;) {
      const chunk = await confirmCdmChunk({ jobId: input.jobId, run: input.run });
      progress.steps++;
      progress.added += chunk.added;
      if (chunk.done) return progress;
      if (tooLong()) await again();
    }
  }

  const plan = await beginCdmSearch({ jobId: input.jobId, run: input.run });
  if (!plan.proceed) return progress;
  for (const batch of plan.batches) {
    progress.batch = batch;
    try {
      await searchCdmBatch({ jobId: input.jobId, run: input.run, batch });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
      const transient = cause?.type === 'source_unavailable';
      await failCdmBatch({
        jobId: input.jobId,
        run: input.run,
        batch,
        reason: transient ? 'source_unavailable' : 'search_failed',
        message: cause?.message ?? err.message,
      });
    }
    progress.steps++;
    // The next run starts from the batches still pending, so nothing is searched twice.
    if (tooLong()) await again();
  }
  progress.batch = null;
  await finishCdmSearch({ jobId: input.jobId, run: input.run });
  return progress;
}

export const cdmImportJob = defineJob('cdm-import', {
  workflow: cdmImport,
  id: (k) => cdmImportWorkflowIds.job(k.jobId),
  args: (s) => [{ jobId: s.jobId, run: s.run, phase: s.phase }],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => ({ job_id: s.jobId, run: s.run, phase: s.phase }),
  repeat: {
    afterPrevious: 'run',
    busy: { code: 'import_busy', message: 'the previous run of this import is still closing; retry shortly' },
  },
});
