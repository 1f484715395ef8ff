import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { oauthStateProperties } from './oauth-state-properties.js';

// A pending partner-CRM install (docs/integrations.md "Installing the partner CRM"); its columns are
// those of every pending authorization (oauth-state-properties.ts), issued and spent by domain/auth/oauth-pending.ts.
export const PartnerOAuthState = defineEntity({
  name: 'PartnerOAuthState',
  tableName: 'partner_oauth_states',
  properties: oauthStateProperties,
});
export type IPartnerOAuthState = InferEntity<typeof PartnerOAuthState>;
