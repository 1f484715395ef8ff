// A model-based test of the send-time rule (issue 24, item 2; docs/executor.md): a generated sequence
// of stops and lifts (campaign pause / resume / complete / archive, remove lead, reply, bounce, skip,
// approve, account disconnect / reconnect, enrollment pause / resume, waits), issued at random
// moments against a small live campaign (sandbox network, a sender account with a 1–2 s governor gap,
// real Temporal), through the HTTP API wherever a route exists. After the sequence the run waits until
// every enrollment has settled (finished, or holding on something that does not change by itself) and
// checks, from the database and the sandbox's record of sends:
//
//  1. no action was claimed after a stop that applies to it committed (and was not lifted by then);
//  2. every enrollment is finished with a reason that matches what happened, or running with a true
//     waiting reason (workflow query and stored `waiting_reason`);
//  3. nothing was sent twice, and the connector's sends and the executed actions agree.
//
// Times: a stop counts from when its call returned (it committed before) or, for effects that other
// processes commit (an inbound reply or bounce, an enrollment's pause), from when a read saw it; a lift
// (resume, reconnect) from when it was issued. A send's time is its claim (`scheduled_actions.claimed_at`,
// clock time inside the claim's transaction); a row without it is timed by its slot grant, which comes
// before the claim, so a violation found either way is real. A completed or archived campaign's
// enrollments must end (`stopped`, `campaign_<status>`): one still running there has not settled.
//
// A scenario is a pure function of its seed (fast-check generates it), so a failing seed replays the
// same command sequence (`EXECUTOR_MODEL_SEED=<n>`); the moments are those of a live system, so a replay
// repeats the sequence and its delays, not the exact interleaving.
//
// Used by test/workflows/enrollments-model.test.ts and scripts/soak-executor.ts.
import * as fc from 'fast-check';
import { sandboxDisconnect, sandboxInjectMessage, sandboxReconnect } from '../../lib/connectors/sandbox-network.js';
import { waitFor } from '../../scripts/children.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import type { EnrollmentState } from '../../workflows/enrollments.js';
import { api, call } from './api.js';
import { createOwner, em } from './billing.js';
import { campaignOwner, fastAccount, seedCampaign, type StepSpec } from './campaigns.js';
import { deliverFor } from './inbound.js';

// ---- the generated scenario ---------------------------------------------------------------------

export type Op =
  | { kind: 'pause' | 'resume' | 'complete' | 'archive' | 'disconnect' | 'reconnect'; afterMs: number }
  | { kind: 'remove' | 'bounce' | 'skip' | 'approve' | 'pauseLead' | 'resumeLead'; lead: number; afterMs: number }
  | { kind: 'reply'; lead: number; via: 'inbound' | 'mark'; afterMs: number }
  | { kind: 'wait'; ms: number };

export interface Scenario {
  /** Leads enrolled at the start (2–4). */
  leads: number;
  /** Before each send after the first (so 1–2 more sends): a wait step of this many seconds, or none. */
  waits: (number | null)[];
  /** The campaign has `review_required` (every send waits for an approval). */
  review: boolean;
  /** The sender account's governor: `min_gap_seconds` and `jitter_seconds`. */
  gapSeconds: number;
  jitterSeconds: number;
  ops: Op[];
}

const opArb = (leads: number, review: boolean): fc.Arbitrary<Op> => {
  const after = fc.integer({ min: 0, max: 2500 });
  const lead = fc.integer({ min: 0, max: leads - 1 });
  const campaignOp = (kind: 'pause' | 'resume' | 'complete' | 'archive' | 'disconnect' | 'reconnect') =>
    after.map((afterMs): Op => ({ kind, afterMs }));
  const leadOp = (kind: 'remove' | 'bounce' | 'skip' | 'approve' | 'pauseLead' | 'resumeLead') =>
    fc.record({ lead, afterMs: after }).map((x): Op => ({ kind, ...x }));
  return fc.oneof(
    { weight: 4, arbitrary: campaignOp('pause') },
    { weight: 3, arbitrary: campaignOp('resume') },
    { weight: 1, arbitrary: campaignOp('complete') },
    { weight: 1, arbitrary: campaignOp('archive') },
    { weight: 2, arbitrary: leadOp('remove') },
    {
      weight: 2,
      arbitrary: fc
        .record({ lead, via: fc.constantFrom('inbound' as const, 'mark' as const), afterMs: after })
        .map((x): Op => ({ kind: 'reply', ...x })),
    },
    { weight: 1, arbitrary: leadOp('bounce') },
    { weight: 2, arbitrary: leadOp('skip') },
    { weight: review ? 5 : 1, arbitrary: leadOp('approve') },
    { weight: 1, arbitrary: campaignOp('disconnect') },
    { weight: 1, arbitrary: campaignOp('reconnect') },
    { weight: 1, arbitrary: leadOp('pauseLead') },
    { weight: 1, arbitrary: leadOp('resumeLead') },
    { weight: 2, arbitrary: fc.integer({ min: 500, max: 5000 }).map((ms): Op => ({ kind: 'wait', ms })) },
  );
};

