import { createMaintenanceActivities } from './maintenance.js';
import { createWebhookActivities } from './webhooks.js';
import { createBillingActivities } from './billing.js';
import { createAgentActivities } from './agents.js';
import { createAgentPromotionActivities } from './agents-promotion.js';
import { createEnrichmentActivities } from './enrichment.js';
import { createOperatorActivities } from './operator-turn.js';
import { createOperatorTaskActivities } from './operator-task.js';
import { createContactActivities } from './contacts.js';
import { createListActivities } from './lists.js';
import { createCdmImportActivities } from './cdm-imports.js';
import { createAccountActivities } from './accounts.js';
import { createConnectorActivities } from './connectors.js';
import { createEnrollmentActivities } from './enrollments.js';
import { createBulkEnrollActivities } from './enrollments-bulk.js';
import { createMessageReviewActivities } from './message-review.js';
import { createBookingActivities } from './booking.js';
import { createInboxActivities } from './inbox.js';
import { createMailboxActivities } from './mailbox.js';
import { createNotificationActivities } from './notifications.js';
import { createIntegrationActivities } from './integrations.js';
import { createAnalyticsActivities } from './analytics.js';
import { createMcpActivities } from './mcp.js';

import type { ActivityDeps } from './deps.js';

export type { ActivityDeps } from './deps.js';

/** Every activity the worker registers, bound to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createMaintenanceActivities(deps),
    ...createWebhookActivities(deps),
    ...createBillingActivities(deps),
    ...createAgentActivities(deps),
    ...createAgentPromotionActivities(deps),
    ...createEnrichmentActivities(deps),
    ...createOperatorActivities(deps),
    ...createOperatorTaskActivities(deps),
    ...createContactActivities(deps),
    ...createListActivities(deps),
    ...createCdmImportActivities(deps),
    ...createAccountActivities(deps),
    ...createConnectorActivities(deps),
    ...createEnrollmentActivities(deps),
    ...createBulkEnrollActivities(deps),
    ...createMessageReviewActivities(deps),
    ...createInboxActivities(deps),
    ...createMailboxActivities(deps),
    ...createNotificationActivities(deps),
    ...createBookingActivities(deps),
    ...createIntegrationActivities(deps),
    ...createAnalyticsActivities(deps),
    ...createMcpActivities(deps),
  };
}
