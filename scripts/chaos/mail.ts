// The chaos run's mailboxes (scripts/chaos.ts): a GreenMail of the run's own (free ports; auth
// disabled, so a mailbox logs in again after a restart of the in-memory server without being created
// anew), M mail-connector accounts on it followed by the workers' mailbox-session services
// (workers/mailbox-sessions.ts, leases in mailbox_leases), and prospects' replies arriving on random
// mailboxes, each with a Message-ID and a marker of its own. Two faults break them:
//   - the mail server killed (SIGKILL) and started again: every session must come back;
//   - kill -9 of the worker holding the most sessions: the other must take its mailboxes over (≤ 60 s).
// GreenMail keeps mail in memory: a reply it accepted and the service had not read yet would be lost
// with it, which no service could prevent. Before the restart the stream pauses until every accepted
// reply is stored; replies the server refused while down are not expected.
//
// GreenMail opens its ports a moment before it applies its configuration, so a login in between is
// refused as bad credentials: the restart fault is also the test that a mailbox is not disconnected
// by a server refusing logins for a moment (the session service's refusal grace).
import nodemailer, { type Transporter } from 'nodemailer';
import type pg from 'pg';
import { mailConnectorAccountId } from '../../lib/connectors/mailbox/account.js';
import { encrypt } from '../../lib/crypto.js';
import { uuidv7 } from '../../lib/ids.js';
import { freePort } from '../children.js';
import { startMailServerAt, stopMailServer, type MailServer } from '../stack/mail.js';
import { isRunning, type Log } from '../stack/processes.js';
import type { Fleet, Member } from './fleet.js';

/** The mailbox-session service's promise for a killed worker's mailboxes (LEASE_TTL_S 30 s, a tick, logins). */
export const TAKEOVER_LIMIT_S = 60;

export interface Mailbox {
  id: string;
  address: string;
}

export interface Reply {
  n: number;
  /** As stored in inbox_messages.connector_message_id (`<…>`). */
  messageId: string;
  /** In the body, so in the `message.received` event's `message`. */
  marker: string;
  accountId: string;
  from: string;
  sentAt: number;
  /** The SMTP server took it (250 after DATA): from then on the service must store it once. */
  accepted: boolean;
  error?: string;
  /** Accepted by a mail server killed before the service read it: gone with the server, not expected. */
  lostWithServer?: boolean;
  /** Sent to every mailbox after a fault to see each one followed again. */
  probe?: string;
}

export const expected = (r: Reply) => r.accepted && !r.lostWithServer;

/** The run's GreenMail: started, killed and started again on the same ports. */
export class ChaosMail {
  pid = 0;

  private constructor(
    readonly server: MailServer,
    private readonly logFile: string,
    private readonly log: Log,
  ) {}

  static async start(dir: string, log: Log): Promise<ChaosMail> {
    const port = () => freePort();
    const api = await port();
    const server: MailServer = {
      host: '127.0.0.1',
      smtpPort: await port(),
      imapPort: await port(),
      smtpsPort: await port(),
      imapsPort: await port(),
      apiUrl: `http://127.0.0.1:${api}`,
    };
    const mail = new ChaosMail(server, `${dir}/mail.log`, log);
    await mail.up();
    return mail;
  }

  /** Starts GreenMail (until its API answers). */
  async up(): Promise<void> {
    // Its services must be up within greenmail.startup.timeout (2 s by default), which a loaded
    // machine misses now and then (the JVM then runs on with no configuration and no API).
    const before = process.env.JAVA_TOOL_OPTIONS;
    process.env.JAVA_TOOL_OPTIONS = `${before ?? ''} -Dgreenmail.startup.timeout=30000`.trim();
    try {
      this.pid = await startMailServerAt(this.log, this.server, { authDisabled: true, logFile: this.logFile });
    } finally {
      if (before === undefined) delete process.env.JAVA_TOOL_OPTIONS;
      else process.env.JAVA_TOOL_OPTIONS = before;
    }
  }

  /** SIGKILL: every IMAP session and SMTP connection is cut, every message it held is gone. */
  async kill(): Promise<void> {
    const pid = this.pid;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    const deadline = Date.now() + 10_000;
    while (isRunning(pid, 'mail') && Date.now() < deadline) await sleep(50);
    this.pid = 0;
  }

