// Lint = the layering rules (docs/architecture.md) and promises nobody awaits. Nothing stylistic:
// the rules here are the ones whose breach is a defect, so `npm test` and CI fail on any finding.
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

/** Import specifiers that reach a layer, however many `../` precede it. */
const layer = (name) => [`**/${name}/*`, `**/${name}/**`, `${name}/*`];
const banned = (layers, message, allowTypeImports = false) => ({
  group: layers.flatMap(layer),
  message,
  allowTypeImports,
});
/** Only jobs/, workers/ and scripts/ hold a Temporal client; everyone else reaches Temporal through the Jobs port. */
const TEMPORAL_CLIENT = {
  group: ['@temporalio/client'],
  message:
    'Only jobs/, workers/ and scripts/ hold a Temporal client: reach Temporal through the Jobs port (domain/jobs.ts).',
};
/** Node's built-in modules by their bare names (`node:` names are banned by prefix). */
const NODE_BUILTINS = builtinModules.filter((m) => !m.startsWith('_'));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'eslint.config.js'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              ['db', 'domain', 'jobs', 'workflows', 'activities', 'api', 'workers', 'scripts'],
              'lib/ is the bottom layer: it imports nothing above it.',
            ),
            TEMPORAL_CLIENT,
          ],
        },
      ],
    },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              ['domain', 'jobs', 'workflows', 'activities', 'api', 'workers', 'scripts'],
              'db/ holds entities and migrations: it imports only lib/.',
            ),
            TEMPORAL_CLIENT,
          ],
        },
      ],
    },
  },
  {
    files: ['domain/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              ['jobs', 'workflows', 'activities', 'api', 'workers', 'scripts'],
              'domain/ reaches Temporal only through its Jobs port (domain/jobs.ts).',
            ),
            {
              group: ['@temporalio/*'],
              message: 'domain/ reaches Temporal only through its Jobs port (domain/jobs.ts).',
            },
            { group: ['ioredis'], message: 'domain/ takes Redis from its caller (lib/ names the types it needs).' },
          ],
        },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          // Built-ins by exact name (a pattern `domain` would also match our domain/ folder).
          paths: NODE_BUILTINS.map((name) => ({
            name,
            message: 'Workflow code runs in the deterministic sandbox: no Node built-ins.',
          })),
          patterns: [
            banned(
              ['activities', 'domain', 'db'],
              'Workflow code runs in the deterministic sandbox: only `import type` from activities/, domain/ and db/.',
              true,
            ),
            banned(['jobs', 'api', 'workers', 'scripts'], 'Workflow code runs in the deterministic sandbox.'),
            // Of lib/, only the workflow ids are sandbox-safe code; its types may be named.
            {
              group: ['**/lib/*', '!**/lib/workflow-ids.js'],
              message: 'Workflow code imports only lib/workflow-ids.js from lib/ (types excepted).',
              allowTypeImports: true,
            },
            { group: ['node:*'], message: 'Workflow code runs in the deterministic sandbox: no Node built-ins.' },
            TEMPORAL_CLIENT,
          ],
        },
      ],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(['api', 'workers', 'scripts'], 'Nothing imports api/ but the server; activities sit below it.'),
            banned(
              ['jobs'],
              'Activities get their Jobs port in ActivityDeps (workers/worker.ts builds it): they never build a Temporal client.',
            ),
            TEMPORAL_CLIENT,
          ],
        },
      ],
    },
  },
  {
    files: ['jobs/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              ['api', 'workers', 'scripts'],
              'Nothing imports api/ but the server; the Temporal adapter sits below it.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['api/**/*.ts'],
    ignores: ['api/services-factory.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            banned(
              ['jobs'],
              'api/ reaches jobs/ only through the services factory (api/services-factory.ts): handlers use services.jobs.',
            ),
            TEMPORAL_CLIENT,
          ],
        },
      ],
    },
  },
  {
    files: ['api/services-factory.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [TEMPORAL_CLIENT] }] },
  },
  {
    files: ['workers/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [banned(['api', 'scripts'], 'Nothing imports api/ but the server.')] },
      ],
    },
  },
);
