// The generator checks of the OpenAPI document (test/api/openapi-clients.test.ts): TypeScript types
// from openapi-typescript that a strict `tsc` accepts, with openapi-fetch's typed client over them (a
// tour of the API, scripts/sdk-tours/openapi-fetch-tour.ts); a Python client from openapi-python-client
// that drops nothing and installs with pip; and a Redocly lint (redocly.yaml) with no problem. Also a
// CLI for iterating on the document without the test stack: `npx tsx scripts/openapi-clients.ts
// [doc.json]` (default: the document this checkout builds) prints what each tool reports.
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { repoRoot } from '../lib/config.js';
import {
  ensureOpenApiPythonClient,
  ensurePythonSdkBase,
  generatePythonClient,
  importFailures,
  installPythonClient,
} from './openapi-python-client.js';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; past `timeoutMs` (default 5 min) it is killed and reported as exit 124. */
export function runTool(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? repoRoot,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGKILL');
      },
      opts.timeoutMs ?? 5 * 60_000,
    );
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (timedOut) stderr += `\n(killed after ${opts.timeoutMs ?? 5 * 60_000} ms)`;
      resolve({ code: timedOut ? 124 : (code ?? 1), stdout, stderr });
    });
  });
}

/**
 * A small typed client over the generated `paths`/`components`: the response and body types of
 * GET /api/users/me, POST /api/apps and GET /api/apps. The `@ts-expect-error` lines fail the check
 * (as unused directives) when a type has decayed to `any`, so "compiles" also means "is typed".
 */
const CLIENT_TS = `import type { components, paths } from './openapi-fetch-schema.js';

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Me = JsonOf<paths['/api/users/me']['get']['responses'][200]>;
type CreateApp = NonNullable<paths['/api/apps']['post']['requestBody']>['content']['application/json'];
type App = JsonOf<paths['/api/apps']['post']['responses'][201]>;
type AppPage = JsonOf<paths['/api/apps']['get']['responses'][200]>;
type ApiError = components['schemas']['ApiError'];

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(((await res.json()) as ApiError).error.code);
  return (await res.json()) as T;
}

export async function tour(base: string, token: string): Promise<{ email: string; created: string; names: string[]; next: string | null }> {
  const headers = { authorization: \`Bearer \${token}\`, 'content-type': 'application/json' };
  const me = await json<Me>(await fetch(\`\${base}/api/users/me\`, { headers }));
  const body: CreateApp = { name: 'Typed product', description: 'made by a typed client' };
  // @ts-expect-error name is required
  const nameless: CreateApp = { description: 'no name' };
  void nameless;
  const app = await json<App>(await fetch(\`\${base}/api/apps\`, { method: 'POST', headers, body: JSON.stringify(body) }));
  const page = await json<AppPage>(await fetch(\`\${base}/api/apps\`, { headers }));
  // @ts-expect-error the email is a string
  const wrong: number = me.email;
  void wrong;
  const created: string = app.id;
  const createdAt: string = app.created_at;
  void createdAt;
  return { email: me.email, created, names: page.items.map((a) => a.name), next: page.next_cursor };
}
`;

/**
 * openapi-fetch's client over the generated `paths`: the same kind of `@ts-expect-error` lines, so a
 * path, parameter, body or answer whose type decayed to `any` (or lost its shape) fails the check.
 */
const FETCH_TYPED_TS = `import createClient from 'openapi-fetch';
import type { paths } from './openapi-fetch-schema.js';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });

export async function typed(): Promise<void> {
  const got = await client.GET('/api/campaigns/{campaignId}', { params: { path: { campaignId: 'id' } } });
  // @ts-expect-error a campaign's name is a string
  const name: number | undefined = got.data?.name;
  // @ts-expect-error an error's code is a string
  const code: number | undefined = got.error?.error.code;
  void name;
  void code;
  // @ts-expect-error not a path of the document
  await client.GET('/api/no-such-path');
  // @ts-expect-error campaignId is required
  await client.GET('/api/campaigns/{campaignId}', { params: { path: {} } });
  // @ts-expect-error a campaign needs its time zone
  await client.POST('/api/apps/{appId}/campaigns', { params: { path: { appId: 'id' } }, body: { name: 'n' } });
  // @ts-expect-error people is an array
  await client.POST('/api/lists/{listId}/leads', { params: { path: { listId: 'id' } }, body: { people: 'ada' } });
}
`;

/** The openapi-fetch tour (its schema import resolves, in the check's directory, to the generated types). */
const FETCH_TOUR = join(repoRoot, 'scripts', 'sdk-tours', 'openapi-fetch-tour.ts');

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM'], // fetch and Response without @types/node: the directory stands alone
    types: [],
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    outDir: 'out',
    rootDir: '.',
  },
  files: ['openapi-fetch-schema.ts', 'client.ts', 'openapi-fetch-typed.ts', 'openapi-fetch-tour.ts'],
};

/**
 * openapi-typescript's types of the document (openapi-fetch-schema.ts) with CLIENT_TS, FETCH_TYPED_TS
 * and the openapi-fetch tour, compiled by `tsc --strict --skipLibCheck false` in `dir` (an ES module
 * package whose node_modules is the repository's: openapi-fetch as installed) into `dir/out`.
 * Returns tsc's diagnostics (none when it exits 0); then runOpenApiFetchTour runs the output.
 */