export const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    leads: fc.integer({ min: 2, max: 4 }),
    review: fc.oneof({ weight: 2, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  })
  .chain(({ leads, review }) =>
    fc.record({
      leads: fc.constant(leads),
      waits: fc.array(fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }), { minLength: 1, maxLength: 2 }),
      review: fc.constant(review),
      gapSeconds: fc.integer({ min: 1, max: 2 }),
      jitterSeconds: fc.integer({ min: 0, max: 1 }),
      ops: fc.array(opArb(leads, review), { minLength: 3, maxLength: 8 }),
    }),
  );

/** The scenario of a seed: the same seed always gives the same scenario. */
export const scenarioFor = (seed: number): Scenario => fc.sample(scenarioArb, { seed, numRuns: 1 })[0];

// ---- what a run records -------------------------------------------------------------------------

export interface OpRecord {
  index: number;
  op: Op;
  /** Wall-clock times (ms) around the call; `committed` is when the stop is known committed (the call's return, or when it was observed). */
  issuedAt: number;
  returnedAt: number;
  outcome: string;
}

/** A stop that holds sends from `from` (its commit is before it) until `until` (the lift was issued), or for good. */
export interface Stop {
  op: number;
  kind: string;
  scope: { all: true } | { account: true } | { lead: number } | { action: string };
  from: number;
  until: number | null;
}

export interface RunResult {
  seed: number;
  scenario: Scenario;
  t0: number;
  records: OpRecord[];
  stops: Stop[];
  violations: string[];
  /** Things seen that the rule does not promise to avoid (not failures). */
  notes: string[];
  counts: {
    ops: number;
    sends: number;
    actions: number;
    claimFallbacks: number;
    /** Enrollments by `status/stop_reason` at the end. */ enrollments: Record<string, number>;
  };
  ms: number;
}

// ---- the run ------------------------------------------------------------------------------------

const RUNNING = ['active', 'paused'];
/** Reasons an enrollment can hold on indefinitely (within a run): nothing changes them but a person or the account. */
const HOLD_REASONS = [
  'paused',
  'campaign_paused',
  'awaiting_review',
  'review_held',
  'not_connected',
  'no_sender_account',
];
/** What a pause (the enrollment's or the campaign's) shows instead of any wait of the governor's loop (issue 24). */
const PAUSE_REASONS = ['paused', 'campaign_paused'];
const OBSERVE_MS = 60_000;
/** Settling gives up when nothing has moved for STUCK_MS while something has not settled, or after SETTLE_MS. */
const STUCK_MS = 30_000;
const SETTLE_MS = 90_000;
/** A settled snapshot must stay the same this long. */
const STABLE_MS = 1500;
const NDR = 'Delivery Status Notification (Failure). Your message could not be delivered: address not found.';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Lead {
  leadId: string;
  contactId: string;
  email: string;
}

interface Ctx {
  seed: number;
  scenario: Scenario;
  token: string;
  campaignId: string;
  account: { id: string; connector_account_id: string };
  leads: Lead[];
  sendSteps: string[];
  t0: number;
  records: OpRecord[];
  stops: Stop[];
  violations: string[];
  notes: string[];
  /** What happened, for the finished enrollments' reasons. */
  happened: {
    removed: Set<number>;
    replied: Set<number>;
    bounced: Set<number>;
    completed: boolean;
    archived: boolean;
    disconnected: boolean;
  };
}

const rel = (ctx: { t0: number }, t: number) => `+${((t - ctx.t0) / 1000).toFixed(3)}s`;

export function describeOp(op: Op): string {
  switch (op.kind) {
    case 'wait':
      return `wait ${op.ms} ms`;
    case 'reply':
      return `after ${op.afterMs} ms: reply lead ${op.lead} (${op.via === 'inbound' ? 'inbound message' : 'mark-replied'})`;
    case 'remove':
    case 'bounce':
    case 'skip':
    case 'approve':
    case 'pauseLead':
    case 'resumeLead':
      return `after ${op.afterMs} ms: ${op.kind} lead ${op.lead}`;
    default:
      return `after ${op.afterMs} ms: ${op.kind}`;
  }
}

export function describeScenario(s: Scenario): string {
  const steps = ['email', ...s.waits.flatMap((w) => (w === null ? ['email'] : [`wait ${w}s`, 'email']))];
  return `${s.leads} leads; steps [${steps.join(', ')}]; review ${s.review ? 'required' : 'off'}; gap ${s.gapSeconds}s + jitter ≤ ${s.jitterSeconds}s; ${s.ops.length} ops`;
}

