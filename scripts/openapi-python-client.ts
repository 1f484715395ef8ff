// openapi-python-client (PyPI) for the generator test (test/api/openapi-clients.test.ts), installed
// once per machine into a virtualenv in the per-user cache outside the clone, like schemathesis
// (scripts/schemathesis.ts). The generated client's runtime dependencies go into the same venv, so
// the test can import the package it generates without a second install per run.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureVenv } from './python-venv.js';

export const OPENAPI_PYTHON_CLIENT_VERSION = '0.29.1';

/** What the generated client imports at run time (its pyproject's dependencies; 0.29 parses dates with the standard library, no python-dateutil). */
const CLIENT_RUNTIME = ['httpx>=0.23.1,<0.29.0', 'attrs>=22.2.0'];

/** Returns the venv's python, installing the pinned generator and the client's runtime on first use (`python -m openapi_python_client`). */
export function ensureOpenApiPythonClient(log: (msg: string) => void = () => {}): Promise<string> {
  return ensureVenv(
    `openapi-python-client-${OPENAPI_PYTHON_CLIENT_VERSION}`,
    [`openapi-python-client==${OPENAPI_PYTHON_CLIENT_VERSION}`, ...CLIENT_RUNTIME],
    log,
  );
}

/** The header of one of the generator's warnings (openapi_python_client/cli.py, parser/, utils.py). */
const WARNING_HEADER =
  /^(WARNING parsing |Unable to (parse|process|generate) |Failed to |Endpoint requires |Problem creating )/;

/**
 * Each warning the generator printed, as its header and detail on one line. It reports this way every
 * schema, parameter, body or response it could not generate and so left out of the client. Its
 * output is paragraphs: a header, a detail, the offending part as JSON.
 */
export function generatorWarnings(output: string): string[] {
  const out: string[] = [];
  const tidy = (s: string) =>
    s
      .replace(/<openapi_python_client\.[\w.]+ object at 0x[0-9a-f]+>/g, '<?>')
      .replace(/\s+/g, ' ')
      .trim();
  const start = output.search(/(Warning|Error)\(s\) encountered/);
  if (start === -1) return out;
  // A paragraph right after a header is its detail, even when it reads like a header itself
  // ("Unable to parse schema X", then "Unable to parse this part of your OpenAPI document: …").
  let afterHeader = false;
  const rest = output.slice(start).replace(/^.*\n/, ''); // after the summary line
  for (const para of rest.split(/\n\s*\n/)) {
    const text = para.trim();
    if (!text || text.startsWith('If you believe this was a mistake')) continue;
    if (/^[{["]/.test(text)) {
      afterHeader = false;
      continue;
    }
    if (text.startsWith('WARNING parsing ') || !out.length || (WARNING_HEADER.test(text) && !afterHeader)) {
      out.push(tidy(text));
      afterHeader = true;
    } else {
      // The lead-in to the JSON that follows says nothing the header does not.
      if (!text.startsWith('Failure to process schema has resulted in the removal of'))
        out[out.length - 1] += ` — ${tidy(text)}`;
      afterHeader = false;
    }
  }
  // The summary line with no warning parsed after it still means something was dropped.
  return out.length ? out : [tidy(output.slice(start, start + 2000))];
}

/** Imports every module of the package; prints each distinct failure once with how many modules it broke. */
const IMPORT_ALL = `import collections, importlib, os, sys
root, name = os.path.split(sys.argv[1])
sys.path.insert(0, root)
failures = collections.OrderedDict()
for folder, _, files in sorted(os.walk(sys.argv[1])):
    for f in sorted(files):
        if not f.endswith(".py"):
            continue
        parts = [name, *os.path.relpath(folder, sys.argv[1]).split(os.sep), f[:-3]]
        module = ".".join(p for p in parts if p not in (".", "__init__"))
        try:
            importlib.import_module(module)
        except Exception as e:
            failures.setdefault(f"{type(e).__name__}: {e}".replace("\\n", " "), []).append(module)
for error, modules in failures.items():
    print(f"{error} ({len(modules)} module(s), e.g. {modules[0]})")
`;

/**
 * What fails to import in the generated package (e.g. the SyntaxError openapi-python-client 0.29.1
 * writes for a `const: true` property), each distinct error once.
 */
export async function importFailures(py: string, packageDir: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(py, ['-c', IMPORT_ALL, packageDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.once('error', reject);
    child.once('exit', () => resolve(text.split('\n').filter(Boolean)));
  });
}

/**
 * Generates the client package `outreach_client` into `outDir/outreach_client` (no project metadata,
 * no post-hooks: the formatter's output is not what is checked). `warnings` lists what it dropped.
 */
export async function generatePythonClient(
  py: string,
  docPath: string,
  outDir: string,
): Promise<{ code: number; warnings: string[]; output: string; packageDir: string }> {
  mkdirSync(outDir, { recursive: true });
  const config = join(outDir, 'generator.yaml');
  writeFileSync(config, 'post_hooks: []\n');
  const packageDir = join(outDir, 'outreach_client');
  const args = [
    '-m',
    'openapi_python_client',
    'generate',
    '--path',
    docPath,
    '--output-path',
    packageDir,
    '--meta',
    'none',
    '--config',
    config,
    '--overwrite',
  ];
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(py, args, {
        cwd: outDir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1', TERM: 'dumb' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('error', reject);
      child.once('exit', (c) => resolve({ code: c ?? 1, stdout, stderr }));
    },
  );
  return { code, warnings: generatorWarnings(stdout + stderr), output: stdout + stderr, packageDir };
}
