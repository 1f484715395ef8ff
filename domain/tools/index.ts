// Every domain's tools, in one table (see registry.ts). A domain adds its list here.
import { aiTools } from './ai.js';
import { agentTools } from './agents.js';
import { listTools } from './lists.js';
import { agentPromotionTools } from './agents-promotion.js';
import { discoveredLeadTools } from './discovered-leads.js';
import { enrichmentTools } from './enrichment.js';
import { operatorTaskTools } from './operator-tasks.js';
import { contactTools } from './contacts.js';
import { listImportTools } from './lists-imports.js';
import { cdmImportTools } from './cdm-imports.js';
import { accountTools } from './accounts.js';
import { campaignTools } from './campaigns.js';
import { enrollmentTools } from './enrollments.js';
import { messageReviewTools } from './message-review.js';
import { inboxTools } from './inbox.js';
import { meetingTools } from './meetings.js';
import { notificationTools } from './notifications.js';
import { analyticsTools } from './analytics.js';
import { integrationTools } from './integrations.js';
import { setCatalogue, toolByName, type Tool } from './registry.js';

export const allTools = (): Tool[] =>
  [
    ...agentTools,
    ...aiTools,
    ...agentPromotionTools,
    ...listTools,
    ...discoveredLeadTools,
    ...enrichmentTools,
    ...operatorTaskTools,
    ...contactTools,
    ...listImportTools,
    ...cdmImportTools,
    ...accountTools,
    ...campaignTools,
    ...enrollmentTools,
    ...messageReviewTools,
    ...inboxTools,
    ...meetingTools,
    ...analyticsTools,
    ...integrationTools,
    ...notificationTools,
  ] as Tool[];

setCatalogue(allTools());

export const findTool = (name: string): Tool | undefined => toolByName(name);
