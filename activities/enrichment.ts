// Enrichment activities: prepare, ask the provider, apply, record a failure (domain/enrichment/enrichment.ts).
// Domain refusals (402, 404) and the provider's permanent errors are non-retryable failures whose
// type is the error code recorded on the attempt; the provider's transient errors are retried.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { applyEnrichment, failEnrichment, prepareEnrichment } from '../domain/enrichment/enrichment.js';
import { AppError } from '../domain/errors.js';
import type { EnrichmentMatch, EnrichmentQuery } from '../lib/enrichment/index.js';
import { withProviders, type Providers } from '../lib/providers.js';
import { ProviderError } from '../lib/provider-http.js';
import { guardWith } from './failures.js';
import type { ActivityDeps } from './deps.js';

/** A domain or provider error as the failure the workflow records; anything else is retried as is. */
function asFailure(err: unknown): unknown {
  if (err instanceof AppError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, err.code);
  if (err instanceof ProviderError)
    return ApplicationFailure.create({
      message: err.message,
      type: `provider_${err.code}`,
      nonRetryable: !err.retryable,
    });
  return err;
}

export function createEnrichmentActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const providers = withProviders(deps.providers, overrides);
  const em = () => deps.orm.em.fork() as EntityManager;
  const guard = guardWith(asFailure);
  return {
    prepareEnrichment: (enrichmentId: string) => guard(() => prepareEnrichment(em(), enrichmentId)),
    async fetchEnrichment(
      enrichmentId: string,
      query: EnrichmentQuery,
    ): Promise<{ provider: string; match: EnrichmentMatch | null }> {
      const signal = Context.current().cancellationSignal;
      return guard(async () => {
        const provider = providers.enrichment;
        return { provider: provider.name, match: await provider.enrich(query, signal) };
      });
    },
    applyEnrichment: (enrichmentId: string, providerName: string, match: EnrichmentMatch | null) =>
      guard(() => applyEnrichment(em(), enrichmentId, providerName, match)),
    failEnrichment: (enrichmentId: string, code: string, message: string) =>
      failEnrichment(em(), enrichmentId, code, message),
  };
}

export type EnrichmentActivities = ReturnType<typeof createEnrichmentActivities>;
