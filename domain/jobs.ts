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

/**
 * Every job domain code can start, signal or read, by kind (also its `JobKind` search attribute): the
 * input a start takes, the business key its workflow id is made from (a part of the input), and the
 * signals (name → argument) and queries (name → answer) it answers. Each kind is declared beside its
 * workflow (`defineJob` in workflows/*.ts); jobs/temporal.ts does not compile while one is missing.
 */
export interface JobTypes {
  /** `discovery-run:<agentId>:<runId>`; a repeated launch is a no-op. */
  'discovery-run': { input: RunPlan; key: { agentId: string; runId: string } };
  /** `promote-profiles:<agentId>:<operationId>`: a bulk promotion; `started: false` when that operation was already started. */
  'promote-profiles': {
    input: PromotionStart;
    key: { agentId: string; operationId: string };
    queries: { progress: { total: number; promoted: number; skipped: number } };
  };
  /** `enrich:<kind>:<targetId>`, one run per attempt; a repeat joins it, a previous attempt closing is waited for. */
  enrichment: { input: EnrichmentStart; key: { kind: EnrichmentTarget; targetId: string } };
  /** `operator-turn:<threadId>:<turnId>`; `decision` carries the user's answer to a confirmation (already recorded). */
  'operator-turn': {
    input: TurnStart;
    key: { threadId: string; turnId: string };
    signals: { decision: { confirmationId: string; action: 'confirm' | 'cancel' } };
  };
  /** `operator-task:<taskId>`, run `run` of it (1 at creation, one more per retry). */
  'operator-task': {
    input: OperatorTaskStart;
    key: { taskId: string };
    signals: { pause: undefined; resume: undefined; cancel: undefined };
  };
  /** `contacts-export:<exportId>`. */
  'contacts-export': { input: ExportStart; key: { exportId: string } };
  /** `list-import:<importId>`; a repeated commit is a no-op; `cancel` after the cancel is recorded. */
  'list-import': { input: ListImportStart; key: { importId: string }; signals: { cancel: undefined } };
  /** `cdm-import:<jobId>`, run `run` (a search or a confirm) of it. */
  'cdm-import': { input: CdmImportStart; key: { jobId: string } };
  /** `connector-event:<eventId>`; a repeat, even after it closed, is a no-op. */
  'connector-event': { input: ConnectorEventStart; key: { eventId: string } };
  /**
   * `enrollment:<campaignId>:<leadId>`: started in batches only (`startEnrollments`). A start while a
   * run is open is a no-op; after it closed a new run starts (re-enrollment).
   */
  enrollment: {
    input: EnrollmentStart;
    key: { campaignId: string; leadId: string };
    signals: { [S in EnrollmentSignal]: EnrollmentSignalArg | undefined };
  };
  /** `enroll:<campaignId>:<operationId>`: bulk enrollment of a list; a repeat is a no-op. */
  'bulk-enroll': { input: BulkEnrollStart; key: { campaignId: string; operationId: string } };
  /** `drafts:<campaignId>:<operationId>`: a batch generation of drafts; a repeat is a no-op. */
  drafts: { input: DraftGenerationStart; key: { campaignId: string; operationId: string } };
  /** `inbox-inbound:<accountId>`: woken only through `kickInboundProcessor` (coalesced signal-with-start). */
  'inbox-inbound': {
    input: { accountId: string; workspaceId: string };
    key: { accountId: string };
    signals: { events: undefined };
  };
  /** `inbox-sync:<accountId>`, run `run`; a repeat while that run is open joins it. */
  'inbox-sync': { input: { accountId: string; workspaceId: string; run: number }; key: { accountId: string } };
  /** `mailbox-sync:<accountId>`: the lifecycle of a mail-connector account's following (the mailbox-session service follows it); a start while it runs is a no-op. */
  'mailbox-sync': {
    input: { accountId: string; workspaceId: string };
    key: { accountId: string };
    /** The mailbox-session service stopped following it for good (the reason: credentials_invalid, oauth_revoked, …). */
    signals: { ended: string };
  };
  /** `inbox-reply:<messageId>`; a repeat is a no-op. */
  'inbox-reply': { input: { messageId: string; workspaceId: string }; key: { messageId: string } };
  /** `booking-event:<eventId>`: a stored inbound booking event; a repeat, even after it closed, is a no-op. */
  'booking-event': { input: { eventId: string; workspaceId: string }; key: { eventId: string } };
  /** `booking-backfill:<providerId>:<backfillId>`; a repeat, even after it closed, is a no-op. */
  'booking-backfill': { input: BookingBackfillStart; key: { providerId: string; backfillId: string } };
  /** `mcp-approval:<approvalId>`: waits for the approval or the expiry; `approve` once the row is approved. */
  'mcp-approval': {
    input: { approvalId: string; workspaceId: string; expiresAt: string };
    key: { approvalId: string };
    signals: { approve: undefined };
  };
  /** `partner-sync:<integrationId>` (docs/integrations.md "Sync"): an open run goes on (the caller joins it). */
  'partner-sync': { input: { integrationId: string; workspaceId: string }; key: { integrationId: string } };
}

