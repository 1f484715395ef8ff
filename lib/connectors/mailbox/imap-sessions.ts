// One open IMAP session per mail account for what sending needs of IMAP (the Sent lookup before a
// retry, the Sent copy after a send), so a campaign does not log in once per message: providers
// limit logins and concurrent sessions (Gmail: 15), and a login costs more than the append. The
// session's commands run one at a time (a queue per account); it closes after a minute unused, on
// any error (the next use logs in again) and when its account's settings change.
import type { ImapFlow } from 'imapflow';
import { endpointKey, MailConnectError, type MailEndpoint } from './settings.js';

const IDLE_CLOSE_MS = 60_000;
/** The bound on one use (login included): a stalled server fails the call instead of holding the queue. */
const USE_TIMEOUT_MS = 30_000;

interface Session {
  key: string;
  client: Promise<ImapFlow>;
  /** The tail of this account's queue of uses. */
  tail: Promise<unknown>;
  timer: NodeJS.Timeout | null;
  /** Facts worth keeping for the session's life (the Sent folder's path). */
  memo: Map<string, unknown>;
}

export class ImapSessions {
  private readonly sessions = new Map<string, Session>();
  /** Logins made (tests read it to see sessions reused). */
  logins = 0;

  /**
   * Runs `fn` on the account's session for `endpoint` (made with `open` when there is none), after the
   * account's earlier uses. A failure closes the session.
   */
  run<T>(
    accountId: string,
    endpoint: MailEndpoint,
    open: () => Promise<ImapFlow>,
    fn: (client: ImapFlow, memo: Map<string, unknown>) => Promise<T>,
  ): Promise<T> {
    const key = endpointKey(endpoint);
    let s = this.sessions.get(accountId);
    if (s && s.key !== key) {
      this.drop(accountId);
      s = undefined;
    }
    if (!s) {
      const made: Session = {
        key,
        client: Promise.resolve(null as unknown as ImapFlow),
        tail: Promise.resolve(),
        timer: null,
        memo: new Map(),
      };
      // A session that failed or closed is forgotten; a newer one of the same account is left alone.
      const forget = () => this.sessions.get(accountId) === made && this.drop(accountId);
      made.client = open().then(async (c) => {
        c.on('error', forget);
        c.on('close', forget);
        await c.connect();
        this.logins++;
        return c;
      });
      made.client.catch(() => undefined);
      this.sessions.set(accountId, made);
      s = made;
    }
    const session = s;
    if (session.timer) clearTimeout(session.timer);
    const use = session.tail.then(async () => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new MailConnectError(
                'host_unreachable',
                'imap',
                `the IMAP server did not answer within ${USE_TIMEOUT_MS} ms`,
              ),
            ),
          USE_TIMEOUT_MS,
        );
      });
      try {
        return await Promise.race([session.client.then((c) => fn(c, session.memo)), deadline]);
      } catch (err) {
        if (this.sessions.get(accountId) === session) this.drop(accountId);
        throw err;
      } finally {
        clearTimeout(timer);
      }
    });
    const tail = use.catch(() => undefined);
    session.tail = tail;
    // Unused for a minute after the last queued use: logged out.
    void tail.then(() => {
      if (this.sessions.get(accountId) !== session || session.tail !== tail) return;
      session.timer = setTimeout(() => this.sessions.get(accountId) === session && this.drop(accountId), IDLE_CLOSE_MS);
      session.timer.unref();
    });
    return use;
  }

  /** Closes and forgets the account's session (idempotent). */
  drop(accountId: string): void {
    const s = this.sessions.get(accountId);
    if (!s) return;
    this.sessions.delete(accountId);
    if (s.timer) clearTimeout(s.timer);
    s.client.then((c) => c.logout().catch(() => c.close())).catch(() => undefined);
  }

  closeAll(): void {
    for (const id of [...this.sessions.keys()]) this.drop(id);
  }
}
