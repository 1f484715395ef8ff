// `npm run build`: compiles the run-time code to dist/ (tsconfig.build.json), then bundles the
// workflow code once into dist/workflow-bundle.js, so a production worker never runs webpack at start-up.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { repoRoot } from '../lib/config.js';

const dist = join(repoRoot, 'dist');
const log = (msg: string) => console.error(`[build] ${msg}`);

// A clean build: tsc never deletes outputs of removed sources, and a stale migration must not ship.
rmSync(dist, { recursive: true, force: true });
log('tsc -p tsconfig.build.json');
const tsc = spawnSync(
  process.execPath,
  [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
  { cwd: repoRoot, stdio: 'inherit' },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

log('bundling workflows');
// From the compiled JavaScript, so the bundle holds exactly the code tsc emitted beside it.
// With the workflow interceptors the worker registers from source (workers/interceptors.ts).
const { code } = await bundleWorkflowCode({
  workflowsPath: join(dist, 'workflows/index.js'),
  workflowInterceptorModules: [join(dist, 'workflows/metrics-interceptors.js')],
  logger: new DefaultLogger('WARN'),
});
writeFileSync(join(dist, 'workflow-bundle.js'), code);
log(`done: dist/ and dist/workflow-bundle.js (${Math.round(code.length / 1024)} KiB)`);