export type JobKind = keyof JobTypes;
export type JobInput<K extends JobKind> = JobTypes[K]['input'];
export type JobKey<K extends JobKind> = JobTypes[K]['key'];
/** The kinds started one at a time through `start` (the other two have their own way in). */
export type StartedKind = Exclude<JobKind, 'enrollment' | 'inbox-inbound'>;
type Has<P extends string> = { [K in JobKind]: JobTypes[K] extends Record<P, unknown> ? K : never }[JobKind];
export type SignalledKind = Has<'signals'>;
export type QueriedKind = Has<'queries'>;
export type SignalName<K extends SignalledKind> = keyof JobTypes[K]['signals'] & string;
export type QueryName<K extends QueriedKind> = keyof JobTypes[K]['queries'] & string;

/** What a start did: `started` false when its id was taken (a repeat, which is fine). */
export interface JobStarted {
  started: boolean;
  workflowId: string;
  /** The run started or joined, where Temporal says (`join`); null otherwise. */
  runId: string | null;
}

/** A job as Temporal knows it (`exists: false` when it does not). */
export interface JobDescription {
  exists: boolean;
  status: JobStatus;
  memo: Record<string, unknown>;
}

export interface Jobs {
  /** Starts the job of `kind` for `input` as its declaration says (id, repeat policy, memo, search attributes). */
  start<K extends StartedKind>(kind: K, input: JobInput<K>): Promise<JobStarted>;
  /** Signals the job's open run; false when none is open (finished, or not started yet). */
  signal<K extends SignalledKind, S extends SignalName<K>>(
    kind: K,
    key: JobKey<K>,
    signal: S,
    arg?: JobTypes[K]['signals'][S],
  ): Promise<boolean>;
  describe<K extends JobKind>(kind: K, key: JobKey<K>): Promise<JobDescription>;
  /** Asks the job's open run; null when there is none or no worker answers now. */
  query<K extends QueriedKind, Q extends QueryName<K>>(
    kind: K,
    key: JobKey<K>,
    query: Q,
  ): Promise<JobTypes[K]['queries'][Q] | null>;
  /**
   * Starts `enrollment:<campaignId>:<leadId>` for each (in parallel batches; eagerly inside a worker).
   * Returns the ids whose start failed.
   */
  startEnrollments(starts: EnrollmentStart[]): Promise<{ failed: string[] }>;
  /** Wakes the account's inbound processor `inbox-inbound:<accountId>` (signal-with-start: started when not running). */
  kickInboundProcessor(s: {
    accountId: string;
    workspaceId: string;
    /** Asked when the (coalesced) signal is due, after the events it covers are stored: true = a processor is draining them, no signal needed. */
    draining?: () => Promise<boolean>;
  }): Promise<void>;
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

/** What an enrollment's signals carry: the action they concern (approve, skip, rescheduled), its new time, the reply's source. */
export interface EnrollmentSignalArg {
  actionId?: string;
  dueAt?: string;
  source?: string;
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

export interface DraftGenerationStart {
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

// Each input carries its key (the start's workflow id is made from it): checked here, once.
type KeyInInput = { [K in JobKind]: JobInput<K> extends JobKey<K> ? never : K }[JobKind];
export const everyInputHoldsItsKey: [KeyInInput] extends [never] ? true : { missingKeyIn: KeyInInput } = true;