  async stop(): Promise<void> {
    if (this.pid) await stopMailServer(this.pid, this.log);
    this.pid = 0;
  }
}

/**
 * M mail-connector accounts on the run's GreenMail, inserted as bench:mail does (sealed credentials,
 * connected, no fleet yet: any worker's session service may follow them). Their INSERT notifies the
 * services, which claim them at once.
 */
export async function createMailboxes(
  db: pg.Pool,
  workspaceId: string,
  mail: ChaosMail,
  count: number,
  encryptionKey: Buffer,
): Promise<Mailbox[]> {
  const server = mail.server;
  const tag = `c${process.pid}`;
  const boxes = Array.from({ length: count }, (_, i) => ({
    id: uuidv7(),
    address: `mailbox${i}.${tag}@chaos-mail.test`,
  }));
  for (const [i, b] of boxes.entries()) {
    const credentials = {
      email: b.address,
      username: b.address,
      password: 'chaos-pw',
      smtp_host: server.host,
      smtp_port: String(server.smtpPort),
      smtp_security: 'none',
      imap_host: server.host,
      imap_port: String(mail.server.imapPort),
      imap_security: 'none',
    };
    await db.query(
      `insert into platform_accounts (id, workspace_id, channel, display_name, time_zone, working_hours, status, connector, connector_account_id, address, credentials_sealed, caps,
         min_gap_seconds, jitter_seconds, connected_at, warmup_skipped_at, created_at, updated_at)
       values ($1, $2, 'email', $3, 'UTC', '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb, 'connected', 'mail', $4, $5, $6, '{}'::jsonb, 0, 0, now(), now(), now(), now())`,
      [
        b.id,
        workspaceId,
        `Chaos mailbox ${i + 1}`,
        mailConnectorAccountId(b.id),
        b.address,
        encrypt(JSON.stringify(credentials), encryptionKey),
      ],
    );
  }
  return boxes;
}

/**
 * The prospects' replies: one every `everyMs` (up to 8 in flight) to a random mailbox from a random
 * prospect (a lead of the workspace, so each is a `message.received`), each with a Message-ID and a
 * marker of its own, over a new SMTP connection (a restart cuts no pooled one). Paused around the
 * mail server's restart.
 */
export class Replies {
  readonly sent: Reply[] = [];
  private readonly smtp: Transporter;
  private running = false;
  private paused = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<Reply>>();
  private readonly run = `${process.pid}`;

  constructor(
    server: MailServer,
    readonly mailboxes: Mailbox[],
    private readonly prospects: string[],
  ) {
    this.smtp = nodemailer.createTransport({
      host: server.host,
      port: server.smtpPort,
      secure: false,
      ignoreTLS: true,
      connectionTimeout: 5_000,
      greetingTimeout: 5_000,
      socketTimeout: 15_000,
    });
  }

  start(everyMs: number): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        if (!this.paused && this.inFlight.size < 8) {
          const box = this.mailboxes[Math.floor(Math.random() * this.mailboxes.length)];
          const sending = this.send(box);
          this.inFlight.add(sending);
          void sending.finally(() => this.inFlight.delete(sending));
        }
        await sleep(everyMs);
      }
      await Promise.all([...this.inFlight]);
    })();
  }

  /** Resolves once no reply of the stream is in flight. */
  async pause(): Promise<void> {
    this.paused = true;
    await Promise.all([...this.inFlight]);
  }

  resume(): void {
    this.paused = false;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  close(): void {
    this.smtp.close();
  }

  /** One reply to every mailbox (8 at a time), e.g. to see each followed again after a fault. */
  async probeAll(probe: string): Promise<Reply[]> {
    const todo = [...this.mailboxes];
    const out: Reply[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let b = todo.shift(); b; b = todo.shift()) out.push(await this.send(b, probe));
      }),
    );
    return out;
  }

  get accepted(): number {
    return this.sent.filter((r) => r.accepted).length;
  }

  private async send(box: Mailbox, probe?: string): Promise<Reply> {
    const n = this.sent.length + 1;
    const r: Reply = {
      n,
      messageId: `<chaos-reply-${n}.${this.run}@prospects.chaos.test>`,
      marker: `chaos-reply-${this.run}-${n}-end`,
      accountId: box.id,
      from: this.prospects[Math.floor(Math.random() * this.prospects.length)],
      sentAt: Date.now(),
      accepted: false,
      ...(probe ? { probe } : {}),
    };
    this.sent.push(r);
    try {
      await this.smtp.sendMail({
        from: r.from,
        to: box.address,
        subject: 'Re: Hello',
        messageId: r.messageId,
        text: `Thanks, that sounds interesting. Could we talk next week? (${r.marker})`,
      });
      r.accepted = true;
    } catch (err) {
      r.error = err instanceof Error ? err.message : String(err);
    }
    return r;
  }
}

