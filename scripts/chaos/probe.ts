// What clients saw while the chaos harness broke things: every API process probed in a loop with
// authenticated reads, each answer tallied under the phase (fault) it fell in. A 5xx other than 503
// with Retry-After, or an answer slower than HANG_MS, breaks the promise; a refused connection is
// what a killed process gives (a load balancer retries it elsewhere).
export const HANG_MS = 15_000;

export interface Tally {
  ok: number;
  /** 503 with a Retry-After header: the dependency is down, retry later. */
  unavailable: number;
  /** Any other 5xx, or a 503 without Retry-After. */
  broken: number;
  /** 4xx: the probe's own request was wrong (should stay 0). */
  refusedByApi: number;
  /** No TCP connection: the process is down. */
  unreachable: number;
  hung: number;
  maxMs: number;
  examples: string[];
}

const emptyTally = (): Tally => ({
  ok: 0,
  unavailable: 0,
  broken: 0,
  refusedByApi: 0,
  unreachable: 0,
  hung: 0,
  maxMs: 0,
  examples: [],
});

export class Prober {
  phase = 'setup';
  readonly tallies = new Map<string, Tally>();
  /** Per base, when it last answered a probe with 2xx. */
  readonly lastOk = new Map<string, number>();
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly bases: () => string[],
    private readonly token: string,
    private readonly paths: string[],
  ) {}

  start(): void {
    this.running = true;
    this.loops = this.bases().map((_, i) => this.loop(i));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  tally(phase: string): Tally {
    let t = this.tallies.get(phase);
    if (!t) this.tallies.set(phase, (t = emptyTally()));
    return t;
  }

  /** True once every base answered 2xx after `since`. */
  allOkSince(since: number): boolean {
    return this.bases().every((b) => (this.lastOk.get(b) ?? 0) > since);
  }

  private async loop(i: number): Promise<void> {
    for (let n = 0; this.running; n++) {
      const base = this.bases()[i];
      const path = this.paths[n % this.paths.length];
      await this.probe(base, path);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async probe(base: string, path: string): Promise<void> {
    const t = this.tally(this.phase);
    const started = Date.now();
    try {
      const res = await fetch(base + path, {
        headers: { authorization: `Bearer ${this.token}` },
        signal: AbortSignal.timeout(HANG_MS),
      });
      const text = await res.text();
      const ms = Date.now() - started;
      t.maxMs = Math.max(t.maxMs, ms);
      if (res.status < 400) {
        t.ok++;
        this.lastOk.set(base, Date.now());
      } else if (res.status === 503 && res.headers.get('retry-after')) t.unavailable++;
      else if (res.status >= 500) {
        t.broken++;
        if (t.examples.length < 5) t.examples.push(`${res.status} ${path}: ${text.slice(0, 200)}`);
      } else {
        t.refusedByApi++;
        if (t.examples.length < 5) t.examples.push(`${res.status} ${path}: ${text.slice(0, 200)}`);
      }
    } catch (err) {
      const e = err as { name?: string; cause?: { code?: string } };
      if (e.name === 'TimeoutError') {
        t.hung++;
        if (t.examples.length < 5) t.examples.push(`no answer within ${HANG_MS} ms: ${path}`);
      } else t.unreachable++;
      t.maxMs = Math.max(t.maxMs, Date.now() - started);
    }
  }
}
