import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { McpClient } from './McpClient.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

export const MCP_APPROVAL_STATUSES = ['pending', 'approved', 'executed', 'failed', 'expired'] as const;
export type McpApprovalStatus = (typeof MCP_APPROVAL_STATUSES)[number];

// A risky tool call made over MCP, waiting for its user's approval in the browser (docs/mcp.md). The
// tool runs with the arguments stored here (and their canonical hash), once: `executedAt` is
// claimed before it runs, and its outcome is kept for the client's retry.
export const McpApproval = defineEntity({
  name: 'McpApproval',
  tableName: 'mcp_approvals',
  indexes: [{ properties: ['user', 'client', 'toolName', 'argsHash'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    user: p.manyToOne(User).ref().deleteRule('cascade'),
    client: p.manyToOne(McpClient).ref().deleteRule('cascade'),
    grantId: p.uuid(),
    toolName: p.string().length(100),
    risk: p.string().length(10),
    args: p.json<unknown>(),
    argsHash: p.string().length(64),
    status: p.string().length(10).default('pending'),
    expiresAt: p.datetime(),
    decidedAt: p.datetime().nullable(),
    executedAt: p.datetime().nullable(),
    result: p.json<unknown>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IMcpApproval = InferEntity<typeof McpApproval>;
