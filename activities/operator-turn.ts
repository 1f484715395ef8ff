// Operator turn activities (domain/operator/turns.ts): each runs with a fresh EntityManager, the
// shared Redis publisher, the model adapter, and the tool context (jobs over Temporal, providers).
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  closeConfirmation,
  completeTurn,
  executeConfirmed,
  failTurn,
  modelStep,
  requestConfirmation,
  runReadTool,
  type PlannedCall,
  type TurnDeps,
} from '../domain/operator/turns.js';
import { AppError } from '../domain/errors.js';
import { LlmError, type Usage } from '../lib/llm/types.js';
import { withProviders, type Providers } from '../lib/providers.js';
import type { ActivityDeps } from './deps.js';

export function createOperatorActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const providers = withProviders(deps.providers, overrides);
  const turnDeps = async (): Promise<TurnDeps> => ({
    em: deps.orm.em.fork() as EntityManager,
    redis: deps.redis,
    llm: providers.llm,
    toolContext: { jobs: deps.jobs, config: deps.config, providers },
  });
  /** A model refusal that will not change on retry fails the turn with its code; so does a domain refusal (402 `insufficient_credits` when the turn's lapsed hold cannot be taken again). */
  const modelFailure = (err: unknown) => {
    if (err instanceof LlmError && !err.retryable)
      return ApplicationFailure.nonRetryable(err.message, `model_${err.code}`);
    if (err instanceof AppError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, err.code);
    return err;
  };

  return {
    async operatorModelStep(input: { turnId: string; messageId: string }) {
      try {
        return await modelStep(await turnDeps(), { ...input, signal: Context.current().cancellationSignal });
      } catch (err) {
        throw modelFailure(err);
      }
    },
    operatorRunReadTool: async (input: { turnId: string; call: PlannedCall; messageId: string }) =>
      runReadTool(await turnDeps(), input),
    operatorRequestConfirmation: async (input: {
      turnId: string;
      call: PlannedCall;
      messageId: string;
      confirmationId: string;
    }) => requestConfirmation(await turnDeps(), input),
    operatorExecuteConfirmed: async (input: { turnId: string; confirmationId: string }) =>
      executeConfirmed(await turnDeps(), input),
    operatorCloseConfirmation: async (input: {
      turnId: string;
      confirmationId: string;
      outcome: 'canceled' | 'expired';
    }) => closeConfirmation(await turnDeps(), input),
    operatorCompleteTurn: async (input: { turnId: string; usage: Usage; modelCalls: number }) =>
      completeTurn(await turnDeps(), input),
    operatorFailTurn: async (input: { turnId: string; code: string; message: string }) =>
      failTurn(await turnDeps(), input),
  };
}

export type OperatorActivities = ReturnType<typeof createOperatorActivities>;
