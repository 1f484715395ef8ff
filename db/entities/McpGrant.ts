import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { McpClient } from './McpClient.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

// A user's consent for one MCP client in one workspace (docs/mcp.md): first an authorization code
// (stored as SHA-256 with its PKCE S256 challenge, single use, 60 s), then the family of its tokens.
// Revoking the grant (a reused refresh token, a code presented twice) ends every token of it.
export const McpGrant = defineEntity({
  name: 'McpGrant',
  tableName: 'mcp_grants',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    client: p.manyToOne(McpClient).ref().deleteRule('cascade').index(),
    user: p.manyToOne(User).ref().deleteRule('cascade').index(),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    scope: p.string().length(200),
    resource: p.string().length(2048),
    redirectUri: p.string().length(2048),
    codeHash: p.string().length(64).unique(),
    codeChallenge: p.string().length(128),
    codeExpiresAt: p.datetime(),
    codeUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IMcpGrant = InferEntity<typeof McpGrant>;
