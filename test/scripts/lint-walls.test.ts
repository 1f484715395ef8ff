// The layer walls are the linter's (eslint.config.js): each probe is linted as if it were a file of
// that layer, and what the architecture forbids there is reported, what it allows is not.
import test from 'ava';
import { ESLint } from 'eslint';
import { repoRoot } from '../../lib/config.js';

const RULE = '@typescript-eslint/no-restricted-imports';
const eslint = new ESLint({ cwd: repoRoot });

/** The restricted imports reported for `code` placed at `file` (an existing file of the layer). */
async function refused(file: string, code: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath: `${repoRoot}/${file}` });
  return r.messages.filter((m) => m.ruleId === RULE).map((m) => /'([^']+)'/.exec(m.message)?.[1] ?? m.message);
}

const probe = (imports: string[]) => `${imports.join('\n')}\nexport const probe = 1;\n`;

test('workflow files: no Node built-ins, nothing of lib/ but the workflow ids (types allowed), no domain/db/activities values', async (t) => {
  const got = await refused(
    'workflows/enrollments.ts',
    probe([
      "import { readFileSync } from 'node:fs';",
      "import { createHash } from 'crypto';",
      "import { logger } from '../lib/logger.js';",
      "import { authorize } from '../domain/access.js';",
      "import type { Usage } from '../lib/llm/types.js';",
      "import type { Jobs } from '../domain/jobs.js';",
      "import { enrollmentWorkflowIds } from '../lib/workflow-ids.js';",
    ]),
  );
  t.deepEqual(got.sort(), ['../domain/access.js', '../lib/logger.js', 'crypto', 'node:fs']);
});

test('domain/: no Temporal SDK, no ioredis, no jobs/', async (t) => {
  const got = await refused(
    'domain/access.ts',
    probe([
      "import { Client } from '@temporalio/client';",
      "import { Redis } from 'ioredis';",
      "import { temporalJobs } from '../jobs/temporal.js';",
      "import { z } from 'zod';",
    ]),
  );
  t.deepEqual(got.sort(), ['../jobs/temporal.js', '@temporalio/client', 'ioredis']);
});

test('activities/ never reach jobs/ (their port comes in ActivityDeps); api/ reaches it only through the services factory', async (t) => {
  t.deepEqual(await refused('activities/inbox.ts', probe(["import { temporalJobs } from '../jobs/temporal.js';"])), [
    '../jobs/temporal.js',
  ]);
  t.deepEqual(await refused('api/router.ts', probe(["import { temporalJobs } from '../jobs/temporal.js';"])), [
    '../jobs/temporal.js',
  ]);
  t.deepEqual(
    await refused('api/services-factory.ts', probe(["import { temporalJobs } from '../jobs/temporal.js';"])),
    [],
  );
});

test('no Temporal client outside jobs/, workers/ and scripts/ (the services factory names it through jobs/connection.ts)', async (t) => {
  const client = probe(["import type { Client } from '@temporalio/client';"]);
  for (const file of [
    'api/readiness.ts',
    'api/services-factory.ts',
    'activities/inbox.ts',
    'lib/config.ts',
    'db/orm.ts',
    'workflows/inbox.ts',
  ])
    t.deepEqual(await refused(file, client), ['@temporalio/client'], file);
  for (const file of ['jobs/temporal.ts', 'workers/worker.ts', 'scripts/stack.ts'])
    t.deepEqual(await refused(file, client), [], file);
});
