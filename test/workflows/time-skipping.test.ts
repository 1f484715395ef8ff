// The workflows' long waits under Temporal's time-skipping test server (issue 41): days of step delay,
// an out-of-office hold until the contact is back, the 7-day review deadline and the mailbox sync's
// standing checks pass in seconds of wall time. The server is the Java SDK's test server from Maven Central
// (scripts/stack/time-skipping-server.ts), started by `TestWorkflowEnvironment.createTimeSkipping()`.
//
// The workflows are the project's (workflows/index.ts, bundled as workers/worker.ts does from source);
// their activities are stubs that answer as the domain would and record each call with the server's
// clock at that moment (`env.currentTimeMs()`: the time the workflow sees, skipped days included). The
// real activities would read PostgreSQL's `now()` and the process clock, which time skipping does not
// move; their behaviour is the subject of executor.test.ts, mailbox-sync.test.ts and the domain tests.
// What is asserted here is the workflows' timing: which activity runs, with what, in which order, and
// at what (skipped) time.
import test from 'ava';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { EnrollmentActivities } from '../../activities/enrollments.js';
import type { MailboxActivities } from '../../activities/mailbox.js';
import {
  waitEnd,
  type GateResult,
  type NextAndPlanInput,
  type PlanResult,
  type SendOutcome,
  type SlotResult,
  type StepRef,
} from '../../domain/enrollments/executor.js';
import {
  ensureTimeSkippingServer,
  TimeSkippingServerUnavailable,
  timeSkippingServerLog,
} from '../../scripts/stack/time-skipping-server.js';
import {
  approveSignal,
  enrollment,
  stateQuery,
  type EnrollmentInput,
  type EnrollmentState,
} from '../../workflows/enrollments.js';
import { mailboxSync } from '../../workflows/mailbox.js';
import { waitFor } from '../../scripts/children.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** How far after its due time a wake-up may be seen: the real time the worker and the stubs take. */
const SLACK_MS = 15_000;
const taskQueue = `time-skipping-${process.pid}`;
/**
 * The worker's workflows: workers/worker.ts' `workflowsPath` from source, resolved here rather than
 * imported (that module loads every activity and provider, which this file does not run).
 */
const workflowsPath = createRequire(import.meta.url).resolve('../../workflows/index.ts');

// No java, or Maven Central out of reach: every test is skipped, saying why. A jar that does not verify,
// or a server that does not start, fails.
const launcher = await ensureTimeSkippingServer((msg) => console.error(`[time-skipping] ${msg}`)).catch(
  (err: unknown) => {
    if (!(err instanceof TimeSkippingServerUnavailable)) throw err;
    console.error(`[time-skipping] SKIPPED: the time-skipping test server is not available: ${err.message}`);
    return null;
  },
);
const serial = launcher ? test.serial : test.serial.skip;

/** The environment of every test but the last (which has its own), and the clock the stubs read. */
let env: TestWorkflowEnvironment;

// ---------------------------------------------------------------------------------------------------
// The activities' stand-ins: one script per enrollment (or mailbox account), every call recorded.

interface Call {
  name: string;
  args: unknown[];
  /** The server's time when the activity ran: the workflow's clock. */
  at: number;
}

interface EnrollmentScript {
  steps: StepRef[];
  review?: boolean;
  /** The sending window's next opening at or after `at` (default: open now). */
  window?: (at: number) => number;
  /** The fused gate + slot + send (no review); default: go, granted, sent. */
  gateSlotSend?: (at: number) => { gate: GateResult; slot?: SlotResult; send?: SendOutcome };
  /** The governor's answer to a slot request; default: granted. */
  acquireSlot?: (at: number) => SlotResult;
  gate?: (at: number) => GateResult;
  expireReview?: () => string;
  calls: Call[];
}

const enrollments = new Map<string, EnrollmentScript>();
/** Action ids (minted by the workflow) → enrollment id. */
const actions = new Map<string, string>();

const iso = (ms: number) => new Date(ms).toISOString();

function goGate(actionState = 'planned'): GateResult {
  return {
    campaignStatus: 'active',
    actionState,
    stopOnReply: true,
    enrollmentStatus: 'active',
    unsubscribed: false,
    replied: false,
    bounced: false,
    verdict: { send: true },
    slotGrantedAt: null,
  };
}

