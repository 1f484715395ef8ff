// The mailbox-session service (docs/email.md "Receiving", docs/deploy.md "Mailbox sessions"): runs
// beside each worker, as the webhook dispatcher does, and follows its share of the connected mailboxes,
// each with one IMAP session kept open in IDLE (polling where the server has no IDLE). A session holds
// no Temporal activity slot: it is a socket and a few objects, so one worker follows thousands.
//
// - Which mailboxes: those whose lease it holds (domain/mailbox/leases.ts). Every `tickMs` it renews
//   them, lets go of any no longer to follow or above its fair share, and claims free ones up to it;
//   a mail account's status change (NOTIFY `mailbox_accounts`, from a trigger) runs a tick at once.
// - Logins only when needed: a session logs in when it starts and after it was lost, through one
//   LoginGate (a cap on concurrent handshakes and on handshakes per second) and, after a failure, a
//   jittered exponential backoff; in steady state it stays in IDLE and re-issues it every
//   `idleRefreshMs` (RFC 2177: before the server's 30-minute timeout) without logging in again.
// - New mail goes through the same pipeline as always (domain/mailbox/follow.ts → ingestMail): stored
//   once by Message-ID with the cursor, in one transaction that checks the lease's fence; webhooks
//   leave through the outbox; enrollments are woken by signal.
// - The lifecycle stays in Temporal (`mailbox-sync:<accountId>`, workflows/mailbox.ts): a session
//   that stops for good (refused credentials, a revoked grant) signals it `ended`.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Jobs } from '../domain/jobs.js';
import { followMailbox } from '../domain/mailbox/follow.js';
import {
  claimLeases,
  forgetGoneFollowers,
  LEASE_TTL_S,
  LeaseLost,
  leaveFleet,
  releaseLeases,
  renewLeases,
  unfollowable,
  type Lease,
} from '../domain/mailbox/leases.js';
import { recordCursorError } from '../domain/mailbox/mailbox.js';
import { LoginGate, reconnectDelay, type LoginGateOptions } from '../lib/connectors/mailbox/login-gate.js';
import type { MailboxProvider } from '../lib/connectors/mailbox/reader.js';
import type { Logger } from '../lib/logger.js';
import {
  MAILBOX_SESSION_STATES,
  mailboxLeaseChanges,
  mailboxLogins,
  mailboxReconnects,
  mailboxSessions,
  mailboxStoreLag,
} from '../lib/metrics.js';
import { listenTo, type Listening } from '../lib/pg-listen.js';

/** The channel the `platform_accounts` trigger notifies when a mail account's status or credentials change. */
export const MAILBOX_ACCOUNTS_CHANNEL = 'mailbox_accounts';

export interface MailboxSessionsOptions {
  orm: MikroORM;
  /** For its LISTEN connection. */
  databaseUrl: string;
  jobs: Jobs;
  /** Opens a mailbox's INBOX (the providers' `mailbox`). */
  mailbox: MailboxProvider;
  logger: Logger;
  /** This follower's name in the leases (default: host, pid and a random part). */
  holder?: string;
  /** Its fleet: the worker's task queue (the mailboxes whose `mailbox-sync` runs there, or of none yet). */
  fleet: string;
  /** Also follow mailboxes of no fleet yet (default; MAILBOX_SESSIONS_UNASSIGNED=off: a worker dedicated to its queue's). */
  unassigned?: boolean;
  /** Lease renewal and rebalancing interval (default 10 s; leases last LEASE_TTL_S). */
  tickMs?: number;
  /** The most mailboxes this worker follows (MAILBOX_SESSIONS_MAX). */
  maxSessions?: number;
  /** Handshakes at once and per second (MAILBOX_LOGIN_CONCURRENCY, MAILBOX_LOGINS_PER_SECOND). */
  gate?: LoginGateOptions;
  /** How often an idle session re-issues IDLE (and lists the INBOX) without logging in again (default 9 min). */
  idleRefreshMs?: number;
  /** Reconnect backoff: first wait and ceiling (default 1 s … 60 s, jittered: after an outage every session is back within a minute of the server). */
  backoff?: { baseMs?: number; maxMs?: number };
  /**
   * How long refused logins must go on before the mailbox is disconnected `credentials_invalid`
   * (MAILBOX_REFUSAL_GRACE_MS, default 2 minutes): a restarting server refuses logins for a moment.
   */
  refusalGraceMs?: number;
  pollMs?: number;
  forcePoll?: boolean;
}

export interface MailboxSessionsService {
  readonly holder: string;
  /** Renews, releases and claims now (also run on a timer and on notifications). */
  tick(): Promise<void>;
  /** The accounts this service follows now. */
  following(): string[];
  /** Closes every session and lets go of every lease (others take them over at once). */
  stop(): Promise<void>;
}

