// A mailbox's INBOX read over IMAP for the mailbox sync (docs/email.md "Receiving"): opened read-only
// (nothing is ever marked or moved in the user's mailbox), new messages listed by UID, their sources
// fetched in bounded batches, and a wait for new mail: IMAP IDLE when the server offers it (woken by
// its EXISTS), else a plain sleep before the next look (polling).
import type { ImapFlow } from 'imapflow';
import { imapClient, MAIL_TIMEOUTS, mailFailure } from './clients.js';
import { resolveMailHost, type MailHostPolicy } from './guard.js';
import type { MailEndpoint } from './settings.js';

/** A message's source is read up to this many bytes: headers and the first part of anything larger. */
export const MAX_SOURCE_BYTES = 2 * 1024 * 1024;
/** Messages per batch (each batch is one fetch and one pipeline transaction)… */
export const MAX_BATCH = 100;
/** …and at most this many source bytes. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024;
/** A wait ticks (heartbeats) this often. */
const TICK_MS = 5_000;

export interface ListedMessage {
  uid: number;
  size: number;
  receivedAt: Date | null;
}

export interface FetchedMessage extends ListedMessage {
  source: Buffer;
  /** Larger than MAX_SOURCE_BYTES: only its beginning was read. */
  truncated: boolean;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** Called every few seconds while waiting (the activity's heartbeat). */
  tick?: () => void;
}

/** IDLE when the server offers it unless `forcePoll`; polling looks every `pollMs` (default 20 s). */
export interface ReaderOptions {
  forcePoll?: boolean;
  pollMs?: number;
  /** The longest wait the reader will be asked for: the connection may stay silent that long (plus a minute). */
  maxWaitMs?: number;
}

/**
 * A connected mailbox read as a provider (the providers' `mailbox`, lib/providers.ts): the mailbox sync
 * (domain/mailbox/follow.ts) asks for an account's INBOX, and the mail connector (connector.ts) loads and
 * unseals the account's credentials and opens it.
 */
export interface MailboxProvider {
  /**
   * The account's INBOX opened read-only, and the mailbox's address. Stored settings that do not read:
   * ConnectorError `auth` or `invalid_request`, or MailConnectError; a failed connection: MailConnectError.
   */
  openInbox(connectorAccountId: string, opts?: ReaderOptions): Promise<{ address: string; reader: InboxReader }>;
}

const asDate = (d: Date | string | undefined) => (d === undefined ? null : new Date(d));

/** Sleeps `ms`, ticking, until done or `signal` aborts (resolves either way). */
async function pause(ms: number, opts: WaitOptions, wake?: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let ticker: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, ms));
        ticker = setInterval(() => opts.tick?.(), TICK_MS);
        onAbort = resolve;
        if (opts.signal?.aborted) resolve();
        opts.signal?.addEventListener('abort', onAbort, { once: true });
      }),
      ...(wake ? [wake] : []),
    ]);
  } finally {
    clearTimeout(timer);
    clearInterval(ticker);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
  }
}

export class InboxReader {
  /** New mail was announced (EXISTS) since the last `listNew`. */
  private changed = false;
  private waiters: (() => void)[] = [];
  private lost: Error | null = null;

  private constructor(
    private readonly client: ImapFlow,
    /** The INBOX's UIDVALIDITY (a bigint, as text) and UIDNEXT when it was opened. */
    readonly uidValidity: string,
    readonly uidNext: number,
    /** IDLE (the server offers it) or polling. */
    public mode: 'idle' | 'poll',
    private readonly pollMs: number,
  ) {
    client.on('exists', () => this.notify());
    client.on('close', () => {
      this.lost ??= new Error('the IMAP connection closed');
      this.notify();
    });
  }

  private notify() {
    this.changed = true;
    for (const w of this.waiters.splice(0)) w();
  }

