// Integrations for the Operator (docs/integrations.md): list them, send a test record through one
// (it reaches the destination), start the partner CRM's sync now.
import { z } from 'zod';
import { AppError } from '../errors.js';
import {
  listIntegrations,
  maskedCredentials,
  PARTNER,
  requireIntegration,
  testIntegration,
  type IntegrationDeps,
} from '../integrations/integrations.js';
import { syncCursors } from '../integrations/partner-sync.js';
import { defineTool, type ToolContext } from './registry.js';

const deps = (ctx: ToolContext): IntegrationDeps => ({ partner: ctx.providers.partner, config: ctx.config });

export const integrationTools = [
  defineTool({
    name: 'list_integrations',
    domain: 'integrations',
    description:
      'List the workspace’s integrations (partner CRM, Slack-style and JSON webhooks) with their status, masked credentials and last test and sync.',
    input: z.object({ limit: z.number().int().min(1).max(50).default(50) }).strict(),
    risk: 'read',
    run: async ({ em, actor }, i) =>
      (await listIntegrations(em, actor, { limit: i.limit })).slice(0, i.limit).map((r) => ({
        id: r.id,
        kind: r.provider,
        name: r.name,
        status: r.status,
        credentials: maskedCredentials(r),
        last_test_ok: r.lastTestOk ?? null,
        last_sync_at: r.lastSyncAt?.toISOString() ?? null,
      })),
  }),
  defineTool({
    name: 'test_integration',
    ids: { integration_id: 'integration' },
    domain: 'integrations',
    description:
      'Send a test record through an integration (it reaches the destination: a Slack channel, a webhook receiver or the partner CRM) and report whether it was accepted.',
    input: z.object({ integration_id: z.uuid() }).strict(),
    risk: 'send',
    run: async (ctx, i) => {
      const r = await testIntegration(ctx.em, ctx.actor, deps(ctx), i.integration_id);
      return {
        integration_id: r.integration.id,
        success: r.outcome.success,
        status_code: r.outcome.statusCode,
        error_class: r.outcome.errorClass,
        error: r.outcome.error,
      };
    },
  }),
  defineTool({
    name: 'sync_partner_now',
    ids: { integration_id: 'integration' },
    domain: 'integrations',
    description:
      'Start the partner CRM sync now (leads, replies and meetings changed since the last sync are pushed; a sync already running goes on).',
    input: z.object({ integration_id: z.uuid() }).strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, i) => {
      const integration = await requireIntegration(em, actor, i.integration_id);
      if (integration.provider !== PARTNER)
        throw new AppError(400, 'not_partner', 'only the partner CRM integration syncs');
      if (integration.status !== 'active')
        throw new AppError(409, 'integration_not_active', `the partner integration is ${integration.status}`);
      const run = await jobs.start('partner-sync', { integrationId: integration.id, workspaceId: actor.workspaceId });
      const cursors = await syncCursors(em, integration.id);
      return {
        workflow_id: run.workflowId,
        run_id: run.runId,
        pushed_so_far: Object.fromEntries(cursors.map((c) => [c.record_kind, c.pushed])),
      };
    },
  }),
];
