// Discovery run activities: one source page per activity (fetch → dedupe → qualify in a batch →
// store), heartbeating; payloads are the plan and a cursor, never candidate rows.
import { Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { withProviders, type Providers } from '../lib/providers.js';
import {
  createRun,
  finishRun,
  PAGE_SIZE,
  planRun,
  processPage,
  type RunPlan,
  type RunTotals,
} from '../domain/agents/discovery.js';
import { DiscoveryAgent } from '../db/entities/DiscoveryAgent.js';
import { AppError } from '../domain/errors.js';
import { ownActor } from '../domain/workspaces.js';
import { Workspace } from '../db/entities/Workspace.js';
import { syncAgentSchedule, type SourceName } from '../domain/agents/agents.js';
import type { ActivityDeps } from './deps.js';

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

export function createAgentActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const providers = withProviders(deps.providers, overrides);
  return {
    async discoverPage(task: PageTask): Promise<PageOutcome> {
      const signal = task.plan.signals[task.signalIndex];
      const ctx = Context.current();
      ctx.heartbeat({ page: task.pageIndex });
      const page = await providers.sources
        .get(task.source)
        .search(signal.query, { cursor: task.cursor ?? undefined, limit: PAGE_SIZE }, ctx.cancellationSignal);
      ctx.heartbeat({ page: task.pageIndex, candidates: page.candidates.length });
      const totals = await processPage(deps.orm.em.fork() as EntityManager, providers.llm, {
        plan: task.plan,
        signalKey: signal.key,
        pageIndex: task.pageIndex,
        candidates: page.candidates,
      });
      return { nextCursor: page.nextCursor, totals };
    },
    /**
     * Plans a scheduled run from the agent as it is now and records it (idempotent by run id). Null
     * when the agent is gone, not active, or has nothing it could search: the schedule just skips.
     * A Schedule that fires for an agent gone or not active is out of step (the sync after that change
     * was lost): it is synced here (paused or deleted), so it converges at its next firing.
     */
    async planScheduledRun(input: { agentId: string; workspaceId: string; runId: string }): Promise<RunPlan | null> {
      const em = deps.orm.em.fork() as EntityManager;
      const agent = await em.findOne(DiscoveryAgent, { id: input.agentId, workspace: input.workspaceId });
      if (!agent || agent.status !== 'active') {
        if (deps.jobs) await syncAgentSchedule(em, deps.jobs, input.agentId);
        return null;
      }
      const ws = await em.findOneOrFail(Workspace, input.workspaceId);
      // The schedule acts for the workspace owner (it was set up by someone allowed to activate the agent).
      const actor = await ownActor(em, { userId: ws.owner.id, kind: 'session' });
      try {
        const plan = await planRun(em, actor, agent.id, input.runId);
        await createRun(em, plan, 'schedule');
        return plan;
      } catch (err) {
        if (err instanceof AppError && err.status < 500) return null;
        throw err;
      }
    },
    async finishDiscoveryRun(input: {
      runId: string;
      status: 'completed' | 'canceled' | 'failed';
      error?: string;
    }): Promise<RunTotals> {
      return finishRun(deps.orm.em.fork() as EntityManager, input.runId, input.status, input.error);
    },
  };
}

export type AgentActivities = ReturnType<typeof createAgentActivities>;
