// Waiting for a workflow that another process (the worker's outbox dispatcher) starts.
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';

/** Polls until the workflow exists (up to `timeoutMs`), then returns its handle. */
export async function whenStarted<H extends WorkflowHandle>(handle: H, timeoutMs = 60_000): Promise<H> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await handle.describe();
      return handle;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
