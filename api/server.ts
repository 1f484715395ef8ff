// API process entry point: `tsx api/server.ts` (npm start runs it after the stack and migrations).
import { createServer } from 'node:http';
import { createApp } from './app.js';
import { createServices } from './services-factory.js';

export async function startApi(port: number) {
  const services = await createServices();
  const app = createApp(services);
  const server = createServer(app.callback());
  server.requestTimeout = 120_000;
  server.headersTimeout = 20_000;
  await new Promise<void>((res) => server.listen(port, process.env.HOST ?? '127.0.0.1', res));
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
  const port = Number(process.env.PORT ?? 3000);
  const api = await startApi(port);
  api.services.logger.info({ port }, 'API listening');
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void api.close().then(() => process.exit(0)));
}
