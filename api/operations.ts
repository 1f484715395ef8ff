// The registry of every declared operation. A domain adds its routes module here.
import { z } from 'zod';
import { defineOperation, type Operation } from './operation.js';
import { buildOpenApi } from './openapi.js';
import { DOCS_CSP, docsPage } from './docs-page.js';
import { CachedBody, sendCached } from './cached-body.js';
import * as system from './system/routes.js';
import * as auth from './auth/routes.js';
import * as users from './users/routes.js';
import * as apps from './apps/routes.js';
import * as oauth from './auth/oauth-routes.js';
import * as profile from './users/profile-routes.js';
import * as team from './team/routes.js';
import * as webhooks from './webhooks/routes.js';
import * as myWorkspaces from './my-workspaces/routes.js';
import * as billing from './billing/routes.js';
import * as agents from './agents/routes.js';
import * as lists from './lists/routes.js';
import * as listImports from './lists/import-routes.js';
import * as discovery from './agents/discovery-routes.js';
import * as appsAi from './apps/ai-routes.js';
import * as specialists from './apps/specialist-routes.js';
import * as agentsAi from './agents/ai-routes.js';
import * as promotion from './agents/promotion-routes.js';
import * as discoveredLeads from './discovered-leads/routes.js';
import * as enrichment from './enrichment/routes.js';
import * as operatorThreads from './operator/thread-routes.js';
import * as operatorMessages from './operator/message-routes.js';
import * as operatorTasks from './operator/task-routes.js';
import * as operatorMemory from './operator/memory-routes.js';
import * as operatorAttachments from './operator/attachment-routes.js';
import * as contacts from './contacts/routes.js';
import * as cdmImports from './cdm-imports/routes.js';
import * as platformAccounts from './accounts/routes.js';
import * as mailOAuth from './accounts/oauth-routes.js';
import * as hooks from './hooks/routes.js';
import * as campaigns from './campaigns/routes.js';
import * as enrollments from './enrollments/routes.js';
import * as scheduledActions from './scheduled-actions/routes.js';
import * as messageReview from './message-review/routes.js';
import * as inbox from './inbox/routes.js';
import * as followUps from './follow-ups/routes.js';
import * as dashboard from './dashboard/routes.js';
import * as meetings from './meetings/routes.js';
import * as bookingProviders from './booking/routes.js';
import * as bookingHooks from './booking/hook-routes.js';
import * as notifications from './notifications/routes.js';
import * as ideas from './ideas/routes.js';
import * as tableViews from './table-views/routes.js';
import * as onboarding from './onboarding/routes.js';
import * as mcpApprovals from './mcp/routes.js';
import * as analytics from './analytics/routes.js';
import * as insights from './insights/routes.js';
import * as integrations from './integrations/routes.js';
import * as integrationCallbacks from './integrations/callback-routes.js';
import * as suppressions from './suppressions/routes.js';
import * as unsubscribe from './suppressions/unsubscribe-routes.js';
import * as tracking from './tracking/routes.js';

const modules: Record<string, unknown>[] = [
  system,
  auth,
  users,
  apps,
  oauth,
  profile,
  team,
  webhooks,
  myWorkspaces,
  billing,
  agents,
  lists,
  listImports,
  discovery,
  appsAi,
  specialists,
  agentsAi,
  promotion,
  discoveredLeads,
  enrichment,
  operatorThreads,
  operatorMessages,
  operatorTasks,
  operatorMemory,
  operatorAttachments,
  contacts,
  cdmImports,
  platformAccounts,
  hooks,
  campaigns,
  enrollments,
  scheduledActions,
  messageReview,
  inbox,
  followUps,
  dashboard,
  meetings,
  bookingProviders,
  bookingHooks,
  analytics,
  insights,
  integrations,
  integrationCallbacks,
];
modules.push(mailOAuth); // connecting a mailbox with Google or Microsoft (docs/email.md)
modules.push(notifications, ideas, tableViews, onboarding); // docs/notifications.md, docs/ideas-views-onboarding.md
modules.push(mcpApprovals); // MCP approvals (docs/mcp.md)
modules.push(suppressions, unsubscribe); // suppression list, email footer, the public unsubscribe link (docs/email.md)
modules.push(tracking); // the open pixel and link redirects of tracked emails (docs/tracking.md)

const isOperation = (v: unknown): v is Operation =>
  typeof v === 'object' && v !== null && 'operationId' in v && 'handler' in v;

/** `If-None-Match`: the docs answer 304 when it names the ETag of what would be sent. */
const conditional = z.object({
  'If-None-Match': z
    .string()
    .optional()
    .describe('ETag(s) of a copy the client holds; 304 with no body when one matches'),
});

function docsOperations(ops: Operation[]): Operation[] {
  // Built, serialised and compressed once per process: the document is static while it runs.
  let doc: CachedBody | undefined;
  const document = (): CachedBody =>
    (doc ??= new CachedBody(JSON.stringify(buildOpenApi([...ops, ...docs])), 'application/json; charset=utf-8'));
  const docs: Operation[] = [
    defineOperation({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'OpenAPI 3.1 description of this API',
      description:
        'Gzip when accepted; `Cache-Control: no-cache` with a strong ETag, so a client revalidates with If-None-Match and gets 304.',
      tag: 'system',
      auth: 'public',
      rateLimit: 'none',
      headers: conditional,
      produces: 'application/json', // the handler writes the prepared bytes itself
      responses: { 200: z.record(z.string(), z.unknown()), 304: null },
      handler: ({ ctx }) => sendCached(ctx, document()),
    }),
    defineOperation({
      method: 'GET',
      path: '/docs',
      operationId: 'getDocsPage',
      summary: 'API documentation page (Swagger UI over /openapi.json, with try-it-out)',
      tag: 'system',
      auth: 'public',
      rateLimit: 'none',
      headers: conditional,
      produces: 'text/html',
      responses: { 200: z.string(), 304: null },
      handler: ({ ctx }) => {
        ctx.set('Content-Security-Policy', DOCS_CSP);
        sendCached(ctx, docsPage());
      },
    }),
  ];
  return docs;
}

export function allOperations(): Operation[] {
  const ops = modules.flatMap((m) => Object.values(m).filter(isOperation));
  return [...ops, ...docsOperations(ops)];
}
