// openapi-generator (the Java CLI, Maven Central's org.openapitools:openapi-generator-cli) over the
// document, for test/api/openapi-generator.test.ts: the `typescript-fetch` and `python` SDKs an
// integrator would generate must come out whole (no problem in the generator's log, every property of
// each component schema in its model), build as generated (tsc --strict; pip install, every module
// imports) and run a short tour against the API (scripts/sdk-tours/openapi-generator-tour.*). The jar
// is fetched once into the per-user cache, verified by SHA-1 like the GreenMail jar; the Python SDK's
// runtime comes from a virtualenv made once per generator version (scripts/python-venv.ts).
// Also a CLI for iterating on the document without the test stack: `npx tsx scripts/openapi-generator.ts
// [doc.json]` (default: the document this checkout builds) prints what the generators and builds report.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { repoRoot } from '../lib/config.js';
import { ensureVenv } from './python-venv.js';
import { cacheDir, isAlive, waitUntil } from './stack/processes.js';
import { javaBinary } from './stack/time-skipping-server.js';

/**
 * The newest 7.x Maven Central serves. 7.17.0 also works here but its python generator has bugs since
 * fixed, which would hide the document's own defects: models whose only patterns are on uuid/date-time
 * fields lack their `field_validator` import (NameError on import), and the validators `re.match` the
 * parsed UUID/datetime (TypeError on every answer).
 */
export const OPENAPI_GENERATOR_VERSION = '7.25.0';
/** SHA-1 of openapi-generator-cli-7.25.0.jar (as its Maven Central `.sha1` gives it): a new version, a new digest. */
const JAR_SHA1 = '56a9bb79e3bb565f477eddca2c6daa288a9c6f35';
const JAR_URL = `https://repo1.maven.org/maven2/org/openapitools/openapi-generator-cli/${OPENAPI_GENERATOR_VERSION}/openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`;

export type Log = (msg: string) => void;
export interface Generator {
  java: string;
  jar: string;
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a tool to its end, its output collected (cwd: the repository unless given); killed after
 * `timeoutMs` (default 10 minutes), so a hung tool fails its step instead of outliving the test.
 */
export function runTool(cmd: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${(opts.timeoutMs ?? 600_000) / 1000} s)`;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 600_000);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

const sha1Of = (data: Uint8Array) => createHash('sha1').update(data).digest('hex');

/** Java and the pinned jar, fetched on first use (31 MB) and checked against the pinned and Maven Central's SHA-1. */
export async function ensureOpenApiGenerator(log: Log = () => {}): Promise<Generator> {
  const java = javaBinary();
  if (!java) throw new Error('openapi-generator: java is not on PATH (JAVA_HOME or PATH); install a JRE ≥ 11');
  const jar = join(cacheDir, `openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`);
  // Hashing the cached jar takes ~0.1 s; a damaged one is fetched again.
  if (existsSync(jar) && sha1Of(readFileSync(jar)) === JAR_SHA1) return { java, jar };
  mkdirSync(cacheDir, { recursive: true });
  log(`openapi-generator: downloading ${JAR_URL}`);
  const get = async (url: string) => {
    const res = await fetch(url, { signal: AbortSignal.timeout(300_000) });
    if (!res.ok) throw new Error(`openapi-generator: ${url} answered ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  };
  const [data, published] = await Promise.all([get(JAR_URL), get(`${JAR_URL}.sha1`)]);
  // Central's .sha1 holds the hex digest, sometimes followed by the file name.
  const centralSha1 = new TextDecoder().decode(published).trim().split(/\s+/)[0]!.toLowerCase();
  const actual = sha1Of(data);
  if (actual !== JAR_SHA1 || centralSha1 !== JAR_SHA1) {
    throw new Error(
      `openapi-generator: the jar does not verify: downloaded ${actual}, Maven Central's .sha1 ${centralSha1}, pinned ${JAR_SHA1}`,
    );
  }
  // Written aside and renamed: a parallel run never reads half a jar.
  const part = `${jar}.part-${process.pid}`;
  writeFileSync(part, data);
  renameSync(part, jar);
  log(`openapi-generator: fetched ${data.length} bytes (sha1 ${actual}) into ${jar}`);
  return { java, jar };
}

