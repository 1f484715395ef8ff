// Connecting an email account with Google or Microsoft, OAuth 2.0 authorization code + PKCE (docs/email.md
// "Connecting with Google or Microsoft"): the start under /api, and the provider's callback outside it.
import { z } from 'zod';
import { finishMailOAuth, startMailOAuth, type MailOAuthDeps } from '../../domain/mailbox/oauth-connect.js';
import { mailConnectorOf } from '../../lib/connectors/index.js';
import { MailOAuthClient, MAIL_OAUTH_PROVIDERS } from '../../lib/connectors/mailbox/oauth.js';
import { ConnectorError } from '../../lib/connectors/types.js';
import { mailboxWorkflowIds } from '../../lib/workflow-ids.js';
import { defineOperation } from '../operation.js';
import type { Services } from '../services.js';
import { MailOAuthCallbackView, MailOAuthParams, MailOAuthStartBody, MailOAuthStartView } from './oauth-schemas.js';
import { toAccountView } from './schemas.js';

const tag = 'platform-accounts';
/** The mail checks' reasons at the callback (lib/connectors/mailbox/settings.ts). */
const MAIL_CHECK_CODES = [
  'auth_failed',
  'host_unreachable',
  'tls_failed',
  'blocked_destination',
  'invalid_credentials',
];

export function mailOAuthDeps(services: Services): MailOAuthDeps {
  const { config } = services;
  return {
    client: new MailOAuthClient(config.mailOAuth, { allowHosts: config.outboundAllowHosts }),
    stateKeys: config.jwt,
    encryptionKey: config.encryptionKey,
    verify: async (accountId, settings) => {
      const mail = mailConnectorOf(services.connector);
      if (!mail) throw new ConnectorError('mail', 'unavailable', 'this process has no mail connector');
      await mail.verifyOAuth(accountId, settings);
    },
  };
}

export const mailOAuthStartOp = defineOperation({
  method: 'POST',
  path: '/api/platform-accounts/{id}/oauth/{provider}/start',
  ids: { path: { id: 'account', provider: { value: 'a mailbox provider name' } } },
  beyondSpec: true,
  summary: 'Start connecting an email account with Google or Microsoft: the authorization URL (OAuth 2.0, PKCE)',
  description:
    'Open `authorization_url` in the browser; the provider sends it to `GET /oauth/mailbox/{provider}/callback`, which connects the account (connector `mail`, SASL XOAUTH2 on SMTP and IMAP). The state is signed, names the account and you, and expires after 10 minutes. 400 `oauth_not_configured` names the variables the server needs (`MAIL_OAUTH_GOOGLE_CLIENT_ID` …); 400 `not_email_account` for a network account; 409 `already_connected`.',
  tag,
  auth: 'user',
  params: MailOAuthParams,
  body: MailOAuthStartBody,
  responses: { 200: MailOAuthStartView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user', 'not_email_account', 'oauth_not_configured'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['already_connected'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const s = await startMailOAuth(em, actor, mailOAuthDeps(services), params.id, params.provider, body.login_hint);
    return {
      provider: params.provider,
      authorization_url: s.authorizationUrl,
      state: s.state,
      redirect_uri: s.redirectUri,
      expires_at: s.expiresAt.toISOString(),
    };
  },
});

const param = (max: number) => z.string().max(max).optional();

export const mailOAuthCallbackOp = defineOperation({
  method: 'GET',
  path: '/oauth/mailbox/{provider}/callback',
  ids: { path: { provider: { value: 'a mailbox provider name' } } },
  beyondSpec: true,
  summary:
    'Where Google or Microsoft sends the browser back: connects the email account started by POST /api/platform-accounts/{id}/oauth/{provider}/start',
  description:
    'The state must be one the start issued for this provider, under 10 minutes old (400 `invalid_state`). `error` from the provider, or a code it refuses, is 400 `oauth_denied`. The code is exchanged with the PKCE verifier; the address is the grant’s (the id_token’s email); SMTP and IMAP are checked with XOAUTH2 (400 with the reason and `details.side`, as for a password mailbox). The user who started must still manage the workspace (403 `not_assigned`). The account is then `connected` and its mailbox sync starts. 502 `provider_unavailable` when the token endpoint did not answer.',
  tag,
  auth: 'public',
  params: z.object({ provider: z.enum(MAIL_OAUTH_PROVIDERS) }),
  query: z
    .object({
      code: param(4096),
      state: param(4096),
      error: param(200),
      error_description: param(2000),
      error_uri: param(2048),
      scope: param(4000),
      authuser: param(20),
      hd: param(255),
      prompt: param(100),
      session_state: param(200),
      iss: param(2048),
    })
    .strict(),
  responses: { 200: MailOAuthCallbackView },
  errors: {
    400: ['invalid_query', 'invalid_id', 'invalid_state', 'oauth_denied', 'oauth_not_configured', ...MAIL_CHECK_CODES],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['already_connected'],
    502: ['provider_unavailable'],
  },
  handler: async ({ em, params, query, services }) => {
    const account = await finishMailOAuth(em, mailOAuthDeps(services), params.provider, query);
    // Its INBOX follower, as a password connect starts it (reconciliation starts it when this fails).
    await services.jobs
      .start('mailbox-sync', { accountId: account.id, workspaceId: account.workspace.id })
      .catch((err: unknown) =>
        services.logger.warn({ err: String(err), accountId: account.id }, 'mailbox sync not started'),
      );
    return {
      status: 'connected' as const,
      account: toAccountView(account),
      sync_workflow_id: mailboxWorkflowIds.sync(account.id),
    };
  },
});
