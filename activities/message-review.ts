// The draft-generation workflow's activities: the batch loop (heartbeating progress) and the end.
import { Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { draftGenerationBatch, finishDraftGeneration } from '../domain/message-review/generation.js';
import { createModelAdapter, type ModelAdapter } from '../lib/llm/index.js';
import type { ActivityDeps } from './index.js';

export function createDraftActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  let llm: ModelAdapter | undefined;
  return {
    async draftGenerationRun(operationId: string): Promise<void> {
      const model = (llm ??= createModelAdapter(deps.config.llm));
      let batches = 0;
      while (await draftGenerationBatch(em(), model, operationId)) Context.current().heartbeat({ batches: ++batches });
    },
    async draftGenerationFinish(operationId: string, status: 'completed' | 'failed', message: string | null) {
      const op = await finishDraftGeneration(em(), operationId, status, message);
      return { status: op.status, total: op.total, written: op.written, failed: op.failed, credits: op.credits };
    },
  };
}

export type DraftActivities = ReturnType<typeof createDraftActivities>;
