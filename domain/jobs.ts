// The long-running jobs domain code can ask for, as a port: the API process implements it over
// the Temporal client (api/jobs.ts), so that REST handlers and Operator tools start the same
// workflow the same way, and domain code never imports Temporal.
import type { RunPlan } from './discovery-runs.js';
import type { EnrichmentStart } from './enrichment.js';
import type { TurnStart } from './operator-turns.js';

export interface Jobs {
  /** Starts `discovery-run:<agentId>:<runId>`; starting it again is a no-op. */
  startDiscoveryRun(plan: RunPlan): Promise<void>;
  /**
   * Starts `enrich:<kind>:<targetId>` for the attempt, or joins it when that attempt's workflow is
   * already running. Waits (briefly) for a previous attempt's run to close first.
   */
  startEnrichment(start: EnrichmentStart): Promise<void>;
  /** Starts `operator-turn:<threadId>:<turnId>`. */
  startOperatorTurn(start: TurnStart): Promise<void>;
  /** Tells the waiting turn the user's decision on a confirmation (already recorded as decided). */
  decideOperatorConfirmation(turn: TurnStart, confirmationId: string, action: 'confirm' | 'cancel'): Promise<void>;
}
