// A node-postgres connection from MikroORM's own pool, for bulk statements that need real bind
// parameters: `em.execute` formats values into the SQL text, while imports pass 5,000-row arrays
// (`unnest($1::text[], …)`) and 1 MiB file chunks (bytea), which bind as they are here.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';

export type PgClient = pg.ClientBase;

interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(c: PgClient): Promise<void>;
}

const knexClient = (em: EntityManager): KnexClient => (em.getConnection().getKnex() as unknown as { client: KnexClient }).client;

/** Runs `fn` on one pooled connection (outside any transaction of `em`). */
export async function withPgClient<T>(em: EntityManager, fn: (c: PgClient) => Promise<T>): Promise<T> {
  const client = knexClient(em);
  const c = await client.acquireConnection();
  try {
    return await fn(c);
  } finally {
    await client.releaseConnection(c);
  }
}
