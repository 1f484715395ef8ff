import type { Context } from 'koa';
import { loadConfig } from '../../lib/config.js';

/**
 * The origin links and OAuth metadata use: PUBLIC_BASE_URL when it is set (a deployment behind a
 * proxy), else the origin this request reached (a local run, or a test on an ephemeral port).
 */
export const publicBase = (ctx: Context): string =>
  (loadConfig().publicBaseUrlFromEnv || `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '');
/** The MCP endpoint's URL: the protected resource its tokens are for (RFC 8707 / RFC 9728). */
export const mcpResource = (ctx: Context): string => `${publicBase(ctx)}/mcp`;
