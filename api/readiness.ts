import type { Services } from './services.js';

type Check = { ok: boolean; detail?: string };

const PROBE_MS = 2000;

async function probe(fn: () => Promise<string | undefined | void>, timeoutMs = PROBE_MS): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      fn(),
      new Promise<never>(
        (_, rej) => (timer = setTimeout(() => rej(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs)),
      ),
    ]);
    return detail ? { ok: true, detail } : { ok: true };
  } catch (err) {
    return { ok: false, detail: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

export async function checkReadiness(s: Services): Promise<Record<string, Check>> {
  // Temporal calls end with the probe (its deadline), rather than retrying on after it has answered.
  const deadline = () => Date.now() + PROBE_MS;
  const [postgres, redis, temporal, worker] = await Promise.all([
    probe(async () => void (await s.orm.em.getConnection().execute('select 1'))),
    probe(async () => void (await s.redis.ping())),
    probe(() => s.temporalProbe.reachable(deadline())),
    probe(async () => {
      const n = await s.temporalProbe.workflowPollers(deadline());
      if (n === 0) throw new Error(`no worker polling task queue "${s.config.temporal.taskQueue}"`);
      return `${n} poller(s)`;
    }),
  ]);
  return { postgres, redis, temporal, worker };
}
