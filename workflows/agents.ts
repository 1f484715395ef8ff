// A discovery run (`discovery-run:<agentId>:<runId>`): pages through each planned signal's sources
// one activity per page until the sources are exhausted or `max_signals` leads are qualified.
// Cancelling it stops after the page in flight and marks the run `canceled`, its counts kept. The
// history stays small (a plan, cursors and totals); a long run continues as new.
import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  continueAsNew,
  executeChild,
  isCancellation,
  proxyActivities,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { discoveryWorkflowIds } from '../lib/workflow-ids.js';
import { jobSearchAttributes } from './search-attributes.js';
import { defineJob } from './job.js';
import type { AgentActivities } from '../activities/agents.js';
import type { RunPlan, RunTotals } from '../domain/agents/discovery.js';

const { discoverPage } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '2 minutes',
  // A cancel waits for the page in flight, so the run is marked canceled after its counts settle.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5, initialInterval: '2 seconds' },
});
const { finishDiscoveryRun, planScheduledRun } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 10 },
});

export interface DiscoveryRunInput {
  plan: RunPlan;
  /** Where a continued run picks up. */
  position?: { signalIndex: number; sourceIndex: number; cursor: string | null; pageIndex: number };
}

/** Pages per workflow run before continuing as new (each page is a handful of history events). */
const PAGES_PER_RUN = 200;

export async function discoveryRun(input: DiscoveryRunInput): Promise<RunTotals> {
  const { plan } = input;
  let { signalIndex, sourceIndex, cursor, pageIndex } = input.position ?? {
    signalIndex: 0,
    sourceIndex: 0,
    cursor: null,
    pageIndex: 0,
  };
  let pagesHere = 0;
  try {
    while (signalIndex < plan.signals.length) {
      const signal = plan.signals[signalIndex];
      const out = await discoverPage({ plan, signalIndex, source: signal.sources[sourceIndex], cursor, pageIndex });
      pageIndex++;
      pagesHere++;
      if (plan.maxSignals != null && out.totals.qualified >= plan.maxSignals) break;
      if (out.nextCursor) cursor = out.nextCursor;
      else {
        cursor = null;
        if (++sourceIndex >= signal.sources.length) {
          sourceIndex = 0;
          signalIndex++;
        }
      }
      if (pagesHere >= PAGES_PER_RUN || workflowInfo().historyLength > 5000) {
        await continueAsNew<typeof discoveryRun>({ plan, position: { signalIndex, sourceIndex, cursor, pageIndex } });
      }
    }
    return await finishDiscoveryRun({ runId: plan.runId, status: 'completed' });
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => finishDiscoveryRun({ runId: plan.runId, status: 'canceled' }));
      throw err;
    }
    const message = err instanceof Error ? err.message : String(err);
    await finishDiscoveryRun({ runId: plan.runId, status: 'failed', error: message });
    throw ApplicationFailure.nonRetryable(`discovery run failed: ${message}`);
  }
}

/**
 * Started by the agent's Schedule (`schedule:discovery:<agentId>`): plans a run from the agent as it
 * is now (nothing when it is no longer active or has nothing to search) and runs it as a child,
 * `discovery-run:<agentId>:<runId>`, so scheduled and manual runs look the same in the UI.
 */
export async function scheduledDiscovery(input: { agentId: string; workspaceId: string }): Promise<RunTotals | null> {
  // The run id is drawn by the workflow (replay-safe), so a retried planning activity reuses it.
  const plan = await planScheduledRun({ ...input, runId: uuid4() });
  if (!plan) return null;
  return executeChild(discoveryRun, {
    workflowId: discoveryWorkflowIds.run(plan.agentId, plan.runId),
    args: [{ plan }],
    typedSearchAttributes: jobSearchAttributes({
      kind: 'discovery-run',
      workspaceId: plan.workspaceId,
      appId: plan.appId,
    }),
  });
}

/** A discovery run: started by a launch (REST, the Operator) with its plan. */
export const discoveryRunJob = defineJob('discovery-run', {
  workflow: discoveryRun,
  id: (k) => discoveryWorkflowIds.run(k.agentId, k.runId),
  args: (plan) => [{ plan }],
  scope: (plan) => ({ workspaceId: plan.workspaceId, appId: plan.appId }),
  memo: (plan) => ({ agent: plan.agentId, signals: plan.signals.map((s) => s.key) }),
  repeat: 'while-open',
});