export async function checkTypeScriptClient(
  doc: object,
  dir: string,
): Promise<{ code: number; errors: string[]; output: string }> {
  mkdirSync(dir, { recursive: true });
  let schema: string;
  try {
    schema = astToString(await openapiTS(structuredClone(doc) as Parameters<typeof openapiTS>[0], { silent: true }));
  } catch (err) {
    return {
      code: 1,
      errors: [`openapi-typescript failed: ${(err as Error).message}`],
      output: String((err as Error).stack),
    };
  }
  writeFileSync(join(dir, 'openapi-fetch-schema.ts'), schema);
  writeFileSync(join(dir, 'client.ts'), CLIENT_TS);
  writeFileSync(join(dir, 'openapi-fetch-typed.ts'), FETCH_TYPED_TS);
  copyFileSync(FETCH_TOUR, join(dir, 'openapi-fetch-tour.ts'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  if (!existsSync(join(dir, 'node_modules')))
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = await runTool(
    process.execPath,
    [tsc, '-p', join(dir, 'tsconfig.json'), '--strict', '--skipLibCheck', 'false', '--pretty', 'false'],
    { cwd: dir },
  );
  const output = r.stdout + r.stderr;
  return { code: r.code, errors: output.split('\n').filter((l) => /error TS\d+/.test(l)), output };
}

/** Imports the compiled tour and prints what `tour(input)` returns, as JSON. */
const RUN_TOUR = `const { tour } = await import(process.argv[1]);
process.stdout.write(JSON.stringify(await tour(JSON.parse(process.argv[2]))));`;

/** Runs the openapi-fetch tour that checkTypeScriptClient compiled in `dir` (a Node process of its own). */
export function runOpenApiFetchTour(dir: string, input: object, timeoutMs = 60_000): Promise<Ran> {
  const tour = pathToFileURL(join(dir, 'out', 'openapi-fetch-tour.js')).href;
  return runTool(process.execPath, ['--input-type=module', '-e', RUN_TOUR, tour, JSON.stringify(input)], {
    cwd: dir,
    timeoutMs,
  });
}

export interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  pointer: string;
}

/** `redocly lint` with the repository's redocly.yaml (the recommended ruleset): every problem it reports. */
export async function redoclyLint(docPath: string): Promise<{ code: number; problems: LintProblem[]; output: string }> {
  const cli = join(repoRoot, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
  const env = {
    ...process.env,
    REDOCLY_TELEMETRY: 'off',
    REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    NO_UPDATE_NOTIFIER: '1',
  };
  const args = [
    cli,
    'lint',
    docPath,
    '--config',
    join(repoRoot, 'redocly.yaml'),
    '--format',
    'json',
    '--max-problems',
    '100000',
  ];
  const r = await runTool(process.execPath, args, { env });
  try {
    const report = JSON.parse(r.stdout) as {
      problems: { ruleId: string; severity: string; message: string; location?: { pointer?: string }[] }[];
    };
    const problems = report.problems.map((p) => ({
      ruleId: p.ruleId,
      severity: p.severity,
      message: p.message,
      pointer: p.location?.[0]?.pointer ?? '',
    }));
    return { code: r.code, problems, output: r.stderr };
  } catch {
    return {
      code: r.code || 1,
      problems: [{ ruleId: 'redocly-cli', severity: 'error', message: `no JSON report (exit ${r.code})`, pointer: '' }],
      output: r.stdout + r.stderr,
    };
  }
}

/** Problems counted by severity and rule, most frequent first: `warn no-… ×13`. */
export function lintSummary(problems: LintProblem[]): string[] {
  const counts = new Map<string, number>();
  for (const p of problems) counts.set(`${p.severity} ${p.ruleId}`, (counts.get(`${p.severity} ${p.ruleId}`) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ×${n}`);
}

async function main(docArg: string | undefined): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-clients-'));
  try {
    let docPath = docArg;
    if (!docPath) {
      const { allOperations } = await import('../api/operations.js');
      const { buildOpenApi } = await import('../api/openapi.js');
      docPath = join(dir, 'openapi.json');
      writeFileSync(docPath, JSON.stringify(buildOpenApi(allOperations())));
    }
    const doc = JSON.parse(readFileSync(docPath, 'utf8')) as object;
    let failed = 0;
    const ts = await checkTypeScriptClient(doc, join(dir, 'ts'));
    console.log(`\n== openapi-typescript + tsc: ${ts.errors.length} error(s)`);
    for (const e of ts.errors) console.log(e);
    if (ts.code !== 0) failed++;
    const python = await ensureOpenApiPythonClient(console.error);
    const py = await generatePythonClient(python, docPath, join(dir, 'py'));
    console.log(`\n== openapi-python-client: ${py.warnings.length} warning(s)`);
    for (const w of py.warnings) console.log(`- ${w}`);
    let broken: string[] = [];
    if (py.code === 0 && py.projectDir) {
      const installed = await installPythonClient(
        await ensurePythonSdkBase(console.error),
        py.projectDir,
        join(dir, 'venv'),
      );
      console.log(`== pip install ${py.projectDir}: exit ${installed.code}`);
      if (installed.code !== 0) console.log(installed.output.slice(-4000));
      else broken = await importFailures(installed.python, py.packageName, dir);
      if (installed.code !== 0) failed++;
    }
    console.log(`== installed package ${py.packageName}: ${broken.length} import failure(s)`);
    for (const b of broken) console.log(`- ${b}`);
    if (py.code !== 0 || py.warnings.length || broken.length) failed++;
    const lint = await redoclyLint(docPath);
    console.log(`\n== redocly lint: ${lint.problems.length} problem(s)`);
    for (const s of lintSummary(lint.problems)) console.log(s);
    for (const p of lint.problems) console.log(`  ${p.ruleId}: ${p.message} (${p.pointer})`);
    if (lint.problems.length) failed++;
    return failed ? 1 : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv[2]);
}