/**
 * What the generator logs at WARN for this document and drops nothing, each with why. Every other
 * WARN or ERROR line is a problem (a schema, property or operation it skipped or mangled).
 */
export const HARMLESS_WARNINGS: { pattern: RegExp; why: string }[] = [
  { pattern: /^OpenAPI 3\.1 support is still in beta\./, why: 'printed for every 3.1 document' },
  {
    pattern: /^Failed to get the schema name: null$/,
    why:
      'a null check: the normalizer (isSelfReference), the TypeScript type mapper and the Python default-value ' +
      'lookup ask inline schemas for a $ref they do not have',
  },
  {
    pattern: /cannot be used as (a )?model name\. Renamed to \w+$/,
    why: 'a name that is a reserved word of the language gets a `Model` prefix (python: the Import schema is ModelImport): renamed, not dropped',
  },
];

export interface Generated {
  code: number;
  /** The WARN/ERROR lines that are not HARMLESS_WARNINGS, continuation lines joined, repeats counted. */
  problems: string[];
  /** The harmless warnings seen, counted. */
  harmless: string[];
  output: string;
  ms: number;
}

/** Sorts the generator's log (logback: `[main] WARN  o.o.c.Logger - message`) into problems and harmless warnings. */
export function generatorReport(output: string): { problems: string[]; harmless: string[] } {
  const entries: { level: string; message: string }[] = [];
  let current: { level: string; message: string } | undefined;
  for (const line of output.split('\n')) {
    const m = /^\[[^\]]*\] (TRACE|DEBUG|INFO|WARN|ERROR)\s+\S+ - (.*)$/.exec(line);
    if (m) {
      current = m[1] === 'WARN' || m[1] === 'ERROR' ? { level: m[1], message: m[2]!.trim() } : undefined;
      if (current) entries.push(current);
    } else if (/^Exception in thread|^[\w.$]+(Exception|Error)\b/.test(line)) {
      // An uncaught exception (e.g. SpecValidationException), its detail lines appended below.
      current = { level: 'ERROR', message: line.trim() };
      entries.push(current);
    } else if (current && line.trim() && !line.startsWith('#')) {
      // A warning's detail (a schema dump, a list of issues) on the lines after it.
      current.message += ` | ${line.trim()}`;
    }
  }
  const counted = (list: string[]) => {
    const counts = new Map<string, number>();
    for (const e of list) counts.set(e, (counts.get(e) ?? 0) + 1);
    return [...counts].map(([e, n]) => (n > 1 ? `${e} (×${n})` : e));
  };
  const harmless = (e: { message: string }) => HARMLESS_WARNINGS.some((h) => h.pattern.test(e.message.slice(0, 2000)));
  return {
    problems: counted(entries.filter((e) => e.level === 'ERROR' || !harmless(e)).map((e) => `${e.level} ${e.message}`)),
    harmless: counted(entries.filter((e) => e.level === 'WARN' && harmless(e)).map((e) => e.message)),
  };
}

/** The additional properties of each generator: everything else at its default, as an integrator starts. */
export const GENERATOR_PROPERTIES = {
  // ES modules with `.js` in relative imports, so Node runs the compiled SDK as it is (module NodeNext).
  'typescript-fetch': { supportsES6: 'true', importFileExtension: '.js' },
  python: { packageName: 'outreach_sdk' },
} as const;
export type GeneratorName = keyof typeof GENERATOR_PROPERTIES;