/** Records the call on its enrollment's script (by enrollment id, or by the action id the plan minted). */
async function record(name: string, key: string, args: unknown[]): Promise<{ s: EnrollmentScript; at: number }> {
  const s = enrollments.get(key) ?? enrollments.get(actions.get(key) ?? '');
  if (!s) throw ApplicationFailure.nonRetryable(`${name}: no script for ${key}`, 'no_script');
  const at = await env.currentTimeMs();
  s.calls.push({ name, args, at });
  return { s, at };
}

/** An activity no scenario expects: recorded, then failed for good (the enrollment ends `failed` with this code). */
const unexpected =
  (name: string) =>
  async (key: string | { enrollmentId: string }, ...rest: unknown[]): Promise<never> => {
    await record(name, typeof key === 'string' ? key : key.enrollmentId, [key, ...rest]);
    throw ApplicationFailure.nonRetryable(`${name} was not expected`, 'unexpected_activity');
  };

const enrollmentStubs = {
  async executorNextAndPlan(input: NextAndPlanInput) {
    const { s, at } = await record('executorNextAndPlan', input.enrollmentId, [input]);
    const step = s.steps[input.lastIndex + 1] ?? null;
    if (!step) return { version: 1, step: null, finished: true };
    if (step.type === 'wait' || !input.plan) return { version: 1, step };
    const { actionId } = input.plan;
    actions.set(actionId, input.enrollmentId);
    // As planAction: due at the window's next opening at or after the end of preceding waits.
    const notBefore = input.plan.notBefore ? new Date(input.plan.notBefore).getTime() : null;
    const from = notBefore !== null && notBefore > at ? notBefore : at;
    const due = s.window?.(from) ?? from;
    const plan: PlanResult = {
      actionId,
      dueAt: iso(due),
      reason: due > from || notBefore === null ? 'waiting_for_window' : 'waiting_step_delay',
      review: s.review === true,
      ...(due <= at ? { dueNow: true } : {}),
    };
    return { version: 1, step, plan };
  },
  // The domain's own wait arithmetic (pure), in UTC.
  async executorWaitEnd(input: { enrollmentId: string; config: Record<string, unknown>; from: string }) {
    await record('executorWaitEnd', input.enrollmentId, [input]);
    return waitEnd(input.config, 'UTC', new Date(input.from)).toISOString();
  },
  async executorGateSlotSend(actionId: string) {
    const { s, at } = await record('executorGateSlotSend', actionId, [actionId]);
    return (
      s.gateSlotSend?.(at) ?? {
        gate: goGate(),
        slot: { granted: true as const, grantedAt: iso(at) },
        send: { outcome: 'executed' as const },
      }
    );
  },
  async executorGate(actionId: string) {
    const { s, at } = await record('executorGate', actionId, [actionId]);
    return s.gate?.(at) ?? goGate();
  },
  async executorRequestReview(actionId: string) {
    await record('executorRequestReview', actionId, [actionId]);
    return 'awaiting_approval';
  },
  async executorExpireReview(actionId: string) {
    const { s } = await record('executorExpireReview', actionId, [actionId]);
    return s.expireReview?.() ?? 'canceled';
  },
  async executorAcquireSlot(actionId: string): Promise<SlotResult> {
    const { s, at } = await record('executorAcquireSlot', actionId, [actionId]);
    return s.acquireSlot?.(at) ?? { granted: true, grantedAt: iso(at) };
  },
  async executorSend(actionId: string, grantedAt: string): Promise<SendOutcome> {
    await record('executorSend', actionId, [actionId, grantedAt]);
    return { outcome: 'executed' };
  },
  async executorSetWaitingReason(actionId: string, reason: string | null) {
    await record('executorSetWaitingReason', actionId, [actionId, reason]);
  },
  async executorFinish(enrollmentId: string, status: string, stopReason: string | null) {
    await record('executorFinish', enrollmentId, [enrollmentId, status, stopReason]);
  },
  async executorFail(enrollmentId: string, actionId: string | null, code: string, message: string) {
    await record('executorFail', enrollmentId, [enrollmentId, actionId, code, message]);
    return { status: 'failed', stop_reason: code };
  },
  executorWriteDraft: unexpected('executorWriteDraft'),
  executorDraftDeadline: unexpected('executorDraftDeadline'),
  executorNextStep: unexpected('executorNextStep'),
  executorPlanAction: unexpected('executorPlanAction'),
  executorGiveBackSlot: unexpected('executorGiveBackSlot'),
  executorCheckCondition: unexpected('executorCheckCondition'),
  executorRecordReply: unexpected('executorRecordReply'),
  executorSetPaused: unexpected('executorSetPaused'),
  executorStanding: unexpected('executorStanding'),
} satisfies EnrollmentActivities;

