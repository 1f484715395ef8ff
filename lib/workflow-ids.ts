// Workflow and schedule ids are business keys: starting the same job twice is idempotent, and an
// operator can find a job in the Temporal UI by what it is about.
/**
 * Outbound webhooks (docs/webhooks.md): events with few targets are delivered by the workflow of
 * their outbox batch (`batch_id` on the row); a large fan-out has its own workflow per event (the
 * outbox row id), and chunk children above 2,000 targets.
 */
export const webhookWorkflowIds = {
  event: (eventId: string) => `webhook-event:${eventId}`,
  chunk: (eventId: string, index: number) => `webhook-event:${eventId}:chunk:${index}`,
  batch: (batchId: string) => `webhook-batch:${batchId}`,
};

/** Discovery: one workflow per run; the run id is the launch id, so a repeated launch is a no-op. */
export const discoveryWorkflowIds = {
  run: (agentId: string, runId: string) => `discovery-run:${agentId}:${runId}`,
  /** The agent's recurring launches (a Temporal Schedule) and the workflows it starts. */
  schedule: (agentId: string) => `schedule:discovery:${agentId}`,
  scheduled: (agentId: string) => `discovery-scheduled:${agentId}`,
};

/** Bulk promotion of rejected profiles: the operation id is the caller's (or minted), so a retry is the same job. */
export const promotionWorkflowIds = {
  bulk: (agentId: string, operationId: string) => `promote-profiles:${agentId}:${operationId}`,
};

/** Enrichment: one workflow per target; each attempt is a run of it (a repeat while one runs joins it). */
export const enrichmentWorkflowIds = {
  target: (kind: string, targetId: string) => `enrich:${kind}:${targetId}`,
};

/** Operator turns: one workflow per turn, named after its thread so an operator finds a conversation's turns together. */
export const operatorWorkflowIds = {
  turn: (threadId: string, turnId: string) => `operator-turn:${threadId}:${turnId}`,
};

/** Contacts exports: one workflow per export (a repeated start is a no-op); long ones continue as new under the same id. */
export const contactExportWorkflowIds = {
  export: (exportId: string) => `contacts-export:${exportId}`,
};

/** Operator tasks: one workflow per task; each run of it (creation, then each retry) is numbered in its memo. */
export const operatorTaskWorkflowIds = {
  task: (taskId: string) => `operator-task:${taskId}`,
};

/** CSV imports into lead lists: one workflow per import (a repeated commit is the same job). */
export const listImportWorkflowIds = {
  run: (importId: string) => `list-import:${importId}`,
};

/** Company decision-maker imports: one workflow per job; each run (search, retry, confirm) is numbered in its memo. */
export const cdmImportWorkflowIds = {
  job: (jobId: string) => `cdm-import:${jobId}`,
};

/** Inbound connector events: one workflow per connector event id (a redelivery is the same job). */
export const connectorWorkflowIds = {
  event: (eventId: string) => `connector-event:${eventId}`,
};

/** Campaign execution: one workflow per enrollment; a re-enrollment is a new run under the same id once the previous closed. */
export const enrollmentWorkflowIds = {
  enrollment: (campaignId: string, leadId: string) => `enrollment:${campaignId}:${leadId}`,
};

/** Bulk enrollment of a list: one workflow per operation (a repeated request with the same client key is the same job). */
export const bulkEnrollWorkflowIds = {
  operation: (campaignId: string, operationId: string) => `enroll:${campaignId}:${operationId}`,
};

/** A batch generation of AI-written drafts (docs/message-review.md): one workflow per operation. */
export const draftWorkflowIds = {
  operation: (campaignId: string, operationId: string) => `drafts:${campaignId}:${operationId}`,
};

/** Booking providers (docs/meetings.md): one workflow per stored inbound event, one per backfill operation. */
export const bookingWorkflowIds = {
  event: (eventId: string) => `booking-event:${eventId}`,
  backfill: (providerId: string, backfillId: string) => `booking-backfill:${providerId}:${backfillId}`,
};

/** The inbox: one inbound processor and one sync per account (a sync's runs numbered in its memo), one workflow per reply. */
export const inboxWorkflowIds = {
  inbound: (accountId: string) => `inbox-inbound:${accountId}`,
  sync: (accountId: string) => `inbox-sync:${accountId}`,
  reply: (messageId: string) => `inbox-reply:${messageId}`,
};

/** The partner CRM (docs/integrations.md): one sync per integration, resumable from its cursors. */
export const partnerWorkflowIds = {
  sync: (integrationId: string) => `partner-sync:${integrationId}`,
};

/** An approval request of a risky tool called over MCP (docs/mcp.md): one workflow per request. */
export const mcpWorkflowIds = {
  approval: (approvalId: string) => `mcp-approval:${approvalId}`,
};

/** A mailbox connected over SMTP/IMAP (docs/email.md "Receiving"): one sync per account, for as long as it is connected. */
export const mailboxWorkflowIds = {
  sync: (accountId: string) => `mailbox-sync:${accountId}`,
};
