// Client generators over GET /openapi.json as served: what an integrator would run must work without
// hand edits. openapi-typescript's types pass a strict tsc and openapi-fetch's typed client over them
// tours the live API; openapi-python-client generates every schema and operation as a project that
// `pip install` installs, and the installed client tours the live API; Redocly's recommended lint is
// clean (scripts/openapi-clients.ts, scripts/openapi-python-client.ts, redocly.yaml). Both tours take
// the same steps (sign up, product, lead list, two leads, campaign, a typed 404) and print what their
// client parsed. Each failure lists what the tool reported.
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { repoRoot } from '../../lib/config.js';
import {
  checkTypeScriptClient,
  lintSummary,
  redoclyLint,
  runOpenApiFetchTour,
  runTool,
} from '../../scripts/openapi-clients.js';
import {
  ensureOpenApiPythonClient,
  ensurePythonSdkBase,
  generatePythonClient,
  importFailures,
  installPythonClient,
} from '../../scripts/openapi-python-client.js';
import { api, call, closeApi } from '../helpers/api.js';

const dir = mkdtempSync(join(tmpdir(), 'openapi-clients-'));
test.after.always(async () => {
  rmSync(dir, { recursive: true, force: true });
  await closeApi();
});

/** The document as served, written once for the tools that read a file. */
let served: Promise<{ doc: { info: { version: string } }; path: string }> | undefined;
const documentFile = () =>
  (served ??= (async () => {
    const r = await call('GET', '/openapi.json');
    if (r.status !== 200) throw new Error(`GET /openapi.json: ${r.status}`);
    const path = join(dir, 'openapi.json');
    writeFileSync(path, r.text);
    return { doc: r.body as { info: { version: string } }, path };
  })());

/** What a tour is given: a new account's credentials and the names it should see come back. */
async function tourInput(kind: string) {
  const { base } = await api();
  const tag = `${kind}-${randomUUID()}`;
  return {
    base_url: base,
    email: `sdk-${tag}@example.test`,
    password: 'generated client 42',
    name: `SDK ${kind} user`,
    product: `SDK ${kind} product ${tag}`,
    list: `SDK ${kind} list`,
    campaign: `SDK ${kind} campaign`,
    people: [
      { email: `ada-${tag}@example.test`, first_name: 'Ada', last_name: 'Lovelace' },
      { email: `grace-${tag}@example.test`, first_name: 'Grace', last_name: 'Hopper' },
    ],
    missing_campaign_id: randomUUID(),
  };
}
type TourInput = Awaited<ReturnType<typeof tourInput>>;

