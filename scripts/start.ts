// `npm start`: local stack (PostgreSQL, Redis, Temporal + UI) → migrations → worker and API.
import { spawnTsx, stopChild, waitFor } from './children.js';
import { stackWithSchema } from './stack-env.js';

const log = (msg: string) => console.error(`[start] ${msg}`);
const port = Number(process.env.PORT ?? 3000);
const { stack, env } = await stackWithSchema(log);
const worker = spawnTsx('workers/worker.ts', env);
const api = spawnTsx('api/server.ts', { ...env, PORT: String(port) });

let stopping = false;
async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  log('stopping…');
  await Promise.all([stopChild(api), stopChild(worker)]);
  await stack.stop();
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
for (const [name, child] of [
  ['API', api],
  ['worker', worker],
] as const) {
  child.once('exit', (code) => {
    if (!stopping) {
      log(`${name} exited with ${code}; shutting down`);
      void shutdown(1);
    }
  });
}

const base = `http://127.0.0.1:${port}`;
await waitFor('the API to become ready', async () => (await fetch(`${base}/readyz`)).ok, 120_000);
console.log(
  `ready: API ${base}  docs ${base}/docs  Temporal UI ${stack.temporalUiUrl ?? '(external Temporal: see its own UI)'}`,
);
