import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

// An MCP client registered through OAuth dynamic client registration (RFC 7591; docs/mcp.md). Public
// clients only (no secret: PKCE protects the code), so the row is what the consent page shows and
// the redirect URIs an authorization request must match exactly.
export const McpClient = defineEntity({
  name: 'McpClient',
  tableName: 'mcp_clients',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    clientName: p.string().length(200),
    clientUri: p.string().length(2048).nullable(),
    redirectUris: p.json<string[]>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IMcpClient = InferEntity<typeof McpClient>;
