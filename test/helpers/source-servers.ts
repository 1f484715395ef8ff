// Local HTTP servers for the adapters' tests, without a network: `startServer` records every request
// and lets the test answer it (errors, stalls, redirects). Services' own formats have stand-ins of
// their own (test/helpers/unipile, test/helpers/hn-algolia).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WireRequest {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface WireServer {
  url: string;
  requests: WireRequest[];
  close(): Promise<void>;
}

type Handler = (req: WireRequest, res: ServerResponse) => Promise<void> | void;

export async function startServer(handler: Handler): Promise<WireServer> {
  const requests: WireRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString();
      const wire: WireRequest = {
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://x'),
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      };
      requests.push(wire);
      try {
        await handler(wire, res);
      } catch (err) {
        if (!res.headersSent) res.writeHead(500).end(String(err));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
