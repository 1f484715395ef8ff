// A CSV export of contacts (`contacts-export:<exportId>`, docs/contacts.md): begin (→ running, the
// header) → write pages, a step at a time (each step an activity that heartbeats after every page
// and stops after `pagesPerStep` pages) → finish (→ completed with the row count). The file and the
// cursor live in PostgreSQL, so the history carries only ids and counts, a retried or resumed step
// continues at the last committed page, and a very large export continues as new (same input) after
// `stepsPerRun` steps or when Temporal suggests it. Any failure is recorded on the export.
import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import { defineJob } from './job.js';
import { contactExportWorkflowIds } from '../lib/workflow-ids.js';
import type { ContactActivities } from '../activities/contacts.js';

const { beginContactsExport, finishContactsExport, failContactsExport } = proxyActivities<ContactActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, initialInterval: '1 second' },
});
// One step writes up to pagesPerStep pages; a worker lost mid-step is noticed by the heartbeat.
const { writeContactsExportPages } = proxyActivities<ContactActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 5, initialInterval: '2 seconds', backoffCoefficient: 2 },
});

export interface ContactsExportInput {
  exportId: string;
  /** Contacts per page (one chunk of the file); default 5,000. */
  pageSize?: number;
  /** Pages per activity call; default 40 (200,000 contacts). */
  pagesPerStep?: number;
  /** Activity calls per run before continuing as new; default 50. */
  stepsPerRun?: number;
}

export type ContactsExportResult =
  | { status: 'completed'; rows: number; bytes: number }
  | { status: 'failed'; code: string }
  | { status: 'skipped'; reason: string };

export async function contactsExport(input: ContactsExportInput): Promise<ContactsExportResult> {
  const pageSize = input.pageSize ?? 5_000;
  const pagesPerStep = input.pagesPerStep ?? 40;
  const stepsPerRun = input.stepsPerRun ?? 50;
  try {
    const begun = await beginContactsExport(input.exportId);
    if (!begun.run) return { status: 'skipped', reason: begun.status };
    for (let step = 0; step < stepsPerRun; step++) {
      if (step > 0 && workflowInfo().continueAsNewSuggested) break;
      const r = await writeContactsExportPages(input.exportId, { pageSize, maxPages: pagesPerStep });
      if (r.done) return await finishContactsExport(input.exportId);
    }
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const code = cause instanceof ApplicationFailure && cause.type ? cause.type : 'export_failed';
    const message = cause instanceof Error ? cause.message : String(cause);
    await failContactsExport(input.exportId, code, message);
    return { status: 'failed', code };
  }
  // Outside the try: continueAsNew ends this run by throwing, which must not be taken for a failure.
  return continueAsNew<typeof contactsExport>(input);
}

export const contactsExportJob = defineJob('contacts-export', {
  workflow: contactsExport,
  id: (k) => contactExportWorkflowIds.export(k.exportId),
  args: (s) => [{ exportId: s.exportId }],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => ({ export_id: s.exportId }),
  repeat: 'while-open',
});