interface MailboxScript {
  /** Standing check `n` (1-based, counted over retries and runs): throw to fail the attempt. */
  check: (n: number) => { follow: true } | { follow: false; reason: string };
  checks: { at: number; attempt: number; runId: string }[];
}
const mailboxes = new Map<string, MailboxScript>();

const mailboxStubs = {
  async mailboxStanding(accountId: string) {
    const s = mailboxes.get(accountId);
    if (!s) throw ApplicationFailure.nonRetryable(`no script for ${accountId}`, 'no_script');
    const { info } = Context.current();
    s.checks.push({ at: await env.currentTimeMs(), attempt: info.attempt, runId: info.workflowExecution?.runId ?? '' });
    return s.check(s.checks.length);
  },
  // Runs from before the session service only (their histories schedule it); never called by a new run.
  async mailboxFollow(): Promise<{ continue: false; reason: 'moved' }> {
    throw ApplicationFailure.nonRetryable('a new run must not follow the mailbox in an activity', 'unexpected');
  },
} satisfies MailboxActivities;

// ---------------------------------------------------------------------------------------------------

interface Stack {
  env: TestWorkflowEnvironment;
  worker: Worker;
  running: Promise<void>;
}
const stacks = new Set<Stack>();
let bundle: WorkflowBundleWithSourceMap;

/** A test server (its own JVM) and a worker of the project's workflows with the stubs, on it. */
async function startStack(): Promise<Stack> {
  const testEnv = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: launcher! } },
  });
  try {
    const worker = await Worker.create({
      connection: testEnv.nativeConnection,
      taskQueue,
      workflowBundle: bundle,
      activities: { ...enrollmentStubs, ...mailboxStubs },
    });
    const stack = { env: testEnv, worker, running: worker.run() };
    stacks.add(stack);
    return stack;
  } catch (err) {
    await testEnv.teardown();
    throw err;
  }
}

async function stopStack(stack: Stack): Promise<void> {
  stacks.delete(stack);
  stack.worker.shutdown();
  await stack.running.catch(() => undefined);
  // Stops the test server's JVM (the SDK kills the process it started).
  await stack.env.teardown();
}

test.before(async () => {
  if (!launcher) return;
  // Errors only: each failed attempt of the backoff test would be a warning, and the worker core warns
  // that the test server does not advertise a capability of recent servers (heartbeat details on failure).
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }) } },
  });
  // The project's workflows, bundled once for every worker here.
  bundle = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('ERROR') });
  env = (await startStack()).env;
});

test.after.always(async () => {
  for (const stack of [...stacks]) await stopStack(stack);
});

test.afterEach.always((t) => {
  if (!t.passed && launcher) t.log(`test server log: ${timeSkippingServerLog}`);
});

function startEnrollment(script: Omit<EnrollmentScript, 'calls'>, extra: Partial<EnrollmentInput> = {}) {
  const enrollmentId = randomUUID();
  const s: EnrollmentScript = { ...script, calls: [] };
  enrollments.set(enrollmentId, s);
  const input: EnrollmentInput = {
    enrollmentId,
    campaignId: randomUUID(),
    leadId: randomUUID(),
    version: 1,
    ...extra,
  };
  return env.client.workflow
    .start(enrollment, { taskQueue, workflowId: `enrollment:${input.campaignId}:${input.leadId}`, args: [input] })
    .then((handle) => ({ handle, s, enrollmentId }));
}

