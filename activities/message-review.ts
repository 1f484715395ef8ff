// The draft-generation workflow's activities: the batch loop (heartbeating progress) and the end.
import { Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { draftGenerationBatch, finishDraftGeneration } from '../domain/message-review/generation.js';
import { withProviders, type Providers } from '../lib/providers.js';
import type { ActivityDeps } from './deps.js';

export function createMessageReviewActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const providers = withProviders(deps.providers, overrides);
  const em = () => deps.orm.em.fork() as EntityManager;
  return {
    async draftGenerationRun(operationId: string): Promise<void> {
      const model = providers.llm;
      let batches = 0;
      while (await draftGenerationBatch(em(), model, operationId)) Context.current().heartbeat({ batches: ++batches });
    },
    async draftGenerationFinish(operationId: string, status: 'completed' | 'failed', message: string | null) {
      const op = await finishDraftGeneration(em(), operationId, status, message);
      return { status: op.status, total: op.total, written: op.written, failed: op.failed, credits: op.credits };
    },
  };
}

export type MessageReviewActivities = ReturnType<typeof createMessageReviewActivities>;
