// Bulk-promotion activities: one batch of an operation's selected rows per call, in one transaction;
// the payload is ids and counts, never rows.
import { Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { promoteBatch, type BatchInput, type BatchOutcome } from '../domain/agents/promotion.js';
import type { ActivityDeps } from './deps.js';

export function createAgentPromotionActivities(deps: ActivityDeps) {
  return {
    async promoteProfileBatch(input: BatchInput): Promise<BatchOutcome> {
      const ctx = Context.current();
      ctx.heartbeat({ after: input.after });
      const out = await promoteBatch(deps.orm.em.fork() as EntityManager, input);
      ctx.heartbeat({ after: out.last });
      return out;
    },
  };
}

export type AgentPromotionActivities = ReturnType<typeof createAgentPromotionActivities>;
