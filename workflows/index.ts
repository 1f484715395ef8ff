// Every workflow type the worker registers, and beside each started job its declaration (`defineJob`:
// jobs/temporal.ts finds them here, and does not compile while a kind of domain/jobs.ts has none).
export {
  purgeExpiredAuth,
  purgeWebhookHistory,
  purgeExpiredAuthSchedule,
  purgeWebhookHistorySchedule,
} from './maintenance.js';
export { deliverWebhookEvent, deliverWebhookChunk, deliverWebhookEventBatch } from './webhooks.js';
export { grantMonthlyCredits, grantMonthlyCreditsSchedule } from './billing.js';
export { discoveryRun, discoveryRunJob, scheduledDiscovery } from './agents.js';
export { promoteProfiles, promoteProfilesJob } from './agents-promotion.js';
export { enrichTarget, enrichmentJob } from './enrichment.js';
export { operatorTurn, operatorTurnJob } from './operator-turn.js';
export { operatorTask, operatorTaskJob } from './operator-task.js';
export { contactsExport, contactsExportJob } from './contacts.js';
export { listImport, listImportJob } from './lists.js';
export { cdmImport, cdmImportJob } from './cdm-imports.js';
export {
  accountsReconcile,
  withdrawInvitations,
  accountsReconcileSchedule,
  withdrawInvitationsSchedule,
} from './accounts.js';
export {
  handleConnectorEvent,
  connectorEventJob,
  deliverSandboxEvents,
  deliverSandboxEventsSchedule,
} from './connectors.js';
export { enrollment, enrollmentJob } from './enrollments.js';
export { bulkEnroll, bulkEnrollJob } from './enrollments-bulk.js';
export { draftGeneration, draftsJob } from './message-review.js';
export {
  handleBookingEvent,
  bookingEventJob,
  bookingBackfill,
  bookingBackfillJob,
  bookingBackfillSweep,
  bookingBackfillSweepSchedule,
} from './booking.js';
export {
  inboxInbound,
  inboxInboundJob,
  inboxSync,
  inboxSyncJob,
  inboxReply,
  inboxReplyJob,
  inboxSweep,
  inboxSweepSchedule,
} from './inbox.js';
export { analyticsRollup, insightsRefresh, analyticsRollupSchedule, insightsRefreshSchedule } from './analytics.js';
export { mcpApproval, mcpApprovalJob } from './mcp.js';
export { partnerSync, partnerSyncJob, partnerSyncSweep, partnerSyncSweepSchedule } from './integrations.js';
export {
  notificationEmails,
  purgeNotifications,
  notificationEmailsSchedule,
  purgeNotificationsSchedule,
} from './notifications.js';
export { mailboxSync, mailboxSyncJob } from './mailbox.js';
