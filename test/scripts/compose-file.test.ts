// docker-compose.yml is checked wherever the suite runs, as far as the machine allows (each test logs
// which check ran):
// - `docker compose config --quiet`, where the docker CLI has the compose plugin;
// - the official Compose Specification JSON schema (compose-spec/compose-spec, schema/compose-spec.json),
//   as shipped by the npm package `dclint` (schemas/compose.schema.json), or the file COMPOSE_SPEC_SCHEMA
//   names (e.g. from a checkout of compose-spec);
// - always: what a schema cannot see — build contexts, depends_on targets and conditions, declared
//   volumes and configs, published ports, `$` interpolation, and that the app's services set only
//   settings lib/config.ts reads and run entry points that exist.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { repoRoot } from '../../lib/config.js';

const composeText = readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8');
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};
const declared = (name: string) => Boolean(pkg.dependencies?.[name] ?? pkg.devDependencies?.[name]);
const projectRequire = createRequire(join(repoRoot, 'package.json'));

/** Variables the file requires (`${NAME:?message}`): `docker compose config` refuses to run without them. */
const requiredVars = [...new Set([...composeText.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):?\?/g)].map((m) => m[1]))];

/**
 * A CommonJS module by name, resolved from the project (or `from`): undefined when absent and not a
 * declared dependency; a declared one that cannot be loaded is an error, not a silent skip.
 */
function load(name: string, from: NodeJS.Require = projectRequire): { mod: any; version: string } | undefined {
  try {
    const mod = from(name);
    let version = '?';
    try {
      version = (from(`${name}/package.json`) as { version: string }).version;
    } catch {
      // a package whose exports hide package.json: the version is only for the log
    }
    return { mod, version };
  } catch (err) {
    if (declared(name) && from === projectRequire) throw err;
    return undefined;
  }
}

/** Where the schema comes from: COMPOSE_SPEC_SCHEMA, else the dclint package; with a require for its own dependencies. */
function schemaSource(): { path: string; what: string; from: NodeJS.Require } | undefined {
  if (process.env.COMPOSE_SPEC_SCHEMA)
    return {
      path: process.env.COMPOSE_SPEC_SCHEMA,
      what: `COMPOSE_SPEC_SCHEMA=${process.env.COMPOSE_SPEC_SCHEMA}`,
      from: projectRequire,
    };
  let pkgJson: string;
  try {
    pkgJson = projectRequire.resolve('dclint/package.json');
  } catch (err) {
    if (declared('dclint')) throw err;
    return undefined;
  }
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  return {
    path: join(dirname(pkgJson), 'schemas', 'compose.schema.json'),
    what: `dclint@${version} (schemas/compose.schema.json)`,
    from: createRequire(pkgJson),
  };
}

/** The file parsed with YAML merge keys (`<<`) applied: `yaml`, else `js-yaml` (installed here for ava). */
function parseCompose(from: NodeJS.Require = projectRequire): { doc: Compose; parser: string } | undefined {
  const yaml = load('yaml') ?? (from === projectRequire ? undefined : load('yaml', from));
  if (yaml) return { doc: yaml.mod.parse(composeText, { merge: true }) as Compose, parser: `yaml@${yaml.version}` };
  const jsYaml = load('js-yaml');
  if (jsYaml)
    return {
      doc: jsYaml.mod.load(composeText) as Compose,
      parser: `js-yaml@${jsYaml.version}${declared('js-yaml') ? '' : ' (not a declared dependency: ava brings it)'}`,
    };
  return undefined;
}

interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, unknown> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  ports?: (string | number | { published?: string | number; target: number })[];
  volumes?: (string | { type?: string; source?: string })[];
  configs?: (string | { source: string })[];
  healthcheck?: { test?: string | string[] };
  restart?: string;
}
interface Compose {
  services?: Record<string, Service>;
  volumes?: Record<string, unknown>;
  configs?: Record<string, unknown>;
  [key: string]: unknown;
}

