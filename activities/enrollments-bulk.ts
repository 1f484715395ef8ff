// The bulk-enroll workflow's activities: the paging loop (heartbeating the committed cursor and the
// last page whose workflows were started) and the final status.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { EntityManager } from '@mikro-orm/postgresql';
import { enrollNextPage, finishOperation, restartCommittedEnrollments } from '../domain/enrollments/bulk.js';
import type { ActivityDeps } from './deps.js';

interface Beat {
  /** The last lead id whose page is committed and whose enrollment workflows were started. */
  startedThrough: string | null;
}

export function createBulkEnrollActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  return {
    async bulkEnrollPages(input: {
      operationId: string;
      pageSize: number;
      failFirstAttemptAfterPages: number | null;
    }): Promise<{ pages: number }> {
      const ctx = Context.current();
      const beat = ctx.info.heartbeatDetails as Beat | undefined;
      if (ctx.info.attempt > 1) {
        // The previous attempt may have committed pages whose workflows it did not start: start them (a no-op for running ones).
        await restartCommittedEnrollments(em(), deps.jobs, input.operationId, beat?.startedThrough ?? null);
      }
      let pages = 0;
      let failed = 0;
      for (;;) {
        const out = await enrollNextPage(em(), deps.jobs, input.operationId, input.pageSize);
        if (out.count === 0) break;
        pages++;
        failed += out.failed.length;
        if (out.last) ctx.heartbeat({ startedThrough: out.last } satisfies Beat);
        if (
          input.failFirstAttemptAfterPages !== null &&
          ctx.info.attempt === 1 &&
          pages === input.failFirstAttemptAfterPages
        ) {
          throw ApplicationFailure.retryable('test: the first attempt fails mid-way', 'test_failure');
        }
        if (out.count < input.pageSize) break;
      }
      // Starts that failed: the enrollments stay active; one more pass over everything committed starts them.
      if (failed) {
        await restartCommittedEnrollments(em(), deps.jobs, input.operationId, null);
      }
      return { pages };
    },
    async bulkEnrollFinish(operationId: string, status: 'completed' | 'failed', message: string | null) {
      await finishOperation(em(), operationId, {
        status,
        errorCode: status === 'failed' ? 'enroll_failed' : undefined,
        errorMessage: message ?? undefined,
      });
      const [r] = await em().execute<
        { status: 'completed' | 'failed'; processed: number; enrolled: number; skipped: number }[]
      >(`select status, processed, enrolled, skipped from enroll_operations where id = ?`, [operationId]);
      return r;
    },
  };
}

export type BulkEnrollActivities = ReturnType<typeof createBulkEnrollActivities>;
