// Contacts-export activities (domain/contact-exports.ts). Domain refusals are non-retryable failures
// whose type is the code recorded on the export; anything else (database errors) is retried, and a
// retry resumes at the cursor the last committed page left.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { beginExport, failExport, finishExport, writeExportPages } from '../domain/contact-exports.js';
import { AppError } from '../domain/errors.js';
import type { ActivityDeps } from './index.js';

function asFailure(err: unknown): unknown {
  if (err instanceof AppError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, err.code);
  return err;
}

export function createContactExportActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw asFailure(err);
    }
  };
  return {
    beginContactsExport: (exportId: string) => guard(() => beginExport(em(), exportId)),
    writeContactsExportPages(exportId: string, opts: { pageSize: number; maxPages: number }) {
      const ctx = Context.current();
      // The heartbeat carries the progress (rows, chunks) for the Temporal UI; the cursor itself is in the database.
      return guard(() => writeExportPages(em(), exportId, { ...opts, onPage: (p) => ctx.heartbeat(p) }));
    },
    finishContactsExport: (exportId: string) => guard(() => finishExport(em(), exportId)),
    failContactsExport: (exportId: string, code: string, message: string) => failExport(em(), exportId, code, message),
  };
}

export type ContactExportActivities = ReturnType<typeof createContactExportActivities>;
