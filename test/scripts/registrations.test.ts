// The registrations a new job needs besides its workflow and activities files (docs/architecture.md,
// "Add a long-running job"): the ones tsc does not see are checked here. Every workflow function a
// workflows/ file exports is registered (exported by workflows/index.ts, the worker's bundle), and
// every activity factory of activities/ is spread into the worker's activities (activities/index.ts).
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../lib/config.js';
import * as registered from '../../workflows/index.js';

const NOT_WORKFLOWS = new Set(['index.ts', 'job.ts', 'search-attributes.ts', 'metrics-interceptors.ts']);

test('every workflow function exported by a workflows/ file is registered in workflows/index.ts', async (t) => {
  const missing: string[] = [];
  const files = readdirSync(join(repoRoot, 'workflows')).filter((f) => f.endsWith('.ts') && !NOT_WORKFLOWS.has(f));
  t.true(files.length > 20, 'the workflow files are found');
  for (const file of files) {
    const mod = (await import(`../../workflows/${file.replace(/\.ts$/, '.js')}`)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod))
      if (typeof value === 'function' && value.constructor.name === 'AsyncFunction' && !(name in registered))
        missing.push(`${file}: ${name}`);
  }
  t.deepEqual(missing, []);
});

test('every activity factory of activities/ is spread into createActivities (activities/index.ts)', (t) => {
  const dir = join(repoRoot, 'activities');
  const index = readFileSync(join(dir, 'index.ts'), 'utf8');
  const factories = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
    .flatMap((f) =>
      [...readFileSync(join(dir, f), 'utf8').matchAll(/export function (create\w+Activities)\(/g)].map((m) => m[1]),
    );
  t.true(factories.length > 20, 'the factories are found');
  t.deepEqual(
    factories.filter((name) => !new RegExp(`\\.\\.\\.${name}\\(deps\\)`).test(index)),
    [],
  );
});
