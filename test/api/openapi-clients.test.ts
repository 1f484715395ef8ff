// Client generators over GET /openapi.json: what an integrator would run must work without hand
// edits. openapi-typescript's types pass a strict tsc, openapi-python-client generates every schema
// and operation and its client talks to the live API, and Redocly's recommended lint is clean
// (scripts/openapi-clients.ts, redocly.yaml). Each failure lists what the tool reported.
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../lib/config.js';
import { checkTypeScriptClient, lintSummary, redoclyLint, runTool } from '../../scripts/openapi-clients.js';
import {
  ensureOpenApiPythonClient,
  generatePythonClient,
  importFailures,
} from '../../scripts/openapi-python-client.js';
import { api, call, closeApi, createPat, createUser } from '../helpers/api.js';

const dir = mkdtempSync(join(tmpdir(), 'openapi-clients-'));
test.after.always(async () => {
  rmSync(dir, { recursive: true, force: true });
  await closeApi();
});

/** The document as served, written once for the tools that read a file. */
let served: Promise<{ doc: object; path: string }> | undefined;
const documentFile = () =>
  (served ??= (async () => {
    const r = await call('GET', '/openapi.json');
    if (r.status !== 200) throw new Error(`GET /openapi.json: ${r.status}`);
    const path = join(dir, 'openapi.json');
    writeFileSync(path, r.text);
    return { doc: r.body as object, path };
  })());

test('openapi-typescript: the generated types pass tsc --strict, and a typed client over them compiles', async (t) => {
  t.timeout(5 * 60_000);
  const { doc } = await documentFile();
  const r = await checkTypeScriptClient(doc, join(dir, 'ts'));
  if (r.code !== 0) t.log(r.output.slice(0, 20_000));
  t.deepEqual(
    r.errors,
    [],
    'tsc errors in the generated types or the typed client (the document must generate clean TypeScript)',
  );
  t.is(r.code, 0, 'tsc exit code');
});

test('openapi-python-client: generates without dropping anything, and its client makes typed calls to the API', async (t) => {
  t.timeout(10 * 60_000); // the first run on a machine creates the virtualenv
  const py = await ensureOpenApiPythonClient((m) => t.log(m));
  const { path } = await documentFile();
  const started = Date.now();
  const gen = await generatePythonClient(py, path, join(dir, 'py'));
  t.log(`generated in ${Math.round((Date.now() - started) / 1000)} s (exit ${gen.code})`);
  for (const w of gen.warnings) t.log(`generator: ${w}`);
  t.deepEqual(gen.warnings, [], 'openapi-python-client skipped or dropped parts of the document (each warning above)');
  if (gen.code !== 0) t.log(gen.output.slice(-20_000));
  t.is(gen.code, 0, 'openapi-python-client exit code');
  if (gen.code !== 0) return; // no package to import
  const broken = await importFailures(py, gen.packageDir);
  for (const b of broken) t.log(`import: ${b}`);
  t.deepEqual(broken, [], 'modules of the generated package that do not import');

  const { base } = await api();
  const user = await createUser('Python Client');
  const token = await createPat(user, 'python client');
  const name = `Generated client product ${Date.now()}`;
  const tour = await runTool(py, [
    join(repoRoot, 'scripts', 'openapi-python-tour.py'),
    join(dir, 'py'),
    base,
    token,
    name,
  ]);
  if (tour.code !== 0) t.log(tour.stderr.slice(-10_000));
  t.is(tour.code, 0, 'the generated client could not make the calls');
  if (tour.code !== 0) return;
  const out = JSON.parse(tour.stdout) as {
    me: { status: number; type: string; id: string; email: string };
    created: { status: number; type: string; id: string; name: string; description: string; created_at: string };
    listed: { status: number; type: string; item_types: string[]; ids: string[]; names: string[] };
  };
  // Parsed into the generated models (a missing response leaves `parsed` None), with typed fields.
  t.is(out.me.status, 200);
  t.not(out.me.type, 'NoneType');
  t.is(out.me.id, user.id);
  t.is(out.me.email, user.email);
  t.is(out.created.status, 201);
  t.not(out.created.type, 'NoneType');
  t.is(out.created.name, name);
  t.is(out.created.description, 'made by the generated Python client');
  t.is(out.created.created_at, 'datetime');
  t.is(out.listed.status, 200);
  t.not(out.listed.type, 'NoneType');
  t.is(out.listed.item_types.length, 1);
  t.true(out.listed.ids.includes(out.created.id));
  t.true(out.listed.names.includes(name));
  // What the client parsed is what the API holds.
  const stored = await call('GET', `/api/apps/${out.created.id}`, { token });
  t.is(stored.status, 200);
  t.is(stored.body.name, name);
});

test('redocly lint (recommended ruleset, redocly.yaml): no warnings and no errors', async (t) => {
  t.timeout(3 * 60_000);
  const { path } = await documentFile();
  const r = await redoclyLint(path);
  const summary = lintSummary(r.problems);
  for (const s of summary) t.log(s);
  for (const p of r.problems.slice(0, 200)) t.log(`${p.ruleId}: ${p.message} (${p.pointer})`);
  t.deepEqual(summary, [], 'Redocly problems by rule (fix the document, or justify an exception in redocly.yaml)');
  t.is(r.code, 0, `redocly exit code\n${r.output.slice(-4000)}`);
});