  /**
   * Connects to the guarded address (lib/connectors/mailbox/guard.ts) and opens INBOX read-only. A
   * failure to connect is a MailConnectError (auth_failed, tls_failed, host_unreachable,
   * blocked_destination).
   */
  static async open(endpoint: MailEndpoint, policy: MailHostPolicy, opts: ReaderOptions = {}): Promise<InboxReader> {
    const target = await resolveMailHost('imap', endpoint, policy);
    // Silent for the longest wait and a minute more before the client gives up (TCP keepalive still
    // notices a dead peer): IDLE is ended by us, when the wait is over, not by the client's timeout.
    const client = imapClient(endpoint, target, Math.max(MAIL_TIMEOUTS.socketMs, (opts.maxWaitMs ?? 0) + 60_000));
    // imapflow emits 'error' on a lost socket; without a listener that would end the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      client.close();
      throw mailFailure(err, 'imap');
    }
    try {
      const box = await client.mailboxOpen('INBOX', { readOnly: true });
      const idle = !opts.forcePoll && client.capabilities.has('IDLE');
      return new InboxReader(
        client,
        String(box.uidValidity),
        box.uidNext,
        idle ? 'idle' : 'poll',
        opts.pollMs ?? 20_000,
      );
    } catch (err) {
      client.close();
      throw err;
    }
  }

  private check() {
    if (this.lost || !this.client.usable) throw this.lost ?? new Error('the IMAP connection is not usable');
  }

  private async list(range: string, filter: (m: ListedMessage) => boolean): Promise<ListedMessage[]> {
    this.check();
    if (!this.client.mailbox || this.client.mailbox.exists === 0) return [];
    const out: ListedMessage[] = [];
    for await (const m of this.client.fetch(range, { uid: true, size: true, internalDate: true }, { uid: true })) {
      const item = { uid: m.uid, size: m.size ?? 0, receivedAt: asDate(m.internalDate) };
      if (filter(item)) out.push(item);
    }
    return out.sort((a, b) => a.uid - b.uid);
  }

  /** Messages with a UID above `afterUid`, oldest first; clears the "new mail" flag. */
  async listNew(afterUid: number): Promise<ListedMessage[]> {
    this.changed = false;
    // `n:*` always names the highest message, even below n: filtered.
    return this.list(`${afterUid + 1}:*`, (m) => m.uid > afterUid);
  }

  /** Messages received on or after `since` (SEARCH SINCE is by day: filtered to the instant). */
  async listSince(since: Date): Promise<ListedMessage[]> {
    this.check();
    const uids = await this.client.search({ since }, { uid: true });
    if (!uids || !uids.length) return [];
    return this.list(uids.join(','), (m) => !m.receivedAt || m.receivedAt >= since);
  }

  /** Batches of at most MAX_BATCH messages and MAX_BATCH_BYTES (each source counted up to its bound). */
  static batches(list: ListedMessage[]): ListedMessage[][] {
    const out: ListedMessage[][] = [];
    let cur: ListedMessage[] = [];
    let bytes = 0;
    for (const m of list) {
      const size = Math.min(m.size, MAX_SOURCE_BYTES);
      if (cur.length && (cur.length >= MAX_BATCH || bytes + size > MAX_BATCH_BYTES)) {
        out.push(cur);
        cur = [];
        bytes = 0;
      }
      cur.push(m);
      bytes += size;
    }
    if (cur.length) out.push(cur);
    return out;
  }

  /** The sources of one batch (BODY.PEEK: nothing is marked read), in UID order; `tick` after each message. */
  async fetch(batch: ListedMessage[], tick?: () => void): Promise<FetchedMessage[]> {
    this.check();
    const byUid = new Map(batch.map((m) => [m.uid, m]));
    const out: FetchedMessage[] = [];
    for await (const m of this.client.fetch(
      batch.map((b) => b.uid).join(','),
      { uid: true, source: { maxLength: MAX_SOURCE_BYTES } },
      { uid: true },
    )) {
      const listed = byUid.get(m.uid);
      if (!listed || !m.source) continue;
      out.push({ ...listed, source: m.source, truncated: listed.size > MAX_SOURCE_BYTES });
      tick?.();
    }
    return out.sort((a, b) => a.uid - b.uid);
  }

  /**
   * Waits up to `ms` for new mail: in IDLE until the server announces a message (or the wait ends),
   * else (polling) the poll interval. Returns at once when mail was announced since `listNew`. Throws
   * when the connection is lost, so the caller reconnects.
   */
  async waitForMail(ms: number, opts: WaitOptions = {}): Promise<void> {
    this.check();
    if (this.changed) return;
    if (this.mode === 'poll') {
      await pause(Math.min(ms, this.pollMs), opts);
      this.check();
      // The server reports new messages (EXISTS) in answer to a command.
      await this.client.noop();
      return;
    }
    const announced = new Promise<void>((resolve) => this.waiters.push(resolve));
    const session = this.client.idle();
    await pause(ms, opts, Promise.race([announced, session]));
    // Any command ends IDLE (DONE, then the command); the session settles once the server closed it.
    if (this.client.idling) await this.client.noop();
    // The server refused IDLE after all: poll from now on (the next wait sleeps instead of spinning).
    if ((await session) === false) this.mode = 'poll';
    this.check();
  }

  async close(): Promise<void> {
    this.waiters.splice(0).forEach((w) => w());
    if (this.lost || !this.client.usable) return this.client.close();
    await Promise.race([this.client.logout(), new Promise((r) => setTimeout(r, 5_000))]).catch(() => undefined);
    this.client.close();
  }
}
