// The middleware chain: request id → JSON logs → error mapping → security headers → router (per
// route: authentication → acting-as → Demo guard → rate limit → body reading → validation → handler)
// → 404/405 for what no route matched.
import Koa from 'koa';
import { runtimeSettings } from '../lib/config.js';
import { requestId } from './middleware/request-id.js';
import { accessLog } from './middleware/access-log.js';
import { errorMapper } from './middleware/errors.js';
import { securityHeaders } from './middleware/security-headers.js';
import { buildRouter, routes, unmatched } from './router.js';
import { docsAssets } from './docs-page.js';
import { mcpTransport } from './mcp/transport.js';
import { allOperations } from './operations.js';
import type { Operation } from './operation.js';
import type { Services } from './services.js';

export function createApp(services: Services, operations: Operation[] = allOperations()): Koa {
  const app = new Koa({ proxy: runtimeSettings.trustProxy() });
  const router = buildRouter(operations, services);
  app.silent = true; // errors are logged by the error mapper, not printed by Koa
  app.use(requestId(services));
  app.use(accessLog());
  app.use(errorMapper());
  app.use(securityHeaders());
  app.use(docsAssets()); // the docs viewer's static files, outside the operation table
  app.use(mcpTransport(services)); // /mcp and its OAuth endpoints, outside the operation table (docs/mcp.md)
  app.use(routes(router));
  app.use(unmatched(router));
  return app;
}
