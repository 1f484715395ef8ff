// `enrollment:<campaignId>:<leadId>`: one lead's walk through a campaign's steps (docs/executor.md).
// The history holds ids and times only; rows are read and written by activities (domain/enrollments/executor.ts).
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  TimeoutFailure,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { defineJob } from './job.js';
import { enrollmentWorkflowIds } from '../lib/workflow-ids.js';
import type { EnrollmentActivities } from '../activities/enrollments.js';
import type {
  GateResult,
  PlanResult,
  SendOutcome,
  SlotResult,
  StepRef,
  WaitingReason,
} from '../domain/enrollments/executor.js';

// Retries are bounded (about 15 minutes of backoff): an error that retrying cannot fix fails the
// activity at once (activities/enrollments.ts makes it non-retryable), one that outlives the budget
// fails it then; either way the enrollment ends `failed` with a code instead of retrying forever.
// Between attempts a stop is checked (`halted`), so a pause or removal reaches a retrying enrollment.
const RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 20,
} as const;

// Histories from before `enrollment-local-activities` replay on these (every activity remote).
const remote = proxyActivities<EnrollmentActivities>({
  startToCloseTimeout: '1 minute',
  retry: RETRY,
});
const remoteSender = proxyActivities<EnrollmentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: RETRY,
});
// Since then every activity is local: short database calls (and the connector's send) run inside
// the workflow task, each one marker in the history instead of three events and another workflow
// task, with no task-queue round trip; a one-step enrollment is one workflow task. A worker lost
// mid-send is noticed when the workflow task times out: another worker replays to the unrecorded
// send and runs it again, which sends once (sendAction is idempotent by action id).
const local = proxyLocalActivities<EnrollmentActivities>({
  startToCloseTimeout: '1 minute',
  localRetryThreshold: '10 seconds',
  retry: RETRY,
});
const localSender = proxyLocalActivities<EnrollmentActivities>({
  startToCloseTimeout: '30 seconds',
  localRetryThreshold: '10 seconds',
  retry: RETRY,
});

/** Review waits this long (docs/executor.md); kept beside REVIEW_DEADLINE_MS in domain/enrollments/executor.ts. */
const REVIEW_DEADLINE_MS = 7 * 86_400_000;
/** A paused campaign is read again this often even without a `resume` signal. */
const CAMPAIGN_RECHECK_MS = 5 * 60_000;
/** A refusal that names no retry time (no account, not connected) is asked again after this. */
const NO_RETRY_TIME_MS = 60 * 60_000;
/** Steps per run before continuing as new. */
const STEPS_PER_RUN = 25;

/** What carries over a continue-as-new (and what a run starts from). */
export interface EnrollmentCarry {
  version: number;
  lastStepId: string | null;
  lastIndex: number;
  notBefore: string | null;
  previousActionId: string | null;
  paused: boolean;
  replyPending: boolean;
  /** A send of this enrollment bounced (signal `bounce`; absent from carries made before it). */
  bouncePending?: boolean;
  stepsRun: number;
}

export interface EnrollmentInput {
  enrollmentId: string;
  campaignId: string;
  leadId: string;
  /** The version pinned at enrollment. */
  version: number;
  /** Start at this step instead of the first (a re-enrollment from a given step). */
  startAtStepId?: string | null;
  /** How long an action waits for review (default REVIEW_DEADLINE_MS, 7 days); tests shorten it. */
  reviewDeadlineMs?: number;
  carry?: EnrollmentCarry;
}

export interface EnrollmentState {
  status: 'running' | 'paused' | 'finished';
  version: number;
  step_id: string | null;
  step_index: number | null;
  step_type: string | null;
  action_id: string | null;
  /** Why the next action is not done yet; null while an activity runs or at the end. */
  reason: WaitingReason | null;
  /** Until when, when known (ISO). */
  until: string | null;
  replied: boolean;
  finished: { status: string; stop_reason: string | null } | null;
}

