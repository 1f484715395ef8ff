import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { PlatformAccount } from './PlatformAccount.js';

// The OAuth tokens of a mailbox connected with Google or Microsoft (docs/email.md "Connecting with
// Google or Microsoft"): sealed JSON `{access_token, refresh_token}` (lib/crypto.ts), the access
// token's expiry, and when the grant was found revoked. Read and refreshed only by
// domain/mailbox/oauth-tokens.ts, under this row's lock.
export const MailboxOAuthToken = defineEntity({
  name: 'MailboxOAuthToken',
  tableName: 'mailbox_oauth_tokens',
  properties: (p) => ({
    account: p.oneToOne(PlatformAccount).owner().primary().ref().deleteRule('cascade'),
    provider: p.string().length(20),
    tokensSealed: p.text(),
    expiresAt: p.datetime(),
    refreshedAt: p.datetime().nullable(),
    /** Refreshes done (tests count them: two racing refreshes make one). */
    refreshes: p.integer().default(0),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IMailboxOAuthToken = InferEntity<typeof MailboxOAuthToken>;
