// openapi-python-client (PyPI) for the generator test (test/api/openapi-clients.test.ts), installed
// once per machine into a virtualenv in the per-user cache outside the clone, like schemathesis
// (scripts/schemathesis.ts). It generates the client as a project with its package metadata, and the
// test installs that project the way an integrator would, `pip install <project>`, into a virtualenv of
// its own per run (installPythonClient): the build backend and the client's dependencies come from a
// second cached virtualenv, so a run neither downloads nor builds anything but the generated package.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureVenv } from './python-venv.js';

export const OPENAPI_PYTHON_CLIENT_VERSION = '0.29.1';

/**
 * The project metadata the generator writes (`--meta`): with `pdm`, a standard (PEP 621) pyproject.toml
 * whose build backend is pdm-backend, which plain `pip install <dir>` builds and installs. (0.29.1 also
 * offers poetry, its default, written as the older `[tool.poetry]` tables; uv; and setup, a setup.py.)
 */
export const PYTHON_CLIENT_META = 'pdm';

/**
 * What installing the generated project takes, pinned: the build backend its pyproject names
 * (`requires = ["pdm-backend"]`) and its dependencies (0.29.1's templates: `httpx>=0.23.1,<0.29.0`,
 * `attrs>=22.2.0`, no python-dateutil). Installed once per machine (venv-python-client-sdk-<hash>).
 */
const SDK_BASE = ['pdm-backend==2.5.0', 'httpx==0.28.1', 'attrs==26.1.0'];

/** Runs a command to its end, its output merged; past 5 minutes it is killed (exit 124). */
function run(cmd: string, args: string[], cwd?: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', TERM: 'dumb' },
    });
    let output = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, 5 * 60_000);
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(timedOut ? { code: 124, output: `${output}\n(killed after 5 minutes)` } : { code: code ?? 1, output });
    });
  });
}

/** Returns the venv's python, installing the pinned generator on first use (`python -m openapi_python_client`). */
export function ensureOpenApiPythonClient(log: (msg: string) => void = () => {}): Promise<string> {
  return ensureVenv(
    `openapi-python-client-${OPENAPI_PYTHON_CLIENT_VERSION}`,
    [`openapi-python-client==${OPENAPI_PYTHON_CLIENT_VERSION}`],
    log,
  );
}