/** The run, as text a person can read and replay. */
export function formatRun(r: RunResult, replay = `EXECUTOR_MODEL_SEED=${r.seed}`): string {
  const lines = [`seed ${r.seed} (replay: ${replay}): ${describeScenario(r.scenario)}`, 'commands:'];
  r.scenario.ops.forEach((op, i) => {
    const rec = r.records.find((x) => x.index === i);
    lines.push(
      `  ${i}. ${describeOp(op)}${rec ? `  [issued ${rel(r, rec.issuedAt)}, done ${rel(r, rec.returnedAt)}: ${rec.outcome}]` : '  [not run]'}`,
    );
  });
  if (r.stops.length) {
    lines.push('stops:');
    for (const s of r.stops)
      lines.push(
        `  op ${s.op} ${s.kind} ${JSON.stringify(s.scope)} from ${rel(r, s.from)}${s.until === null ? '' : ` until ${rel(r, s.until)}`}`,
      );
  }
  lines.push(
    `counts: ${r.counts.sends} sends, ${r.counts.actions} actions, enrollments ${JSON.stringify(r.counts.enrollments)}, ${(r.ms / 1000).toFixed(1)} s` +
      (r.counts.claimFallbacks
        ? `; ${r.counts.claimFallbacks} sends without claimed_at (timed by their slot grant)`
        : ''),
  );
  if (r.notes.length) lines.push('notes:', ...r.notes.map((n) => `  - ${n}`));
  if (r.violations.length) lines.push(`VIOLATIONS (${r.violations.length}):`, ...r.violations.map((v) => `  - ${v}`));
  return lines.join('\n');
}

/** Runs the scenario of `seed` against the live stack and checks the invariants. */
export async function runModel(seed: number, scenario: Scenario = scenarioFor(seed)): Promise<RunResult> {
  const started = Date.now();
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email', {
    min_gap_seconds: scenario.gapSeconds,
    jitter_seconds: scenario.jitterSeconds,
  });
  const steps: StepSpec[] = [{ type: 'email', config: { subject: 'Hello', body: 'A first note' } }];
  scenario.waits.forEach((w, i) => {
    if (w !== null) steps.push({ type: 'wait', config: { amount: w / 3600, unit: 'hours' } });
    steps.push({ type: 'email', config: { subject: 'Re: Hello', body: `Follow-up ${i + 1}` } });
  });
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps,
    reviewRequired: scenario.review,
    stopOnReply: true,
  });
  const leads = await o.leads(scenario.leads);
  const ctx: Ctx = {
    seed,
    scenario,
    token: u.accessToken,
    campaignId: campaign.id,
    account,
    leads,
    sendSteps: campaign.stepIds.filter((_, i) => steps[i].type === 'email'),
    t0: 0,
    records: [],
    stops: [],
    violations: [],
    notes: [],
    happened: {
      removed: new Set(),
      replied: new Set(),
      bounced: new Set(),
      completed: false,
      archived: false,
      disconnected: false,
    },
  };
  const r = await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: ctx.token,
    body: { lead_ids: leads.map((l) => l.leadId) },
  });
  if (r.status !== 200 || r.body.enrolled !== leads.length) throw new Error(`enroll failed: ${r.status} ${r.text}`);
  ctx.t0 = Date.now();

  let counts: RunResult['counts'] = { ops: 0, sends: 0, actions: 0, claimFallbacks: 0, enrollments: {} };
  try {
    for (const [index, op] of scenario.ops.entries()) {
      if (op.kind === 'wait') {
        const issuedAt = Date.now();
        await sleep(op.ms);
        ctx.records.push({ index, op, issuedAt, returnedAt: Date.now(), outcome: 'waited' });
        continue;
      }
      await sleep(op.afterMs);
      const issuedAt = Date.now();
      counts.ops++;
      try {
        const outcome = await perform(ctx, index, op, issuedAt);
        ctx.records.push({ index, op, issuedAt, returnedAt: Date.now(), outcome });
      } catch (err) {
        // A command whose effect never showed (an observation timed out) or a call that failed: the
        // run stops issuing commands, still settles and checks, and fails with its sequence.
        ctx.records.push({ index, op, issuedAt, returnedAt: Date.now(), outcome: `ERROR ${String(err)}` });
        ctx.violations.push(`[run] command ${index} (${describeOp(op)}) failed: ${String(err)}`);
        break;
      }
    }
    const snap = await settle(ctx);
    counts = { ...(await check(ctx, snap)), ops: counts.ops };
  } finally {
    await cleanup(ctx);
  }
  return {
    seed,
    scenario,
    t0: ctx.t0,
    records: ctx.records,
    stops: ctx.stops,
    violations: ctx.violations,
    notes: ctx.notes,
    counts,
    ms: Date.now() - started,
  };
}

// ---- the commands -------------------------------------------------------------------------------

const openStop = (ctx: Ctx, kind: string, match: (s: Stop) => boolean) =>
  ctx.stops.find((s) => s.kind === kind && s.until === null && match(s));

