// Enrichment of one target (`enrich:<kind>:<id>`), one attempt per run (docs/enrichment.md):
// prepare (mark running, check credits) → ask the provider → apply in one transaction (fields by
// provenance, credit debit, promotion + lead.discovered). The provider's answer is the only payload
// that crosses into the history, so an operator sees what it said, and a failed apply is retried
// without asking (or paying) the provider again. A failure of any step is recorded on the attempt.
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { defineJob } from './job.js';
import { enrichmentWorkflowIds } from '../lib/workflow-ids.js';
import type { EnrichmentActivities } from '../activities/enrichment.js';

const { prepareEnrichment, applyEnrichment, failEnrichment } = proxyActivities<EnrichmentActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, initialInterval: '1 second' },
});
// The provider call: its own deadline is the adapter's timeout; retryable failures back off longer.
const { fetchEnrichment } = proxyActivities<EnrichmentActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 5, initialInterval: '5 seconds', backoffCoefficient: 2 },
});

export interface EnrichTargetInput {
  enrichmentId: string;
}

export type EnrichTargetResult =
  | { status: 'completed'; found: boolean; fieldsFilled: string[]; promoted: boolean }
  | { status: 'failed'; code: string }
  | { status: 'skipped'; reason: string };

export async function enrichTarget(input: EnrichTargetInput): Promise<EnrichTargetResult> {
  try {
    const prep = await prepareEnrichment(input.enrichmentId);
    if (!prep.run) return { status: 'skipped', reason: prep.status };
    const answer = await fetchEnrichment(input.enrichmentId, prep.query);
    return await applyEnrichment(input.enrichmentId, answer.provider, answer.match);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const code = cause instanceof ApplicationFailure && cause.type ? cause.type : 'enrichment_failed';
    const message = cause instanceof Error ? cause.message : String(cause);
    await failEnrichment(input.enrichmentId, code, message);
    return { status: 'failed', code };
  }
}

export const enrichmentJob = defineJob('enrichment', {
  workflow: enrichTarget,
  id: (k) => enrichmentWorkflowIds.target(k.kind, k.targetId),
  args: (s) => [{ enrichmentId: s.enrichmentId }],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => ({ enrichment_id: s.enrichmentId, target: `${s.kind}:${s.targetId}` }),
  repeat: {
    afterPrevious: 'enrichment_id',
    busy: {
      code: 'enrichment_busy',
      message: 'the previous enrichment of this target is still closing; retry shortly',
    },
  },
});
