// openapi-generator 7.x (the Java CLI from Maven Central) over GET /openapi.json as served: the
// `typescript-fetch` and `python` SDKs must generate without a problem in the log, carry every property
// of each component schema in its model, build as generated (tsc --strict; pip install, then every
// module imports) and make a short tour of the API through the SDK (scripts/sdk-tours/
// openapi-generator-tour.*): sign up, a product, a list, two leads over JSON, a campaign, and the SDK's
// typed error for a 404. scripts/openapi-generator.ts holds the steps. Each step runs as far as the one
// before allows and logs what the generator, tsc, pip or Python reported; the assertions come last, the
// tour's first (a failed assertion ends the test), so one run shows every defect and whether the SDK works.
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildTypeScriptSdk,
  ensureOpenApiGenerator,
  ensurePythonSdkVenv,
  generateSdk,
  GENERATOR_PROPERTIES,
  installPythonSdk,
  OPENAPI_GENERATOR_VERSION,
  pythonImportReport,
  pythonModelGaps,
  runTool,
  TOUR_PY,
  typeScriptModelGaps,
  withSdkVenv,
  type Generated,
  type Generator,
  type GeneratorName,
  type Imported,
  type Ran,
} from '../../scripts/openapi-generator.js';
import { api, call, closeApi, PASSWORD, uniqueEmail } from '../helpers/api.js';

const dir = mkdtempSync(join(tmpdir(), 'openapi-generator-'));
test.after.always(async () => {
  rmSync(dir, { recursive: true, force: true });
  await closeApi();
});

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Content = Record<string, { schema?: { $ref?: string } }>;
interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Content }> }>>;
  components: { responses: Record<string, { content?: Content }> };
}

/** The document as served, written once for the generator. */
let served: Promise<{ doc: Doc; path: string }> | undefined;
const documentFile = () =>
  (served ??= (async () => {
    const r = await call('GET', '/openapi.json');
    if (r.status !== 200) throw new Error(`GET /openapi.json: ${r.status}`);
    const path = join(dir, 'openapi.json');
    writeFileSync(path, r.text);
    return { doc: r.body as Doc, path };
  })());

/** The component an answer's JSON is (`App` for POST /api/apps 201), through a shared response if need be. */
function answerModel(doc: Doc, method: string, path: string, status: string): string | undefined {
  let answer = doc.paths[path]?.[method]?.responses[status];
  if (answer?.$ref) answer = doc.components.responses[answer.$ref.split('/').pop()!];
  return answer?.content?.['application/json']?.schema?.$ref?.split('/').pop();
}

let jar: Promise<Generator> | undefined;
const generator = (t: ExecutionContext) => {
  const started = Date.now();
  return (jar ??= ensureOpenApiGenerator((m) => t.log(m)).then((g) => {
    t.log(`openapi-generator ${OPENAPI_GENERATOR_VERSION} ready in ${seconds(Date.now() - started)} (${g.jar})`);
    return g;
  }));
};

/** Generates one SDK from the served document and logs what the generator reported. */
async function generated(t: ExecutionContext, name: GeneratorName, outDir: string): Promise<Generated> {
  const gen = await generator(t);
  const { path } = await documentFile();
  const g = await generateSdk(gen, name, path, outDir);
  t.log(`${name}: generated in ${seconds(g.ms)} (exit ${g.code}, ${g.problems.length} problem(s))`);
  for (const h of g.harmless) t.log(`  harmless: ${h}`);
  for (const p of g.problems) t.log(`  generator: ${p.slice(0, 3000)}`);
  if (g.code !== 0) t.log(g.output.slice(-10_000));
  return g;
}

function assertGenerated(t: ExecutionContext, name: GeneratorName, g: Generated) {
  t.is(g.code, 0, `openapi-generator -g ${name} exit code`);
  t.deepEqual(g.problems, [], `openapi-generator -g ${name} skipped or mangled parts of the document (each logged)`);
}