/** `openapi-generator-cli generate -g <generator>` of `docPath` into `outDir` (its docs and test stubs skipped: neither is built here). */
export async function generateSdk(
  gen: Generator,
  generator: GeneratorName,
  docPath: string,
  outDir: string,
): Promise<Generated> {
  const props = Object.entries(GENERATOR_PROPERTIES[generator]).map(([k, v]) => `${k}=${v}`);
  const started = Date.now();
  const r = await runTool(gen.java, [
    '-jar',
    gen.jar,
    'generate',
    '--input-spec',
    docPath,
    '--generator-name',
    generator,
    '--output',
    outDir,
    '--additional-properties',
    props.join(','),
    '--global-property',
    'apiTests=false,modelTests=false,apiDocs=false,modelDocs=false',
  ]);
  const output = r.stdout + r.stderr;
  return { code: r.code, ...generatorReport(output), output, ms: Date.now() - started };
}

/**
 * The build of the typescript-fetch SDK, stated here rather than taken from the generator (it writes
 * no tsconfig without an npmName): strict, ES2022, ES modules resolved as Node resolves them
 * (NodeNext: the `.js` imports of importFileExtension), lib DOM for fetch/Response/FormData as a
 * browser has them and no @types (the directory stands alone), declarations of node_modules checked.
 */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'DOM'],
    types: [],
    skipLibCheck: false,
    outDir: 'out',
    rootDir: '.',
  },
  include: ['sdk/**/*.ts', 'tour.ts'],
};
const TOUR_TS = join(repoRoot, 'scripts', 'sdk-tours', 'openapi-generator-tour.ts');
export const TOUR_PY = join(repoRoot, 'scripts', 'sdk-tours', 'openapi-generator-tour.py');

export interface Built {
  code: number;
  /** tsc's diagnostics, each followed by the source line it points at. */
  errors: string[];
  output: string;
  ms: number;
  /** The compiled tour, to run with node. */
  tourJs: string;
}

/**
 * Compiles the generated SDK in `dir/sdk` as it is, with the tour beside it, by the project's
 * `tsc --strict --noEmit false` (TSCONFIG) into `dir/out`, as ES modules (`dir/package.json`).
 */