export type ActionSignal = { actionId?: string };
export const replySignal = defineSignal<[{ source?: string }?]>('reply');
/** Sent after the inbound batch that recorded a bounce of this enrollment's send commits. */
export const bounceSignal = defineSignal('bounce');
/** `reschedule-planned` moved the action earlier: its timer would otherwise wake at the old time. */
export const rescheduledSignal = defineSignal<[{ actionId: string; dueAt: string }]>('rescheduled');
export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const skipSignal = defineSignal<[ActionSignal?]>('skip');
export const approveSignal = defineSignal<[ActionSignal?]>('approve');
export const unenrollSignal = defineSignal('unenroll');
/** The campaign was resumed: a held enrollment reads the campaign's status again now (an enrollment's own pause stays). */
export const campaignResumedSignal = defineSignal('campaign_resumed');
/** The campaign was paused, completed or archived: an enrollment waiting on a timer runs the gate now (its waiting reason turns true at once). */
export const campaignPausedSignal = defineSignal('campaign_paused');
export const campaignStoppedSignal = defineSignal('campaign_stopped');
export const stateQuery = defineQuery<EnrollmentState>('state');

export async function enrollment(input: EnrollmentInput): Promise<{ status: string; stop_reason: string | null }> {
  const { enrollmentId } = input;
  const isLocal = patched('enrollment-local-activities');
  const acts = isLocal ? local : remote;
  const sender = isLocal ? localSender : remoteSender;
  // Since `enrollment-fused-steps`, what always runs back to back is one local activity: the next
  // step with a send step's plan (or, at the end, the finish), and, when no review applies, the gate,
  // the slot request and the send. A one-step enrollment is three local activities instead of seven.
  const fused = isLocal && patched('enrollment-fused-steps');
  const c: EnrollmentCarry = input.carry ?? {
    version: input.version,
    lastStepId: null,
    lastIndex: -1,
    notBefore: null,
    previousActionId: null,
    paused: false,
    replyPending: false,
    stepsRun: 0,
  };
  let startAtStepId = input.carry ? null : (input.startAtStepId ?? null);
  let unenrolled = false;
  let replied = false;
  let nudge = false;
  /** The campaign changed (paused, completed, archived): the gate runs before any further wait. */
  let gateDue = false;
  /** The action of the step being run, kept when the step is tried again after a halt (one row per step). */
  let stepAction: { stepId: string; actionId: string } | null = null;
  const skipped = new Set<string>();
  const approved = new Set<string>();
  const st: EnrollmentState = {
    status: 'running',
    version: c.version,
    step_id: null,
    step_index: null,
    step_type: null,
    action_id: null,
    reason: null,
    until: null,
    replied: false,
    finished: null,
  };

  setHandler(replySignal, () => void (c.replyPending = true));
  setHandler(bounceSignal, () => void (c.bouncePending = true));
  // Only the current action's move counts (an older one's is stale); a later signal replaces it.
  let moved: { actionId: string; dueAt: string } | null = null;
  setHandler(rescheduledSignal, (s) => void (s.actionId === st.action_id && (moved = s)));
  setHandler(pauseSignal, () => void (c.paused = true));
  setHandler(resumeSignal, () => {
    c.paused = false;
    nudge = true;
  });
  setHandler(skipSignal, (s) => void skipped.add(s?.actionId ?? st.action_id ?? ''));
  setHandler(approveSignal, (s) => void approved.add(s?.actionId ?? st.action_id ?? ''));
  setHandler(unenrollSignal, () => void (unenrolled = true));
  setHandler(campaignResumedSignal, () => void (nudge = true));
  setHandler(campaignPausedSignal, () => void (gateDue = true));
  setHandler(campaignStoppedSignal, () => void (gateDue = true));
  setHandler(stateQuery, () => ({
    ...st,
    status: st.finished ? 'finished' : c.paused ? 'paused' : 'running',
    replied,
  }));

  const current = () => st.action_id;
  const skippedNow = () => !!current() && skipped.has(current()!);
  const movedNow = () => moved !== null && moved.actionId === current();
  const interrupted = () => unenrolled || c.replyPending || c.bouncePending === true || c.paused || skippedNow();
  const wait = (reason: WaitingReason | null, until: Date | null) => {
    st.reason = reason;
    st.until = until ? until.toISOString() : null;
  };

  const finish = async (status: string, stopReason: string | null) => {
    await acts.executorFinish(enrollmentId, status, stopReason);
    wait(null, null);
    st.finished = { status, stop_reason: stopReason };
    return st.finished;
  };

  /** Ends the enrollment as the send-time rule said. */
  const stopWith = async (stop: { status: string; reason: string }) => {
    if (stop.status === 'replied') replied = true;
    await finish(stop.status, stop.reason);
  };

  /** Handles what arrived before the next send: true when the enrollment has ended. */
  const checkpoint = async (): Promise<boolean> => {
    if (unenrolled) {
      await finish('removed', 'unenrolled');
      return true;
    }
    // The bounce is already recorded (the signal follows its commit): nothing more goes to this
    // address, so the enrollment ends now instead of at its next send's gate.
    if (c.bouncePending) {
      await finish('stopped', 'bounced');
      return true;
    }
    if (c.replyPending) {
      c.replyPending = false;
      replied = true;
      if (await acts.executorRecordReply(enrollmentId)) {
        await finish('replied', 'replied');
        return true;
      }
    }
    if (c.paused) {
      const before = { reason: st.reason, until: st.until };
      await acts.executorSetPaused(enrollmentId, true);
      wait('paused', null);
      for (;;) {
        await condition(() => !c.paused || unenrolled || c.replyPending || c.bouncePending === true || gateDue);
        if (!gateDue || !c.paused) break;
        // The campaign changed while this enrollment was paused on its own: a completed or archived one ends it.
        gateDue = false;
        const s = await acts.executorStanding(enrollmentId);
        if (s.campaignStatus !== 'active' && s.campaignStatus !== 'paused') {
          await finish('stopped', `campaign_${s.campaignStatus}`);
          return true;
        }
      }
      await acts.executorSetPaused(enrollmentId, false, before.reason);
      st.reason = before.reason;
      st.until = before.until;
      return checkpoint();
    }
    return false;
  };

  /** Sleeps on a durable timer until `until`, handling signals meanwhile: 'due', 'stop' (ended) or 'skip' (the current action). */
  const sleepUntil = async (until: Date, reason: WaitingReason, dueNow = false): Promise<'due' | 'stop' | 'skip'> => {
    for (;;) {
      // A re-plan's new time (the slot request still checks the row, so waking early is harmless).
      if (movedNow()) {
        until = new Date(moved!.dueAt);
        moved = null;
      }
      wait(reason, until);
      if (await checkpoint()) return 'stop';
      if (skippedNow()) return 'skip';
      if (gateDue) {
        // The campaign changed while this waited: the gate now, so a pause shows (and holds) at once.
        gateDue = false;
        const actionId = current();
        if (actionId) {
          const h = await campaignGate(actionId);
          if (h !== 'go') return h === 'next' ? 'skip' : 'stop';
          if (h === 'go' && until.getTime() > Date.now()) await acts.executorSetWaitingReason(actionId, reason);
          continue;
        }
      }
      const ms = until.getTime() - Date.now();
      if (ms <= 0 || dueNow) return 'due';
      await condition(() => interrupted() || movedNow() || gateDue, ms);
    }
  };

  /**
   * The campaign gate (the send-time rule, domain/enrollments/send-rule.ts, read without locks): 'go', 'next'
   * when the action was skipped, 'stop' when the enrollment ended. A paused campaign holds the
   * enrollment here, in place, until `campaign_resumed` (or `resume`) or the periodic recheck.
   */
  const campaignGate = async (actionId: string): Promise<'go' | 'next' | 'stop'> => {
    for (;;) {
      if (await checkpoint()) return 'stop';
      if (skippedNow()) return 'next';
      wait(null, null);
      const judged = await judgeGate(await acts.executorGate(actionId));
      if (judged !== 'held') return judged;
      wait('campaign_paused', null);
      // Cleared before the activity: a campaign_resumed arriving while it runs must not be lost.
      nudge = false;
      gateDue = false;
      await acts.executorSetWaitingReason(actionId, 'campaign_paused');
      // gateDue: completed or archived while held here ends the enrollment now, not at the recheck.
      await condition(() => nudge || gateDue || interrupted(), CAMPAIGN_RECHECK_MS);
      gateDue = false;
    }
  };

  /** The gate's answer: 'go', 'next' (skipped), 'stop' (the enrollment ended) or 'held' (the campaign is paused). */
  const judgeGate = async (g: GateResult): Promise<'go' | 'next' | 'stop' | 'held'> => {
    if (g.actionState === 'skipped') return 'next';
    if (g.verdict) {
      if ('stop' in g.verdict) {
        await stopWith(g.verdict.stop);
        return 'stop';
      }
      if (g.actionState === 'canceled') {
        await finish('removed', 'unenrolled');
        return 'stop';
      }
      if (!('hold' in g.verdict) || g.verdict.hold !== 'campaign_paused') return 'go';
    } else {
      // Histories from before the send-time rule read the gate's fields.
      if (g.actionState === 'canceled' || g.enrollmentStatus === 'removed') {
        await finish('removed', 'unenrolled');
        return 'stop';
      }
      if (g.unsubscribed === true) {
        await finish('stopped', 'unsubscribed');
        return 'stop';
      }
      if (g.bounced === true) {
        await finish('stopped', 'bounced');
        return 'stop';
      }
      if (g.replied === true && g.stopOnReply) {
        replied = true;
        await finish('replied', 'replied');
        return 'stop';
      }
      if (g.campaignStatus === 'active') return 'go';
      if (g.campaignStatus !== 'paused') {
        await finish('stopped', `campaign_${g.campaignStatus}`);
        return 'stop';
      }
    }
    return 'held';
  };

  /** One send step: 'next' to go on, 'stop' when the enrollment ended. `planned`: the plan made with the next step (fused). */
  const runSend = async (step: StepRef, planned?: PlanResult): Promise<'next' | 'stop'> => {
    // A step tried again after a halt keeps its action (the plan finds the row it wrote).
    const actionId = planned ? planned.actionId : stepAction?.stepId === step.id ? stepAction.actionId : uuid4();
    stepAction = { stepId: step.id, actionId };
    st.action_id = actionId;
    const plan =
      planned ??
      (await acts.executorPlanAction({
        enrollmentId,
        actionId,
        stepId: step.id,
        version: c.version,
        index: step.index,
        notBefore: c.notBefore,
      }));
    c.notBefore = null;
    c.previousActionId = actionId;
    if (plan.failed) {
      await finish('failed', plan.failed);
      return 'stop';
    }
    // An AI-written step: its draft now (the review queue shows it ahead of the due time); the policy
    // says whether a person reviews it, and a failed draft always waits for one.
    let review = plan.review;
    let deadlineMs = input.reviewDeadlineMs ?? REVIEW_DEADLINE_MS;
    if (plan.ai === true) {
      const d = await acts.executorWriteDraft(actionId);
      review = d.review;
      deadlineMs = input.reviewDeadlineMs ?? d.deadlineMs;
    }
    const slept = await sleepUntil(new Date(plan.dueAt), plan.reason, plan.dueNow === true);
    if (slept !== 'due') return slept === 'skip' ? 'next' : 'stop';

    // Fused (no review): the gate, the slot request and the send in one activity; what it did not
    // finish (a hold, a refusal, a held claim) goes on below as it would have.
    let pre: { slot: SlotResult; send?: SendOutcome } | null = null;
    if (fused && !review) {
      if (await checkpoint()) return 'stop';
      if (skippedNow()) return 'next';
      wait(null, null);
      const r = await sender.executorGateSlotSend(actionId);
      if (r.slot) pre = { slot: r.slot, send: r.send };
      else {
        const judged = await judgeGate(r.gate);
        if (judged === 'held') {
          // The campaign is paused: held here, in place, as the gate does.
          const gated = await campaignGate(actionId);
          if (gated !== 'go') return gated;
        } else if (judged !== 'go') return judged;
      }
    } else {
      // The campaign: paused campaigns hold their enrollments here, in place.
      const gated = await campaignGate(actionId);
      if (gated !== 'go') return gated;
    }

    if (review) {
      wait(null, null);
      let state = await acts.executorRequestReview(actionId);
      const deadline = Date.now() + deadlineMs;
      let held = false;
      while (state === 'awaiting_approval') {
        wait(held ? 'review_held' : 'awaiting_review', held ? null : new Date(deadline));
        let woke = true;
        if (held) await condition(() => approved.has(actionId) || interrupted() || gateDue);
        else {
          const left = deadline - Date.now();
          woke = left > 0 && (await condition(() => approved.has(actionId) || interrupted() || gateDue, left));
        }
        if (woke && gateDue) {
          // The campaign changed during the review: completed or archived ends it; a pause lets the
          // review go on (the slot request holds the send after the decision).
          gateDue = false;
          const g = await acts.executorGate(actionId);
          if (g.verdict && 'stop' in g.verdict) {
            await stopWith(g.verdict.stop);
            return 'stop';
          }
          if (!approved.has(actionId) && !interrupted()) continue;
        }
        if (!woke && plan.ai === true) {
          // A draft's deadline follows the policy as it is now: hold (wait for a person, without a
          // deadline; notified once) or skip the action and go on.
          const r = await acts.executorDraftDeadline(actionId);
          if (r === 'held' || r === 'awaiting_approval') {
            held = true;
            state = 'awaiting_approval';
            continue;
          }
          if (r === 'skipped') return 'next';
          state = r;
          if (state !== 'awaiting_approval') break;
          continue;
        }
        if (!woke) {
          // Other reviews end the enrollment at their deadline.
          state = await acts.executorExpireReview(actionId);
          if (state === 'canceled') {
            await finish('stopped', 'review_expired');
            return 'stop';
          }
          break;
        }
        if (await checkpoint()) return 'stop';
        if (skippedNow()) return 'next';
        if (approved.has(actionId)) state = (await acts.executorGate(actionId)).actionState;
      }
      if (state === 'skipped') return 'next';
    }

    // The governor, at execution time: ask, and when refused sleep until the time it names. The slot
    // request and the send's claim apply the send-time rule again after every wait; a claim that the
    // rule holds gives the slot back and asks again.
    for (let held = 0; ; held++) {
      let grantedAt: string;
      let out: SendOutcome | undefined;
      for (;;) {
        let slot: SlotResult;
        if (pre) {
          // The fused activity's answer (and its send, when it granted).
          slot = pre.slot;
          out = pre.send;
          pre = null;
        } else {
          if (await checkpoint()) return 'stop';
          if (skippedNow()) return 'next';
          wait(null, null);
          slot = await acts.executorAcquireSlot(actionId);
        }
        if ('gone' in slot) {
          if (slot.gone === 'skipped' || slot.gone === 'executed') return 'next';
          await finish(
            slot.gone === 'canceled' ? 'removed' : 'failed',
            slot.gone === 'canceled' ? 'unenrolled' : slot.gone,
          );
          return 'stop';
        }
        if ('stop' in slot) {
          await stopWith(slot.stop);
          return 'stop';
        }
        if (slot.granted) {
          grantedAt = slot.grantedAt;
          // Sent already by the fused activity (its claim applied the send-time rule).
          if (out) break;
          // A signal that arrived meanwhile: the slot goes back unused, and the loop's checkpoint acts on
          // it (a reply that does not stop the enrollment asks for a slot again).
          if (isLocal && (unenrolled || c.replyPending || skippedNow())) {
            await acts.executorGiveBackSlot(actionId, grantedAt);
            continue;
          }
          break;
        }
        if (slot.reason === 'campaign_paused') {
          const h = await campaignGate(actionId);
          if (h !== 'go') return h;
          continue;
        }
        if (slot.reason === 'paused') {
          // The row says paused but no pause signal is pending here: wait for one, bounded.
          wait('paused', null);
          await condition(() => interrupted() || nudge, CAMPAIGN_RECHECK_MS);
          continue;
        }
        const until = slot.retryAt ? new Date(slot.retryAt) : new Date(Date.now() + NO_RETRY_TIME_MS);
        const r = await sleepUntil(until, slot.reason);
        if (r !== 'due') return r === 'skip' ? 'next' : 'stop';
      }

      // Histories from before the local activities: a reply or a removal that arrived while the slot was
      // granted gives the slot back (and, when it did not stop the enrollment, sent anyway).
      if (!isLocal && (unenrolled || c.replyPending || skippedNow())) {
        await acts.executorGiveBackSlot(actionId, grantedAt);
        if (await checkpoint()) return 'stop';
        if (skippedNow()) return 'next';
      }
      if (!out) {
        wait(null, null);
        out = await sender.executorSend(actionId, grantedAt);
      }
      if (out.outcome === 'held') {
        // The claim's rule held it (a pause or a disconnect that committed after the slot was granted).
        // Ask again; should the slot request keep granting what the claim holds, back off a minute.
        if (held >= 2) {
          const r = await sleepUntil(new Date(Date.now() + 60_000), out.reason);
          if (r !== 'due') return r === 'skip' ? 'next' : 'stop';
        }
        continue;
      }
      if (out.outcome === 'failed') {
        await finish('failed', out.errorCode ?? 'send_failed');
        return 'stop';
      }
      if (out.outcome === 'canceled') {
        if (out.status) await stopWith({ status: out.status, reason: out.stopReason ?? out.errorCode ?? out.status });
        // Histories from before the send-time rule: only a bounce recorded after the gate had a code.
        else if (out.errorCode === 'bounced') await finish('stopped', 'bounced');
        else await finish('removed', 'unenrolled');
        return 'stop';
      }
      return 'next';
    }
  };

  /**
   * A failing activity was halted between attempts (a stop committed meanwhile): the enrollment
   * holds while its campaign is paused, ends when it or the campaign ended, or tries the step again.
   */
  const standAfterHalt = async (): Promise<'retry' | 'stop'> => {
    for (;;) {
      if (await checkpoint()) return 'stop';
      wait(null, null);
      const s = await acts.executorStanding(enrollmentId);
      if (s.enrollmentStatus !== 'active' && s.enrollmentStatus !== 'paused') {
        await finish(s.enrollmentStatus, s.stopReason);
        return 'stop';
      }
      if (s.campaignStatus === 'active') return 'retry';
      if (s.campaignStatus !== 'paused') {
        await finish('stopped', `campaign_${s.campaignStatus}`);
        return 'stop';
      }
      wait('campaign_paused', null);
      nudge = false;
      gateDue = false;
      await condition(() => nudge || gateDue || interrupted(), CAMPAIGN_RECHECK_MS);
    }
  };

  for (;;) {
    if (await checkpoint()) return st.finished!;
    let step: StepRef | null;
    try {
      wait(null, null);
      const ref = { enrollmentId, version: c.version, lastStepId: c.lastStepId, lastIndex: c.lastIndex, startAtStepId };
      const next: { version: number; step: StepRef | null; plan?: PlanResult; finished?: boolean } = fused
        ? await acts.executorNextAndPlan({
            ...ref,
            plan: { actionId: uuid4(), reuse: stepAction, notBefore: c.notBefore },
            finishWhenDone: true,
          })
        : await acts.executorNextStep(ref);
      step = next.step;
      c.version = next.version;
      st.version = next.version;
      st.step_id = step?.id ?? null;
      st.step_index = step?.index ?? null;
      st.step_type = step?.type ?? null;
      st.action_id = null;
      if (!step) {
        if (!next.finished) return await finish('completed', null);
        // Finished in the same activity (fused).
        wait(null, null);
        st.finished = { status: 'completed', stop_reason: null };
        return st.finished;
      }

      if (step.type === 'wait') {
        const from =
          c.notBefore && new Date(c.notBefore).getTime() > Date.now()
            ? c.notBefore
            : new Date(Date.now()).toISOString();
        c.notBefore = await acts.executorWaitEnd({ enrollmentId, config: step.config ?? {}, from });
      } else if (step.type === 'condition') {
        if (c.notBefore) {
          const r = await sleepUntil(new Date(c.notBefore), 'waiting_step_delay');
          if (r === 'stop') return st.finished!;
          c.notBefore = null;
        }
        wait(null, null);
        if (!(await acts.executorCheckCondition(enrollmentId, c.previousActionId, step.config ?? {})))
          return await finish('completed', 'condition_not_met');
      } else {
        if ((await runSend(step, next.plan)) === 'stop') return st.finished!;
      }
    } catch (err) {
      const failure = activityFailure(err);
      if (!failure) throw err;
      if (failure.halted) {
        // The same step comes again (from lastStepId, or startAtStepId when none finished yet).
        if ((await standAfterHalt()) === 'stop') return st.finished!;
        continue;
      }
      // Retrying cannot fix it, or the retry budget is spent: the enrollment ends `failed`, told once.
      const out = await acts.executorFail(enrollmentId, st.action_id, failure.code, failure.message);
      wait(null, null);
      st.finished = { status: out.status, stop_reason: out.stop_reason };
      return st.finished;
    }

    stepAction = null;
    startAtStepId = null;
    c.lastStepId = step.id;
    c.lastIndex = step.index;
    c.stepsRun++;
    if (c.stepsRun % STEPS_PER_RUN === 0 || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof enrollment>({ ...input, startAtStepId: null, carry: c });
    }
  }
}