/** The python of the cached virtualenv with the generated project's build backend and dependencies (SDK_BASE). */
export function ensurePythonSdkBase(log: (msg: string) => void = () => {}): Promise<string> {
  const hash = createHash('sha256').update(SDK_BASE.join('\n')).digest('hex').slice(0, 10);
  return ensureVenv(`python-client-sdk-${hash}`, SDK_BASE, log);
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

/**
 * Imports every module of the installed package `argv[1]` (found through the interpreter's own
 * sys.path, the working directory left out); prints each distinct failure once with how many modules
 * it broke.
 */
const IMPORT_ALL = `import collections, importlib, importlib.util, os, sys
sys.path = [p for p in sys.path if p not in ("", os.getcwd())]
name = sys.argv[1]
spec = importlib.util.find_spec(name)
if spec is None or not spec.submodule_search_locations:
    print(f"ModuleNotFoundError: no installed package {name} (1 module(s), e.g. {name})")
    sys.exit()
root = spec.submodule_search_locations[0]
failures = collections.OrderedDict()
for folder, _, files in sorted(os.walk(root)):
    for f in sorted(files):
        if not f.endswith(".py"):
            continue
        parts = [name, *os.path.relpath(folder, root).split(os.sep), f[:-3]]
        module = ".".join(p for p in parts if p not in (".", "__init__"))
        try:
            importlib.import_module(module)
        except Exception as e:
            failures.setdefault(f"{type(e).__name__}: {e}".replace("\\n", " "), []).append(module)
for error, modules in failures.items():
    print(f"{error} ({len(modules)} module(s), e.g. {modules[0]})")
`;

/**
 * What fails to import in the installed package `packageName` with the interpreter `py` (e.g. the
 * SyntaxError openapi-python-client 0.29.1 writes for a `const: true` property), each distinct error
 * once. `cwd` should not hold the generated sources.
 */
export async function importFailures(py: string, packageName: string, cwd: string): Promise<string[]> {
  const { output } = await run(py, ['-c', IMPORT_ALL, packageName], cwd);
  return output.split('\n').filter(Boolean);
}

export interface GeneratedPythonClient {
  code: number;
  /** What the generator dropped, one line each. */
  warnings: string[];
  output: string;
  /** The generated project: pyproject.toml, README.md and the package. */
  projectDir: string;
  /** The import name of the package and the distribution name in the pyproject (empty when not generated). */
  packageName: string;
  distribution: string;
}

/**
 * Generates the client project into `outDir`, under the name the generator derives from the document's
 * title, with its package metadata (PYTHON_CLIENT_META) and no post-hooks (the formatter's output is
 * not what is checked). `warnings` lists what it dropped.
 */
export async function generatePythonClient(
  py: string,
  docPath: string,
  outDir: string,
): Promise<GeneratedPythonClient> {
  mkdirSync(outDir, { recursive: true });
  const config = join(outDir, 'generator.yaml');
  writeFileSync(config, 'post_hooks: []\n');
  const args = ['-m', 'openapi_python_client', 'generate', '--path', docPath, '--meta', PYTHON_CLIENT_META];
  const { code, output } = await run(py, [...args, '--config', config, '--overwrite'], outDir);
  const projects = readdirSync(outDir, { withFileTypes: true }).filter(
    (d) => d.isDirectory() && existsSync(join(outDir, d.name, 'pyproject.toml')),
  );
  const projectDir = projects.length === 1 ? join(outDir, projects[0]!.name) : '';
  const packageName = projectDir
    ? (readdirSync(projectDir, { withFileTypes: true }).find(
        (d) => d.isDirectory() && existsSync(join(projectDir, d.name, '__init__.py')),
      )?.name ?? '')
    : '';
  const pyproject = projectDir ? readFileSync(join(projectDir, 'pyproject.toml'), 'utf8') : '';
  const distribution = /^\[project\][^[]*?^name = "([^"]+)"/m.exec(pyproject)?.[1] ?? '';
  return { code, warnings: generatorWarnings(output), output, projectDir, packageName, distribution };
}

/**
 * `pip install <projectDir>` into a new virtualenv `venvDir` (made with `--without-pip`, ~0.1 s), as
 * an integrator installs the generated client. The virtualenv sees the cached SDK base (pip, the build
 * backend, the dependencies) through a .pth file, so pip builds the wheel with the backend the
 * pyproject names (`--no-build-isolation --check-build-dependencies`) and resolves the dependencies it
 * declares without an index (`--no-index`); the package itself lands in this virtualenv only (pip
 * never touches what lies outside the environment). Returns the virtualenv's python.
 */
export async function installPythonClient(
  basePy: string,
  projectDir: string,
  venvDir: string,
): Promise<{ code: number; output: string; python: string }> {
  const python = join(venvDir, 'bin', 'python');
  const purelib = ['-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'];
  const made = await run(basePy, ['-m', 'venv', '--without-pip', venvDir]);
  if (made.code !== 0) return { ...made, python };
  const shared = await run(basePy, purelib);
  const own = await run(python, purelib);
  if (shared.code !== 0 || own.code !== 0) return { code: 1, output: shared.output + own.output, python };
  writeFileSync(join(own.output.trim(), '_python_client_sdk_base.pth'), `${shared.output.trim()}\n`);
  const pip = ['-m', 'pip', 'install', '--no-index', '--no-build-isolation', '--check-build-dependencies'];
  const installed = await run(python, [...pip, '--no-input', '--disable-pip-version-check', projectDir], venvDir);
  return { ...installed, python };
}
