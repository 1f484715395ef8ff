// A PostgreSQL LISTEN that lasts: one connection of its own, reconnected a second after it is lost
// (a PostgreSQL restart). Notifications sent while it was down are missed, so every listener also
// sweeps on a timer (the webhook dispatcher, the mailbox sessions).
import pg from 'pg';
import type { Logger } from './logger.js';

export interface Listening {
  close(): Promise<void>;
}

/** Listens on `channel`, calling `onNotify` with each payload; the first connection's failure is thrown. */
export async function listenTo(
  databaseUrl: string,
  channel: string,
  onNotify: (payload: string | undefined) => void,
  log: Logger,
): Promise<Listening> {
  let current: pg.Client | undefined;
  let closed = false;
  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client({ connectionString: databaseUrl });
    const retry = () => {
      c.end().catch(() => {});
      if (current === c) current = undefined;
      if (!closed) setTimeout(() => void connect().catch(retry), 1_000);
    };
    c.on('notification', (n) => onNotify(n.payload));
    c.on('error', (err) => {
      log.warn({ err: String(err), channel }, 'LISTEN connection lost; reconnecting (the sweep covers the gap)');
      retry();
    });
    await c.connect();
    await c.query(`listen ${channel}`);
    current = c;
  }
  await connect();
  return {
    async close() {
      closed = true;
      await current?.end().catch(() => {});
    },
  };
}