// Only where the docker CLI has the compose plugin (elsewhere reported as skipped, not passed).
const composeVersion = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8', timeout: 30_000 });
const hasCompose = !composeVersion.error && composeVersion.status === 0;
(hasCompose ? test : test.skip)('docker compose config accepts the file', (t) => {
  // Placeholders for the variables the file requires, where the environment does not set them.
  const env = { ...process.env };
  for (const name of requiredVars) env[name] ||= 'x'.repeat(40);
  const r = spawnSync('docker', ['compose', 'config', '--quiet'], {
    cwd: repoRoot,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.is(r.status, 0, `docker compose config --quiet:\n${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}`);
  t.log(`ran \`docker compose config --quiet\` (${composeVersion.stdout.trim()}): exit ${r.status}`);
});

test('docker-compose.yml is valid against the Compose Specification JSON schema', (t) => {
  const source = schemaSource();
  if (!source)
    return t.fail('no Compose Specification schema: the devDependency dclint ships it (or set COMPOSE_SPEC_SCHEMA)');
  const parsed = parseCompose(source.from);
  const ajvModule = load('ajv') ?? load('ajv', source.from);
  if (!parsed || !ajvModule)
    return t.fail(`the schema is here (${source.what}) but ${parsed ? 'ajv' : 'a YAML parser'} is not`);
  const schema = JSON.parse(readFileSync(source.path, 'utf8')) as { $schema?: string };
  // The spec names its draft by an https URL; Ajv knows draft-07 by its canonical http one.
  if (schema.$schema?.includes('draft-07')) schema.$schema = 'http://json-schema.org/draft-07/schema#';
  const Ajv = ajvModule.mod.default ?? ajvModule.mod;
  // Not strict: the spec's own authoring (union types and the like) is not what is checked here.
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(schema);
  t.true(validate(parsed.doc), ajv.errorsText(validate.errors, { separator: '\n' }));
  // The validator does hold the file to the spec: a misspelt service key is refused.
  const broken = structuredClone(parsed.doc);
  (broken.services!.api as Record<string, unknown>).imagee = 'outreach-api:local';
  t.false(validate(broken), 'an unknown service key is refused');
  t.log(`validated against ${source.what} with ajv@${ajvModule.version}, parsed with ${parsed.parser}`);
});

test('docker-compose.yml holds together: builds, dependencies, volumes, configs, ports, interpolation, app settings and entry points', (t) => {
  const parsed = parseCompose();
  if (!parsed) return t.fail('no YAML parser: add the `yaml` package');
  t.log(`parsed with ${parsed.parser}; checked without a schema`);
  const doc = parsed.doc;
  const services = doc.services ?? {};
  t.true(Object.keys(services).length > 0, 'services');
  const TOP = ['version', 'name', 'include', 'services', 'networks', 'volumes', 'secrets', 'configs', 'models'];
  for (const key of Object.keys(doc)) t.true(TOP.includes(key) || key.startsWith('x-'), `top-level key ${key}`);

  const config = readFileSync(join(repoRoot, 'lib', 'config.ts'), 'utf8');
  const reads = (key: string) => new RegExp(`['"\`]${key}['"\`]|process\\.env\\.${key}\\b`).test(config);
  const hostPorts = new Map<string, string>();
  for (const [name, s] of Object.entries(services)) {
    t.true(Boolean(s.image || s.build), `${name}: an image or a build`);
    if (s.build) {
      const context = typeof s.build === 'string' ? s.build : (s.build.context ?? '.');
      const dockerfile = (typeof s.build === 'object' && s.build.dockerfile) || 'Dockerfile';
      t.true(
        existsSync(join(repoRoot, context, dockerfile)),
        `${name}: its build context ${context} has ${dockerfile}`,
      );
    }

    const deps = Array.isArray(s.depends_on)
      ? Object.fromEntries(s.depends_on.map((d) => [d, {}]))
      : (s.depends_on ?? {});
    for (const [dep, spec] of Object.entries(deps) as [string, { condition?: string }][]) {
      const target = services[dep];
      t.truthy(target, `${name} depends on ${dep}, a service of the file`);
      const condition = spec.condition ?? 'service_started';
      t.true(
        ['service_started', 'service_healthy', 'service_completed_successfully'].includes(condition),
        `${name} → ${dep}: condition ${condition}`,
      );
      if (condition === 'service_healthy')
        t.truthy(target?.healthcheck, `${name} waits for ${dep} to be healthy: ${dep} has a healthcheck`);
      if (condition === 'service_completed_successfully')
        t.false(
          ['always', 'unless-stopped'].includes(target?.restart ?? 'no'),
          `${name} waits for ${dep} to complete: ${dep} is one-shot`,
        );
    }

    for (const p of s.ports ?? []) {
      const published =
        typeof p === 'object' ? String(p.published ?? '') : (String(p).split('/')[0].split(':').slice(-2, -1)[0] ?? '');
      if (typeof p !== 'object')
        t.regex(
          String(p),
          /^((\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:]+\]):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/,
          `${name}: port ${p}`,
        );
      if (!published) continue;
      t.falsy(hostPorts.get(published), `host port ${published} published once (${name}, ${hostPorts.get(published)})`);
      hostPorts.set(published, name);
    }

    for (const v of s.volumes ?? []) {
      const named =
        typeof v === 'string'
          ? v.includes(':') && !/^[./~$]/.test(v)
            ? v.split(':')[0]
            : undefined
          : v.type === 'volume'
            ? v.source
            : undefined;
      if (named) t.true(Object.hasOwn(doc.volumes ?? {}, named), `${name}: volume ${named} is declared`);
    }
    for (const c of s.configs ?? []) {
      const source = typeof c === 'string' ? c : c.source;
      t.true(Object.hasOwn(doc.configs ?? {}, source), `${name}: config ${source} is declared`);
    }

    const check = s.healthcheck?.test;
    if (Array.isArray(check))
      t.true(
        ['NONE', 'CMD', 'CMD-SHELL'].includes(check[0]),
        `${name}: healthcheck test starts with NONE, CMD or CMD-SHELL`,
      );

    if (!s.build) continue;
    // This project's image: the settings it is given are ones the app reads, and it runs entry points that exist.
    const env = Array.isArray(s.environment)
      ? s.environment.map((e) => e.split('=')[0])
      : Object.keys(s.environment ?? {});
    for (const key of env) t.true(reads(key), `${name}: lib/config.ts reads ${key}`);
    const command = typeof s.command === 'string' ? s.command.split(/\s+/) : (s.command ?? []);
    const script = command[0] === 'node' ? command[1] : undefined;
    if (script?.startsWith('dist/'))
      t.true(
        existsSync(join(repoRoot, script.slice('dist/'.length).replace(/\.js$/, '.ts'))),
        `${name}: ${script} is built from a source that exists`,
      );
  }

  // Compose refuses a dependency cycle.
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') return void t.fail(`depends_on cycle: ${[...path, name].join(' → ')}`);
    state.set(name, 'visiting');
    const deps = services[name]?.depends_on;
    for (const dep of Array.isArray(deps) ? deps : Object.keys(deps ?? {})) visit(dep, [...path, name]);
    state.set(name, 'done');
  };
  for (const name of Object.keys(services)) visit(name, []);

  // Every `$` in a value is an escape (`$$`) or an interpolation Compose understands.
  const strings: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) v.forEach(collect);
    else if (v && typeof v === 'object') Object.values(v).forEach(collect);
  };
  collect(doc);
  const interpolation = /\$\$|\$\{[A-Za-z_][A-Za-z0-9_]*(:?[-?+][^}]*)?\}|\$[A-Za-z_][A-Za-z0-9_]*/g;
  for (const v of strings)
    t.false(v.replace(interpolation, '').includes('$'), `a stray $ in ${JSON.stringify(v.slice(0, 80))}`);
  t.true(
    requiredVars.length > 0 && requiredVars.every((name) => reads(name)),
    `the required variables (${requiredVars.join(', ')}) are app settings`,
  );
});
