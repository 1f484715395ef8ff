// Connecting an email account with Google or Microsoft (docs/email.md "Connecting with Google or Microsoft").
import { z } from 'zod';
import { MAIL_OAUTH_PROVIDERS } from '../../lib/connectors/mailbox/oauth.js';
import { Timestamp } from '../schemas.js';
import { AccountView } from './schemas.js';

export const MailOAuthParams = z.object({
  id: z.uuid(),
  provider: z.enum(MAIL_OAUTH_PROVIDERS).meta({ description: 'The mailbox provider: `google` or `microsoft`' }),
});

export const MailOAuthStartBody = z
  .object({
    login_hint: z
      .email()
      .max(320)
      .optional()
      .meta({ description: 'The mailbox address, passed on as `login_hint` (default: the account’s address, if any)' }),
  })
  .strict();

export const MailOAuthStartView = z.object({
  provider: z.enum(MAIL_OAUTH_PROVIDERS),
  authorization_url: z
    .url()
    .meta({ description: 'Open it in the user’s browser; the provider sends it back to redirect_uri' }),
  state: z.string(),
  redirect_uri: z.url(),
  expires_at: Timestamp,
});

export const MailOAuthCallbackView = z.object({
  status: z.literal('connected'),
  account: AccountView,
  sync_workflow_id: z.string().meta({ description: 'The mailbox sync that follows its INBOX' }),
});