/** Of `replies`, how many rows inbox_messages holds for each Message-ID in its own mailbox (and in any other). */
export async function storedCounts(
  db: pg.Pool,
  replies: Reply[],
): Promise<Map<string, { own: number; elsewhere: number }>> {
  const { rows } = await db.query<{ id: string; account: string }>(
    `select connector_message_id id, platform_account_id account from inbox_messages where connector_message_id = any($1::text[])`,
    [replies.map((r) => r.messageId)],
  );
  const accountOf = new Map(replies.map((r) => [r.messageId, r.accountId]));
  const out = new Map<string, { own: number; elsewhere: number }>();
  for (const row of rows) {
    const c = out.get(row.id) ?? { own: 0, elsewhere: 0 };
    if (accountOf.get(row.id) === row.account) c.own++;
    else c.elsewhere++;
    out.set(row.id, c);
  }
  return out;
}

/** Of `replies`, the expected ones not stored yet (in their own mailbox). */
export async function unstored(db: pg.Pool, replies: Reply[]): Promise<Reply[]> {
  const want = replies.filter(expected);
  const stored = await storedCounts(db, want);
  return want.filter((r) => !stored.get(r.messageId)?.own);
}

/** The pid in a lease holder's name (`<host>:<pid>:<random>`). */
export const holderPid = (holder: string) => Number(holder.split(':').at(-2));

export interface LeaseRow {
  account_id: string;
  holder: string;
  live: boolean;
}

export async function leases(db: pg.Pool, mailboxes: Mailbox[]): Promise<LeaseRow[]> {
  const { rows } = await db.query<LeaseRow>(
    `select account_id::text, holder, expires_at > now() as live from mailbox_leases where account_id = any($1::uuid[])`,
    [mailboxes.map((b) => b.id)],
  );
  return rows;
}

