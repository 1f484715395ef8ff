import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { createMaintenanceActivities } from './maintenance.js';
import { createWebhookActivities } from './webhooks.js';
import { createCreditActivities } from './billing.js';
import { createDiscoveryActivities } from './agents.js';
import { createPromotionActivities } from './agents-promotion.js';
import { createEnrichmentActivities } from './enrichment.js';
import { createOperatorActivities } from './operator-turn.js';
import { createOperatorTaskActivities } from './operator-task.js';
import { createContactExportActivities } from './contacts.js';
import { createListImportActivities } from './lists.js';
import { createCdmImportActivities } from './cdm-imports.js';
import { createAccountActivities } from './accounts.js';
import { createConnectorActivities } from './connectors.js';
import { createEnrollmentActivities } from './enrollments.js';
import { createBulkEnrollActivities } from './enrollments-bulk.js';
import { createDraftActivities } from './message-review.js';
import { createBookingActivities } from './booking.js';
import { createInboxActivities } from './inbox.js';
import { createNotificationActivities } from './notifications.js';
import { createPartnerActivities } from './integrations.js';
import { createAnalyticsActivities } from './analytics.js';
import { createMcpApprovalActivities } from './mcp.js';
import type { Jobs } from '../domain/jobs.js';
import type { AccountConnector } from '../lib/connectors/types.js';

export interface ActivityDeps {
  orm: MikroORM;
  config: Config;
  logger: Logger;
  /** Jobs the Operator's tools may start (workers/worker.ts gives the Temporal implementation). */
  jobs?: Jobs;
  /** The connector's account half (reconciliation, invitation withdrawal, sandbox deliveries); workers/worker.ts gives it. */
  connector?: AccountConnector;
}

/** Every activity the worker registers, bound to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createMaintenanceActivities(deps),
    ...createWebhookActivities(deps),
    ...createCreditActivities(deps),
    ...createDiscoveryActivities(deps),
    ...createPromotionActivities(deps),
    ...createEnrichmentActivities(deps),
    ...createOperatorActivities(deps),
    ...createOperatorTaskActivities(deps),
    ...createContactExportActivities(deps),
    ...createListImportActivities(deps),
    ...createCdmImportActivities(deps),
    ...createAccountActivities(deps),
    ...createConnectorActivities(deps),
    ...createEnrollmentActivities(deps),
    ...createBulkEnrollActivities(deps),
    ...createDraftActivities(deps),
    ...createInboxActivities(deps),
    ...createNotificationActivities(deps),
    ...createBookingActivities(deps),
    ...createPartnerActivities(deps),
    ...createAnalyticsActivities(deps),
    ...createMcpApprovalActivities(deps),
  };
}
