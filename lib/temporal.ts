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
