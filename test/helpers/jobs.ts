// Jobs ports for tests that stand in for one kind's start (record without starting, start with test
// parameters, or run the handling in-process) and pass every other call to `jobs`.
import type { JobInput, Jobs, JobStarted, StartedKind } from '../../domain/jobs.js';

export function withStart<K extends StartedKind>(
  jobs: Jobs,
  kind: K,
  start: (input: JobInput<K>) => Promise<unknown>,
): Jobs {
  const replaced = async (k: StartedKind, input: unknown): Promise<JobStarted> => {
    if (k !== kind) return jobs.start(k, input as never);
    await start(input as JobInput<K>);
    return { started: true, workflowId: `test:${k}`, runId: null };
  };
  return { ...jobs, start: replaced as Jobs['start'] };
}
