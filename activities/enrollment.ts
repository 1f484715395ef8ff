import {
  acquireSlot,
  checkCondition,
  expireReview,
  finishEnrollment,
  gate,
  giveBackSlot,
  nextStep,
  planAction,
  recordReply,
  requestReview,
  sendAction,
  setEnrollmentPaused,
  setWaitingReason,
  waitEnd,
  type NextStepInput,
  type PlanInput,
  type WaitingReason,
} from '../domain/executor.js';
import { draftDeadline, writeDraftForAction } from '../domain/drafts.js';
import { createModelAdapter, type ModelAdapter } from '../lib/llm/index.js';
import type { ActivityDeps } from './index.js';

/** The `enrollment` workflow's activities (domain/executor.ts does the work). */
export function createEnrollmentActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork();
  let llm: ModelAdapter | undefined;
  return {
    /** The AI-written draft of an `ai` / `ai_review` step's action (docs/message-review.md). */
    executorWriteDraft: (actionId: string) => writeDraftForAction(em(), (llm ??= createModelAdapter(deps.config.llm)), actionId),
    executorDraftDeadline: (actionId: string) => draftDeadline(em(), actionId),
    executorNextStep: (input: NextStepInput) => nextStep(em(), input),
    async executorWaitEnd(input: { enrollmentId: string; config: Record<string, unknown>; from: string }): Promise<string> {
      const [r] = await em().execute<{ time_zone: string }[]>(`select c.time_zone from enrollments e join campaigns c on c.id = e.campaign_id where e.id = ?`, [input.enrollmentId]);
      return waitEnd(input.config, r.time_zone, new Date(input.from)).toISOString();
    },
    executorPlanAction: (input: PlanInput) => planAction(em(), input),
    executorGate: (actionId: string) => gate(em(), actionId),
    executorSetWaitingReason: (actionId: string, reason: WaitingReason | null) => setWaitingReason(em(), actionId, reason),
    executorRequestReview: (actionId: string) => requestReview(em(), actionId),
    executorExpireReview: (actionId: string) => expireReview(em(), actionId),
    executorAcquireSlot: (actionId: string) => acquireSlot(em(), actionId),
    executorGiveBackSlot: (actionId: string, grantedAt: string) => giveBackSlot(em(), actionId, grantedAt),
    async executorSend(actionId: string, grantedAt: string) {
      if (!deps.connector) throw new Error('executorSend needs the worker’s connector');
      const pause = Number(process.env.EXECUTOR_TEST_PAUSE_AFTER_SEND_MS ?? 0);
      return sendAction(em(), deps.connector, actionId, grantedAt, { pauseAfterSendMs: pause > 0 ? pause : undefined });
    },
    executorCheckCondition: (enrollmentId: string, previousActionId: string | null, config: Record<string, unknown>) => checkCondition(em(), enrollmentId, previousActionId, config),
    executorRecordReply: (enrollmentId: string) => recordReply(em(), enrollmentId),
    executorSetPaused: (enrollmentId: string, paused: boolean) => setEnrollmentPaused(em(), enrollmentId, paused),
    executorFinish: (enrollmentId: string, status: string, stopReason: string | null) => finishEnrollment(em(), enrollmentId, status, stopReason),
  };
}

export type EnrollmentActivities = ReturnType<typeof createEnrollmentActivities>;
