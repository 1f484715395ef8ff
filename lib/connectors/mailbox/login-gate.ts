// Logins to mail servers, spread over time (docs/email.md "Receiving"): a handshake (TCP, TLS, LOGIN
// or XOAUTH2, SELECT) costs the server and us far more than an idle session, and providers limit how
// often an account may log in. The mailbox-session service opens every session through one gate: at
// most `concurrency` handshakes at once and `perSecond` started per second, so a fleet's start-up or
// a mail server's restart resumes as a steady stream rather than a storm. Failed sessions wait a
// jittered exponential backoff (`reconnectDelay`) before they queue again.

export interface LoginGateOptions {
  /** Handshakes in flight at once (default 16). */
  concurrency?: number;
  /** Handshakes started per second at most (default 40). */
  perSecond?: number;
}

export class LoginGate {
  private readonly concurrency: number;
  private readonly interval: number;
  private active = 0;
  private nextStart = 0;
  private readonly queue: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** Handshakes started, and the highest count started within one second (for metrics and the bench). */
  started = 0;
  peakPerSecond = 0;
  private second = 0;
  private inSecond = 0;

  constructor(opts: LoginGateOptions = {}) {
    this.concurrency = Math.max(1, opts.concurrency ?? 16);
    this.interval = 1000 / Math.max(1, opts.perSecond ?? 40);
  }

  /** Handshakes waiting for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Runs `handshake` when a slot and the rate allow; aborted while waiting: rejects with the signal's reason. */
  async run<T>(handshake: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.queue.indexOf(go);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(go);
      this.pump();
    });
    try {
      return await handshake();
    } finally {
      this.active--;
      this.pump();
    }
  }

  private pump(): void {
    while (this.queue.length && this.active < this.concurrency) {
      const now = Date.now();
      if (now < this.nextStart) {
        if (!this.timer) {
          this.timer = setTimeout(() => {
            this.timer = null;
            this.pump();
          }, this.nextStart - now);
        }
        return;
      }
      this.nextStart = Math.max(now, this.nextStart) + this.interval;
      this.active++;
      this.count(now);
      this.queue.shift()!();
    }
  }

  private count(now: number): void {
    this.started++;
    const s = Math.floor(now / 1000);
    if (s !== this.second) {
      this.second = s;
      this.inSecond = 0;
    }
    this.peakPerSecond = Math.max(this.peakPerSecond, ++this.inSecond);
  }
}

/**
 * The wait before reconnect attempt `attempt` (1, 2, …): exponential from `baseMs`, capped at
 * `maxMs`, with "equal jitter" (half fixed, half random) so sessions cut at the same moment do not
 * come back at the same moment.
 */
export function reconnectDelay(attempt: number, baseMs = 1_000, maxMs = 5 * 60_000, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
