// Specialist runs: every AI call recorded (success and failure), listing with cursors, ownership,
// and the activity aggregate.
import test from 'ava';
import { z } from 'zod';
import { SpecialistRun } from '../../db/entities/SpecialistRun.js';
import { AppError } from '../../domain/errors.js';
import type { Actor } from '../../domain/identity.js';
import {
  getSpecialistRun,
  listSpecialistRuns,
  runSpecialist,
  specialistActivity,
  RESULT_MAX_CHARS,
  INPUT_SUMMARY_MAX,
} from '../../domain/ai/specialist-runs.js';
import { LlmError, LocalModelAdapter, qualifyCandidate, generateKeywords, type Usage } from '../../lib/llm/index.js';
import { uuidv7 } from '../../lib/ids.js';
import { page } from '../../lib/pagination.js';
import { createTestApp, createUser, closeApi } from '../helpers/api.js';
import { em, workspaceIdOf } from '../helpers/billing.js';
import { waitFor } from '../../scripts/children.js';
import { SpecialistRunPage, SpecialistActivityView, toSpecialistRunView } from '../../api/apps/specialist-schemas.js';
test.after.always(closeApi);

const llm = new LocalModelAdapter();

async function owner(): Promise<{ actor: Actor; appId: string }> {
  const u = await createUser();
  const app = await createTestApp(u);
  const workspaceId = await workspaceIdOf(u.id);
  return {
    actor: {
      userId: u.id,
      workspaceId,
      ownerId: u.id,
      role: 'owner',
      allApps: true,
      appIds: [],
      actingAs: false,
      isDemo: false,
    },
    appId: app.id,
  };
}

const code = (err: unknown) => (err instanceof AppError ? `${err.status} ${err.code}` : String(err));

test('a successful call is recorded with status, timings, usage and a result summary', async (t) => {
  const { actor, appId } = await owner();
  const agentId = uuidv7();
  const input = { text: 'Cold email agencies for B2B SaaS founders in Germany' };
  const r = await runSpecialist(
    await em(),
    { workspaceId: actor.workspaceId, appId, agentId, kind: 'keywords', model: llm.model },
    input,
    () => generateKeywords(llm, input),
  );
  t.true(r.value.keywords.includes('cold email'));

  const run = await (await em()).findOneOrFail(SpecialistRun, r.runId);
  t.is(run.status, 'succeeded');
  t.is(run.kind, 'keywords');
  t.is(run.model, 'local-deterministic-1');
  t.is(run.workspace.id, actor.workspaceId);
  t.is(run.app?.id, appId);
  t.is(run.agentId, agentId);
  t.is(run.inputSummary, JSON.stringify(input));
  t.is(run.inputTokens, r.usage.inputTokens);
  t.true(run.inputTokens > 0);
  t.is(run.outputTokens, r.usage.outputTokens);
  t.is(run.costMicros, 0);
  t.deepEqual(run.result, r.value);
  t.is(run.errorCode, null);
  t.true(run.finishedAt! >= run.startedAt);
  t.is(typeof run.durationMs, 'number');
  t.true(run.durationMs! >= 0);
});

test('a failed call is recorded as failed with its error code, and the error still reaches the caller', async (t) => {
  const { actor, appId } = await owner();
  const ctx = { workspaceId: actor.workspaceId, appId, kind: 'qualify', model: 'test-model' };
  const err = await t.throwsAsync(
    runSpecialist(await em(), ctx, 'a candidate', async () => {
      await new Promise((r) => setTimeout(r, 20)); // the call's duration, recorded below (the behaviour under test)
      throw new LlmError('rate_limited', 'model server answered 429', 429);
    }),
    { instanceOf: LlmError },
  );
  t.is(err.code, 'rate_limited');
  const [run] = await listSpecialistRuns(await em(), actor, { appId }, { limit: 10 });
  t.is(run.status, 'failed');
  t.is(run.errorCode, 'rate_limited');
  t.is(run.errorMessage, 'model server answered 429');
  t.true(run.durationMs! >= 15);
  t.is(run.inputTokens, 0);
  t.is(run.result, null);

  // Any other error is recorded as internal; a workspace-level run has no app.
  await t.throwsAsync(
    runSpecialist(await em(), { ...ctx, appId: null }, 'x', async () => Promise.reject(new Error('boom'))),
  );
  const [ws] = await listSpecialistRuns(await em(), actor, {}, { limit: 1 });
  t.like(ws, { status: 'failed', errorCode: 'internal', errorMessage: 'boom', app: null });
});

