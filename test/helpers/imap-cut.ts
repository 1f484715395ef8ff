// A TCP relay in front of the test mail server's IMAP port that breaks the connection a client sends
// an APPEND on (before the command reaches the server), for the first `cuts` APPENDs — every one
// with `cuts: Infinity`. Everything else (LOGIN, SELECT, SEARCH, IDLE) is relayed as is, so a
// mailbox connected through it connects, syncs and sends; only its Sent copies fail, the way a kept
// session that died under the command does ("Connection not available").
import { connect, createServer, type Socket } from 'node:net';
import { mailServer } from './mail-server.js';

export interface ImapAppendCutter {
  port: number;
  /** APPEND commands seen (each cut or relayed). */
  appends: number;
  /** Connections broken so far. */
  cut: number;
  close(): Promise<void>;
}

export async function imapAppendCutter(cuts: number): Promise<ImapAppendCutter> {
  const m = mailServer();
  const sockets = new Set<Socket>();
  const state = { appends: 0, cut: 0 };
  const server = createServer((client) => {
    const upstream = connect(m.imapPort, m.host);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (/^\S+ (UID )?APPEND /im.test(chunk.toString('latin1'))) {
        state.appends++;
        if (state.cut < cuts) {
          state.cut++;
          drop();
          return;
        }
      }
      upstream.write(chunk);
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return {
    port: (server.address() as { port: number }).port,
    get appends() {
      return state.appends;
    },
    get cut() {
      return state.cut;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((res) => server.close(res));
    },
  };
}
