// Every workflow type the worker registers.
export { purgeExpiredAuth, purgeWebhookHistory } from './maintenance.js';
export { deliverWebhookEvent, deliverWebhookChunk, deliverWebhookEventBatch } from './webhooks.js';
export { grantMonthlyCredits } from './credits.js';
export { discoveryRun, scheduledDiscovery } from './discovery.js';
export { promoteProfiles } from './promotion.js';
export { enrichTarget } from './enrichment.js';
export { operatorTurn } from './operator-turn.js';
export { operatorTask } from './operator-task.js';
export { contactsExport } from './contact-exports.js';
export { listImport } from './list-import.js';
export { cdmImport } from './cdm-import.js';
export { accountsReconcile, withdrawInvitations } from './accounts.js';
export { handleConnectorEvent, deliverSandboxEvents } from './connector-events.js';
export { enrollment } from './enrollment.js';
export { bulkEnroll } from './bulk-enroll.js';
export { draftGeneration } from './drafts.js';
export { handleBookingEvent, bookingBackfill } from './booking.js';
export { inboxInbound, inboxSync, inboxReply } from './inbox.js';
