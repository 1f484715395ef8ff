import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  acquireSlot,
  checkCondition,
  enrollmentStanding,
  expireReview,
  failEnrollment,
  finishEnrollment,
  gate,
  gateSlotAndSend,
  giveBackSlot,
  giveBackUnusedGrant,
  nextStep,
  nextStepAndPlan,
  PermanentError,
  planAction,
  recordReply,
  requestReview,
  sendAction,
  setEnrollmentPaused,
  setWaitingReason,
  waitEnd,
  type NextAndPlanInput,
  type NextStepInput,
  type PlanInput,
  type WaitingReason,
} from '../domain/enrollments/executor.js';
import { AppError } from '../domain/errors.js';
import { draftDeadline, writeDraftForAction } from '../domain/message-review/drafts.js';
import { unsubscribeUrl } from '../domain/suppressions/unsubscribe.js';
import { trackingUrls } from '../domain/tracking/token.js';
import { withProviders, type Providers } from '../lib/providers.js';
import { ProviderError } from '../lib/provider-http.js';
import type { ActivityDeps } from './deps.js';

/** The failure type the workflow reads as "stopped between attempts": it holds, ends or tries again. */
export const HALTED = 'halted';

/**
 * Errors that running again cannot fix become non-retryable failures whose type is the error code
 * the enrollment ends with: a PermanentError, a constraint violation or data exception (SQLSTATE
 * classes 22 and 23), a 4xx domain error, a provider's permanent refusal. Everything else is thrown
 * as is and retried under the workflow's bounded policy.
 */
export function permanentFailure(err: unknown): ApplicationFailure | null {
  if (err instanceof ApplicationFailure) return null;
  if (err instanceof PermanentError) return ApplicationFailure.nonRetryable(err.message, err.code);
  if (err instanceof AppError && err.status < 500) return ApplicationFailure.nonRetryable(err.message, err.code);
  if (err instanceof ProviderError && !err.retryable)
    return ApplicationFailure.nonRetryable(err.message, `connector_${err.code}`);
  const sqlState = (err as { code?: unknown })?.code;
  if (typeof sqlState === 'string' && /^2[23][0-9A-Z]{3}$/.test(sqlState))
    return ApplicationFailure.nonRetryable(
      (err as Error).message,
      sqlState.startsWith('23') ? 'constraint_violation' : 'invalid_data',
    );
  return null;
}

/**
 * Between attempts of a failing activity, a stop must reach the enrollment within one retry
 * interval: from the second attempt on, an enrollment that ended or whose campaign is no longer
 * active is not worked on again (the workflow, told `halted`, reads where it stands).
 */
async function haltedBetweenAttempts(
  em: EntityManager,
  ref: { enrollmentId?: string; actionId?: string; unlessExecuting?: boolean },
): Promise<boolean> {
  let attempt = 1;
  try {
    attempt = Context.current().info.attempt;
  } catch {
    return false; // called outside an activity (tests)
  }
  if (attempt <= 1) return false;
  const [r] = await em.execute<{ halted: boolean }[]>(
    `select (e.status not in ('active', 'paused') or c.status <> 'active') and not (? and coalesce(a.state = 'executing', false)) as halted
       from enrollments e join campaigns c on c.id = e.campaign_id left join scheduled_actions a on a.id = ?::uuid
      where e.id = coalesce(?::uuid, (select enrollment_id from scheduled_actions where id = ?::uuid))`,
    [ref.unlessExecuting === true, ref.actionId ?? null, ref.enrollmentId ?? null, ref.actionId ?? null],
  );
  return !!r?.halted;
}

