// The Temporal side of domain/jobs.ts (the one room where the API, the worker and activities reach
// Temporal): business-key workflow ids, search attributes, memo. Starts are typed by the workflow
// registry (workflows/index.ts): a type name that is not registered, or arguments that do not match
// its function, fail tsc.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { WorkflowNotFoundError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import type { EnrollmentSignal, JobStatus, Jobs } from '../domain/jobs.js';
import { promotionProgressQuery } from '../workflows/agents-promotion.js';
import * as enrollment from '../workflows/enrollments.js';
import { decisionSignal } from '../workflows/operator-turn.js';
import { cancelTaskSignal, pauseTaskSignal, resumeTaskSignal } from '../workflows/operator-task.js';
import { cancelListImportSignal } from '../workflows/lists.js';
import { approveMcpSignal } from '../workflows/mcp.js';
import { inboundSignal } from '../workflows/inbox.js';
import type { SignalDefinition } from '@temporalio/common';
import { AppError } from '../domain/errors.js';
import {
  partnerWorkflowIds,
  inboxWorkflowIds,
  bookingWorkflowIds,
  bulkEnrollWorkflowIds,
  draftWorkflowIds,
  cdmImportWorkflowIds,
  connectorWorkflowIds,
  enrollmentWorkflowIds,
  contactExportWorkflowIds,
  discoveryWorkflowIds,
  enrichmentWorkflowIds,
  listImportWorkflowIds,
  operatorTaskWorkflowIds,
  operatorWorkflowIds,
  mailboxWorkflowIds,
} from '../lib/workflow-ids.js';
import { mcpWorkflowIds, promotionWorkflowIds } from '../lib/workflow-ids.js';
import { jobSearchAttributes } from '../workflows/search-attributes.js';
import { retryTransient } from '../lib/temporal.js';
import { loadConfig } from '../lib/config.js';
import { nextLaunches, syncAgentSchedule } from './agent-schedules.js';
import type * as workflows from '../workflows/index.js';

/** The registered workflow types, by name. */
type Workflows = typeof workflows;
type WorkflowType = keyof Workflows;

// Signals by their definitions (exported by the workflows): a renamed signal cannot drift from here.
const ENROLLMENT_SIGNALS: Record<EnrollmentSignal, SignalDefinition<any[]>> = {
  reply: enrollment.replySignal,
  bounce: enrollment.bounceSignal,
  rescheduled: enrollment.rescheduledSignal,
  pause: enrollment.pauseSignal,
  resume: enrollment.resumeSignal,
  skip: enrollment.skipSignal,
  approve: enrollment.approveSignal,
  unenroll: enrollment.unenrollSignal,
  campaign_resumed: enrollment.campaignResumedSignal,
  campaign_paused: enrollment.campaignPausedSignal,
  campaign_stopped: enrollment.campaignStoppedSignal,
};
const TASK_SIGNALS = { pause: pauseTaskSignal, resume: resumeTaskSignal, cancel: cancelTaskSignal } as const;
const LIST_IMPORT_SIGNALS = { cancel: cancelListImportSignal } as const;

