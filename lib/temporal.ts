import { Client, Connection, type ConnectionLike } from '@temporalio/client';
import type { Config } from './config.js';

/** One shared Temporal client per process. */
export async function connectTemporal(config: Config): Promise<Client> {
  const connection = await Connection.connect({ address: config.temporal.address });
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** The custom search attributes every job carries (keyword type); see workflows/search-attributes.ts. */
export const SEARCH_ATTRIBUTES = ['WorkspaceId', 'AppId', 'JobKind'];

/**
 * Registers the missing custom search attributes on the namespace (idempotent), so any Temporal
 * server (dev server, compose, production) can run and filter our jobs. Servers that cannot register
 * them (the Java test server) only get a warning.
 */
export async function ensureSearchAttributes(connection: Pick<ConnectionLike, 'operatorService'>, namespace: string, warn: (msg: string) => void): Promise<void> {
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = SEARCH_ATTRIBUTES.filter((name) => !(name in (customAttributes ?? {})));
    if (!missing.length) return;
    const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((n) => [n, KEYWORD])) });
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === 6 /* ALREADY_EXISTS: registered meanwhile */) return;
    if (code !== 12 /* UNIMPLEMENTED */) throw err;
    warn(`this Temporal server cannot register search attributes (${SEARCH_ATTRIBUTES.join(', ')}); jobs that set them will fail`);
  }
}

// gRPC status codes a busy or restarting Temporal frontend answers with; the call is safe to repeat.
const TRANSIENT_GRPC = new Set([4 /* DEADLINE_EXCEEDED */, 8 /* RESOURCE_EXHAUSTED */, 14 /* UNAVAILABLE */]);

/** The gRPC status code of a Temporal client error (the client wraps it in `cause`). */
export function grpcCode(err: unknown): number | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
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
export async function retryTransient<T>(fn: () => Promise<T>, opts: { attempts?: number; baseMs?: number } = {}): Promise<T> {
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
