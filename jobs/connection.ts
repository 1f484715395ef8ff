import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionLike,
  type ConnectionOptions,
} from '@temporalio/client';
import type { Config } from '../lib/config.js';

/** The Temporal client, named for the rooms that may hold one without importing the SDK (the services factory). */
export type TemporalClient = Client;

type GrpcInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

// Calls that wait on the server by design (a workflow's result, an update's outcome): no deadline of ours.
const LONG_POLLS = new Set([
  'GetWorkflowExecutionHistory',
  'PollWorkflowExecutionUpdate',
  'UpdateWorkflowExecution',
  'ExecuteMultiOperation',
]);

/**
 * The SDK's retry interceptor (transient statuses, exponential backoff), bounded in time: a call with
 * no deadline of its own gets one `callTimeoutMs` after it starts (long polls excepted), and a retry
 * is only scheduled when it would start before the deadline. Unbounded, a call to an unreachable
 * server is retried for about 20 s (10 attempts, backoff up to 5 s) and one to a server that accepts
 * but never answers waits for ever. Bounded, nothing of a call outlives its deadline: the SDK does not
 * cancel its retry timers at `connection.close()`, and one firing after it throws from the timer
 * ("Channel has been shut down", an uncaught exception).
 */
function boundedRetry(callTimeoutMs: number): GrpcInterceptor {
  const sdk = defaultGrpcRetryOptions();
  return (options, nextCall) => {
    const path = options.method_definition.path;
    let deadline = options.deadline instanceof Date ? options.deadline.getTime() : options.deadline;
    if ((deadline === undefined || deadline === Infinity) && !LONG_POLLS.has(path.slice(path.lastIndexOf('/') + 1))) {
      deadline = Date.now() + callTimeoutMs;
      options = { ...options, deadline };
    }
    let delay = 0; // the SDK asks the decider, then the delay function, for each failed attempt
    return makeGrpcRetryInterceptor({
      retryableDecider: (attempt, status) => {
        if (!sdk.retryableDecider(attempt, status)) return false;
        delay = sdk.delayFunction(attempt, status);
        return deadline === undefined || Date.now() + delay < deadline;
      },
      delayFunction: () => delay,
    })(options, nextCall);
  };
}

/**
 * One shared Temporal client per process. `callTimeoutMs` bounds each call, retries included (the
 * API's: a request answers 503 in bounded time while Temporal is down, see api/middleware/errors.ts).
 */
export async function connectTemporal(config: Config, opts: { callTimeoutMs?: number } = {}): Promise<Client> {
  const connection = await Connection.connect({
    address: config.temporal.address,
    // After an outage, reconnect within 2 s of the server being back (grpc-js backs off up to 120 s).
    channelArgs: { 'grpc.max_reconnect_backoff_ms': 2_000 },
    ...(opts.callTimeoutMs ? { interceptors: [boundedRetry(opts.callTimeoutMs)] } : {}),
  });
  return new Client({ connection, namespace: config.temporal.namespace });
}

/**
 * What readiness asks Temporal (api/readiness.ts through the services): is the server answering, and
 * how many workers poll the task queue; each call ends with `deadline` (ms since the epoch).
 */
export function temporalProbe(client: Client, namespace: string, taskQueue: string) {
  return {
    async reachable(deadline: number): Promise<void> {
      await client.connection.withDeadline(deadline, () => client.workflowService.getSystemInfo({}));
    },
    async workflowPollers(deadline: number): Promise<number> {
      const res = await client.connection.withDeadline(deadline, () =>
        client.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name: taskQueue },
          taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
        }),
      );
      return res.pollers?.length ?? 0;
    },
  };
}
export type TemporalProbe = ReturnType<typeof temporalProbe>;

/** The custom search attributes every job carries (keyword type); see workflows/search-attributes.ts. */
export const SEARCH_ATTRIBUTES = ['WorkspaceId', 'AppId', 'JobKind'];

/**
 * Registers the missing custom search attributes on the namespace (idempotent), so any Temporal
 * server (dev server, compose, production) can run and filter our jobs. Servers that cannot register
 * them (the Java test server) only get a warning.
 */
export async function ensureSearchAttributes(
  connection: Pick<ConnectionLike, 'operatorService'>,
  namespace: string,
  warn: (msg: string) => void,
): Promise<void> {
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = SEARCH_ATTRIBUTES.filter((name) => !(name in (customAttributes ?? {})));
    if (!missing.length) return;
    const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((n) => [n, KEYWORD])),
    });
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === 6 /* ALREADY_EXISTS: registered meanwhile */) return;
    if (code !== 12 /* UNIMPLEMENTED */) throw err;
    warn(
      `this Temporal server cannot register search attributes (${SEARCH_ATTRIBUTES.join(', ')}); jobs that set them will fail`,
    );
  }
}

// gRPC status codes a busy or restarting Temporal frontend answers with; the call is safe to repeat.
// CANCELLED is what a call cut by our own deadline while between retries reports (connectTemporal).
const TRANSIENT_GRPC = new Set([
  1 /* CANCELLED */, 4 /* DEADLINE_EXCEEDED */, 8 /* RESOURCE_EXHAUSTED */, 14 /* UNAVAILABLE */,
]);

/** The gRPC status code of a Temporal client error (the client wraps it in `cause`). */
export function grpcCode(err: unknown): number | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'number') return e.code;
  }
  return undefined;
}

/** Whether a Temporal call failed because the server was busy or unreachable (worth repeating later). */
export function isTransientTemporal(err: unknown): boolean {
  const code = grpcCode(err);
  return code !== undefined && TRANSIENT_GRPC.has(code);
}

/**
 * Runs an idempotent Temporal call, repeating it with backoff while the server answers with a
 * transient status (a loaded dev server times out a describe now and then). Other errors, and the
 * last transient one, are thrown.
 */
export async function retryTransient<T>(
  fn: () => Promise<T>,
  opts: { attempts?: number; baseMs?: number } = {},
): Promise<T> {
  const attempts = opts.attempts ?? 5;
  const baseMs = opts.baseMs ?? 250;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || !isTransientTemporal(err)) throw err;
      await new Promise((r) => setTimeout(r, baseMs * 2 ** (i - 1)));
    }
  }
}
