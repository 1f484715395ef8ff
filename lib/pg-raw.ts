// A node-postgres connection from MikroORM's own pool, for bulk statements that need real bind
// parameters: `em.execute` formats values into the SQL text, while imports pass 5,000-row arrays
// (`unnest($1::text[], …)`) and 1 MiB file chunks (bytea), which bind as they are here.
import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';

const pgQuery = pg.Query as unknown as new (
  text: string,
  values: unknown[],
  callback: (err: Error | undefined, res: { rowCount: number | null }) => void,
) => unknown;

export type PgClient = pg.ClientBase;

interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(c: PgClient): Promise<void>;
}

const knexClient = (em: EntityManager): KnexClient =>
  (em.getConnection().getKnex() as unknown as { client: KnexClient }).client;

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

/**
 * `COPY … FROM STDIN` of `data` on `c` (pg-copy-streams is not a dependency: node-postgres answers a
 * COPY's CopyInResponse through its Query's `handleCopyInResponse`, which here sends the bytes as
 * CopyData messages and then CopyDone). Resolves with the rows copied; a COPY that fails rejects
 * with PostgreSQL's error, and the connection stays usable (within the caller's transaction, aborted).
 */
export function copyFrom(c: PgClient, sql: string, data: Buffer | readonly Buffer[]): Promise<number> {
  const parts = Buffer.isBuffer(data) ? [data] : data;
  return new Promise<number>((resolve, reject) => {
    const q = new pgQuery(sql, [], (err: Error | undefined, res: { rowCount: number | null }) =>
      err ? reject(err) : resolve(res.rowCount ?? 0),
    ) as unknown as CopyQuery;
    q.values = undefined; // a simple-protocol statement (COPY takes no parameters)
    q.handleCopyInResponse = (connection) => {
      for (const part of parts) {
        // CopyData messages of at most 1 MiB: no single huge write to the socket.
        for (let at = 0; at < part.length; at += COPY_MESSAGE_BYTES)
          connection.sendCopyFromChunk(part.subarray(at, at + COPY_MESSAGE_BYTES));
      }
      connection.endCopyFrom();
    };
    void c.query(q as unknown as pg.QueryConfig);
  });
}

const COPY_MESSAGE_BYTES = 1024 * 1024;

interface CopyQuery {
  values: unknown;
  handleCopyInResponse(connection: { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void }): void;
}