/** What one tour needs: a new user's credentials, names to round-trip and a campaign id nobody has. */
function tourInput(tag: string) {
  const stamp = `${tag} ${Date.now()}`;
  return {
    email: uniqueEmail(tag),
    password: PASSWORD,
    product: `SDK product ${stamp}`,
    list: `SDK list ${stamp}`,
    campaign: `SDK campaign ${stamp}`,
    missing: randomUUID(),
  };
}
type TourInput = ReturnType<typeof tourInput>;
const tourArgs = (base: string, i: TourInput) => [base, i.email, i.password, i.product, i.list, i.campaign, i.missing];

async function runTour(t: ExecutionContext, name: string, cmd: string, script: string, input: TourInput): Promise<Ran> {
  const { base } = await api();
  const started = Date.now();
  const tour = await runTool(cmd, [script, ...tourArgs(base, input)], { cwd: dir, timeoutMs: 120_000 });
  t.log(`${name}: tour in ${seconds(Date.now() - started)} (exit ${tour.code})`);
  if (tour.code !== 0) t.log(tour.stderr.slice(-10_000));
  return tour;
}

/** What the API holds after a tour, read with the tour user's own session: the SDK's answers must match it. */
async function assertHeld(
  t: ExecutionContext,
  input: TourInput,
  listId: string,
  leadIds: string[],
  campaignId: string,
) {
  const login = await call('POST', '/api/auth/login', { body: { email: input.email, password: input.password } });
  t.is(login.status, 200, 'the tour user logs in');
  const token = login.body.access_token as string;
  const leads = await call('GET', `/api/lists/${listId}/leads?limit=200`, { token });
  t.is(leads.status, 200);
  t.deepEqual((leads.body.items as { id: string }[]).map((l) => l.id).sort(), [...leadIds].sort());
  const campaign = await call('GET', `/api/campaigns/${campaignId}`, { token });
  t.is(campaign.status, 200);
  t.is(campaign.body.name, input.campaign);
  t.is(campaign.body.time_zone, 'Europe/Berlin');
  t.is(campaign.body.daily_new_lead_cap, 25);
  return campaign.body as { status: string };
}

interface TsTour {
  signup: { userId: string; email: string; tokenType: string };
  app: { id: string; name: string; description: string | null; createdAt: boolean };
  list: { id: string; appId: string; name: string };
  leads: { statuses: string[]; leadIds: string[]; created: number; leadsAdded: number };
  campaign: { id: string; appId: string; name: string; status: string; timeZone: string; dailyNewLeadCap: number };
  notFound: { error: string; status: number; isApiError: boolean; code: string; requestId?: string };
}

/** The TypeScript tour's summary against what it sent and what the API holds. */
async function assertTsTour(t: ExecutionContext, input: TourInput, tour: Ran) {
  t.is(tour.code, 0, 'the generated SDK could not make the tour');
  const r = JSON.parse(tour.stdout) as TsTour;
  t.regex(r.signup.userId, UUID);
  t.is(r.signup.email, input.email);
  t.is(r.signup.tokenType, 'Bearer');
  t.regex(r.app.id, UUID);
  t.is(r.app.name, input.product);
  t.is(r.app.description, 'made by the typescript-fetch SDK');
  t.true(r.app.createdAt, 'created_at parsed into a Date');
  t.regex(r.list.id, UUID);
  t.is(r.list.appId, r.app.id);
  t.is(r.list.name, input.list);
  t.deepEqual(r.leads.statuses, ['created', 'created']);
  t.is(r.leads.created, 2);
  t.is(r.leads.leadsAdded, 2);
  for (const id of r.leads.leadIds) t.regex(id, UUID);
  t.regex(r.campaign.id, UUID);
  t.is(r.campaign.appId, r.app.id);
  t.is(r.campaign.name, input.campaign);
  t.is(r.campaign.timeZone, 'Europe/Berlin');
  t.is(r.campaign.dailyNewLeadCap, 25);
  // The typed 404: the SDK's ResponseError, its body parsed by the generated ApiError model.
  t.deepEqual(r.notFound, {
    error: 'ResponseError',
    status: 404,
    isApiError: true,
    code: 'not_found',
    requestId: r.notFound.requestId,
  });
  t.is(typeof r.notFound.requestId, 'string', 'the ApiError model carries the request id');
  const held = await assertHeld(t, input, r.list.id, r.leads.leadIds, r.campaign.id);
  t.is(held.status, r.campaign.status);
}

