// Workflow interceptors (registered by workers/worker.ts and bundled by scripts/build.ts): a workflow
// that ends failed is reported through the `metrics` sink, since workflow code cannot touch
// prom-client in its sandbox. Sinks are not called on replay, so a failure counts once.
import {
  ContinueAsNew,
  TemporalFailure,
  isCancellation,
  proxySinks,
  type Next,
  type Sinks,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';

export interface MetricsSinks extends Sinks {
  metrics: {
    /** The current workflow (its type from the sink's WorkflowInfo) ended failed. */
    workflowFailed(): void;
  };
}

const { metrics } = proxySinks<MetricsSinks>();

class FailureCounter implements WorkflowInboundCallsInterceptor {
  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (err) {
      // A TemporalFailure fails the execution; any other error only fails the workflow task (retried),
      // a cancellation ends it canceled, ContinueAsNew starts the next run.
      if (err instanceof TemporalFailure && !isCancellation(err) && !(err instanceof ContinueAsNew))
        metrics.workflowFailed();
      throw err;
    }
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ inbound: [new FailureCounter()] });