test('a run is visible as running while the model answers; no transaction is held open, and one is refused', async (t) => {
  const { actor, appId } = await owner();
  let release: ((v: { value: string; usage: Usage }) => void) | undefined;
  const pending = runSpecialist(
    await em(),
    { workspaceId: actor.workspaceId, appId, kind: 'chat', model: 'm' },
    'hello',
    () => new Promise<{ value: string; usage: Usage }>((r) => (release = r)),
  );
  // The model is called once the run's row is written.
  await waitFor('the model call to start', async () => release !== undefined, 30_000);
  const [during] = await listSpecialistRuns(await em(), actor, { appId }, { limit: 1 });
  t.is(during.status, 'running');
  t.is(during.finishedAt, null);
  release!({ value: 'hi there', usage: { inputTokens: 3, outputTokens: 2, costMicros: 7 } });
  const done = await pending;
  const after = await getSpecialistRun(await em(), actor, appId, done.runId);
  t.like(after, { status: 'succeeded', inputTokens: 3, outputTokens: 2, costMicros: 7, result: 'hi there' });

  await (
    await em()
  ).transactional(async (tx) => {
    await t.throwsAsync(
      runSpecialist(tx, { workspaceId: actor.workspaceId, appId, kind: 'chat', model: 'm' }, 'x', async () => ({
        value: 1,
        usage: { inputTokens: 0, outputTokens: 0, costMicros: 0 },
      })),
      {
        message: /must not run inside a transaction/,
      },
    );
  });
});

test('input and result are bounded summaries', async (t) => {
  const { actor, appId } = await owner();
  const big = { text: 'word '.repeat(5000) };
  const r = await runSpecialist(
    await em(),
    { workspaceId: actor.workspaceId, appId, kind: 'echo', model: 'm' },
    big,
    async () => ({
      value: { echo: 'é'.repeat(RESULT_MAX_CHARS * 2) },
      usage: { inputTokens: 1, outputTokens: 1, costMicros: 0 },
    }),
  );
  const run = await getSpecialistRun(await em(), actor, appId, r.runId);
  t.is([...run.inputSummary].length, INPUT_SUMMARY_MAX);
  t.true(run.inputSummary.endsWith('…'));
  t.like(run.result as object, { truncated: true, chars: RESULT_MAX_CHARS * 2 + 11 });
  t.is([...(run.result as { preview: string }).preview].length, RESULT_MAX_CHARS);
});

test('listing is newest first with cursor pages; filters by kind and status; views match the response schema', async (t) => {
  const { actor, appId } = await owner();
  const ctx = { workspaceId: actor.workspaceId, appId, model: llm.model };
  const icp = { titles: ['Head of Sales'], countries: ['Germany'] };
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const candidate = { title: i % 2 ? 'Head of Sales' : 'Chef', country: 'Germany' };
    ids.push(
      (
        await runSpecialist(await em(), { ...ctx, kind: 'qualify' }, candidate, () =>
          qualifyCandidate(llm, { icp, candidate }),
        )
      ).runId,
    );
  }
  ids.push(
    (
      await runSpecialist(await em(), { ...ctx, kind: 'keywords' }, 'x', () =>
        generateKeywords(llm, { text: 'cold email' }),
      )
    ).runId,
  );

  const newestFirst = [...ids].sort().reverse(); // ids minted in one millisecond need not sort by insertion
  const p1 = page(await listSpecialistRuns(await em(), actor, { appId }, { limit: 4 }), 4, toSpecialistRunView);
  t.deepEqual(
    p1.items.map((r) => r.id),
    newestFirst.slice(0, 4),
  );
  t.truthy(p1.next_cursor);
  t.true(SpecialistRunPage.safeParse(p1).success);
  const last = p1.items[3].id;
  const p2 = page(
    await listSpecialistRuns(await em(), actor, { appId }, { limit: 4, after: last }),
    4,
    toSpecialistRunView,
  );
  t.deepEqual(
    p2.items.map((r) => r.id),
    newestFirst.slice(4),
  );
  t.is(p2.next_cursor, null);

  const kinds = await listSpecialistRuns(await em(), actor, { appId, kind: 'keywords' }, { limit: 50 });
  t.deepEqual(
    kinds.map((r) => r.id),
    [ids[5]],
  );
  t.is((await listSpecialistRuns(await em(), actor, { appId, status: 'failed' }, { limit: 50 })).length, 0);
  t.like(toSpecialistRunView(await getSpecialistRun(await em(), actor, appId, ids[4])).result as object, {
    verdict: 'rejected',
  });
  t.like(toSpecialistRunView(await getSpecialistRun(await em(), actor, appId, ids[3])).result as object, {
    verdict: 'qualified',
  });
});

test("another workspace's run or product is 404 not_found; a member without the product lists none", async (t) => {
  const a = await owner();
  const b = await owner();
  const r = await runSpecialist(
    await em(),
    { workspaceId: a.actor.workspaceId, appId: a.appId, kind: 'keywords', model: 'm' },
    'x',
    () => generateKeywords(llm, { text: 'x' }),
  );
  t.is((await getSpecialistRun(await em(), a.actor, a.appId, r.runId)).id, r.runId);
  t.is(code(await t.throwsAsync(getSpecialistRun(await em(), b.actor, a.appId, r.runId))), '404 not_found');
  t.is(code(await t.throwsAsync(getSpecialistRun(await em(), b.actor, b.appId, r.runId))), '404 not_found');
  t.is(
    code(await t.throwsAsync(listSpecialistRuns(await em(), b.actor, { appId: a.appId }, { limit: 10 }))),
    '404 not_found',
  );
  t.is(code(await t.throwsAsync(specialistActivity(await em(), b.actor, a.appId))), '404 not_found');
  t.deepEqual(await listSpecialistRuns(await em(), b.actor, {}, { limit: 10 }), []);
  // A member limited to other products does not see this product's runs (a run id itself is refused
  // before the domain runs: the route's declared ids, test/api/authorization-policy.test.ts).
  const limited: Actor = { ...a.actor, allApps: false, appIds: [], role: 'member', actingAs: true };
  t.deepEqual(await listSpecialistRuns(await em(), limited, {}, { limit: 10 }), []);
});