/** Starts a workflow; true when this call started it, false when its id was taken (a repeated start is fine). */
export async function startOnce<K extends WorkflowType>(
  client: Client,
  type: K,
  options: WorkflowStartOptions<Workflows[K]>,
): Promise<boolean> {
  try {
    await client.workflow.start<Workflows[K]>(type, options);
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/**
 * Starts one run of a job whose runs share a workflow id; `memo[runKey]` tells the runs apart. A run
 * is open: this one (a repeated start: join it), or the previous one, which has recorded its outcome
 * and is closing (wait for it, briefly, then start ours).
 */
async function startAfterPrevious<K extends WorkflowType>(
  client: Client,
  type: K,
  options: WorkflowStartOptions<Workflows[K]> & { workflowId: string; memo: Record<string, unknown> },
  runKey: string,
  busy: { code: string; message: string },
): Promise<void> {
  for (let i = 0; ; i++) {
    if (await startOnce(client, type, options)) return;
    const running = await client.workflow
      .getHandle(options.workflowId)
      .describe()
      .catch(() => null);
    if (running?.memo?.[runKey] === options.memo[runKey]) return;
    if (i >= 50) throw new AppError(409, busy.code, busy.message);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `eagerClient`: a client over the worker's own NativeConnection (inside a worker only). Enrollment
 * starts then ask for eager start: the first workflow task comes back in the start response to this
 * worker, with no task-queue round trip (the bulk enrollment starts thousands from an activity).
 */
/** Signals the workflow's open run; false when there is none (finished, or not started yet). */
async function signalOpen(
  client: Client,
  workflowId: string,
  signal: SignalDefinition<any[]>,
  arg?: unknown,
): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).signal(signal, ...(arg === undefined ? [] : [arg]));
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

const STATUS_OF: Record<string, JobStatus> = {
  RUNNING: 'running',
  CONTINUED_AS_NEW: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  TIMED_OUT: 'failed',
  CANCELLED: 'canceled',
  TERMINATED: 'terminated',
};

export function temporalJobs(client: Client, taskQueue: string, opts: { eagerClient?: Client } = {}): Jobs {
  const starter = opts.eagerClient ?? client;
  // How long inbound events of one account wait to share the signal that wakes its processor.
  const kickCoalesceMs = loadConfig().inboxKickCoalesceMs;
  const kicks = new Map<string, Promise<void>>();
  return {
    async startPromotion(s) {
      return startOnce(client, 'promoteProfiles', {
        taskQueue,
        workflowId: promotionWorkflowIds.bulk(s.agentId, s.operationId),
        args: [
          {
            agentId: s.agentId,
            workspaceId: s.workspaceId,
            operationId: s.operationId,
            by: s.by,
            total: s.total,
            promoted: 0,
            skipped: s.skipped,
            cursor: null,
          },
        ],
        typedSearchAttributes: jobSearchAttributes({
          kind: 'promote-profiles',
          workspaceId: s.workspaceId,
          appId: s.appId,
        }),
        memo: s.memo,
      });
    },
    async promotionState(agentId, operationId) {
      const handle = client.workflow.getHandle(promotionWorkflowIds.bulk(agentId, operationId));
      const d = await handle.describe().catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return null;
        throw err;
      });
      const status = d ? (STATUS_OF[d.status.name] ?? 'unknown') : 'unknown';
      let progress = null;
      if (status === 'running') progress = await handle.query(promotionProgressQuery).catch(() => null); // no worker to answer right now
      return { exists: !!d, status, total: typeof d?.memo?.total === 'number' ? d.memo.total : null, progress };
    },
    async startDiscoveryRun(plan) {
      await startOnce(client, 'discoveryRun', {
        taskQueue,
        workflowId: discoveryWorkflowIds.run(plan.agentId, plan.runId),
        args: [{ plan }],
        typedSearchAttributes: jobSearchAttributes({
          kind: 'discovery-run',
          workspaceId: plan.workspaceId,
          appId: plan.appId,
        }),
        memo: { agent: plan.agentId, signals: plan.signals.map((s) => s.key) },
      });
    },
    async startEnrichment(s) {
      await startAfterPrevious(
        client,
        'enrichTarget',
        {
          taskQueue,
          workflowId: enrichmentWorkflowIds.target(s.kind, s.targetId),
          args: [{ enrichmentId: s.enrichmentId }],
          typedSearchAttributes: jobSearchAttributes({
            kind: 'enrichment',
            workspaceId: s.workspaceId,
            appId: s.appId ?? undefined,
          }),
          memo: { enrichment_id: s.enrichmentId, target: `${s.kind}:${s.targetId}` },
        },
        'enrichment_id',
        { code: 'enrichment_busy', message: 'the previous enrichment of this target is still closing; retry shortly' },
      );
    },
    async startOperatorTurn(t) {
      // Repeated through a short outage of the server (Temporal restarting); a start that did land
      // before an error is then "already started", which is what was wanted.
      await retryTransient(() =>
        startOnce(client, 'operatorTurn', {
          taskQueue,
          workflowId: operatorWorkflowIds.turn(t.threadId, t.turnId),
          args: [{ turnId: t.turnId }],
          typedSearchAttributes: jobSearchAttributes({
            kind: 'operator-turn',
            workspaceId: t.workspaceId,
            appId: t.appId,
          }),
          memo: { thread: t.threadId },
        }),
      );
    },
    async decideOperatorConfirmation(t, confirmationId, action) {
      await client.workflow
        .getHandle(operatorWorkflowIds.turn(t.threadId, t.turnId))
        .signal(decisionSignal, { confirmationId, action });
    },
    async startOperatorTask(s) {
      await startAfterPrevious(
        client,
        'operatorTask',
        {
          taskQueue,
          workflowId: operatorTaskWorkflowIds.task(s.taskId),
          args: [{ taskId: s.taskId, run: s.run }],
          typedSearchAttributes: jobSearchAttributes({
            kind: 'operator-task',
            workspaceId: s.workspaceId,
            appId: s.appId,
          }),
          memo: { task_id: s.taskId, run: s.run },
        },
        'run',
        { code: 'task_busy', message: 'the previous run of this task is still closing; retry shortly' },
      );
    },
    async startCdmImport(s) {
      await startAfterPrevious(
        client,
        'cdmImport',
        {
          taskQueue,
          workflowId: cdmImportWorkflowIds.job(s.jobId),
          args: [{ jobId: s.jobId, run: s.run, phase: s.phase }],
          typedSearchAttributes: jobSearchAttributes({
            kind: 'cdm-import',
            workspaceId: s.workspaceId,
            appId: s.appId,
          }),
          memo: { job_id: s.jobId, run: s.run, phase: s.phase },
        },
        'run',
        { code: 'import_busy', message: 'the previous run of this import is still closing; retry shortly' },
      );
    },
    signalOperatorTask: (taskId, signal) =>
      signalOpen(client, operatorTaskWorkflowIds.task(taskId), TASK_SIGNALS[signal]),
    async startContactsExport(s) {
      await startOnce(client, 'contactsExport', {
        taskQueue,
        workflowId: contactExportWorkflowIds.export(s.exportId),
        args: [{ exportId: s.exportId }],
        typedSearchAttributes: jobSearchAttributes({
          kind: 'contacts-export',
          workspaceId: s.workspaceId,
          appId: s.appId,
        }),
        memo: { export_id: s.exportId },
      });
    },
    async startListImport(s) {
      await startOnce(client, 'listImport', {
        taskQueue,
        workflowId: listImportWorkflowIds.run(s.importId),
        args: [{ importId: s.importId }],
        typedSearchAttributes: jobSearchAttributes({ kind: 'list-import', workspaceId: s.workspaceId, appId: s.appId }),
        memo: { import_id: s.importId },
      });
    },
    async startBulkEnroll(s) {
      await startOnce(client, 'bulkEnroll', {
        taskQueue,
        workflowId: bulkEnrollWorkflowIds.operation(s.campaignId, s.operationId),
        args: [{ operationId: s.operationId }],
        // Once per operation, even after it closed: a repeated request reads the same operation.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'bulk-enroll', workspaceId: s.workspaceId, appId: s.appId }),
        memo: { operation_id: s.operationId, campaign_id: s.campaignId },
      });
    },
    async startDraftGeneration(s) {
      await startOnce(client, 'draftGeneration', {
        taskQueue,
        workflowId: draftWorkflowIds.operation(s.campaignId, s.operationId),
        args: [{ operationId: s.operationId }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'drafts', workspaceId: s.workspaceId, appId: s.appId }),
        memo: { operation_id: s.operationId, campaign_id: s.campaignId },
      });
    },
    async startConnectorEvent(s) {
      await startOnce(client, 'handleConnectorEvent', {
        taskQueue,
        workflowId: connectorWorkflowIds.event(s.eventId),
        args: [{ eventId: s.eventId }],
        // Not even after it closed: an event is handled once.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({
          kind: 'connector-event',
          workspaceId: s.workspaceId ?? undefined,
        }),
        memo: { event_id: s.eventId, type: s.type },
      });
    },
    async startEnrollments(starts) {
      const failed: string[] = [];
      for (let i = 0; i < starts.length; i += 50) {
        await Promise.all(
          starts.slice(i, i + 50).map(async (s) => {
            try {
              await startOnce(starter, 'enrollment', {
                taskQueue,
                requestEagerStart: !!opts.eagerClient,
                workflowId: enrollmentWorkflowIds.enrollment(s.campaignId, s.leadId),
                args: [
                  {
                    enrollmentId: s.enrollmentId,
                    campaignId: s.campaignId,
                    leadId: s.leadId,
                    version: s.version,
                    startAtStepId: s.startAtStepId ?? null,
                  },
                ],
                // A repeat while a run is open is a no-op; a closed run's id may start again (re-enrollment).
                workflowIdConflictPolicy: 'USE_EXISTING',
                workflowIdReusePolicy: 'ALLOW_DUPLICATE',
                typedSearchAttributes: jobSearchAttributes({
                  kind: 'enrollment',
                  workspaceId: s.workspaceId,
                  appId: s.appId,
                }),
                memo: { enrollment_id: s.enrollmentId, run: s.run },
              });
            } catch {
              failed.push(s.enrollmentId); // the others go on; the caller sees which failed
            }
          }),
        );
      }
      return { failed };
    },
    signalEnrollment: (campaignId, leadId, signal, arg) =>
      signalOpen(client, enrollmentWorkflowIds.enrollment(campaignId, leadId), ENROLLMENT_SIGNALS[signal], arg),
    async startBookingEvent(s) {
      await startOnce(client, 'handleBookingEvent', {
        taskQueue,
        workflowId: bookingWorkflowIds.event(s.eventId),
        args: [{ eventId: s.eventId }],
        // Not even after it closed: an event is handled once.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'booking-event', workspaceId: s.workspaceId }),
        memo: { event_id: s.eventId },
      });
    },
    async startBookingBackfill(s) {
      await startOnce(client, 'bookingBackfill', {
        taskQueue,
        workflowId: bookingWorkflowIds.backfill(s.providerId, s.backfillId),
        args: [{ backfillId: s.backfillId }],
        // Once per operation: a repeated request reads the same operation.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'booking-backfill', workspaceId: s.workspaceId }),
        memo: { backfill_id: s.backfillId, provider_id: s.providerId },
      });
    },
    async syncAgentSchedule(agentId, agent) {
      // Repeated while Temporal answers with a transient status (each step is idempotent); what still
      // fails is the caller's to log: a later read or scheduled run converges (docs/discovery.md).
      await retryTransient(() => syncAgentSchedule(client, taskQueue, agentId, agent));
    },
    agentNextLaunches: (agent, repair) => nextLaunches(client, agent, repair),
    async startPartnerSync(s) {
      const workflowId = partnerWorkflowIds.sync(s.integrationId);
      const handle = await client.workflow.start<Workflows['partnerSync']>('partnerSync', {
        taskQueue,
        workflowId,
        args: [{ integrationId: s.integrationId }],
        // A run already open goes on (it reads every record changed up to its end); a closed one may start again.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'partner-sync', workspaceId: s.workspaceId }),
        memo: { integration_id: s.integrationId },
      });
      return { workflowId, runId: handle.firstExecutionRunId };
    },
    kickInboundProcessor(s) {
      // Kicks of one account within kickCoalesceMs share one signal, sent after all of them (each
      // caller's event is stored before it asks): a burst costs a few signals, and the promise
      // every caller gets settles once a signal covering its event went out (or was not needed).
      const pending = kicks.get(s.accountId);
      if (pending) return pending;
      const kick = new Promise<void>((resolve) => setTimeout(resolve, kickCoalesceMs)).then(async () => {
        kicks.delete(s.accountId);
        // A processor draining the account finds the events without a signal (docs/inbox.md); when
        // the answer is unknown, signal.
        if (s.draining && (await s.draining().catch(() => false))) return;
        await client.workflow.signalWithStart<Workflows['inboxInbound'], []>('inboxInbound', {
          taskQueue,
          workflowId: inboxWorkflowIds.inbound(s.accountId),
          args: [{ accountId: s.accountId }],
          signal: inboundSignal,
          typedSearchAttributes: jobSearchAttributes({ kind: 'inbox-inbound', workspaceId: s.workspaceId }),
          memo: { account_id: s.accountId },
        });
      });
      kicks.set(s.accountId, kick);
      return kick;
    },
    async startMailboxSync(s) {
      await startOnce(client, 'mailboxSync', {
        taskQueue,
        workflowId: mailboxWorkflowIds.sync(s.accountId),
        args: [{ accountId: s.accountId, workspaceId: s.workspaceId }],
        // A sync that ended (the account was disconnected) starts again on the next connection.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'mailbox-sync', workspaceId: s.workspaceId }),
        memo: { account_id: s.accountId },
      });
    },
    async startInboxSync(s) {
      await client.workflow.start<Workflows['inboxSync']>('inboxSync', {
        taskQueue,
        workflowId: inboxWorkflowIds.sync(s.accountId),
        args: [{ accountId: s.accountId, run: s.run }],
        // A run already open goes on (the row says which run is current); a closed one may start again.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'inbox-sync', workspaceId: s.workspaceId }),
        memo: { account_id: s.accountId, run: s.run },
      });
    },
    async startInboxReply(s) {
      await startOnce(client, 'inboxReply', {
        taskQueue,
        workflowId: inboxWorkflowIds.reply(s.messageId),
        args: [{ messageId: s.messageId }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'inbox-reply', workspaceId: s.workspaceId }),
        memo: { message_id: s.messageId },
      });
    },
    signalListImport: (importId, signal) =>
      signalOpen(client, listImportWorkflowIds.run(importId), LIST_IMPORT_SIGNALS[signal]),
    async startMcpApproval(s) {
      await startOnce(client, 'mcpApproval', {
        taskQueue,
        workflowId: mcpWorkflowIds.approval(s.approvalId),
        args: [{ approvalId: s.approvalId, expiresAt: s.expiresAt }],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: jobSearchAttributes({ kind: 'mcp-approval', workspaceId: s.workspaceId }),
        memo: { approval_id: s.approvalId },
      });
    },
    async approveMcpApproval(approvalId) {
      await signalOpen(client, mcpWorkflowIds.approval(approvalId), approveMcpSignal);
    },
  };
}
