// The MCP transport's paths outside `/api` (docs/mcp.md): `/mcp`, the OAuth metadata under
// `/.well-known/`, and `/oauth/mcp/*`. Mounted before the router; any other path goes on to it.
import type { Middleware } from 'koa';
import type { Services } from '../services.js';
import { handleMcp } from './endpoint.js';
import { handleOAuth } from './oauth.js';

export const mcpTransport =
  (services: Services): Middleware =>
  async (ctx, next) => {
    if (ctx.path === '/mcp') return handleMcp(ctx, services);
    if (await handleOAuth(ctx, services)) return;
    await next();
  };
