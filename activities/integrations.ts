// Partner CRM activities (docs/integrations.md "Sync"): one page of one record kind (idempotent: the
// cursor and pushes commit with the page), the run's end, and the sweep that starts every active
// integration's sync.
import { ApplicationFailure } from '@temporalio/common';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  activePartnerIntegrations,
  finishPartnerSync,
  syncPartnerPage,
  type PartnerSyncDeps,
  type SyncPageResult,
} from '../domain/integrations/partner-sync.js';
import { PartnerError, type PartnerRecordKind } from '../lib/partner/types.js';
import { withProviders, type Providers } from '../lib/providers.js';
import type { ActivityDeps } from './deps.js';

export function createIntegrationActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const providers = withProviders(deps.providers, overrides);
  const em = () => deps.orm.em.fork() as EntityManager;
  const sync = (): PartnerSyncDeps => ({ partner: providers.partner, config: deps.config });
  return {
    async partnerSyncPage(input: {
      integrationId: string;
      kind: PartnerRecordKind;
      pageSize: number;
    }): Promise<SyncPageResult> {
      try {
        return await syncPartnerPage(em(), sync(), input.integrationId, input.kind, input.pageSize);
      } catch (err) {
        // A rate limit: the next attempt waits for the partner's reset (HubSpot's policy window).
        if (err instanceof PartnerError && err.code === 'rate_limited' && err.retryAfterSeconds)
          throw ApplicationFailure.create({
            message: err.message,
            type: 'rate_limited',
            nextRetryDelay: err.retryAfterSeconds * 1000,
          });
        // Refused tokens will not get better by retrying (the integration is marked); the rest may.
        if (err instanceof PartnerError && !err.retryable)
          throw ApplicationFailure.nonRetryable(
            err.message,
            err.code === 'auth' ? 'provider_refused' : 'provider_error',
          );
        throw err;
      }
    },

    async partnerSyncFinish(integrationId: string): Promise<void> {
      await finishPartnerSync(em(), integrationId);
    },

    /** Starts `partner-sync:<id>` for every active partner integration (a running one goes on). */
    async partnerSyncSweep(): Promise<{ started: number }> {
      const rows = await activePartnerIntegrations(em());
      for (const r of rows) await deps.jobs.start('partner-sync', { integrationId: r.id, workspaceId: r.workspace_id });
      return { started: rows.length };
    },
  };
}

export type IntegrationActivities = ReturnType<typeof createIntegrationActivities>;