test('openapi-generator typescript-fetch: generates whole, compiles as generated under tsc --strict, and its SDK makes the tour', async (t) => {
  t.timeout(20 * 60_000); // the first run on a machine downloads the jar
  const out = join(dir, 'typescript-fetch');
  const g = await generated(t, 'typescript-fetch', join(out, 'sdk'));
  const { doc } = await documentFile();
  const gaps = g.code === 0 ? typeScriptModelGaps(join(out, 'sdk'), doc) : [];
  for (const gap of gaps) t.log(`  model: ${gap}`);
  const b = g.code === 0 ? await buildTypeScriptSdk(out) : undefined;
  if (b) {
    t.log(`typescript-fetch: tsc --strict in ${seconds(b.ms)} (exit ${b.code}, ${b.errors.length} error(s))`);
    for (const e of b.errors.slice(0, 200)) t.log(`  tsc: ${e}`);
    if (b.code !== 0 && !b.errors.length) t.log(b.output.slice(-10_000));
    if (b.code !== 0) t.log('typescript-fetch: tour not run, the SDK does not compile');
  }
  const input = tourInput('ts-sdk');
  const tour = b?.code === 0 ? await runTour(t, 'typescript-fetch', process.execPath, b.tourJs, input) : undefined;

  // The tour first: a defect of the build below must not hide whether the SDK works.
  if (tour) await assertTsTour(t, input, tour);
  assertGenerated(t, 'typescript-fetch', g);
  t.deepEqual(gaps, [], 'component properties the generated models do not carry (each logged)');
  if (!b) return;
  t.deepEqual(
    b.errors,
    [],
    'tsc errors in the generated SDK or the tour (the SDK must compile as generated; each logged)',
  );
  t.is(b.code, 0, 'tsc exit code');
});

interface PyTour {
  signup: { type: string; user_id: string; email: string };
  app: { type: string; id: string; name: string; description: string | null; created_at: string };
  list: { type: string; id: string; app_id: string; name: string };
  leads: { type: string; statuses: string[]; lead_ids: string[]; created: number; leads_added: number };
  campaign: {
    type: string;
    id: string;
    app_id: string;
    name: string;
    status: string;
    time_zone: string;
    daily_new_lead_cap: number;
  };
  not_found: {
    error: string;
    is_api_exception: boolean;
    status: number;
    type: string;
    code: string | null;
    request_id: string | null;
  };
}

