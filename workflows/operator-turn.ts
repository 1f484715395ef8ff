// One Operator turn (`operator-turn:<threadId>:<turnId>`, docs/operator.md): model steps until the
// model stops asking for tools (at most MAX_MODEL_STEPS). Read tools run at once; any other tool
// waits for the user's decision — the `decision` signal, sent by POST /api/agent/messages once the
// confirmation is recorded as decided — or for its expiry. Message ids come from the workflow
// (deterministic), so a retried activity never stores a message twice. The history holds ids,
// tool calls and usage, never the context.
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import { defineJob } from './job.js';
import { operatorWorkflowIds } from '../lib/workflow-ids.js';
import type { OperatorActivities } from '../activities/operator-turn.js';
import type { Usage } from '../lib/llm/types.js';

const MAX_MODEL_STEPS = 6;

// A model's refusal is non-retryable (activities/operator-turn.ts); what is retried is an outage
// (the database or the model's service restarting), so the tries span about a minute: a turn caught
// by a 10 s PostgreSQL restart completes (the chaos harness, docs/deploy.md).
const RETRY = {
  maximumAttempts: 8,
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '15 seconds',
} as const;
const {
  operatorModelStep,
  operatorRequestConfirmation,
  operatorCloseConfirmation,
  operatorCompleteTurn,
  operatorFailTurn,
  operatorRunReadTool,
} = proxyActivities<OperatorActivities>({
  startToCloseTimeout: '2 minutes',
  retry: RETRY,
});
// A confirmed tool changes something: it claims its run before it starts, so a retry reports instead of repeating.
const { operatorExecuteConfirmed } = proxyActivities<OperatorActivities>({
  startToCloseTimeout: '5 minutes',
  retry: RETRY,
});

export interface Decision {
  confirmationId: string;
  action: 'confirm' | 'cancel';
}
export const decisionSignal = defineSignal<[Decision]>('decision');

export interface TurnState {
  status: 'running' | 'awaiting_confirmation' | 'completed' | 'failed';
  step: number;
  pendingConfirmationId: string | null;
}
export const turnStateQuery = defineQuery<TurnState>('state');

export interface OperatorTurnInput {
  turnId: string;
}

export async function operatorTurn(input: OperatorTurnInput): Promise<TurnState & { credits?: number }> {
  const decisions = new Map<string, Decision['action']>();
  const state: TurnState = { status: 'running', step: 0, pendingConfirmationId: null };
  setHandler(decisionSignal, (d) => {
    if (!decisions.has(d.confirmationId)) decisions.set(d.confirmationId, d.action);
  });
  setHandler(turnStateQuery, () => state);
  const usage: Usage = { inputTokens: 0, outputTokens: 0, costMicros: 0 };
  try {
    for (; state.step < MAX_MODEL_STEPS; state.step++) {
      const step = await operatorModelStep({ turnId: input.turnId, messageId: uuid4() });
      usage.inputTokens += step.usage.inputTokens;
      usage.outputTokens += step.usage.outputTokens;
      usage.costMicros += step.usage.costMicros;
      if (!step.toolCalls.length) break;
      for (const call of step.toolCalls) {
        const messageId = uuid4();
        if (call.risk === null || call.risk === 'read') {
          await operatorRunReadTool({ turnId: input.turnId, call, messageId });
          continue;
        }
        const confirmationId = uuid4();
        const { expiresAt } = await operatorRequestConfirmation({
          turnId: input.turnId,
          call,
          messageId,
          confirmationId,
        });
        state.status = 'awaiting_confirmation';
        state.pendingConfirmationId = confirmationId;
        const decided = await condition(
          () => decisions.has(confirmationId),
          Math.max(0, Date.parse(expiresAt) - Date.now()),
        );
        state.status = 'running';
        state.pendingConfirmationId = null;
        if (decided && decisions.get(confirmationId) === 'confirm')
          await operatorExecuteConfirmed({ turnId: input.turnId, confirmationId });
        else
          await operatorCloseConfirmation({
            turnId: input.turnId,
            confirmationId,
            outcome: decided ? 'canceled' : 'expired',
          });
      }
    }
    const { credits } = await operatorCompleteTurn({
      turnId: input.turnId,
      usage,
      modelCalls: Math.min(state.step + 1, MAX_MODEL_STEPS),
    });
    state.status = 'completed';
    return { ...state, credits };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const code = cause instanceof ApplicationFailure && cause.type ? cause.type : 'turn_failed';
    await operatorFailTurn({
      turnId: input.turnId,
      code,
      message: cause instanceof Error ? cause.message : String(cause),
    });
    state.status = 'failed';
    return state;
  }
}

export const operatorTurnJob = defineJob('operator-turn', {
  workflow: operatorTurn,
  id: (k) => operatorWorkflowIds.turn(k.threadId, k.turnId),
  args: (t) => [{ turnId: t.turnId }],
  scope: (t) => ({ workspaceId: t.workspaceId, appId: t.appId }),
  memo: (t) => ({ thread: t.threadId }),
  repeat: 'while-open',
  retryTransient: true,
  signals: { decision: decisionSignal },
});