async function perform(ctx: Ctx, index: number, op: Exclude<Op, { kind: 'wait' }>, issuedAt: number): Promise<string> {
  const stop = (kind: string, scope: Stop['scope'], from: number) =>
    void ctx.stops.push({ op: index, kind, scope, from, until: null });
  const status = async (to: string) => {
    const res = await call('PATCH', `/api/campaigns/${ctx.campaignId}/status`, {
      token: ctx.token,
      body: { status: to },
    });
    return { res, at: Date.now() };
  };
  switch (op.kind) {
    case 'pause': {
      const { res, at } = await status('paused');
      if (res.status === 200) stop('pause', { all: true }, at);
      return `${res.status}${res.status === 200 ? '' : ` ${res.body?.error?.code}`}`;
    }
    case 'resume': {
      const { res } = await status('active');
      // The pause is lifted when the resume was issued (a claim after that may go).
      if (res.status === 200) for (const s of ctx.stops) if (s.kind === 'pause' && s.until === null) s.until = issuedAt;
      return `${res.status}${res.status === 200 ? '' : ` ${res.body?.error?.code}`}`;
    }
    case 'complete':
    case 'archive': {
      const { res, at } = await status(op.kind === 'complete' ? 'completed' : 'archived');
      if (res.status === 200) {
        stop(op.kind, { all: true }, at);
        ctx.happened[op.kind === 'complete' ? 'completed' : 'archived'] = true;
      }
      return `${res.status}${res.status === 200 ? '' : ` ${res.body?.error?.code}`}`;
    }
    case 'remove': {
      const lead = ctx.leads[op.lead];
      const res = await call('DELETE', `/api/campaigns/${ctx.campaignId}/leads/${lead.leadId}`, { token: ctx.token });
      if (res.status === 200) {
        stop('remove', { lead: op.lead }, Date.now());
        ctx.happened.removed.add(op.lead);
      }
      return `${res.status}${res.status === 200 ? '' : ` ${res.body?.error?.code}`}`;
    }
    case 'reply': {
      const lead = ctx.leads[op.lead];
      const sent = op.via === 'inbound' ? await lastSent(ctx, lead) : null;
      if (sent) {
        // The lead answers in the campaign's thread: the inbox pipeline records the reply (and
        // signals after its commit); once the message is stored, the reply is read back.
        const m = await sandboxInjectMessage(await em(), ctx.account.connector_account_id, {
          from: lead.email,
          body: 'Sounds good, tell me more.',
          threadId: sent.thread,
        });
        await deliverFor(ctx.account.connector_account_id);
        await observe(
          ctx,
          `the inbound reply of lead ${op.lead} processed`,
          async () =>
            !!(await (await em()).execute(`select 1 from inbox_messages where connector_message_id = ?`, [m.messageId]))
              .length,
        );
        const [e] = await (
          await em()
        ).execute<{ replied: boolean }[]>(
          `select replied_at is not null as replied from enrollments where campaign_id = ? and lead_id = ?`,
          [ctx.campaignId, lead.leadId],
        );
        if (!e?.replied) return 'inbound reply stored, not matched to the enrollment';
        // Seen committed by the read that just returned.
        stop('reply', { lead: op.lead }, Date.now());
        ctx.happened.replied.add(op.lead);
        return 'inbound reply recorded';
      }
      const res = await call('POST', `/api/leads/${lead.leadId}/mark-replied`, { token: ctx.token });
      if (res.status === 200) {
        stop('reply', { lead: op.lead }, Date.now());
        ctx.happened.replied.add(op.lead);
      }
      return `mark-replied ${res.status}${op.via === 'inbound' ? ' (nothing sent yet to reply to)' : ''}${res.status === 200 ? ` (${res.body.items.length} running)` : ''}`;
    }
    case 'bounce': {
      const lead = ctx.leads[op.lead];
      const sent = await lastSent(ctx, lead);
      if (!sent) return 'nothing sent yet to bounce';
      const m = await sandboxInjectMessage(await em(), ctx.account.connector_account_id, {
        from: 'MAILER-DAEMON@mx.example.test',
        body: NDR,
        threadId: sent.thread,
      });
      await deliverFor(ctx.account.connector_account_id);
      await observe(
        ctx,
        `the bounce of lead ${op.lead} processed`,
        async () =>
          !!(await (await em()).execute(`select 1 from inbox_messages where connector_message_id = ?`, [m.messageId]))
            .length,
      );
      const [e] = await (
        await em()
      ).execute<{ bounced: boolean }[]>(
        `select bounced_at is not null as bounced from enrollments where campaign_id = ? and lead_id = ?`,
        [ctx.campaignId, lead.leadId],
      );
      if (!e?.bounced) return 'bounce stored, not matched to the enrollment';
      stop('bounce', { lead: op.lead }, Date.now());
      ctx.happened.bounced.add(op.lead);
      return 'bounce recorded';
    }
    case 'skip':
    case 'approve': {
      const lead = ctx.leads[op.lead];
      const states =
        op.kind === 'skip' ? ['planned', 'awaiting_approval', 'approved'] : ['planned', 'awaiting_approval'];
      const [a] = await (
        await em()
      ).execute<{ id: string; step_position: number; state: string }[]>(
        `select id, step_position, state from scheduled_actions where campaign_id = ? and lead_id = ? and state = any(?::text[]) order by step_position desc, created_at desc limit 1`,
        [ctx.campaignId, lead.leadId, `{${states.join(',')}}`],
      );
      if (!a) return `no action to ${op.kind}`;
      const res = await call('POST', `/api/scheduled-actions/${a.id}/${op.kind}`, { token: ctx.token });
      if (res.status === 200 && op.kind === 'skip') stop('skip', { action: a.id }, Date.now());
      return `${op.kind} step ${a.step_position} (${a.state}): ${res.status}${res.status === 200 ? '' : ` ${res.body?.error?.code}`}`;
    }
    case 'disconnect': {
      if (openStop(ctx, 'disconnect', () => true)) return 'already disconnected';
      // The connector loses the account; the setup-status read (an API route) records it here.
      const ev = await sandboxDisconnect(await em(), ctx.account.connector_account_id, 'checkpoint');
      const res = await call('GET', `/api/platform-accounts/${ctx.account.id}/setup-status`, { token: ctx.token });
      const at = Date.now();
      if (res.status !== 200 || res.body.status !== 'disconnected')
        throw new Error(`setup-status did not record the disconnection: ${res.status} ${res.text}`);
      stop('disconnect', { account: true }, at);
      ctx.happened.disconnected = true;
      await flushAccountEvent(ctx, ev.eventId);
      return 'disconnected';
    }
    case 'reconnect': {
      const open = openStop(ctx, 'disconnect', () => true);
      if (!open) return 'not disconnected';
      open.until = issuedAt;
      const ev = await sandboxReconnect(await em(), ctx.account.connector_account_id);
      const res = await call('GET', `/api/platform-accounts/${ctx.account.id}/setup-status`, { token: ctx.token });
      if (res.status !== 200 || res.body.status !== 'connected')
        throw new Error(`setup-status did not record the reconnection: ${res.status} ${res.text}`);
      await flushAccountEvent(ctx, ev.eventId);
      return 'reconnected';
    }
    case 'pauseLead':
    case 'resumeLead': {
      // No route pauses one enrollment: the workflow's `pause` / `resume` signal through the Jobs port.
      const lead = ctx.leads[op.lead];
      const open = openStop(ctx, 'pauseLead', (s) => 'lead' in s.scope && s.scope.lead === op.lead);
      if (op.kind === 'resumeLead' && !open) return 'not paused';
      if (op.kind === 'pauseLead' && open) return 'already paused';
      if (open) open.until = issuedAt;
      const { services } = await api();
      if (
        !(await services.jobs.signal(
          'enrollment',
          { campaignId: ctx.campaignId, leadId: lead.leadId },
          op.kind === 'pauseLead' ? 'pause' : 'resume',
        ))
      )
        return 'no open run';
      let status = '';
      const at = await observe(
        ctx,
        `the enrollment of lead ${op.lead} ${op.kind === 'pauseLead' ? 'paused' : 'resumed'}`,
        async () => {
          [{ status }] = await (
            await em()
          ).execute<{ status: string }[]>(`select status from enrollments where campaign_id = ? and lead_id = ?`, [
            ctx.campaignId,
            lead.leadId,
          ]);
          return op.kind === 'pauseLead' ? status !== 'active' : status !== 'paused';
        },
      );
      if (op.kind === 'pauseLead' && status === 'paused') stop('pauseLead', { lead: op.lead }, at);
      return status;
    }
  }
}

