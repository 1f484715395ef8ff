// The partner CRM sync (docs/integrations.md "Sync"): `partner-sync:<integrationId>` pushes leads,
// then replies, then meetings, a page at a time; each page resumes after its kind's cursor in the
// database, so a retried activity, a restarted run or the next run goes on where the last committed
// page ended. It continues as new after 100 pages to keep its history small. `partner-sync-sweep`
// (a Schedule, every 15 minutes) starts the sync of every active partner integration.
import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import { defineJob, defineSchedule } from './job.js';
import { partnerWorkflowIds } from '../lib/workflow-ids.js';
import type { IntegrationActivities } from '../activities/integrations.js';

const { partnerSyncPage } = proxyActivities<IntegrationActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 10, initialInterval: '2 seconds', maximumInterval: '1 minute' },
});
const { partnerSyncFinish, partnerSyncSweep: sweep } = proxyActivities<IntegrationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '1 second' },
});

export const PARTNER_SYNC_KINDS = ['lead', 'reply', 'meeting'] as const;

export interface PartnerSyncTotals {
  pages: number;
  read: number;
  pushed: number;
  unchanged: number;
  held: number;
}

export interface PartnerSyncInput {
  integrationId: string;
  /** Records per page (default 200). */
  pageSize?: number;
  /** Where a continued run starts (index into PARTNER_SYNC_KINDS) and what it carried over. */
  kindIndex?: number;
  totals?: PartnerSyncTotals;
  /** Pages per run before continuing as new (default 100). */
  pagesPerRun?: number;
}

export interface PartnerSyncResult extends PartnerSyncTotals {
  status: 'completed' | 'skipped';
  skipped: string | null;
}

/** `partner-sync:<integrationId>`. */
export async function partnerSync(input: PartnerSyncInput): Promise<PartnerSyncResult> {
  const pageSize = input.pageSize ?? 200;
  const pagesPerRun = input.pagesPerRun ?? 100;
  const totals: PartnerSyncTotals = input.totals ?? { pages: 0, read: 0, pushed: 0, unchanged: 0, held: 0 };
  let pagesThisRun = 0;
  for (let k = input.kindIndex ?? 0; k < PARTNER_SYNC_KINDS.length; k++) {
    for (;;) {
      if (pagesThisRun >= pagesPerRun) return continueAsNew<typeof partnerSync>({ ...input, kindIndex: k, totals });
      const r = await partnerSyncPage({ integrationId: input.integrationId, kind: PARTNER_SYNC_KINDS[k], pageSize });
      if (r.skipped) return { status: 'skipped', skipped: r.skipped, ...totals };
      pagesThisRun++;
      if (r.read) totals.pages++;
      totals.read += r.read;
      totals.pushed += r.pushed;
      totals.unchanged += r.unchanged;
      totals.held += r.held;
      if (r.done) break;
    }
  }
  await partnerSyncFinish(input.integrationId);
  return { status: 'completed', skipped: null, ...totals };
}

/** `partner-sync-sweep` (scheduled): starts each active partner integration's sync. */
export async function partnerSyncSweep(): Promise<{ started: number }> {
  return sweep();
}

/** A run already open goes on (it reads every record changed up to its end); a closed one may start again. */
export const partnerSyncJob = defineJob('partner-sync', {
  workflow: partnerSync,
  id: (k) => partnerWorkflowIds.sync(k.integrationId),
  args: (s) => [{ integrationId: s.integrationId }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ integration_id: s.integrationId }),
  repeat: 'join',
});

export const partnerSyncSweepSchedule = defineSchedule({
  id: 'schedule:partner-sync-sweep',
  runs: 'partner-sync-sweep',
  workflow: partnerSyncSweep,
  args: [],
  kind: 'partner-sync',
  every: { every: '15 minutes' },
  catchupWindow: '15 minutes',
  overlap: 'skip',
  description: 'Starts partner-sync:<id> for every active partner CRM integration (a running sync goes on)',
});
