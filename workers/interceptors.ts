// Worker interceptors and sinks that feed lib/metrics.ts: failed activity attempts by activity type
// here, failed workflows by workflow type through the `metrics` sink (workflows/metrics-interceptors.ts).
import { createRequire } from 'node:module';
import type { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  InjectedSinks,
  Next,
} from '@temporalio/worker';
import { activityFailures, workflowFailures } from '../lib/metrics.js';
import type { MetricsSinks } from '../workflows/metrics-interceptors.js';

const compiled = import.meta.url.endsWith('.js');
/** The workflow interceptor module, from source or from dist (scripts/build.ts bundles the same one). */
export const workflowInterceptorModule = createRequire(import.meta.url).resolve(
  compiled ? '../workflows/metrics-interceptors.js' : '../workflows/metrics-interceptors.ts',
);

class ActivityFailureCounter implements ActivityInboundCallsInterceptor {
  constructor(private readonly ctx: Context) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (err) {
      // A cancellation is asked for (a workflow that moved on), not a failure.
      if (!(err instanceof CancelledFailure)) activityFailures.inc({ activity: this.ctx.info.activityType });
      throw err;
    }
  }
}

export const activityInterceptors: ActivityInterceptorsFactory = (ctx) => ({
  inbound: new ActivityFailureCounter(ctx),
});

export const metricsSinks: InjectedSinks<MetricsSinks> = {
  metrics: {
    workflowFailed: { fn: (info) => workflowFailures.inc({ workflow: info.workflowType }), callDuringReplay: false },
  },
};