/** What both tours print (the Python one adds the installed package and the parsed types). */
interface TourSummary {
  signup: { status: number; user_id: string; email: string; name: string; token_type: string };
  app: { status: number; id: string; name: string };
  list: { status: number; id: string; app_id: string; name: string };
  leads: { status: number; statuses: string[]; lead_ids: string[]; created: number; leads_added: number };
  campaign: { status: number; id: string; app_id: string; name: string; state: string; time_zone: string };
  missing: { status: number; code: string | null };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The checks both tours share: ids are UUIDs, names round-trip, two leads created, a typed 404. */
async function checkTour(t: ExecutionContext, input: TourInput, out: TourSummary) {
  t.is(out.signup.status, 201);
  t.regex(out.signup.user_id, UUID);
  t.is(out.signup.email, input.email);
  t.is(out.signup.name, input.name);
  t.is(out.signup.token_type, 'Bearer');
  t.is(out.app.status, 201);
  t.regex(out.app.id, UUID);
  t.is(out.app.name, input.product);
  t.is(out.list.status, 201);
  t.regex(out.list.id, UUID);
  t.is(out.list.app_id, out.app.id);
  t.is(out.list.name, input.list);
  t.is(out.leads.status, 200);
  t.deepEqual(out.leads.statuses, ['created', 'created']);
  t.is(out.leads.lead_ids.length, 2);
  for (const id of out.leads.lead_ids) t.regex(id, UUID);
  t.is(out.leads.created, 2);
  t.is(out.leads.leads_added, 2);
  t.is(out.campaign.status, 201);
  t.regex(out.campaign.id, UUID);
  t.is(out.campaign.app_id, out.app.id);
  t.is(out.campaign.name, input.campaign);
  t.is(out.campaign.state, 'draft');
  t.is(out.campaign.time_zone, 'Europe/London');
  t.is(out.missing.status, 404);
  t.is(out.missing.code, 'not_found');
  // What the client parsed is what the API holds, for the account the tour signed up.
  const login = await call('POST', '/api/auth/login', { body: { email: input.email, password: input.password } });
  t.is(login.status, 200, login.text);
  const token = login.body.access_token as string;
  const campaign = await call('GET', `/api/campaigns/${out.campaign.id}`, { token });
  t.is(campaign.status, 200);
  t.is(campaign.body.name, input.campaign);
  t.is(campaign.body.app_id, out.app.id);
  const list = await call('GET', `/api/lists/${out.list.id}`, { token });
  t.is(list.status, 200);
  t.is(list.body.lead_count, 2);
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

// Each test runs every step it can before it asserts (ava stops at the first failed assertion), so
// one run reports all that fails: the tour runs on tsc's output even when tsc reported type errors,
// and on the installed Python package even when the generator warned.

test('openapi-typescript + openapi-fetch: the types pass tsc --strict, and a typed client tours the API', async (t) => {
  t.timeout(5 * 60_000);
  const { doc } = await documentFile();
  const ts = join(dir, 'ts');
  let started = Date.now();
  const r = await checkTypeScriptClient(doc, ts);
  t.log(`generated and compiled in ${seconds(started)} (tsc exit ${r.code})`);
  if (r.code !== 0) t.log(r.output.slice(0, 20_000));
  // tsc emits despite type errors: the tour says whether the calls work at run time all the same.
  const input = await tourInput('typescript');
  started = Date.now();
  const ran = await runOpenApiFetchTour(ts, input);
  t.log(`tour in ${seconds(started)} (exit ${ran.code})`);
  if (ran.code !== 0) t.log(ran.stderr.slice(-10_000));
  else if (r.code !== 0) t.log(`tour output: ${ran.stdout}`);

  t.deepEqual(
    r.errors,
    [],
    'tsc errors in the generated types, the typed clients or the tour (the document must generate clean TypeScript)',
  );
  t.is(r.code, 0, 'tsc exit code');
  t.is(ran.code, 0, 'the openapi-fetch tour could not make its calls (its output above)');
  const out = JSON.parse(ran.stdout) as TourSummary & { missing: { has_data: boolean; message: string | null } };
  await checkTour(t, input, out);
  t.false(out.missing.has_data, 'a 404 has no data, only the typed error');
  t.truthy(out.missing.message);
});

test('openapi-python-client: generates without dropping anything, pip installs, and the installed client tours the API', async (t) => {
  t.timeout(10 * 60_000); // the first run on a machine creates the virtualenvs
  const [generator, sdkBase] = await Promise.all([
    ensureOpenApiPythonClient((m) => t.log(m)),
    ensurePythonSdkBase((m) => t.log(m)),
  ]);
  const { doc, path } = await documentFile();
  let started = Date.now();
  const gen = await generatePythonClient(generator, path, join(dir, 'py'));
  t.log(`generated ${gen.distribution} (package ${gen.packageName}) in ${seconds(started)} (exit ${gen.code})`);
  for (const w of gen.warnings) t.log(`generator: ${w}`);
  if (gen.code !== 0) t.log(gen.output.slice(-20_000));
  const steps = async () => {
    if (!gen.projectDir || !gen.packageName) return {};
    started = Date.now();
    const venv = join(dir, 'venv');
    const installed = await installPythonClient(sdkBase, gen.projectDir, venv);
    t.log(`pip install in ${seconds(started)} (exit ${installed.code})`);
    if (installed.code !== 0) {
      t.log(installed.output.slice(-10_000));
      return { installed };
    }
    // Nothing from here on can see the generated sources: the working directory is the virtualenv's.
    started = Date.now();
    const broken = await importFailures(installed.python, gen.packageName, venv);
    t.log(`imported every module in ${seconds(started)}`);
    for (const b of broken) t.log(`import: ${b}`);
    const input = await tourInput('python');
    started = Date.now();
    const tour = join(repoRoot, 'scripts', 'openapi-python-tour.py');
    const ran = await runTool(installed.python, [tour, JSON.stringify({ ...input, package: gen.packageName })], {
      cwd: venv,
      timeoutMs: 2 * 60_000,
    });
    t.log(`tour in ${seconds(started)} (exit ${ran.code})`);
    if (ran.code !== 0) t.log(ran.stderr.slice(-10_000));
    return { venv, installed, broken, input, ran };
  };
  const { venv, installed, broken, input, ran } = await steps();

  t.deepEqual(gen.warnings, [], 'openapi-python-client skipped or dropped parts of the document (each warning above)');
  t.is(gen.code, 0, 'openapi-python-client exit code');
  t.truthy(gen.projectDir && gen.packageName, 'a generated project with its package');
  t.is(installed?.code, 0, 'pip install of the generated project (its output above)');
  t.deepEqual(broken, [], 'modules of the installed package that do not import');
  t.is(ran?.code, 0, "the installed client could not make the tour's calls (its output above)");
  if (!venv || !input || !ran) return;
  const out = JSON.parse(ran.stdout) as TourSummary & {
    package: { file: string; distribution: string | null; version: string | null };
    signup: { type: string };
    app: { type: string };
    list: { type: string };
    leads: { type: string };
    campaign: { type: string };
    missing: { type: string; is_api_error: boolean; from_dict_type: string; from_dict_code: string };
  };
  // The installed distribution, under the version the document gives, not the generated sources.
  t.true(out.package.file.startsWith(venv + sep), `imported from ${out.package.file}`);
  t.is(out.package.distribution, gen.distribution);
  t.is(out.package.version, doc.info.version);
  // Each answer parsed into a generated model (the tour fails on None or an ApiError), the 404 into ApiError.
  for (const step of [out.signup, out.app, out.list, out.leads, out.campaign])
    t.notRegex(step.type, /^(NoneType|ApiError|dict)$/);
  t.is(out.missing.type, 'ApiError');
  t.true(out.missing.is_api_error);
  t.is(out.missing.from_dict_type, 'ApiError');
  t.is(out.missing.from_dict_code, 'not_found');
  await checkTour(t, input, out);
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
