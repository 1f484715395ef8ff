// The worker's own /metrics (Prometheus scrapes each worker, as it scrapes each API process): a bare
// node:http server, guarded by the same rule as the API's GET /metrics (lib/metrics.ts metricsAccess).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsAccess, registry } from './metrics.js';

export interface MetricsServer {
  /** `http://host:port`, the port as bound (0 asks for a free one). */
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(opts: {
  host: string;
  port: number;
  config: { production: boolean; metricsToken: string | null };
}): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'not_found', message: 'only GET /metrics is served here' } }));
      return;
    }
    const denied = metricsAccess(opts.config, req.headers.authorization);
    if (denied) {
      res
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
        .end(JSON.stringify({ error: { code: 'unauthorized', message: denied } }));
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
