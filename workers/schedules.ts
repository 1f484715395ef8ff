// Recurring jobs as Temporal Schedules (never timers in the API process). Created idempotently at
// worker start-up; an existing schedule is updated to the current definition.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { jobSearchAttributes } from '../workflows/search-attributes.js';
import { isScheduleDeclaration, type AnySchedule, type Every } from '../workflows/job.js';
import { retryTransient } from '../jobs/connection.js';
import * as workflows from '../workflows/index.js';

/**
 * Every recurring job, as declared beside its workflow (`defineSchedule`, exported by
 * workflows/index.ts): the declaration names the workflow function, so its arguments are that
 * function's and the Schedule starts a registered workflow type.
 */
export const RECURRING: readonly AnySchedule[] = (Object.values(workflows) as unknown[]).filter(isScheduleDeclaration);

const spec = (every: Every): ScheduleOptions['spec'] =>
  'every' in every ? { intervals: [{ every: every.every as never }] } : { calendars: [every.at] };
const OVERLAP = { skip: ScheduleOverlapPolicy.SKIP, 'buffer-one': ScheduleOverlapPolicy.BUFFER_ONE } as const;

export interface ScheduleOpts {
  /** Whether the connector is the sandbox network (default true): its delivery schedule exists only then. */
  sandboxConnector?: boolean;
}

/** `idPrefix` lets tests create throwaway (paused) copies without touching the real schedules. */
export function scheduleDefinitions(taskQueue: string, idPrefix = '', opts: ScheduleOpts = {}): ScheduleOptions[] {
  return RECURRING.filter((r) => !r.sandboxOnly || opts.sandboxConnector !== false).map((r) => ({
    scheduleId: idPrefix + r.id,
    spec: spec(r.every),
    policies: { overlap: OVERLAP[r.overlap], catchupWindow: r.catchupWindow as never },
    action: {
      type: 'startWorkflow',
      workflowType: r.workflow.name,
      workflowId: idPrefix + r.runs,
      taskQueue,
      args: r.args,
      typedSearchAttributes: jobSearchAttributes({ kind: r.kind }),
    },
    memo: { description: r.description },
    // A test's throwaway copy never fires: its runs would do real work (e.g. deliver the sandbox's
    // due events) on the test's queue while other tests run.
    ...(idPrefix ? { state: { paused: true, note: 'test copy' } } : {}),
  }));
}

export async function ensureSchedules(
  client: Client,
  taskQueue: string,
  idPrefix = '',
  opts: ScheduleOpts = {},
): Promise<void> {
  const defs = scheduleDefinitions(taskQueue, idPrefix, opts);
  // A schedule that no longer applies (the sandbox's, once a real connector is configured) goes away.
  for (const r of RECURRING) {
    const id = idPrefix + r.id;
    if (!defs.some((d) => d.scheduleId === id))
      await client.schedule
        .getHandle(id)
        .delete()
        .catch(() => {});
  }
  // Each step is repeatable: a create that timed out after taking effect is "already running" on the
  // next attempt and becomes an update; an update re-reads the schedule before writing it.
  for (const def of defs) {
    await retryTransient(async () => {
      try {
        await client.schedule.create(def);
      } catch (err) {
        if (!(err instanceof ScheduleAlreadyRunning)) throw err;
        await client.schedule
          .getHandle(def.scheduleId)
          .update((prev) => ({ ...prev, spec: def.spec, action: def.action, policies: def.policies }));
      }
    });
  }
}
