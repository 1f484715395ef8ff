// The long-running jobs domain code can ask for, as a port: the API process implements it over
// the Temporal client (jobs/temporal.ts), so that REST handlers and Operator tools start the same
// workflow the same way, and domain code never imports Temporal.
import type { AgentStatus, IDiscoveryAgent } from '../db/entities/DiscoveryAgent.js';
import type { EnrichmentTarget } from '../db/entities/Enrichment.js';
import type { SignalKind, SignalQuery, SourceName } from '../lib/sources/types.js';
import type { IcpInput } from '../lib/llm/tasks.js';

/** A bulk promotion of rejected profiles, once its rows are selected (domain/agents/promotion.ts). */
export interface PromotionStart {
  agentId: string;
  appId: string;
  workspaceId: string;
  operationId: string;
  /** Who promoted, as the profiles record it. */
  by: string;
  total: number;
  skipped: number;
  memo: Record<string, unknown>;
}

export type JobStatus = 'running' | 'completed' | 'failed' | 'canceled' | 'terminated' | 'unknown';
export interface PromotionState {
  exists: boolean;
  status: JobStatus;
  /** The total its start recorded (memo); null when Temporal no longer has it. */
  total: number | null;
  /** Live figures from its `progress` query while it runs; null when no worker answers. */
  progress: { total: number; promoted: number; skipped: number } | null;
}

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
  /**
   * Starts run `run` of `operator-task:<taskId>` (1 at creation, one more per retry); a repeat of
   * the same run joins it. Waits (briefly) for the previous run to close first.
   */
  startOperatorTask(start: OperatorTaskStart): Promise<void>;
  /** Sends pause / resume / cancel to the task's open run; false when no run is open. */
  signalOperatorTask(taskId: string, signal: 'pause' | 'resume' | 'cancel'): Promise<boolean>;
  /** Starts `contacts-export:<exportId>`; starting it again is a no-op. */
  startContactsExport(start: ExportStart): Promise<void>;
  /** Starts `list-import:<importId>`; starting it again (a repeated commit) is a no-op. */
  startListImport(start: ListImportStart): Promise<void>;
  /** Sends `cancel` to the import's workflow; false when none is open. */
  signalListImport(importId: string, signal: 'cancel'): Promise<boolean>;
  /** Starts `promote:<agentId>:<operationId>` (a bulk promotion); false when that operation was already started. */
  startPromotion(start: PromotionStart): Promise<boolean>;
  /** The bulk promotion's workflow as Temporal knows it (`exists: false` when it does not), with its progress while it runs. */
  promotionState(agentId: string, operationId: string): Promise<PromotionState>;
  /**
   * Starts run `run` (a search or a confirm) of `cdm-import:<jobId>`; a repeat of the same run joins
   * it. Waits (briefly) for the previous run to close first.
   */
  startCdmImport(start: CdmImportStart): Promise<void>;
  /** Starts `connector-event:<eventId>`; a repeat (even after it closed) is a no-op. */
  startConnectorEvent(start: ConnectorEventStart): Promise<void>;
  /**
   * Starts `enrollment:<campaignId>:<leadId>` for each (in parallel batches). A start while a run of
   * the same id is open is a no-op (that run goes on); after it closed, a new run starts (re-enrollment).
   * Returns the ids whose start failed.
   */
  startEnrollments(starts: EnrollmentStart[]): Promise<{ failed: string[] }>;
  /** Starts `enroll:<campaignId>:<operationId>` (bulk enrollment of a list); a repeat is a no-op. */
  startBulkEnroll(start: BulkEnrollStart): Promise<void>;
  /** Starts `drafts:<campaignId>:<operationId>` (a batch generation of drafts); a repeat is a no-op. */
  startDraftGeneration(start: {
    operationId: string;
    campaignId: string;
    workspaceId: string;
    appId: string;
  }): Promise<void>;
  /** Wakes the account's inbound processor `inbox-inbound:<accountId>` (signal-with-start: started when not running). */
  kickInboundProcessor(s: {
    accountId: string;
    workspaceId: string;
    /** Asked when the (coalesced) signal is due, after the events it covers are stored: true = a processor is draining them, no signal needed. */
    draining?: () => Promise<boolean>;
  }): Promise<void>;
  /** Starts run `run` of `inbox-sync:<accountId>`; a repeat while that run is open joins it. */
  startInboxSync(s: { accountId: string; workspaceId: string; run: number }): Promise<void>;
  /** Starts `mailbox-sync:<accountId>` (a mail-connector account's INBOX follower); a start while it runs is a no-op. */
  startMailboxSync(s: { accountId: string; workspaceId: string }): Promise<void>;
  /** Starts `inbox-reply:<messageId>`; a repeat is a no-op. */
  startInboxReply(s: { messageId: string; workspaceId: string }): Promise<void>;
  /** Signals the enrollment's open run; false when none is open. */
  signalEnrollment(
    campaignId: string,
    leadId: string,
    signal: EnrollmentSignal,
    arg?: { actionId?: string; dueAt?: string },
  ): Promise<boolean>;
  /** Starts `booking-event:<eventId>` (a stored inbound booking event); a repeat (even after it closed) is a no-op. */
  startBookingEvent(start: { eventId: string; workspaceId: string }): Promise<void>;
  /** Starts `booking-backfill:<providerId>:<backfillId>`; a repeat (even after it closed) is a no-op. */
  startBookingBackfill(start: BookingBackfillStart): Promise<void>;
  /** Starts `mcp-approval:<approvalId>` (waits for the approval or the expiry); a repeat is a no-op. */
  startMcpApproval(start: { approvalId: string; workspaceId: string; expiresAt: string }): Promise<void>;
  /** Tells `mcp-approval:<approvalId>` that its row was approved (a closed workflow is ignored: its timer already settled the row). */
  approveMcpApproval(approvalId: string): Promise<void>;
  /**
   * Starts `partner-sync:<integrationId>` (docs/integrations.md "Sync"); while a run is open it goes on
   * (the request joins it), after it closed a new run starts. Returns the run id.
   */
  startPartnerSync(start: {
    integrationId: string;
    workspaceId: string;
  }): Promise<{ workflowId: string; runId: string }>;
  /**
   * Brings the agent's Schedule `schedule:discovery:<agentId>` in line with `agent` as committed
   * (created, updated, paused, or deleted when `agent` is null, archived, or its interval `off`);
   * idempotent. Domain code calls it through `syncAgentSchedule` (domain/agents/agents.ts), never directly.
   */
  syncAgentSchedule(agentId: string, agent: AgentScheduleState | null): Promise<void>;
  /**
   * When the agent's Schedule launches next, as Temporal has it; a Schedule out of step with the
   * agent is brought in line first (`repair`, e.g. `syncAgentSchedule`) and read again.
   */
  agentNextLaunches(agent: IDiscoveryAgent, repair?: () => Promise<unknown>): Promise<NextLaunches>;
}

