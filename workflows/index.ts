// Every workflow type the worker registers, and beside each started job its declaration (`defineJob`:
// jobs/temporal.ts finds them here, and does not compile while a kind of domain/jobs.ts has none).
export { purgeExpiredAuth, purgeWebhookHistory } from './maintenance.js';
export { deliverWebhookEvent, deliverWebhookChunk, deliverWebhookEventBatch } from './webhooks.js';
export { grantMonthlyCredits } from './billing.js';
export { discoveryRun, discoveryRunJob, scheduledDiscovery } from './agents.js';
export { promoteProfiles, promoteProfilesJob } from './agents-promotion.js';
export { enrichTarget, enrichmentJob } from './enrichment.js';
export { operatorTurn, operatorTurnJob } from './operator-turn.js';
export { operatorTask, operatorTaskJob } from './operator-task.js';
export { contactsExport, contactsExportJob } from './contacts.js';
export { listImport, listImportJob } from './lists.js';
export { cdmImport, cdmImportJob } from './cdm-imports.js';
export { accountsReconcile, withdrawInvitations } from './accounts.js';
export { handleConnectorEvent, connectorEventJob, deliverSandboxEvents } from './connectors.js';
export { enrollment, enrollmentJob } from './enrollments.js';
export { bulkEnroll, bulkEnrollJob } from './enrollments-bulk.js';
export { draftGeneration, draftsJob } from './message-review.js';
export {
  handleBookingEvent,
  bookingEventJob,
  bookingBackfill,
  bookingBackfillJob,
  bookingBackfillSweep,
} from './booking.js';
export {
  inboxInbound,
  inboxInboundJob,
  inboxSync,
  inboxSyncJob,
  inboxReply,
  inboxReplyJob,
  inboxSweep,
} from './inbox.js';
export { analyticsRollup, insightsRefresh } from './analytics.js';
export { mcpApproval, mcpApprovalJob } from './mcp.js';
export { partnerSync, partnerSyncJob, partnerSyncSweep } from './integrations.js';
export { notificationEmails, purgeNotifications } from './notifications.js';
export { mailboxSync, mailboxSyncJob } from './mailbox.js';