/** An activity's failure as the enrollment's error code: `halted` (a stop between attempts), the permanent error's type, or retries spent. */
function activityFailure(err: unknown): { code: string; message: string; halted: boolean } | null {
  // A local activity's failure arrives as its cause itself (no ActivityFailure around it).
  if (!(err instanceof ActivityFailure) && !(err instanceof ApplicationFailure) && !(err instanceof TimeoutFailure))
    return null;
  const cause = err instanceof ActivityFailure ? err.cause : err;
  // 'halted' is HALTED in activities/enrollments.ts (a workflow imports no activity code).
  if (cause instanceof ApplicationFailure && cause.type === 'halted')
    return { code: 'halted', message: cause.message, halted: true };
  if (cause instanceof ApplicationFailure && cause.nonRetryable && cause.type)
    return { code: cause.type.slice(0, 60), message: cause.message, halted: false };
  if (cause instanceof TimeoutFailure) return { code: 'timed_out', message: cause.message, halted: false };
  return { code: 'retries_exhausted', message: cause?.message ?? err.message, halted: false };
}

/** Started in batches (jobs/temporal.ts `startEnrollments`); a closed run's id may start again (re-enrollment). */
export const enrollmentJob = defineJob('enrollment', {
  workflow: enrollment,
  id: (k) => enrollmentWorkflowIds.enrollment(k.campaignId, k.leadId),
  args: (s) => [
    {
      enrollmentId: s.enrollmentId,
      campaignId: s.campaignId,
      leadId: s.leadId,
      version: s.version,
      startAtStepId: s.startAtStepId ?? null,
    },
  ],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => ({ enrollment_id: s.enrollmentId, run: s.run }),
  repeat: 'join',
  signals: {
    reply: replySignal,
    bounce: bounceSignal,
    rescheduled: rescheduledSignal,
    pause: pauseSignal,
    resume: resumeSignal,
    skip: skipSignal,
    approve: approveSignal,
    unenroll: unenrollSignal,
    campaign_resumed: campaignResumedSignal,
    campaign_paused: campaignPausedSignal,
    campaign_stopped: campaignStoppedSignal,
  },
});
