// Discovery run activities: one source page per activity (fetch → dedupe → qualify in a batch →
// store), heartbeating; payloads are the plan and a cursor, never candidate rows.
import { Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createModelAdapter } from '../lib/llm/index.js';
import { createSources, type Sources } from '../lib/sources/index.js';
import type { ModelAdapter } from '../lib/llm/types.js';
import { finishRun, PAGE_SIZE, processPage, type RunPlan, type RunTotals } from '../domain/discovery-runs.js';
import type { SourceName } from '../domain/agents.js';
import type { ActivityDeps } from './index.js';

export interface PageTask {
  plan: RunPlan;
  signalIndex: number;
  source: SourceName;
  cursor: string | null;
  pageIndex: number;
}

export interface PageOutcome {
  nextCursor: string | null;
  totals: RunTotals;
}

export function createDiscoveryActivities(deps: ActivityDeps, providers: { sources?: Sources; llm?: ModelAdapter } = {}) {
  const sources = providers.sources ?? createSources(deps.config.sources);
  const llm = providers.llm ?? createModelAdapter(deps.config.llm);
  return {
    async discoverPage(task: PageTask): Promise<PageOutcome> {
      const signal = task.plan.signals[task.signalIndex];
      const ctx = Context.current();
      ctx.heartbeat({ page: task.pageIndex });
      const page = await sources.get(task.source).search(signal.query, { cursor: task.cursor ?? undefined, limit: PAGE_SIZE }, ctx.cancellationSignal);
      ctx.heartbeat({ page: task.pageIndex, candidates: page.candidates.length });
      const totals = await processPage(deps.orm.em.fork() as EntityManager, llm, { plan: task.plan, signalKey: signal.key, pageIndex: task.pageIndex, candidates: page.candidates });
      return { nextCursor: page.nextCursor, totals };
    },
    async finishDiscoveryRun(input: { runId: string; status: 'completed' | 'canceled' | 'failed'; error?: string }): Promise<RunTotals> {
      return finishRun(deps.orm.em.fork() as EntityManager, input.runId, input.status, input.error);
    },
  };
}

export type DiscoveryActivities = ReturnType<typeof createDiscoveryActivities>;
