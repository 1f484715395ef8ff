// The long-running jobs domain code can ask for, as a port: the API process implements it over
// the Temporal client (api/jobs.ts), so that REST handlers and Operator tools start the same
// workflow the same way, and domain code never imports Temporal.
import type { RunPlan } from './discovery-runs.js';

export interface Jobs {
  /** Starts `discovery-run:<agentId>:<runId>`; starting it again is a no-op. */
  startDiscoveryRun(plan: RunPlan): Promise<void>;
}
