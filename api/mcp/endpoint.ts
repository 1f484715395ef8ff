// The MCP endpoint `/mcp` (Streamable HTTP, docs/mcp.md) on the official SDK: stateless — each POST
// is answered with JSON by a fresh server bound to the token's principal — so any API process can
// answer any request. `tools/list` serves the one tool registry (input schemas as JSON Schema);
// `tools/call` runs a read tool at once and turns any other into an approval request.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callTool, type McpCallAnswer } from '../../domain/mcp/approvals.js';
import { resolveMcpToken, type McpPrincipal } from '../../domain/mcp/oauth.js';
import { allTools } from '../../domain/tools/index.js';
import { needsConfirmation, type Tool } from '../../domain/tools/registry.js';
import { normaliseOrigin } from '../../lib/config.js';
import type { Services } from '../services.js';
import { publicBase } from './base.js';
import { approveUrl } from './schemas.js';

const PERIOD_MS = 60_000;
const VERSION = '1.0.0';

/** A tool as MCP lists it: its input as JSON Schema (an object), and hints derived from its risk. */
function listed(t: Tool) {
  const { $schema: _drop, ...schema } = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return {
    name: t.name,
    description: needsConfirmation(t)
      ? `${t.description} (Risk: ${t.risk}. Runs only after the user approves it in the browser.)`
      : t.description,
    inputSchema: { ...schema, type: 'object' as const },
    annotations: {
      readOnlyHint: t.risk === 'read',
      destructiveHint: t.risk === 'delete',
      openWorldHint: t.risk === 'send',
    },
  };
}

const text = (v: unknown) => [{ type: 'text' as const, text: typeof v === 'string' ? v : JSON.stringify(v) }];

/** How a call's answer reads to the client (and its model). */
export function toCallResult(answer: McpCallAnswer, base: string): CallToolResult {
  if (answer.kind === 'outcome') {
    const { status, result } = answer.outcome;
    const structured = { status, result, ...(answer.approvalId ? { approval_id: answer.approvalId } : {}) };
    return { content: text(structured), structuredContent: structured, isError: status !== 'ok' };
  }
  const a = answer.approval;
  const url = approveUrl(base, a.id);
  const structured = {
    status: answer.kind,
    approval_id: a.id,
    approve_url: url,
    tool: a.toolName,
    expires_at: a.expiresAt.toISOString(),
  };
  const message =
    answer.kind === 'approval_required'
      ? `Not run yet: ${a.toolName} (risk: ${a.risk}) needs the user's approval. Ask the user to open ${url} and approve it, then call ${a.toolName} again with exactly the same arguments before ${structured.expires_at} to get its result.`
      : `Approved and still running: call ${a.toolName} again with the same arguments in a few seconds to get its result.`;
  return { content: [...text(message), ...text(structured)], structuredContent: structured, isError: true };
}

function buildServer(services: Services, principal: McpPrincipal, base: string): Server {
  const server = new Server(
    { name: 'outreach-api', version: VERSION },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'Tools of a lead-discovery and outreach workspace (the same ones as its Operator). Read tools run at once. A tool that changes, sends, spends or deletes answers with an approval link: ask the user to approve it in the browser, then call it again with the same arguments to get its result.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: allTools().map(listed) }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const answer = await callTool(
      services.orm.em.fork(),
      services.jobs,
      principal,
      req.params.name,
      req.params.arguments ?? {},
      {
        jobs: services.jobs,
        config: services.config,
        providers: services,
      },
    );
    return toCallResult(answer, base);
  });
  return server;
}

function jsonRpcError(
  ctx: Context,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  ctx.status = status;
  ctx.set(headers);
  ctx.body = { jsonrpc: '2.0', error: { code, message }, id: null };
}

/**
 * The transport specification's DNS-rebinding defence ("Servers MUST validate the Origin header on all
 * incoming connections"): a request that names an `Origin` must name an allowed one (PUBLIC_BASE_URL's
 * origin and MCP_ALLOWED_ORIGINS; never derived from `Host`, which a rebinding attacker controls).
 * Without `Origin` the caller is not a browser (SDKs, CLIs, servers) and goes on.
 */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  const o = normaliseOrigin(origin);
  return o !== null && allowed.includes(o);
}

/** `/mcp`: POST only (JSON responses; no server-initiated stream, so GET and DELETE are 405). */
export async function handleMcp(ctx: Context, services: Services): Promise<void> {
  ctx.vary('Origin');
  // First, for every method (OPTIONS too, so a preflight from a foreign page fails).
  const origin = ctx.get('origin');
  if (origin && !originAllowed(origin, services.config.mcpAllowedOrigins)) {
    return jsonRpcError(
      ctx,
      403,
      -32000,
      `Forbidden: Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed to call this endpoint (MCP_ALLOWED_ORIGINS)`,
    );
  }
  ctx.set('Access-Control-Allow-Origin', origin || '*');
  ctx.set(
    'Access-Control-Allow-Headers',
    'Authorization, Content-Type, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID',
  );
  ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version');
  ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
  if (ctx.method === 'OPTIONS') {
    ctx.status = 204;
    return;
  }
  const base = publicBase(ctx);
  // Authentication first, for every method: only an MCP access token (a PAT or session JWT is 401 here).
  const header = ctx.get('authorization');
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  const principal = m ? await resolveMcpToken(services.orm.em.fork(), m[1]) : null;
  if (!principal) {
    const challenge = `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp"${m ? ', error="invalid_token", error_description="MCP access token required (REST credentials are not accepted here)"' : ''}`;
    ctx.status = 401;
    ctx.set('WWW-Authenticate', challenge);
    ctx.body = {
      error: {
        code: 'unauthorized',
        message: m
          ? 'invalid, expired or revoked MCP access token; REST credentials do not authenticate /mcp'
          : 'authentication required: an MCP OAuth access token',
      },
    };
    return;
  }
  if (ctx.method !== 'POST') {
    ctx.set('Allow', 'POST, OPTIONS');
    return jsonRpcError(ctx, 405, -32000, 'Method not allowed: this endpoint is stateless and answers POST only');
  }
  // The same per-user bucket as the REST routes (the `default` group).
  const limit = services.config.rateLimit.defaultPerMinute;
  const d = await services.rateLimiter.check(`rl:default:u:${principal.userId}`, limit, PERIOD_MS);
  ctx.set('RateLimit-Policy', `"default";q=${limit};w=60`);
  ctx.set('RateLimit', `"default";r=${d.remaining};t=${d.reset}`);
  if (!d.allowed)
    return jsonRpcError(
      ctx,
      429,
      -32000,
      `rate limit exceeded: ${limit} requests per minute; retry after ${d.retryAfter} s`,
      { 'Retry-After': String(d.retryAfter) },
    );

  let body: unknown;
  try {
    const raw = await getRawBody(ctx.req, {
      limit: services.config.bodyLimitBytes,
      length: ctx.req.headers['content-length'],
      encoding: 'utf8',
    });
    body = JSON.parse(raw as string);
  } catch (err) {
    const e = err as { type?: string };
    if (e.type === 'entity.too.large')
      return jsonRpcError(ctx, 413, -32600, `request body larger than ${services.config.bodyLimitBytes} bytes`);
    return jsonRpcError(ctx, 400, -32700, 'Parse error: the body must be a JSON-RPC message');
  }
  const server = buildServer(services, principal, base);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  ctx.respond = false; // the transport writes the response itself
  ctx.res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await transport.handleRequest(ctx.req, ctx.res, body);
}
