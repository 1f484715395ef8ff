// A TCP proxy in the test process, in front of one of the shared servers (PostgreSQL, Temporal), that
// a test can cut and restore: the way to take a dependency "down" for one API without stopping the
// server everyone else uses. Cutting destroys every relayed connection (clients see a reset) and
// closes the port (new connections are refused); stalling destroys them too but accepts new ones and
// never answers (a server that hangs); restoring relays again, on the same port.
import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Local ports of the proxy's connections to the target (pg_stat_activity.client_port for PostgreSQL). */
  upstreamPorts(): number[];
  cut(): Promise<void>;
  stall(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  const held = new Set<Socket>();
  let stalled = false;
  const dropAll = () => {
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    for (const s of held) s.destroy();
    held.clear();
  };
  const server = createServer((client) => {
    if (stalled) {
      held.add(client);
      client.on('error', () => {}).on('close', () => held.delete(client));
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of pair) s.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const port = (server.address() as { port: number }).port;
  let listening = true;
  const cut = async () => {
    if (!listening) return;
    listening = false;
    const closed = new Promise((res) => server.close(res));
    dropAll();
    await closed;
  };
  return {
    port,
    upstreamPorts: () =>
      [...pairs].map(([, upstream]) => upstream.localPort).filter((p): p is number => p !== undefined),
    cut,
    stall() {
      stalled = true;
      dropAll();
    },
    async restore() {
      if (stalled) {
        stalled = false;
        dropAll(); // the held connections never got an answer: they end now
      }
      if (listening) return;
      await new Promise<void>((res, rej) => {
        server.once('error', rej);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', rej);
          res();
        });
      });
      listening = true;
    },
    close: cut,
  };
}