/** The lead's latest executed email (its thread), if any. */
async function lastSent(ctx: Ctx, lead: Lead): Promise<{ id: string; thread: string } | null> {
  const [a] = await (
    await em()
  ).execute<{ id: string; connector_thread_id: string }[]>(
    `select id, connector_thread_id from scheduled_actions where campaign_id = ? and lead_id = ? and state = 'executed' and connector_thread_id is not null order by executed_at desc limit 1`,
    [ctx.campaignId, lead.leadId],
  );
  return a ? { id: a.id, thread: a.connector_thread_id } : null;
}

/** Waits until `check` holds; returns when it was seen to hold (after the commit it observes). */
async function observe(ctx: Ctx, what: string, check: () => Promise<boolean>): Promise<number> {
  await waitFor(`${what} (seed ${ctx.seed})`, check, OBSERVE_MS);
  return Date.now();
}

/**
 * The sandbox queued the account's `account.status` event: it goes through the inbound pipeline now,
 * and the run waits until it is handled, so that it cannot be applied later, after a reconnection.
 */
async function flushAccountEvent(ctx: Ctx, eventId: string): Promise<void> {
  await deliverFor(ctx.account.connector_account_id);
  await observe(
    ctx,
    `account event ${eventId} handled`,
    async () =>
      !!(
        await (
          await em()
        ).execute(`select 1 from connector_events where event_id = ? and handled_at is not null`, [eventId])
      ).length,
  );
}

// ---- settling -----------------------------------------------------------------------------------

interface EnrollmentSnap {
  lead: number;
  leadId: string;
  enrollmentId: string;
  status: string;
  stopReason: string | null;
  /** The workflow's `state` query (running enrollments), or null. */
  reason: string | null;
  queryError: string | null;
  /** The workflow is closed (finished enrollments). */
  closed: boolean | null;
  pending: {
    id: string;
    state: string;
    waitingReason: string | null;
    accountId: string | null;
    stepPosition: number;
  } | null;
}

interface Snap {
  campaignStatus: string;
  accountStatus: string;
  enrollments: EnrollmentSnap[];
}

