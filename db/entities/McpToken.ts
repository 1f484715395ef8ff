import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { McpGrant } from './McpGrant.js';

// An MCP access or refresh token (docs/mcp.md), stored as SHA-256 only. Refresh tokens rotate:
// `usedAt` is claimed atomically, and presenting a used one revokes the whole grant.
export const McpToken = defineEntity({
  name: 'McpToken',
  tableName: 'mcp_tokens',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    grant: p.manyToOne(McpGrant).ref().deleteRule('cascade').index(),
    kind: p.string().length(10),
    tokenHash: p.string().length(64).unique(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IMcpToken = InferEntity<typeof McpToken>;
