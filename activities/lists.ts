// CSV import activities (domain/lists/imports.ts, domain/lists/import-run.ts). `importListRows` is the
// long one: it heartbeats the committed position after every chunk, stops between chunks when its
// workflow cancels it, and always starts from the cursor committed in the database (never from a
// heartbeat), so a retry after a killed worker resumes exactly there.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgImportFiles } from '../domain/lists/import-files.js';
import { defaultRunLimits, ImportFailure, runImport } from '../domain/lists/import-run.js';
import { beginRun, endRun, readProgress, type ImportProgress } from '../domain/lists/imports.js';
import type { ActivityDeps } from './deps.js';

/**
 * Imports running at once in this worker (LIST_IMPORT_CONCURRENCY, default 3). Each holds one
 * pooled connection for its writes and briefly takes another per 1 MiB of file it reads: unbounded,
 * as many imports as the pool has connections would each hold one and wait for a second. The others
 * wait here, heartbeating, for a slot.
 */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(n: number) {
    this.free = n;
  }
  async take(heartbeat: () => void, aborted: () => boolean): Promise<() => void> {
    while (this.free === 0) {
      if (aborted()) throw new CancelledFailure('the import was canceled while waiting for a slot');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000);
        this.waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      heartbeat();
    }
    this.free--;
    return () => {
      this.free++;
      this.waiting.shift()?.();
    };
  }
}

export function createListActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  const slots = new Slots(deps.config.listImport.concurrency);
  return {
    beginListImport: (importId: string) => beginRun(em(), importId),

    async importListRows(input: {
      importId: string;
      maxRecords?: number;
    }): Promise<{ done: boolean; stopped: string | null; progress: ImportProgress }> {
      const ctx = Context.current();
      const limits = {
        ...defaultRunLimits(deps.config.listImport.chunkRows),
        ...(input.maxRecords ? { maxRecords: input.maxRecords } : {}),
      };
      const e = em();
      const release = await slots.take(
        () => ctx.heartbeat(),
        () => ctx.cancellationSignal.aborted,
      );
      try {
        const out = await runImport(e, pgImportFiles(e), input.importId, limits, {
          committed: (position) => ctx.heartbeat(position),
          stopRequested: () => ctx.cancellationSignal.aborted,
        });
        if (ctx.cancellationSignal.aborted && !out.done) throw new CancelledFailure('the import was canceled');
        return { ...out, progress: await readProgress(em(), input.importId) };
      } catch (err) {
        if (err instanceof ImportFailure) throw ApplicationFailure.nonRetryable(err.message, err.code);
        throw err;
      } finally {
        release();
      }
    },

    endListImport: (importId: string, outcome: { canceled?: boolean; failure?: { code: string; message: string } }) => {
      const e = em();
      return endRun(e, pgImportFiles(e), importId, outcome);
    },
  };
}

export type ListActivities = ReturnType<typeof createListActivities>;
