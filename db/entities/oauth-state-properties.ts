import type { p as PropertyBuilders } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// The columns of a pending OAuth authorization (booking_oauth_states, partner_oauth_states), which
// domain/auth/oauth-pending.ts issues and spends for either table: the `state` handed to the provider
// (stored as SHA-256), bound to the user and workspace that started it, with the PKCE verifier
// (sealed) and the redirect URI it was issued for. Single use, 10 minutes. Two tables, one shape.

/** The properties of a pending-authorization entity, as `defineEntity`'s `properties`. */
export const oauthStateProperties = (p: typeof PropertyBuilders) => ({
  id: p
    .uuid()
    .primary()
    .onCreate(() => uuidv7()),
  workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
  userId: p.uuid(),
  provider: p.string().length(40),
  stateHash: p.string().length(64).unique(),
  codeVerifierSealed: p.text().nullable(),
  redirectUri: p.string().length(2048),
  expiresAt: p.datetime(),
  usedAt: p.datetime().nullable(),
  createdAt: p.datetime().onCreate(() => new Date()),
});
