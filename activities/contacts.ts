// Contacts-export activities (domain/contacts/exports.ts). Domain refusals and data exceptions are
// non-retryable failures whose type is the code recorded on the export; anything else (a lost
// connection, a restart) is retried, and a retry resumes at the cursor the last committed page left.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { beginExport, failExport, finishExport, writeExportPages } from '../domain/contacts/exports.js';
import { AppError } from '../domain/errors.js';
import { guardWith } from './failures.js';
import type { ActivityDeps } from './deps.js';

/** PostgreSQL SQLSTATE class 22 (a data exception): the same data fails the same way, so retrying cannot help. */
function sqlState(err: unknown): string | undefined {
  const e = err as { code?: unknown; sqlState?: unknown; cause?: unknown };
  return [e?.sqlState, e?.code, (e?.cause as { code?: unknown } | undefined)?.code].find(
    (c): c is string => typeof c === 'string' && /^22[0-9A-Z]{3}$/.test(c),
  );
}

function asFailure(err: unknown): unknown {
  if (err instanceof AppError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, err.code);
  const state = sqlState(err);
  if (state) return ApplicationFailure.nonRetryable(`the data could not be read (SQLSTATE ${state})`, 'invalid_data');
  return err;
}

export function createContactActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  const guard = guardWith(asFailure);
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

export type ContactActivities = ReturnType<typeof createContactActivities>;