/** The `enrollment` workflow's activities (domain/enrollments/executor.ts does the work). */
export function createEnrollmentActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const em = () => deps.orm.em.fork();
  const providers = withProviders(deps.providers, overrides);

  /** One activity's body: halted between attempts, permanent errors non-retryable. */
  const run = async <T>(
    ref: { enrollmentId?: string; actionId?: string; unlessExecuting?: boolean } | null,
    body: () => Promise<T>,
  ): Promise<T> => {
    if (ref && (await haltedBetweenAttempts(em(), ref))) {
      // A slot an earlier attempt was granted for this action is not kept by a step that stopped.
      if (ref.actionId) await giveBackUnusedGrant(em(), ref.actionId);
      throw ApplicationFailure.nonRetryable(
        'the enrollment or its campaign stopped while this step was being retried',
        HALTED,
      );
    }
    try {
      return await body();
    } catch (err) {
      throw permanentFailure(err) ?? err;
    }
  };

  return {
    /** The AI-written draft of an `ai` / `ai_review` step's action (docs/message-review.md). */
    executorWriteDraft: (actionId: string) =>
      run({ actionId }, () => writeDraftForAction(em(), providers.llm, actionId)),
    executorDraftDeadline: (actionId: string) => run({ actionId }, () => draftDeadline(em(), actionId)),
    executorNextStep: (input: NextStepInput) => run({ enrollmentId: input.enrollmentId }, () => nextStep(em(), input)),
    executorWaitEnd: (input: {
      enrollmentId: string;
      config: Record<string, unknown>;
      from: string;
    }): Promise<string> =>
      run({ enrollmentId: input.enrollmentId }, async () => {
        const [r] = await em().execute<{ time_zone: string }[]>(
          `select c.time_zone from enrollments e join campaigns c on c.id = e.campaign_id where e.id = ?`,
          [input.enrollmentId],
        );
        if (!r) throw new PermanentError('enrollment_missing', `enrollment ${input.enrollmentId} not found`);
        return waitEnd(input.config, r.time_zone, new Date(input.from)).toISOString();
      }),
    // `{{unsubscribe_url}}`: the recipient's signed link, made with the process's key and public base URL.
    executorPlanAction: (input: PlanInput) =>
      run({ enrollmentId: input.enrollmentId }, () =>
        planAction(em(), input, undefined, {
          unsubscribeUrl: (workspaceId, contactId) => unsubscribeUrl(deps.config, workspaceId, contactId),
        }),
      ),
    executorGate: (actionId: string) => run(null, () => gate(em(), actionId)),
    executorSetWaitingReason: (actionId: string, reason: WaitingReason | null) =>
      run(null, () => setWaitingReason(em(), actionId, reason)),
    executorRequestReview: (actionId: string) => run({ actionId }, () => requestReview(em(), actionId)),
    executorExpireReview: (actionId: string) => run(null, () => expireReview(em(), actionId)),
    executorAcquireSlot: (actionId: string) => run({ actionId }, () => acquireSlot(em(), actionId)),
    executorGiveBackSlot: (actionId: string, grantedAt: string) =>
      run(null, () => giveBackSlot(em(), actionId, grantedAt)),
    executorSend: (actionId: string, grantedAt: string) =>
      // A claimed send (`executing`) is finished whatever stopped since: the claim committed first.
      run({ actionId, unlessExecuting: true }, async () => {
        const pause = deps.config.executorTestPauseAfterSendMs;
        return sendAction(em(), providers.connector, actionId, grantedAt, {
          pauseAfterSendMs: pause > 0 ? pause : undefined,
          unsubscribeUrl: (workspaceId, contactId) => unsubscribeUrl(deps.config, workspaceId, contactId),
          trackingUrls: (actionId) => trackingUrls(deps.config, actionId),
        });
      }),
    /** The next step and, fused (patch `enrollment-fused-steps`), a send step's plan or, at the end, the finish. */
    executorNextAndPlan: (input: NextAndPlanInput) =>
      run({ enrollmentId: input.enrollmentId }, () =>
        nextStepAndPlan(em(), input, {
          unsubscribeUrl: (workspaceId, contactId) => unsubscribeUrl(deps.config, workspaceId, contactId),
        }),
      ),
    /** The gate, the slot request and the send, fused when no review applies (patch `enrollment-fused-steps`). */
    executorGateSlotSend: (actionId: string) =>
      run({ actionId, unlessExecuting: true }, async () => {
        const pause = deps.config.executorTestPauseAfterSendMs;
        return gateSlotAndSend(em(), providers.connector, actionId, {
          pauseAfterSendMs: pause > 0 ? pause : undefined,
          unsubscribeUrl: (workspaceId, contactId) => unsubscribeUrl(deps.config, workspaceId, contactId),
          trackingUrls: (actionId) => trackingUrls(deps.config, actionId),
        });
      }),
    executorCheckCondition: (enrollmentId: string, previousActionId: string | null, config: Record<string, unknown>) =>
      run({ enrollmentId }, () => checkCondition(em(), enrollmentId, previousActionId, config)),
    executorRecordReply: (enrollmentId: string) => run(null, () => recordReply(em(), enrollmentId)),
    executorSetPaused: (enrollmentId: string, paused: boolean, restore?: WaitingReason | null) =>
      run(null, () => setEnrollmentPaused(em(), enrollmentId, paused, restore)),
    executorFinish: (enrollmentId: string, status: string, stopReason: string | null) =>
      run(null, () => finishEnrollment(em(), enrollmentId, status, stopReason)),
    executorStanding: (enrollmentId: string) => run(null, () => enrollmentStanding(em(), enrollmentId)),
    executorFail: (enrollmentId: string, actionId: string | null, code: string, message: string) =>
      run(null, () => failEnrollment(em(), enrollmentId, actionId, code, message)),
  };
}

export type EnrollmentActivities = ReturnType<typeof createEnrollmentActivities>;