type State = (typeof MAILBOX_SESSION_STATES)[number];

interface Session {
  lease: Lease;
  abort: AbortController;
  state: State;
  done: Promise<void>;
  /** Ends a backoff wait early (the account's settings changed: try now). */
  nudge?: () => void;
}

/** Waits `ms`, or less when aborted or nudged. */
const backoff = (s: Session, ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      s.abort.signal.removeEventListener('abort', done);
      s.nudge = undefined;
      resolve();
    }
    s.nudge = done;
    s.abort.signal.addEventListener('abort', done, { once: true });
  });

export async function startMailboxSessions(opts: MailboxSessionsOptions): Promise<MailboxSessionsService> {
  const holder = opts.holder ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const log = opts.logger.child({ component: 'mailbox-sessions', holder });
  const tickMs = opts.tickMs ?? 10_000;
  const maxSessions = opts.maxSessions ?? 5_000;
  const idleRefreshMs = opts.idleRefreshMs ?? 9 * 60_000;
  const gate = new LoginGate(opts.gate);
  const em = () => opts.orm.em.fork() as EntityManager;
  const me = { holder, fleet: opts.fleet, unassigned: opts.unassigned };
  const sessions = new Map<string, Session>();
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let ticks = 0;
  let soon: NodeJS.Timeout | undefined;

  // Sessions by state, kept as they change (the gauge is current at every scrape, not at the next tick).
  const by: Record<State, number> = { following: 0, connecting: 0, waiting: 0 };
  const count = (state: State, delta: number) => mailboxSessions.set({ state }, (by[state] += delta));
  const setState = (s: Session, state: State) => {
    if (s.state === state) return;
    count(s.state, -1);
    count(state, +1);
    s.state = state;
  };

  /** Follows one mailbox until its session is aborted, the lease is lost, or the mailbox is to be followed no more. */
  async function follow(s: Session): Promise<void> {
    const { accountId } = s.lease;
    const signal = s.abort.signal;
    const gated: MailboxProvider = {
      openInbox: (id, o) => gate.run(() => opts.mailbox.openInbox(id, o), signal),
    };
    let attempt = 0;
    // Refused logins in a row since this time (reset by a login): final once they have lasted the grace, and at least 3.
    let refusedSince: number | null = null;
    let refusals = 0;
    const refusalIsFinal = () => {
      refusedSince ??= Date.now();
      refusals++;
      return refusals >= 3 && Date.now() - refusedSince >= (opts.refusalGraceMs ?? 120_000);
    };
    while (!signal.aborted) {
      setState(s, 'connecting');
      let openedAt = 0;
      try {
        const r = await followMailbox(
          {
            em,
            jobs: opts.jobs,
            mailbox: gated,
            heartbeat: () => undefined,
            signal,
            budgetMs: Number.POSITIVE_INFINITY,
            maxWaitMs: idleRefreshMs,
            checkStanding: false,
            lease: { holder, fence: s.lease.fence },
            pollMs: opts.pollMs,
            forcePoll: opts.forcePoll,
            refusalIsFinal,
            onOpen: () => {
              openedAt = Date.now();
              refusedSince = null;
              refusals = 0;
              mailboxLogins.inc({ outcome: 'ok' });
              setState(s, 'following');
            },
            onStored: (batch) => {
              const now = Date.now();
              for (const m of batch) if (m.receivedAt) mailboxStoreLag.observe(Math.max(0, now - +m.receivedAt) / 1000);
            },
          },
          accountId,
        );
        if (!r.continue) {
          // Followed no more (refused credentials disconnected it, or it is gone): the lifecycle ends.
          // Told even when this session was aborted meanwhile: the disconnect's own NOTIFY makes the next
          // pass end the session (the account is no longer followable), which can win the race to here.
          log.info({ account: accountId, reason: r.reason }, 'mailbox no longer followed');
          await opts.jobs.signal('mailbox-sync', { accountId }, 'ended', r.reason).catch(() => undefined);
          await releaseLeases(em(), holder, [accountId]).catch(() => undefined);
          return;
        }
        if (signal.aborted) return;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof LeaseLost) {
          mailboxLeaseChanges.inc({ change: 'lost' });
          return;
        }
        if (!openedAt) {
          mailboxLogins.inc({ outcome: 'failed' });
        }
        mailboxReconnects.inc();
        const message = err instanceof Error ? err.message : String(err);
        await recordCursorError(em(), accountId, message).catch(() => undefined);
        // A session that had been up a while starts its backoff afresh; one that keeps failing waits longer each time.
        attempt = openedAt && Date.now() - openedAt > 60_000 ? 1 : attempt + 1;
        setState(s, 'waiting');
        log.debug({ account: accountId, err: message, attempt }, 'mailbox session lost; reconnecting after a backoff');
        await backoff(s, reconnectDelay(attempt, opts.backoff?.baseMs, opts.backoff?.maxMs ?? 60_000));
      }
    }
  }

  function begin(lease: Lease): void {
    const s: Session = { lease, abort: new AbortController(), state: 'connecting', done: Promise.resolve() };
    sessions.set(lease.accountId, s);
    count('connecting', +1);
    s.done = follow(s)
      .catch((err: unknown) => log.error({ err: String(err), account: lease.accountId }, 'mailbox session failed'))
      .finally(() => {
        count(s.state, -1);
        if (sessions.get(lease.accountId) === s) sessions.delete(lease.accountId);
      });
  }

  async function end(accountIds: string[]): Promise<void> {
    const ending = accountIds.map((id) => sessions.get(id)).filter((s): s is Session => !!s);
    for (const s of ending) s.abort.abort();
    await Promise.all(ending.map((s) => s.done));
  }

  async function pass(): Promise<void> {
    const e = em();
    const { held, share } = await renewLeases(e, me);
    const fenceOf = new Map(held.map((l) => [l.accountId, l.fence]));
    const heldIds = new Set(fenceOf.keys());
    // Claimed by another (this process stalled past its lease): stop at once; its stores would be refused anyway.
    const lost = [...sessions].filter(([id, s]) => fenceOf.get(id) !== s.lease.fence).map(([id]) => id);
    if (lost.length) {
      mailboxLeaseChanges.inc({ change: 'lost' }, lost.length);
      await end(lost);
    }
    const gone = new Set(await unfollowable(e, me, [...heldIds]));
    let keep = held.filter((l) => !gone.has(l.accountId));
    // Above the fair share (a worker joined): let go of the surplus, sessions not yet following first.
    const target = Math.min(share, maxSessions);
    const surplus = keep.length - target;
    let release = [...gone];
    if (surplus > 0) {
      const order = (l: Lease) => (sessions.get(l.accountId)?.state === 'following' ? 1 : 0);
      const sorted = [...keep].sort((a, b) => order(a) - order(b));
      release = release.concat(sorted.slice(0, surplus).map((l) => l.accountId));
      keep = sorted.slice(surplus);
    }
    if (release.length) {
      await end(release);
      await releaseLeases(e, holder, release);
      mailboxLeaseChanges.inc({ change: 'released' }, release.length);
    }
    for (const l of keep) if (!sessions.has(l.accountId)) begin(l);
    const claimed = await claimLeases(e, me, target - keep.length);
    if (claimed.length) mailboxLeaseChanges.inc({ change: 'claimed' }, claimed.length);
    for (const l of claimed) begin(l);
    if (++ticks % 30 === 0) await forgetGoneFollowers(e);
  }

  async function tick(): Promise<void> {
    if (stopped) return;
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await pass();
        } catch (err) {
          log.warn({ err: String(err) }, 'mailbox sessions: lease pass failed; the next tick tries again');
        }
      } while (again && !stopped);
    })().finally(() => (running = undefined));
    return running;
  }

  /**
   * The account's settings or status changed: a session waiting to reconnect tries again at once (its
   * settings may have been fixed); one logged in starts again, so it follows with the new settings (a
   * session lives on its connection, which would otherwise keep the old ones).
   */
  const restart = (accountId: string) => {
    const s = sessions.get(accountId);
    if (!s) return;
    if (s.state === 'waiting') return s.nudge?.();
    // Once it has closed, the next pass begins it again while the lease is ours and the mailbox still to follow.
    s.abort.abort();
    void s.done.then(() => tick());
  };
  const notified = (accountId: string | undefined) => {
    if (accountId) restart(accountId);
    if (stopped || soon) return;
    soon = setTimeout(() => {
      soon = undefined;
      void tick();
    }, 100);
  };
  let listening: Listening | undefined;
  try {
    listening = await listenTo(opts.databaseUrl, MAILBOX_ACCOUNTS_CHANNEL, notified, log);
  } catch (err) {
    log.warn({ err: String(err) }, 'mailbox sessions: LISTEN not available; the timer alone finds changes');
  }
  const timer = setInterval(() => void tick(), tickMs);
  // Each tick renews the leases; the timer must fire well within their lifetime.
  if (tickMs * 2 >= LEASE_TTL_S * 1000)
    log.warn({ tickMs }, 'mailbox sessions: the tick is too slow for the lease lifetime');
  void tick();
  log.info({ tickMs, maxSessions, idleRefreshMs }, 'mailbox sessions started');

  return {
    holder,
    tick,
    following: () => [...sessions.keys()],
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(soon);
      await running?.catch(() => undefined);
      await end([...sessions.keys()]);
      await leaveFleet(em(), holder).catch(() => undefined);
      await listening?.close();
    },
  };
}