/** Mailboxes per worker (by the pid in its leases' holders); `other` for holders of no worker of the fleet. */
export function byWorker(rows: LeaseRow[], fleet: Fleet): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows.filter((x) => x.live)) {
    const w = fleet.workers.find((m) => m.child.pid === holderPid(r.holder));
    const name = w ? w.name : `pid ${holderPid(r.holder)}`;
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

export const describeHolders = (m: Map<string, number>) =>
  [...m.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([w, n]) => `${w} ${n}`)
    .join(', ') || 'none';

/** Mailboxes without a live lease held by a live worker of the fleet (other than `except`). */
export function unfollowed(rows: LeaseRow[], mailboxes: Mailbox[], fleet: Fleet, except?: Member): Mailbox[] {
  const live = new Set(fleet.workers.filter((w) => w !== except && fleet.alive(w)).map((w) => w.child.pid as number));
  const ok = new Set(rows.filter((r) => r.live && live.has(holderPid(r.holder))).map((r) => r.account_id));
  return mailboxes.filter((b) => !ok.has(b.id));
}

export interface MailFaultCtx {
  db: pg.Pool;
  fleet: Fleet;
  mail: ChaosMail;
  replies: Replies;
  mailboxes: Mailbox[];
  log: Log;
}

export interface MailFaultResult {
  since: number;
  outcome: string;
  recoveryS: number | null;
}

/** Every mailbox followed: a live lease of a live worker, and its cursor read since `since` with no error standing. */
async function allFollowed(ctx: MailFaultCtx, since: number, except?: Member): Promise<boolean> {
  if (unfollowed(await leases(ctx.db, ctx.mailboxes), ctx.mailboxes, ctx.fleet, except).length) return false;
  const { rows } = await ctx.db.query<{ n: number }>(
    `select count(*)::int n from mailbox_cursors where account_id = any($1::uuid[])
        and error_message is null and synced_at >= to_timestamp($2 / 1000.0)`,
    [ctx.mailboxes.map((b) => b.id), since],
  );
  return rows[0].n === ctx.mailboxes.length;
}

/**
 * The mail server killed and started again after `downMs`. Recovery: from the server answering again
 * until every mailbox has a live lease, its cursor synced since with no error, and a reply sent to it
 * after the restart stored.
 */
export async function restartMailServer(ctx: MailFaultCtx, downMs: number): Promise<MailFaultResult> {
  const { db, mail, replies, log } = ctx;
  // What the server holds must be read first: a restart loses it (see above).
  await replies.pause();
  const settled = await until(async () => (await unstored(db, replies.sent)).length === 0, 60_000);
  const pending = settled ? [] : await unstored(db, replies.sent);
  for (const r of pending) r.lostWithServer = true;
  await mail.kill();
  const down = Date.now();
  replies.resume(); // refused while the server is down: not expected
  await sleep(downMs);
  await mail.up();
  const since = Date.now();
  log(`mail server back after ${((since - down) / 1000).toFixed(1)} s (pid ${mail.pid})`);
  const probes = await replies.probeAll('after the mail server restart');
  const back = await until(
    async () => (await allFollowed(ctx, since)) && (await unstored(db, probes)).length === 0,
    180_000,
  );
  const refused = replies.sent.filter((r) => r.error !== undefined && r.sentAt >= down).length;
  return {
    since,
    recoveryS: back ? (Date.now() - since) / 1000 : null,
    outcome:
      `killed, down ${((since - down) / 1000).toFixed(1)} s; ${refused} replies refused meanwhile` +
      (pending.length ? `; ${pending.length} accepted replies NOT stored within 60 s before the restart` : '') +
      (back ? '' : `; ${(await unstored(db, probes)).length}/${probes.length} probes not stored`),
  };
}

/**
 * kill -9 of the worker whose pid is in the most lease holders, while replies arrive. Recovery (the
 * takeover): from the kill until every mailbox has a live lease of the other worker and a reply sent
 * to it after the kill is stored. Then the worker is started again (`restart`), and the stream goes
 * on until it has its share back (or 30 s), so the handover that rebalancing makes runs under load too.
 */
export async function killSessionWorker(
  ctx: MailFaultCtx,
  restart: (m: Member) => Promise<void>,
): Promise<MailFaultResult> {
  const { db, fleet, replies, mailboxes, log } = ctx;
  const rows = await leases(db, mailboxes);
  const count = (w: Member) => rows.filter((r) => r.live && holderPid(r.holder) === w.child.pid).length;
  const victim = [...fleet.workers].sort((a, b) => count(b) - count(a))[0];
  const held = count(victim);
  const pid = victim.child.pid;
  fleet.kill(victim);
  const since = Date.now();
  const probes = await replies.probeAll('after the worker kill');
  const taken = await until(
    async () =>
      unfollowed(await leases(db, mailboxes), mailboxes, fleet, victim).length === 0 &&
      (await unstored(db, probes)).length === 0,
    120_000,
  );
  const takeoverS = taken ? (Date.now() - since) / 1000 : null;
  const left = taken ? [] : unfollowed(await leases(db, mailboxes), mailboxes, fleet, victim);
  log(`worker ${victim.name} (pid ${pid}) killed; its ${held} mailboxes taken over in ${takeoverS ?? 'never'} s`);
  await restart(victim);
  const rebalanced = await until(
    async () => (byWorker(await leases(db, mailboxes), fleet).get(victim.name) ?? 0) > 0,
    30_000,
  );
  const now = byWorker(await leases(db, mailboxes), fleet);
  return {
    since,
    recoveryS: takeoverS,
    outcome:
      `${victim.name} (pid ${pid}, ${held}/${mailboxes.length} mailboxes) killed; ` +
      (taken
        ? `taken over in ${takeoverS!.toFixed(1)} s`
        : `${left.length} mailboxes not taken over within 120 s, probes unstored: ${(await unstored(db, probes)).length}`) +
      `; restarted, ${rebalanced ? 'rebalanced' : 'not rebalanced within 30 s'}: ${describeHolders(now)}`,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
}