async function snapshot(ctx: Ctx): Promise<Snap> {
  const e = await em();
  const { services } = await api();
  const [{ status: campaignStatus }] = await e.execute<{ status: string }[]>(
    `select status from campaigns where id = ?`,
    [ctx.campaignId],
  );
  const [{ status: accountStatus }] = await e.execute<{ status: string }[]>(
    `select status from platform_accounts where id = ?`,
    [ctx.account.id],
  );
  const rows = await e.execute<
    {
      id: string;
      lead_id: string;
      status: string;
      stop_reason: string | null;
      p_id: string | null;
      p_state: string | null;
      p_reason: string | null;
      p_account: string | null;
      p_position: number | null;
    }[]
  >(
    `select e.id, e.lead_id, e.status, e.stop_reason, p.id as p_id, p.state as p_state, p.waiting_reason as p_reason, p.account_id as p_account, p.step_position as p_position
       from enrollments e left join lateral (
         select id, state, waiting_reason, account_id, step_position from scheduled_actions a
          where a.enrollment_id = e.id and a.state in ('planned', 'awaiting_approval', 'approved', 'executing') order by a.step_position desc, a.created_at desc limit 1) p on true
      where e.campaign_id = ?`,
    [ctx.campaignId],
  );
  const enrollments = await Promise.all(
    rows.map(async (row): Promise<EnrollmentSnap> => {
      const lead = ctx.leads.findIndex((l) => l.leadId === row.lead_id);
      const handle = services.temporal.workflow.getHandle(
        enrollmentWorkflowIds.enrollment(ctx.campaignId, row.lead_id),
      );
      let reason: string | null = null;
      let queryError: string | null = null;
      let closed: boolean | null = null;
      try {
        if (RUNNING.includes(row.status)) reason = (await handle.query<EnrollmentState>('state')).reason;
        else closed = (await handle.describe()).status.name !== 'RUNNING';
      } catch (err) {
        queryError = String(err);
      }
      return {
        lead,
        leadId: row.lead_id,
        enrollmentId: row.id,
        status: row.status,
        stopReason: row.stop_reason,
        reason,
        queryError,
        closed,
        pending: row.p_id
          ? {
              id: row.p_id,
              state: row.p_state!,
              waitingReason: row.p_reason,
              accountId: row.p_account,
              stepPosition: row.p_position!,
            }
          : null,
      };
    }),
  );
  enrollments.sort((a, b) => a.lead - b.lead);
  return { campaignStatus, accountStatus, enrollments };
}

/**
 * Finished with its workflow closed, or running and holding on something only a person or the account
 * changes — in a campaign that can still send: a completed or archived campaign stops its enrollments
 * (`stopped`, `campaign_<status>`), so one still running there has not settled.
 */
const settledOne = (s: EnrollmentSnap, campaignStatus: string) =>
  s.queryError === null &&
  s.pending?.state !== 'executing' &&
  (RUNNING.includes(s.status)
    ? ['active', 'paused'].includes(campaignStatus) && s.reason !== null && HOLD_REASONS.includes(s.reason)
    : s.closed === true);

/**
 * Waits until every enrollment has settled — finished (and its workflow closed), or running and holding
 * on a reason nothing but a person or the account changes — and the whole picture has stayed the same
 * for STABLE_MS. Enrollments still moving (sends spaced by the gap, wait steps) change the picture every
 * few seconds; one that has not settled while nothing moved for STUCK_MS (or by SETTLE_MS) is a
 * violation, named with where it stands.
 */
async function settle(ctx: Ctx): Promise<Snap> {
  const started = Date.now();
  let last = '';
  let since = 0;
  for (;;) {
    const snap = await snapshot(ctx);
    const key = JSON.stringify(snap);
    const settled = snap.enrollments.every((e) => settledOne(e, snap.campaignStatus));
    if (key !== last) {
      last = key;
      since = Date.now();
    } else if (settled && Date.now() - since >= STABLE_MS) return snap;
    const stuck = Date.now() - since >= STUCK_MS;
    if (stuck || Date.now() - started >= SETTLE_MS) {
      for (const s of snap.enrollments.filter((x) => !settledOne(x, snap.campaignStatus))) {
        const ended = ['completed', 'archived'].includes(snap.campaignStatus) && RUNNING.includes(s.status);
        ctx.violations.push(
          `[2] lead ${s.lead}: not settled (${stuck ? `unchanged for ${STUCK_MS / 1000} s` : `${SETTLE_MS / 1000} s after the last command`})${ended ? `: still running though the campaign is ${snap.campaignStatus}` : ''} (campaign ${snap.campaignStatus}, account ${snap.accountStatus}; ${describeEnrollment(s)})`,
        );
      }
      return snap;
    }
    await sleep(300);
  }
}

const describeEnrollment = (s: EnrollmentSnap) =>
  `${s.status}${s.stopReason ? `/${s.stopReason}` : ''}, query reason ${s.reason ?? 'null'}${s.queryError ? ` (query failed: ${s.queryError.slice(0, 120)})` : ''}${s.closed === false ? ', workflow still running' : ''}, pending action ${
    s.pending
      ? `step ${s.pending.stepPosition} ${s.pending.state} waiting_reason=${s.pending.waitingReason ?? 'null'}`
      : 'none'
  }`;