/** The Python tour's summary against what it sent, the document's models and what the API holds. */
async function assertPyTour(t: ExecutionContext, input: TourInput, tour: Ran) {
  t.is(tour.code, 0, 'the generated SDK could not make the tour');
  const r = JSON.parse(tour.stdout) as PyTour;
  // Answers parsed into the models of the components the document names for them.
  const { doc } = await documentFile();
  t.notRegex(r.signup.type, /^(dict|NoneType)$/);
  t.is(r.app.type, answerModel(doc, 'post', '/api/apps', '201') ?? 'a component');
  t.is(r.list.type, answerModel(doc, 'post', '/api/apps/{appId}/lists', '201') ?? 'a component');
  t.is(r.leads.type, answerModel(doc, 'post', '/api/lists/{listId}/leads', '200') ?? 'a component');
  t.is(r.campaign.type, answerModel(doc, 'post', '/api/apps/{appId}/campaigns', '201') ?? 'a component');
  t.regex(r.signup.user_id, UUID);
  t.is(r.signup.email, input.email);
  t.regex(r.app.id, UUID);
  t.is(r.app.name, input.product);
  t.is(r.app.description, 'made by the python SDK');
  t.is(r.app.created_at, 'datetime');
  t.regex(r.list.id, UUID);
  t.is(r.list.app_id, r.app.id);
  t.is(r.list.name, input.list);
  t.deepEqual(r.leads.statuses, ['created', 'created']);
  t.is(r.leads.created, 2);
  t.is(r.leads.leads_added, 2);
  for (const id of r.leads.lead_ids) t.regex(id, UUID);
  t.regex(r.campaign.id, UUID);
  t.is(r.campaign.app_id, r.app.id);
  t.is(r.campaign.name, input.campaign);
  t.is(r.campaign.time_zone, 'Europe/Berlin');
  t.is(r.campaign.daily_new_lead_cap, 25);
  // The typed 404: NotFoundException (an ApiException) whose data is the ApiError model.
  t.is(answerModel(doc, 'get', '/api/campaigns/{campaignId}', '404'), 'ApiError');
  t.deepEqual(r.not_found, {
    error: 'NotFoundException',
    is_api_exception: true,
    status: 404,
    type: 'ApiError',
    code: 'not_found',
    request_id: r.not_found.request_id,
  });
  t.is(typeof r.not_found.request_id, 'string', 'the ApiError model carries the request id');
  const held = await assertHeld(t, input, r.list.id, r.leads.lead_ids, r.campaign.id);
  t.is(held.status, r.campaign.status);
}

test('openapi-generator python: generates whole, pip-installs and imports as generated, and its SDK makes the tour', async (t) => {
  t.timeout(20 * 60_000); // the first run on a machine downloads the jar and makes the virtualenv
  const out = join(dir, 'python');
  const [g, py] = await Promise.all([
    generated(t, 'python', out),
    (async () => {
      const started = Date.now();
      const python = await ensurePythonSdkVenv((m) => t.log(m));
      t.log(`python: virtualenv ready in ${seconds(Date.now() - started)} (${python})`);
      return python;
    })(),
  ]);
  const packageName = GENERATOR_PROPERTIES.python.packageName;
  const input = tourInput('py-sdk');
  // The venv is shared by every run on the machine: install, import check and tour under its lock.
  const ran = await withSdkVenv(py, async (): Promise<{ pip?: Ran; imp?: Imported; gaps?: string[]; tour?: Ran }> => {
    if (g.code !== 0) return {};
    const pip = await installPythonSdk(py, out);
    t.log(`python: pip install in ${seconds(pip.ms)} (exit ${pip.code})`);
    if (pip.code !== 0) t.log((pip.stdout + pip.stderr).slice(-10_000));
    if (pip.code !== 0) return { pip };
    const started = Date.now();
    const imp = await pythonImportReport(py, packageName);
    t.log(`python: import check of ${imp.modules} modules in ${seconds(Date.now() - started)}`);
    if (imp.package) t.log(`  import ${packageName}: ${imp.package}`);
    for (const f of imp.failures) t.log(`  import: ${f}`);
    if (imp.package) {
      t.log(`python: model check and tour not run, ${packageName} does not import`);
      return { pip, imp };
    }
    const gaps = await pythonModelGaps(py, packageName, (await documentFile()).doc, dir);
    for (const gap of gaps) t.log(`  model: ${gap}`);
    const tour = await runTour(t, 'python', py, TOUR_PY, input);
    return { pip, imp, gaps, tour };
  });

  const { pip, imp, gaps, tour } = ran;
  // The tour first: a defect of the package below must not hide whether the SDK works.
  if (tour) await assertPyTour(t, input, tour);
  assertGenerated(t, 'python', g);
  if (!pip) return;
  t.is(pip.code, 0, 'pip install of the generated project');
  if (!imp) return;
  t.is(imp.package, null, `import ${packageName}`);
  t.deepEqual(imp.failures, [], 'modules of the generated package that do not import (each logged with its line)');
  if (gaps) t.deepEqual(gaps, [], 'component properties the generated models do not carry (each logged)');
});