export async function buildTypeScriptSdk(dir: string): Promise<Built> {
  const tour = readFileSync(TOUR_TS, 'utf8').split('\n');
  // The tour opts out of the repository's typecheck, where ./sdk does not exist; here it is checked.
  const nocheck = tour.indexOf('// @ts-nocheck');
  if (nocheck === -1) throw new Error(`${TOUR_TS} has no "// @ts-nocheck" line to drop`);
  tour.splice(nocheck, 1);
  writeFileSync(join(dir, 'tour.ts'), tour.join('\n'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const started = Date.now();
  const r = await runTool(
    process.execPath,
    [tsc, '-p', join(dir, 'tsconfig.json'), '--strict', '--noEmit', 'false', '--pretty', 'false'],
    { cwd: dir },
  );
  const output = r.stdout + r.stderr;
  const errors = output.split('\n').filter((l) => /error TS\d+/.test(l));
  // tsc reports no type error while any file has a syntax error (TS1xxx): ask the compiler for them.
  if (errors.some((l) => /error TS1\d{3}:/.test(l))) errors.push(...typeErrorsBehindSyntaxErrors(dir));
  const withSource = errors.map((l) => {
    const at = /^(.+?)\((\d+),(\d+)\)/.exec(l);
    if (!at) return l;
    const text = readFileSync(join(dir, at[1]!), 'utf8').split('\n')[Number(at[2]) - 1] ?? '';
    return `${l}\n    ${JSON.stringify(text.trim().slice(0, 200))}`;
  });
  return { code: r.code, errors: withSource, output, ms: Date.now() - started, tourJs: join(dir, 'out', 'tour.js') };
}

/**
 * The type errors of the files without a syntax error, with the same options as the tsc run: what a
 * fix of the syntax errors alone would still leave.
 */
function typeErrorsBehindSyntaxErrors(dir: string): string[] {
  const host: ts.FormatDiagnosticsHost = {
    getCurrentDirectory: () => dir,
    getCanonicalFileName: (f) => f,
    getNewLine: () => '\n',
  };
  const config = ts.getParsedCommandLineOfConfigFile(
    join(dir, 'tsconfig.json'),
    { strict: true, noEmit: false },
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) return ['(the type errors behind the syntax errors could not be read: tsconfig.json)'];
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const broken = new Set<string | undefined>(program.getSyntacticDiagnostics().map((d) => d.file?.fileName));
  const semantic = program.getSemanticDiagnostics().filter((d) => !broken.has(d.file?.fileName));
  return ts
    .formatDiagnostics(semantic, host)
    .split('\n')
    .filter((l) => /error TS\d+/.test(l))
    .map((l) => `${l} (behind the syntax errors)`);
}

/** The properties of each component schema that declares some: what every SDK's model of it must carry. */
function componentProperties(doc: object): [string, string[]][] {
  const schemas = (doc as { components?: { schemas?: Record<string, { properties?: object }> } }).components?.schemas;
  return Object.entries(schemas ?? {})
    .map(([name, s]): [string, string[]] => [name, Object.keys(s.properties ?? {})])
    .filter(([, props]) => props.length > 0);
}

/**
 * Component schemas whose typescript-fetch model (`sdk/models/<Name>.ts`, `Model<Name>` for a reserved
 * name) does not read each of the schema's properties from JSON: a property the generator dropped
 * without saying so (its FromJSON reads `json['<name>']` for each one it kept).
 */
export function typeScriptModelGaps(sdkDir: string, doc: object): string[] {
  const gaps: string[] = [];
  for (const [name, props] of componentProperties(doc)) {
    const file = [name, `Model${name}`].map((n) => join(sdkDir, 'models', `${n}.ts`)).find((f) => existsSync(f));
    if (!file) {
      gaps.push(`${name}: no model file`);
      continue;
    }
    const text = readFileSync(file, 'utf8');
    const missing = props.filter((p) => !text.includes(`json['${p}']`));
    if (missing.length) gaps.push(`${name}: ${file.split('/sdk/')[1]} does not read ${missing.join(', ')}`);
  }
  return gaps;
}

/**
 * The same for the python SDK, on the installed package: each component schema's model must list
 * every property of the schema in its `__properties` (from_dict reads only those) and as a field; a
 * oneOf/anyOf wrapper model (actual_instance) holds one alternative and none of the schema's own
 * properties. Prints JSON.
 */
const PYTHON_GAPS = `import importlib, json, sys
schemas, name = json.load(open(sys.argv[1])), sys.argv[2]
models = importlib.import_module(name + ".models")
gaps = []
for schema, props in schemas:
    cls = getattr(models, schema, None) or getattr(models, "Model" + schema, None)
    if cls is None:
        gaps.append(f"{schema}: no model")
        continue
    fields = {f.alias or n for n, f in getattr(cls, "model_fields", {}).items()}
    if "actual_instance" in fields:
        gaps.append(f"{schema}: {cls.__name__} is a oneOf/anyOf wrapper (actual_instance); none of its properties {', '.join(props)} is a field")
        continue
    known = getattr(cls, f"_{cls.__name__}__properties", [])
    unread = [p for p in props if p not in known]
    if unread:
        gaps.append(f"{schema}: {cls.__name__}.from_dict drops {', '.join(unread)} (not in its __properties)")
    absent = [p for p in props if p not in fields]
    if absent:
        gaps.append(f"{schema}: {cls.__name__} has no field for {', '.join(absent)}")
print(json.dumps(gaps))
`;

export async function pythonModelGaps(py: string, packageName: string, doc: object, dir: string): Promise<string[]> {
  const file = join(dir, 'component-properties.json');
  writeFileSync(file, JSON.stringify(componentProperties(doc)));
  const r = await runTool(py, ['-c', PYTHON_GAPS, file, packageName], { cwd: tmpdir() });
  try {
    return JSON.parse(r.stdout) as string[];
  } catch {
    return [`the model check failed (exit ${r.code}): ${r.stderr.slice(-2000)}`];
  }
}

/**
 * What the python SDK of 7.25.0 declares it needs (its pyproject's dependencies), installed once into
 * the virtualenv the SDK is then pip-installed into, so each run's install only builds the SDK itself.
 */
const PYTHON_SDK_RUNTIME = [
  'urllib3>=2.7.0,<3.0.0',
  'python-dateutil>=2.8.2',
  'pydantic>=2.11',
  'typing-extensions>=4.7.1',
];

/** The python of `venv-openapi-generator-<version>-python`, holding the SDK's runtime. */
export function ensurePythonSdkVenv(log: Log = () => {}): Promise<string> {
  return ensureVenv(`openapi-generator-${OPENAPI_GENERATOR_VERSION}-python`, PYTHON_SDK_RUNTIME, log);
}

/**
 * Runs `fn` holding the virtualenv's SDK lock: the venv is per machine, so two runs (two clones) must
 * not install their SDK over each other between one's install and its tour. A lock whose holder died
 * is taken over.
 */
export async function withSdkVenv<T>(py: string, fn: () => Promise<T>, timeoutMs = 10 * 60_000): Promise<T> {
  const lock = join(dirname(dirname(py)), 'sdk-install.lock');
  const take = () => {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return true;
    } catch {
      let holder = 0;
      try {
        holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        // released meanwhile, or its holder has not written its pid yet
      }
      if (holder && !isAlive(holder)) rmSync(lock, { recursive: true, force: true });
      return false;
    }
  };
  if (!(await waitUntil(take, timeoutMs))) throw new Error(`${lock} is held by another run`);
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `pip install <projectDir>`: the generated project as it is (its pyproject/setup.py), into the venv. */
export async function installPythonSdk(py: string, projectDir: string): Promise<Ran & { ms: number }> {
  const started = Date.now();
  const r = await runTool(py, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', projectDir]);
  return { ...r, ms: Date.now() - started };
}

/**
 * Imports the installed package, then each of its modules on its own: the package's `__init__` files
 * import every module, so the first broken one would hide the others; here the packages are stubbed
 * and each failure is reported once, at the innermost line of the package it comes from, with the
 * number of modules it breaks. Prints JSON.
 */
const IMPORT_EACH = `import importlib, importlib.util, json, os, sys, traceback, types
name = sys.argv[1]
def where(e, root):
    if isinstance(e, SyntaxError) and e.filename:
        return f"{os.path.relpath(e.filename, os.path.dirname(root))}:{e.lineno}: {(e.text or '').strip()[:160]}"
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith(root + os.sep)]
    f = frames[-1] if frames else traceback.extract_tb(e.__traceback__)[-1]
    return f"{os.path.relpath(f.filename, os.path.dirname(root))}:{f.lineno}: {(f.line or '').strip()[:160]}"
root = importlib.util.find_spec(name).submodule_search_locations[0]
report = {"package": None, "modules": 0, "failures": []}
try:
    importlib.import_module(name)
except Exception as e:
    report["package"] = f"{type(e).__name__}: {e} at {where(e, root)}"
for m in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
    del sys.modules[m]
modules = []
for folder, _, files in sorted(os.walk(root)):
    dotted = ".".join([name, *[p for p in os.path.relpath(folder, root).split(os.sep) if p != "."]])
    if "__init__.py" in files:
        stub = types.ModuleType(dotted)
        stub.__path__ = [folder]
        sys.modules[dotted] = stub
    modules += [f"{dotted}.{f[:-3]}" for f in sorted(files) if f.endswith(".py") and f != "__init__.py"]
causes = {}
for m in modules:
    try:
        importlib.import_module(m)
    except Exception as e:
        causes.setdefault(f"{type(e).__name__}: {e} at {where(e, root)}", []).append(m)
report["modules"] = len(modules)
report["failures"] = [f"{c} (breaks {len(ms)} module(s), e.g. {ms[0]})" for c, ms in causes.items()]
print(json.dumps(report))
`;

export interface Imported {
  /** The error of `import <package>`, or null. */
  package: string | null;
  modules: number;
  failures: string[];
}

export async function pythonImportReport(py: string, packageName: string): Promise<Imported> {
  const r = await runTool(py, ['-c', IMPORT_EACH, packageName], { cwd: tmpdir() });
  try {
    return JSON.parse(r.stdout) as Imported;
  } catch {
    return { package: `the import check failed (exit ${r.code}): ${r.stderr.slice(-2000)}`, modules: 0, failures: [] };
  }
}

async function main(docArg: string | undefined): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-generator-'));
  try {
    let docPath = docArg;
    if (!docPath) {
      const { allOperations } = await import('../api/operations.js');
      const { buildOpenApi } = await import('../api/openapi.js');
      docPath = join(dir, 'openapi.json');
      writeFileSync(docPath, JSON.stringify(buildOpenApi(allOperations())));
    }
    const doc = JSON.parse(readFileSync(docPath, 'utf8')) as object;
    const gen = await ensureOpenApiGenerator(console.error);
    let failed = 0;
    const [tsGen, pyGen] = await Promise.all([
      generateSdk(gen, 'typescript-fetch', docPath, join(dir, 'ts', 'sdk')),
      generateSdk(gen, 'python', docPath, join(dir, 'py')),
    ]);
    for (const [name, g] of [
      ['typescript-fetch', tsGen],
      ['python', pyGen],
    ] as const) {
      console.log(`\n== ${name}: exit ${g.code}, ${g.problems.length} problem(s) in ${Math.round(g.ms / 1000)} s`);
      for (const p of g.problems) console.log(`- ${p.slice(0, 2000)}`);
      if (g.code !== 0) console.log(g.output.slice(-4000));
      if (g.code !== 0 || g.problems.length) failed++;
    }
    if (tsGen.code === 0) {
      const gaps = typeScriptModelGaps(join(dir, 'ts', 'sdk'), doc);
      console.log(`\n== typescript-fetch models: ${gaps.length} missing part(s)`);
      for (const gap of gaps) console.log(`- ${gap}`);
      const b = await buildTypeScriptSdk(join(dir, 'ts'));
      console.log(`== typescript-fetch + tsc --strict: ${b.errors.length} error(s)`);
      for (const e of b.errors) console.log(e);
      if (gaps.length || b.code !== 0) failed++;
    }
    if (pyGen.code === 0) {
      const python = await ensurePythonSdkVenv(console.error);
      await withSdkVenv(python, async () => {
        const pip = await installPythonSdk(python, join(dir, 'py'));
        console.log(`\n== python: pip install exit ${pip.code}`);
        if (pip.code !== 0) {
          console.log((pip.stdout + pip.stderr).slice(-4000));
          failed++;
          return;
        }
        const imp = await pythonImportReport(python, GENERATOR_PROPERTIES.python.packageName);
        console.log(
          `== python: import ${imp.package ?? 'ok'}; ${imp.failures.length} failure(s) in ${imp.modules} modules`,
        );
        for (const f of imp.failures) console.log(`- ${f}`);
        if (imp.package || imp.failures.length) failed++;
        if (imp.package) return;
        const gaps = await pythonModelGaps(python, GENERATOR_PROPERTIES.python.packageName, doc, dir);
        console.log(`== python models: ${gaps.length} missing part(s)`);
        for (const gap of gaps) console.log(`- ${gap}`);
        if (gaps.length) failed++;
      });
    }
    return failed ? 1 : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv[2]);
}
