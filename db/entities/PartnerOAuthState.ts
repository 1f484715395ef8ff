import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// A pending partner-CRM install (docs/integrations.md "Installing the partner CRM"): the OAuth `state`
// (SHA-256), bound to the user and workspace that started it, with the PKCE verifier (sealed).
// Single use, 10 minutes. Same shape as booking_oauth_states; both go through domain/oauth-pending.ts.
export const PartnerOAuthState = defineEntity({
  name: 'PartnerOAuthState',
  tableName: 'partner_oauth_states',
  properties: (p) => ({
    id: p.uuid().primary().onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    userId: p.uuid(),
    provider: p.string().length(40),
    stateHash: p.string().length(64).unique(),
    codeVerifierSealed: p.text().nullable(),
    redirectUri: p.string().length(2048),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IPartnerOAuthState = InferEntity<typeof PartnerOAuthState>;