/** Polls the `state` query (real time: nothing is skipped outside `result()` and `env.sleep`). */
async function stateWhen(
  handle: WorkflowHandle,
  ok: (st: EnrollmentState) => boolean,
  timeoutMs = 20_000,
): Promise<EnrollmentState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const st = await handle.query(stateQuery);
    if (ok(st)) return st;
    if (Date.now() > deadline) throw new Error(`state never matched; last: ${JSON.stringify(st)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const names = (s: { calls: Call[] }) => s.calls.map((c) => c.name);
const only = (s: { calls: Call[] }, name: string) => {
  const found = s.calls.filter((c) => c.name === name);
  if (found.length !== 1) throw new Error(`${name} ran ${found.length} times: ${names(s).join(', ')}`);
  return found[0]!;
};

serial(
  'a step delay of three days: the send runs when the wait ends, not before, in seconds of wall time',
  async (t) => {
    const wall = Date.now();
    const { handle, s } = await startEnrollment({
      steps: [
        { id: 'wait-72h', type: 'wait', index: 0, config: { amount: 72, unit: 'hours' } },
        { id: 'email-1', type: 'email', index: 1, config: {} },
      ],
    });
    const st = await stateWhen(handle, (x) => x.reason === 'waiting_step_delay');
    const waitEndCall = only(s, 'executorWaitEnd');
    // The wait is counted from the workflow's clock when it reached the step.
    const from = new Date((waitEndCall.args[0] as { from: string }).from).getTime();
    t.true(
      Math.abs(from - waitEndCall.at) < SLACK_MS,
      `wait counted from ${iso(from)}, the step ran at ${iso(waitEndCall.at)}`,
    );
    const due = from + 72 * HOUR;
    t.is(st.until, iso(due));
    t.is(st.step_type, 'email');
    t.deepEqual(names(s), ['executorNextAndPlan', 'executorWaitEnd', 'executorNextAndPlan']);
    const plannedWith = s.calls[2]!.args[0] as NextAndPlanInput;
    t.is(plannedWith.lastStepId, 'wait-72h');
    t.is(plannedWith.plan?.notBefore, iso(due), "the wait's end is the send's not-before");

    // Two of the three days pass: still waiting, nothing sent.
    await env.sleep(48 * HOUR);
    t.deepEqual(names(s), ['executorNextAndPlan', 'executorWaitEnd', 'executorNextAndPlan']);
    t.is((await handle.query(stateQuery)).reason, 'waiting_step_delay');

    // Awaiting the result skips the rest of the wait.
    t.deepEqual(await handle.result(), { status: 'completed', stop_reason: null });
    t.deepEqual(names(s), [
      'executorNextAndPlan',
      'executorWaitEnd',
      'executorNextAndPlan',
      'executorGateSlotSend',
      'executorNextAndPlan',
    ]);
    const send = only(s, 'executorGateSlotSend');
    t.is(send.args[0], plannedWith.plan!.actionId, 'the planned action is the one sent');
    t.true(send.at >= due, `sent at ${iso(send.at)}, due ${iso(due)}`);
    t.true(send.at < due + SLACK_MS, `sent at ${iso(send.at)}, ${send.at - due} ms after it was due`);
    t.true(Date.now() - wall < 20_000, `three days took ${Date.now() - wall} ms of wall time`);
  },
);

serial(
  'a sending window that opens in 2 days, then the daily cap until the next day: the send waits for each in turn',
  async (t) => {
    let opens = 0;
    let capEnds = 0;
    const { handle, s } = await startEnrollment({
      steps: [{ id: 'email-1', type: 'email', index: 0, config: {} }],
      // Planned now: the window opens the day after tomorrow at 09:00 UTC.
      window: (at) => (opens ||= Math.floor(at / DAY) * DAY + 2 * DAY + 9 * HOUR),
      // At the opening, the sender's daily cap is used up until the same time tomorrow.
      gateSlotSend: (at) => {
        capEnds = at + DAY;
        return { gate: goGate(), slot: { granted: false, reason: 'cap_daily', retryAt: iso(capEnds) } };
      },
    });
    const planned = await stateWhen(handle, (x) => x.reason === 'waiting_for_window');
    t.is(planned.until, iso(opens));
    t.deepEqual(names(s), ['executorNextAndPlan']);

    // Past the opening by an hour: the window's wait ended, the governor's began.
    await env.sleep(opens - (await env.currentTimeMs()) + HOUR);
    const capped = await stateWhen(handle, (x) => x.reason === 'cap_daily');
    const asked = only(s, 'executorGateSlotSend');
    t.true(asked.at >= opens && asked.at < opens + SLACK_MS, `asked at ${iso(asked.at)}, opening ${iso(opens)}`);
    t.is(capped.until, iso(capEnds));
    t.deepEqual(names(s), ['executorNextAndPlan', 'executorGateSlotSend']);

    t.deepEqual(await handle.result(), { status: 'completed', stop_reason: null });
    t.deepEqual(names(s), [
      'executorNextAndPlan',
      'executorGateSlotSend',
      'executorAcquireSlot',
      'executorSend',
      'executorNextAndPlan',
    ]);
    const slot = only(s, 'executorAcquireSlot');
    t.true(
      slot.at >= capEnds && slot.at < capEnds + SLACK_MS,
      `slot asked ${slot.at - capEnds} ms after the cap ended`,
    );
  },
);

serial(
  'an out-of-office hold: the slot is asked again at the return time the governor named, and the send follows',
  async (t) => {
    let retryAt = 0;
    const { handle, s } = await startEnrollment({
      steps: [{ id: 'email-1', type: 'email', index: 0, config: {} }],
      gateSlotSend: (at) => {
        // The contact is back in 9 days: held until the day after (UTC midnight), as the send-time rule names it.
        retryAt = Math.floor(at / DAY) * DAY + 10 * DAY;
        return {
          gate: { ...goGate(), verdict: { send: false, hold: 'out_of_office' } },
          slot: { granted: false, reason: 'out_of_office', retryAt: iso(retryAt) },
        };
      },
    });
    const st = await stateWhen(handle, (x) => x.reason === 'out_of_office');
    t.is(st.until, iso(retryAt));
    const held = only(s, 'executorGateSlotSend');
    t.true(retryAt - held.at > 9 * DAY, 'the hold is more than nine days long');

    await env.sleep(5 * DAY);
    t.deepEqual(names(s), ['executorNextAndPlan', 'executorGateSlotSend'], 'nothing asked during the hold');
    t.is((await handle.query(stateQuery)).reason, 'out_of_office');

    t.deepEqual(await handle.result(), { status: 'completed', stop_reason: null });
    t.deepEqual(names(s), [
      'executorNextAndPlan',
      'executorGateSlotSend',
      'executorAcquireSlot',
      'executorSend',
      'executorNextAndPlan',
    ]);
    const slot = only(s, 'executorAcquireSlot');
    t.true(slot.at >= retryAt, `slot asked at ${iso(slot.at)}, hold until ${iso(retryAt)}`);
    t.true(slot.at < retryAt + SLACK_MS, `slot asked ${slot.at - retryAt} ms after the hold ended`);
    const send = only(s, 'executorSend');
    t.deepEqual(send.args, [held.args[0], iso(slot.at)], 'the send uses the grant of that slot request');
  },
);

serial(
  'the review deadline: 7 days after the review was requested, the review expires and the enrollment stops',
  async (t) => {
    const { handle, s } = await startEnrollment({
      steps: [{ id: 'email-1', type: 'email', index: 0, config: {} }],
      review: true,
    });
    const st = await stateWhen(handle, (x) => x.reason === 'awaiting_review');
    const requested = only(s, 'executorRequestReview');
    const deadline = new Date(st.until!).getTime();
    // The workflow's default deadline (no reviewDeadlineMs in the input): 7 days from the request.
    t.true(
      Math.abs(deadline - (requested.at + 7 * DAY)) < SLACK_MS,
      `deadline ${st.until}, requested ${iso(requested.at)}`,
    );
    t.deepEqual(names(s), ['executorNextAndPlan', 'executorGate', 'executorRequestReview']);

    await env.sleep(6 * DAY);
    t.is((await handle.query(stateQuery)).reason, 'awaiting_review', 'still waiting on day 6');
    t.false(names(s).includes('executorExpireReview'));

    t.deepEqual(await handle.result(), { status: 'stopped', stop_reason: 'review_expired' });
    t.deepEqual(names(s), [
      'executorNextAndPlan',
      'executorGate',
      'executorRequestReview',
      'executorExpireReview',
      'executorFinish',
    ]);
    const expired = only(s, 'executorExpireReview');
    t.true(expired.at >= deadline, `expired at ${iso(expired.at)}, deadline ${iso(deadline)}`);
    t.true(expired.at < deadline + SLACK_MS, `expired ${expired.at - deadline} ms after the deadline`);
    t.deepEqual(only(s, 'executorFinish').args.slice(1), ['stopped', 'review_expired']);
  },
);

serial(
  'an approval on day 2 ends the review wait then: the slot and the send follow at once, nothing expires',
  async (t) => {
    const { handle, s } = await startEnrollment({
      steps: [{ id: 'email-1', type: 'email', index: 0, config: {} }],
      review: true,
      // After the approval the route has moved the action to `approved`.
      gate: () => goGate(s.calls.some((c) => c.name === 'executorRequestReview') ? 'approved' : 'planned'),
    });
    await stateWhen(handle, (x) => x.reason === 'awaiting_review');
    const requested = only(s, 'executorRequestReview');
    await env.sleep(2 * DAY);
    const actionId = requested.args[0] as string;
    await handle.signal(approveSignal, { actionId });
    t.deepEqual(await handle.result(), { status: 'completed', stop_reason: null });
    t.deepEqual(names(s), [
      'executorNextAndPlan',
      'executorGate',
      'executorRequestReview',
      'executorGate',
      'executorAcquireSlot',
      'executorSend',
      'executorNextAndPlan',
    ]);
    const slot = only(s, 'executorAcquireSlot');
    const after = slot.at - requested.at;
    t.true(after >= 2 * DAY && after < 2 * DAY + SLACK_MS, `slot asked ${after - 2 * DAY} ms after day 2`);
  },
);

const SIX_HOURS = 6 * 3_600_000;

serial(
  'mailbox sync lifecycle: the account’s standing is read every 6 hours; a disconnect the check finds ends it then',
  async (t) => {
    const wall = Date.now();
    const accountId = randomUUID();
    const s: MailboxScript = {
      checks: [],
      check: (n) => (n <= 4 ? { follow: true } : { follow: false, reason: 'not_connected' }),
    };
    mailboxes.set(accountId, s);
    const handle = await env.client.workflow.start(mailboxSync, {
      taskQueue,
      workflowId: `mailbox-sync:${accountId}`,
      args: [{ accountId, workspaceId: randomUUID() }],
    });
    t.deepEqual(await handle.result(), { ended: 'not_connected' });
    t.is(s.checks.length, 5);
    const gaps = s.checks.slice(1).map((c, i) => c.at - s.checks[i]!.at);
    gaps.forEach((gap, i) =>
      t.true(gap >= SIX_HOURS && gap < SIX_HOURS + SLACK_MS, `check ${i + 2} came ${gap} ms after the one before`),
    );
    t.true(Date.now() - wall < 20_000, `a day of checks took ${Date.now() - wall} ms`);
  },
);

serial('mailbox sync lifecycle: the session service’s `ended` signal ends it at once, with its reason', async (t) => {
  const accountId = randomUUID();
  const s: MailboxScript = { checks: [], check: () => ({ follow: true }) };
  mailboxes.set(accountId, s);
  const handle = await env.client.workflow.start(mailboxSync, {
    taskQueue,
    workflowId: `mailbox-sync:${accountId}`,
    args: [{ accountId, workspaceId: randomUUID() }],
  });
  await waitFor('the first standing check', async () => s.checks.length >= 1);
  await handle.signal('ended', 'credentials_invalid');
  t.deepEqual(await handle.result(), { ended: 'credentials_invalid' });
  // Ended by the signal, not by a check: the one at the start is the only one.
  t.is(s.checks.length, 1, 'no further check');
});

serial('mailbox sync lifecycle: 120 checks per run (30 days), then it continues as new and goes on', async (t) => {
  const accountId = randomUUID();
  const s: MailboxScript = {
    checks: [],
    check: (n) => (n <= 125 ? { follow: true } : { follow: false, reason: 'account_gone' }),
  };
  mailboxes.set(accountId, s);
  const handle = await env.client.workflow.start(mailboxSync, {
    taskQueue,
    workflowId: `mailbox-sync:${accountId}`,
    args: [{ accountId, workspaceId: randomUUID() }],
  });
  t.deepEqual(await handle.result(), { ended: 'account_gone' });
  const runs = [...new Set(s.checks.map((c) => c.runId))];
  t.is(runs.length, 2, 'two runs');
  t.is(s.checks.filter((c) => c.runId === runs[0]).length, 120, 'the first run made 120 checks');
  t.true(
    s.checks.every((c) => c.attempt === 1),
    'every check a first attempt',
  );
});