test('activity: counts, tokens and cost per kind and per day add up over the window', async (t) => {
  const { actor, appId } = await owner();
  const e = await em();
  const DAY = 24 * 3600 * 1000;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const now = new Date(today + DAY / 2); // midday UTC, so every row below is before it
  // Rows at fixed moments (ids minted at the same moment, as runSpecialist does).
  const row = (
    at: number,
    kind: string,
    status: 'succeeded' | 'failed' | 'running',
    inputTokens: number,
    outputTokens: number,
    costMicros: number,
  ) => ({
    id: uuidv7(at),
    workspace: actor.workspaceId,
    app: appId,
    kind,
    model: 'm',
    inputSummary: 's',
    status,
    startedAt: new Date(at),
    createdAt: new Date(at),
    inputTokens,
    outputTokens,
    costMicros,
  });
  await e.insertMany(SpecialistRun, [
    row(today + 1000, 'qualify', 'succeeded', 100, 10, 5),
    row(today + 2000, 'qualify', 'failed', 0, 0, 0),
    row(today + 3000, 'keywords', 'running', 0, 0, 0),
    row(today - DAY + 1000, 'qualify', 'succeeded', 200, 20, 9),
    row(today - 2 * DAY + 5000, 'icp', 'succeeded', 50, 40, 3),
    row(today - 10 * DAY, 'icp', 'succeeded', 1_000, 1_000, 1_000), // outside a 7-day window
  ]);
  // Another product's run never counts.
  const b = await owner();
  await e.insert(SpecialistRun, {
    ...row(today + 4000, 'qualify', 'succeeded', 7, 7, 7),
    workspace: b.actor.workspaceId,
    app: b.appId,
  });

  const a = await specialistActivity(await em(), actor, appId, { days: 7, now });
  t.true(SpecialistActivityView.safeParse(a).success);
  t.is(a.days, 7);
  t.is(a.by_day.length, 7);
  t.is(a.by_day[6].day, new Date(today).toISOString().slice(0, 10));
  t.is(a.from, new Date(today - 6 * DAY).toISOString());
  t.deepEqual(a.totals, {
    runs: 5,
    succeeded: 3,
    failed: 1,
    running: 1,
    input_tokens: 350,
    output_tokens: 70,
    cost_micros: 17,
  });
  t.deepEqual(
    a.by_kind.map((k) => [k.kind, k.runs, k.input_tokens, k.cost_micros]),
    [
      ['qualify', 3, 300, 14],
      ['icp', 1, 50, 3],
      ['keywords', 1, 0, 0],
    ],
  );
  t.deepEqual(
    a.by_day.map((d) => d.runs),
    [0, 0, 0, 0, 1, 1, 3],
  );
  const sum = (xs: { runs: number; input_tokens: number; cost_micros: number }[]) =>
    xs.reduce((s, x) => [s[0] + x.runs, s[1] + x.input_tokens, s[2] + x.cost_micros], [0, 0, 0]);
  t.deepEqual(sum(a.by_day), [a.totals.runs, a.totals.input_tokens, a.totals.cost_micros]);
  t.deepEqual(sum(a.by_kind), [a.totals.runs, a.totals.input_tokens, a.totals.cost_micros]);

  const month = await specialistActivity(await em(), actor, appId, { now });
  t.is(month.days, 30);
  t.is(month.totals.runs, 6);
  t.is((await specialistActivity(await em(), actor, appId, { days: 1000, now })).days, 90);
});

test('the local qualify answer recorded on a run keeps its reasons', async (t) => {
  const { actor, appId } = await owner();
  const input = {
    icp: { titles: ['VP of Sales'], industries: ['Software'] },
    candidate: { title: 'VP Sales', industry: 'Software' },
  };
  const r = await runSpecialist(
    await em(),
    { workspaceId: actor.workspaceId, appId, kind: 'qualify', model: llm.model },
    input.candidate,
    () =>
      llm.structured({
        task: 'qualify',
        input,
        schema: z.object({
          score: z.number(),
          reasons: z.array(z.object({ field: z.string(), matched: z.boolean() })),
        }),
      }),
  );
  const run = await getSpecialistRun(await em(), actor, appId, r.runId);
  t.deepEqual(run.result, {
    score: 100,
    reasons: [
      { field: 'title', matched: true },
      { field: 'industry', matched: true },
    ],
  });
});