/** The agent's upcoming launches (GET /api/agents/{agentId}/next-launches). */
export interface NextLaunches {
  agent_id: string;
  scheduled: boolean;
  interval: 'hourly' | 'daily' | 'weekly' | 'off';
  paused: boolean;
  next_launches: string[];
}

/** What an agent's Schedule is made from (read from the committed row). */
export interface AgentScheduleState {
  workspaceId: string;
  appId: string;
  name: string;
  status: AgentStatus;
  /** The agent's `config`: its `schedule` key is the interval. */
  config: unknown;
}

export type EnrollmentSignal =
  | 'reply'
  | 'bounce'
  | 'rescheduled'
  | 'pause'
  | 'resume'
  | 'skip'
  | 'approve'
  | 'unenroll'
  | 'campaign_resumed'
  | 'campaign_paused'
  | 'campaign_stopped';

export interface EnrollmentStart {
  enrollmentId: string;
  campaignId: string;
  leadId: string;
  workspaceId: string;
  appId: string;
  /** The step version pinned at enrollment. */
  version: number;
  /** Start at this step instead of the first. */
  startAtStepId?: string | null;
  run: number;
}

export interface ConnectorEventStart {
  eventId: string;
  type: string;
  /** The workspace of the platform account it concerns, when known (a search attribute). */
  workspaceId: string | null;
}

export interface ListImportStart {
  importId: string;
  workspaceId: string;
  appId: string;
}

export interface OperatorTaskStart {
  taskId: string;
  workspaceId: string;
  appId: string;
  run: number;
}

// ---- What the starts take (the slices re-export these under their own names) ----

export interface RunPlan {
  runId: string;
  agentId: string;
  workspaceId: string;
  appId: string;
  signals: PlannedSignal[];
  maxSignals: number | null;
  icp: IcpInput;
  requireCurrentEmployer: boolean;
}

export interface PlannedSignal {
  key: string;
  kind: SignalKind;
  query: SignalQuery;
  sources: SourceName[];
}

export interface EnrichmentStart {
  enrichmentId: string;
  kind: EnrichmentTarget;
  targetId: string;
  workspaceId: string;
  appId: string | null;
}

export interface ExportStart {
  exportId: string;
  workspaceId: string;
  appId?: string;
}

export interface TurnStart {
  turnId: string;
  threadId: string;
  workspaceId: string;
  appId: string;
}

export interface BulkEnrollStart {
  operationId: string;
  campaignId: string;
  workspaceId: string;
  appId: string;
}

export interface BookingBackfillStart {
  backfillId: string;
  providerId: string;
  workspaceId: string;
}

export interface CdmImportStart {
  jobId: string;
  workspaceId: string;
  appId: string;
  run: number;
  phase: 'search' | 'confirm';
}
