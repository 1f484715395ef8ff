// API process entry point: `tsx api/server.ts` (npm start runs it after the stack and migrations).
import { loadConfig } from '../lib/config.js';
import { logUnhandledRejections } from '../lib/logger.js';
import { createApp } from './app.js';
import { createHttpServer } from './http-server.js';
import { createServices } from './services-factory.js';

export async function startApi(port: number) {
  const services = await createServices();
  const app = createApp(services);
  const server = createHttpServer(app.callback());
  await new Promise<void>((res) => server.listen(port, services.config.host, res));
  return {
    server,
    services,
    async close() {
      await new Promise((res) => server.close(res));
      await services.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  logUnhandledRejections(); // a dependency outage must not end the process (docs/deploy.md)
  const port = loadConfig().port;
  const api = await startApi(port);
  api.services.logger.info({ port }, 'API listening');
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => void api.close().then(() => process.exit(0)));
}
