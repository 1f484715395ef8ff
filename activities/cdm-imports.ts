// Company decision-maker import activities (domain/cdm-imports/search-run.ts, confirm-run.ts). A batch search that met
// transient source errors throws a retryable failure of type `source_unavailable` (Temporal retries
// it for the companies still pending, after the provider's Retry-After when it gave one); the
// workflow records what is left as failed after the last attempt.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CdmFailureReason } from '../db/entities/CdmImportCompany.js';
import { confirmCdmChunk } from '../domain/cdm-imports/confirm-run.js';
import { beginCdmSearch, failCdmBatch, finishCdmSearch, searchCdmBatch } from '../domain/cdm-imports/search-run.js';
import { withProviders, type Providers } from '../lib/providers.js';
import type { ActivityDeps } from './deps.js';

export function createCdmImportActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const providers = withProviders(deps.providers, overrides);
  // Read on first use: a worker that never runs an import does not build the corpus for it.
  const source = () => providers.sources.pronet;
  const em = () => deps.orm.em.fork() as EntityManager;
  return {
    beginCdmSearch: (input: { jobId: string; run: number }) => beginCdmSearch(em(), input),
    async searchCdmBatch(input: {
      jobId: string;
      run: number;
      batch: number;
    }): Promise<{ searched: number; found: number; failed: number }> {
      const ctx = Context.current();
      const out = await searchCdmBatch(em(), source(), input, {
        heartbeat: (d) => ctx.heartbeat(d),
        signal: ctx.cancellationSignal,
      });
      if (out.transient.length) {
        const first = out.transient[0];
        const retryAfter = Math.max(0, ...out.transient.map((t) => t.retryAfterSeconds ?? 0));
        throw ApplicationFailure.create({
          type: 'source_unavailable',
          message:
            `${out.transient.length} compan${out.transient.length === 1 ? 'y' : 'ies'} not searched: ${first.message}`.slice(
              0,
              500,
            ),
          nextRetryDelay: retryAfter > 0 ? `${Math.min(retryAfter, 300)} seconds` : undefined,
        });
      }
      return { searched: out.searched, found: out.found, failed: out.failed };
    },
    failCdmBatch: (input: { jobId: string; run: number; batch: number; reason: CdmFailureReason; message: string }) =>
      failCdmBatch(em(), input),
    finishCdmSearch: (input: { jobId: string; run: number }) => finishCdmSearch(em(), input),
    confirmCdmChunk: (input: { jobId: string; run: number }) => confirmCdmChunk(em(), input),
  };
}

export type CdmImportActivities = ReturnType<typeof createCdmImportActivities>;
