// A local webhook receiver on 127.0.0.1 that records raw request bytes and answers as told.
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface Received {
  headers: IncomingMessage['headers'];
  raw: Buffer;
  url: string;
}

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  close(): Promise<void>;
}

type Behaviour = 'ok' | 'stall' | ((req: IncomingMessage, res: ServerResponse, raw: Buffer) => void);

export async function startReceiver(behaviour: Behaviour = 'ok', path = '/hook'): Promise<Receiver> {
  const requests: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      requests.push({ headers: req.headers, raw, url: req.url ?? '' });
      if (behaviour === 'stall') return; // never answers
      if (behaviour === 'ok') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        return;
      }
      behaviour(req, res, raw);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** What a receiver must do: constant-time compare of sha256=<hex> over the raw bytes, before parsing. */
export function verifySignature(secret: string, raw: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const got = Buffer.from(header);
  return expected.length === got.length && timingSafeEqual(expected, got);
}
