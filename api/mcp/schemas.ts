import { z } from 'zod';
import { MCP_APPROVAL_STATUSES, type IMcpApproval } from '../../db/entities/McpApproval.js';
import { effectiveStatus } from '../../domain/mcp/approvals.js';
import { findTool } from '../../domain/tools/index.js';
import { RISKS } from '../../domain/tools/registry.js';
import { JsonValue, Timestamp, iso } from '../schemas.js';

export const ApprovalBody = z
  .object({ approval_id: z.uuid().meta({ description: 'The id from the tool call’s answer or its approval link' }) })
  .strict();

export const ApprovalView = z.object({
  id: z.uuid(),
  status: z
    .enum(MCP_APPROVAL_STATUSES)
    .meta({ description: 'pending → approved → executed | failed; pending → expired' }),
  tool: z.object({ name: z.string(), description: z.string(), risk: z.enum(RISKS) }),
  /** The exact arguments the call runs with. */
  arguments: JsonValue,
  client: z.object({ id: z.uuid(), name: z.string() }),
  approve_url: z.string().meta({ description: 'The browser page that shows and approves this request' }),
  created_at: Timestamp,
  expires_at: Timestamp,
  decided_at: Timestamp.nullable(),
  executed_at: Timestamp.nullable(),
  /** The run's outcome `{status: ok | error, result}` once executed or failed; null before. */
  result: JsonValue,
});

export const approveUrl = (base: string, id: string) => `${base}/oauth/mcp/approvals/${id}`;

export function toApprovalView(a: IMcpApproval, base: string): z.infer<typeof ApprovalView> {
  const tool = findTool(a.toolName);
  return {
    id: a.id,
    status: effectiveStatus(a),
    tool: { name: a.toolName, description: tool?.description ?? '', risk: a.risk as (typeof RISKS)[number] },
    arguments: (a.args ?? null) as never,
    client: { id: a.client.id, name: a.client.getEntity().clientName },
    approve_url: approveUrl(base, a.id),
    created_at: a.createdAt.toISOString(),
    expires_at: a.expiresAt.toISOString(),
    decided_at: iso(a.decidedAt),
    executed_at: iso(a.executedAt),
    result: (a.result ?? null) as never,
  };
}