// ---- the invariants -----------------------------------------------------------------------------

interface ActionRow {
  id: string;
  lead_id: string;
  enrollment_id: string;
  step_id: string;
  step_position: number;
  state: string;
  error_code: string | null;
  account_id: string | null;
  executed_at: Date | null;
  slot_granted_at: Date | null;
  claimed_at: string | null;
  sandbox_sends: number;
}

async function check(ctx: Ctx, snap: Snap): Promise<Omit<RunResult['counts'], 'ops'>> {
  const e = await em();
  const v = (msg: string) => void ctx.violations.push(msg);
  // claimed_at through to_jsonb: the column is new (Migration20261126160000_send_claim); absent, it reads null.
  const actions = await e.execute<ActionRow[]>(
    `select a.id, a.lead_id, a.enrollment_id, a.step_id, a.step_position, a.state, a.error_code, a.account_id, a.executed_at, a.slot_granted_at,
            to_jsonb(a) ->> 'claimed_at' as claimed_at,
            (select count(*)::int from sandbox_messages m where m.direction = 'out' and m.idempotency_key = a.id::text) as sandbox_sends
       from scheduled_actions a where a.campaign_id = ? order by a.step_position, a.created_at`,
    [ctx.campaignId],
  );
  const leadOf = (leadId: string) => ctx.leads.findIndex((l) => l.leadId === leadId);
  const sends = await e.execute<{ idempotency_key: string; n: number }[]>(
    `select idempotency_key, count(*)::int as n from sandbox_messages where connector_account_id = ? and direction = 'out' group by idempotency_key`,
    [ctx.account.connector_account_id],
  );

  // 3. Nothing sent twice; the connector's sends and the executed actions agree.
  const byId = new Map(actions.map((a) => [a.id, a]));
  for (const s of sends) {
    if (s.n > 1) v(`[3] the connector holds ${s.n} sends with idempotency key ${s.idempotency_key}`);
    if (!byId.has(s.idempotency_key))
      v(`[3] a send at the connector (key ${s.idempotency_key}) belongs to no action of the campaign`);
  }
  const perStep = new Map<string, ActionRow[]>();
  for (const a of actions.filter((x) => x.state === 'executed'))
    perStep.set(`${a.enrollment_id}/${a.step_id}`, [...(perStep.get(`${a.enrollment_id}/${a.step_id}`) ?? []), a]);
  for (const list of perStep.values())
    if (list.length > 1)
      v(
        `[3] lead ${leadOf(list[0].lead_id)} step ${list[0].step_position}: ${list.length} executed actions (${list.map((a) => a.id).join(', ')})`,
      );
  for (const a of actions) {
    if (a.state === 'executed' && a.sandbox_sends !== 1)
      v(
        `[3] lead ${leadOf(a.lead_id)} step ${a.step_position}: action ${a.id} is executed but the connector holds ${a.sandbox_sends} sends of it`,
      );
    if (a.state !== 'executed' && a.sandbox_sends > 0)
      v(
        `[3] lead ${leadOf(a.lead_id)} step ${a.step_position}: action ${a.id} was sent at the connector but is ${a.state}${a.error_code ? ` (${a.error_code})` : ''}`,
      );
  }

  // 1. No action claimed after a stop that applies to it committed (and was not lifted before the claim).
  let claimFallbacks = 0;
  for (const a of actions.filter((x) => x.state === 'executed' || x.sandbox_sends > 0)) {
    // The claim's own clock time; without it (before the claimed_at column is written), the slot's
    // grant, which precedes the claim: a lower bound, so what it finds is a violation all the same.
    const claim = a.claimed_at
      ? Date.parse(a.claimed_at)
      : a.slot_granted_at
        ? new Date(a.slot_granted_at).getTime()
        : null;
    if (!a.claimed_at) claimFallbacks++;
    if (claim === null) {
      ctx.notes.push(
        `lead ${leadOf(a.lead_id)} step ${a.step_position}: action ${a.id} sent without claimed_at or slot_granted_at; not checked against the stops`,
      );
      continue;
    }
    const lead = leadOf(a.lead_id);
    for (const s of ctx.stops) {
      const applies =
        'all' in s.scope ||
        ('account' in s.scope && a.account_id === ctx.account.id) ||
        ('lead' in s.scope && s.scope.lead === lead) ||
        ('action' in s.scope && s.scope.action === a.id);
      if (!applies || claim <= s.from || (s.until !== null && claim >= s.until)) continue;
      v(
        `[1] lead ${lead} step ${a.step_position}: action ${a.id} (${a.state}) claimed at ${rel(ctx, claim)}${a.claimed_at ? '' : ' (slot grant; claimed_at not set)'} after op ${s.op} ${s.kind} committed (done ${rel(ctx, s.from)})${
          s.until === null ? '' : `, before its lift at ${rel(ctx, s.until)}`
        }`,
      );
    }
  }

  // 2. Finished with a reason that matches what happened, or running with a true waiting reason.
  const enrollments: Record<string, number> = {};
  for (const s of snap.enrollments) {
    const key = `${s.status}${s.stopReason ? `/${s.stopReason}` : ''}`;
    enrollments[key] = (enrollments[key] ?? 0) + 1;
    const mine = actions.filter((a) => a.enrollment_id === s.enrollmentId);
    const where = `[2] lead ${s.lead}`;
    if (!RUNNING.includes(s.status)) {
      const h = ctx.happened;
      const ok = (() => {
        switch (`${s.status}/${s.stopReason}`) {
          case 'completed/null':
            // Past the last step: every send step executed or skipped.
            return ctx.sendSteps.every((id) =>
              mine.some((a) => a.step_id === id && (a.state === 'executed' || a.state === 'skipped')),
            );
          case 'replied/replied':
            return h.replied.has(s.lead);
          case 'removed/unenrolled':
            return h.removed.has(s.lead);
          case 'stopped/campaign_completed':
            return h.completed;
          case 'stopped/campaign_archived':
            return h.archived;
          case 'stopped/bounced':
            return h.bounced.has(s.lead);
          default:
            // A send refused by the connector after it lost the account (between the connector's
            // disconnection and our record of it): the action's own error code.
            return (
              s.status === 'failed' &&
              h.disconnected &&
              mine.some(
                (a) => a.state === 'failed' && a.error_code === s.stopReason && /^connector_/.test(a.error_code ?? ''),
              )
            );
        }
      })();
      if (!ok)
        v(
          `${where}: finished ${key}, which does not match what happened (${describeHappened(ctx, s.lead)}); actions ${mine.map((a) => `${a.step_position}:${a.state}${a.error_code ? `/${a.error_code}` : ''}`).join(' ')}`,
        );
      continue;
    }
    if (!settledOne(s, snap.campaignStatus)) continue; // reported by settle()
    // The holds that are true now.
    const holds = new Set<string>();
    if (s.status === 'paused') holds.add('paused');
    if (snap.campaignStatus === 'paused') holds.add('campaign_paused');
    if (s.pending?.state === 'awaiting_approval') (holds.add('awaiting_review'), holds.add('review_held'));
    if (snap.accountStatus !== 'connected') holds.add('not_connected');
    if (s.pending && s.pending.accountId === null) holds.add('no_sender_account');
    // A pause (the enrollment's or the campaign's) replaces any wait of the governor's loop; the
    // enrollment's own pause is handled in every wait, so it is what it says (or the campaign's pause).
    let allowed = [...holds];
    if (holds.has('paused')) allowed = allowed.filter((r) => PAUSE_REASONS.includes(r));
    else if (holds.has('campaign_paused'))
      allowed = allowed.filter((r) => [...PAUSE_REASONS, 'awaiting_review', 'review_held'].includes(r));
    const state = `campaign ${snap.campaignStatus}, account ${snap.accountStatus}; ${describeEnrollment(s)}`;
    if (!holds.size && ['not_connected', 'no_sender_account'].includes(s.reason!) && ctx.happened.disconnected) {
      // Refused while the account was disconnected, rechecked hourly: reconnection is not promised to wake it.
      ctx.notes.push(`lead ${s.lead} still says ${s.reason} after the account was reconnected (${state})`);
      continue;
    }
    if (!allowed.includes(s.reason!))
      v(
        `${where}: the workflow says ${s.reason}, which is not a true waiting reason now (true: ${[...holds].join(', ') || 'none'}; ${state})`,
      );
    if (s.pending && !allowed.includes(s.pending.waitingReason ?? 'null')) {
      v(
        `${where}: its action (step ${s.pending.stepPosition}) stores waiting_reason ${s.pending.waitingReason ?? 'null'}, which is not a true waiting reason now (true: ${[...holds].join(', ') || 'none'}; ${state})`,
      );
    }
  }
  return { sends: sends.reduce((n, s) => n + s.n, 0), actions: actions.length, claimFallbacks, enrollments };
}

function describeHappened(ctx: Ctx, lead: number): string {
  const h = ctx.happened;
  const list = [
    h.removed.has(lead) && 'removed',
    h.replied.has(lead) && 'replied',
    h.bounced.has(lead) && 'bounced',
    h.completed && 'campaign completed',
    h.archived && 'campaign archived',
    h.disconnected && 'account disconnected',
  ].filter(Boolean);
  return list.join(', ') || 'no stop';
}

/** Ends the run's open workflows (enrollments holding on a pause, a review or the account). */
async function cleanup(ctx: Ctx): Promise<void> {
  const { services } = await api();
  const open = await (
    await em()
  ).execute<{ lead_id: string }[]>(
    `select lead_id from enrollments where campaign_id = ? and status in ('active', 'paused')`,
    [ctx.campaignId],
  );
  await Promise.all(
    open.map((r) =>
      services.jobs
        .signal('enrollment', { campaignId: ctx.campaignId, leadId: r.lead_id }, 'unenroll')
        .catch(() => false),
    ),
  );
}
