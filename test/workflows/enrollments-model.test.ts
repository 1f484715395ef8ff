// The send-time rule, model-based (issue 24, item 2; the model and its invariants: test/helpers/enrollments-model.ts).
// Each seed is one generated sequence of stops and lifts against a live campaign on the sandbox network;
// after it settles, no send may have been claimed after a stop that applies to it, every enrollment
// must be finished with a matching reason or waiting for a true one, and nothing may be sent twice.
// EXECUTOR_MODEL_RUNS (default 4) seeds 1..N run here; EXECUTOR_MODEL_SEED=<n> replays one seed;
// EXECUTOR_MODEL_VERBOSE=1 prints every run's commands and outcomes; `npm run soak:executor -- --runs N`
// runs many more.
import test from 'ava';
import { closeApi } from '../helpers/api.js';
import { formatRun, runModel, scenarioFor, describeScenario } from '../helpers/enrollments-model.js';
test.after.always(closeApi);

const replayOne = process.env.EXECUTOR_MODEL_SEED ? Number(process.env.EXECUTOR_MODEL_SEED) : null;
const runs = Number(process.env.EXECUTOR_MODEL_RUNS ?? 4);
const seeds = replayOne !== null ? [replayOne] : Array.from({ length: runs }, (_, i) => i + 1);
const totals = { runs: 0, ops: 0, sends: 0, violations: 0 };

for (const seed of seeds) {
  test.serial(`send-time rule model, seed ${seed}`, async (t) => {
    t.timeout(170_000);
    t.log(`seed ${seed} of ${seeds.length} (${seeds.join(', ')}): ${describeScenario(scenarioFor(seed))}`);
    const r = await runModel(seed);
    totals.runs++;
    totals.ops += r.counts.ops;
    totals.sends += r.counts.sends;
    totals.violations += r.violations.length;
    const text = formatRun(r, `EXECUTOR_MODEL_SEED=${seed} npm test -- test/workflows/enrollments-model.test.ts`);
    if (r.violations.length) {
      t.fail(`invariants of the send-time rule violated (seed ${seed}):\n${text}`);
    } else {
      if (process.env.EXECUTOR_MODEL_VERBOSE) t.log(text);
      else
        t.log(
          `${r.counts.ops} ops, ${r.counts.sends} sends, ${r.counts.actions} actions, enrollments ${JSON.stringify(r.counts.enrollments)}, ${(r.ms / 1000).toFixed(1)} s${r.notes.length ? `; notes: ${r.notes.join('; ')}` : ''}`,
        );
      t.pass();
    }
    if (totals.runs === seeds.length)
      t.log(
        `model totals: ${totals.runs} seeds, ${totals.ops} ops, ${totals.sends} sends, ${totals.violations} violations`,
      );
  });
}
