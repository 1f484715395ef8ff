import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { Timestamp } from '../schemas.js';
import { notFound } from '../../domain/errors.js';
import { oauthProviders, startOAuth } from '../../lib/oauth.js';

export const OAuthStartView = z.object({
  provider: z.string(),
  authorization_url: z.url(),
  state: z.string(),
  expires_at: Timestamp,
});

export const oauthStartOp = defineOperation({
  method: 'GET',
  path: '/api/auth/oauth/{provider}/start',
  ids: { path: { provider: { value: 'a provider name' } } },
  summary: 'Start an OAuth sign-in: the URL to send the browser to, with a signed, expiring state',
  tag: 'auth',
  auth: 'public',
  // Any string: an unknown or unconfigured provider is 404, a malformed name too.
  params: z.object({ provider: z.string() }),
  responses: { 200: OAuthStartView },
  errors: { 404: ['not_found'] },
  handler: async ({ services, params }) => {
    const provider = oauthProviders(services.config.publicBaseUrl, services.config.oauthEnv).get(
      params.provider.toLowerCase(),
    );
    if (!provider) throw notFound('OAuth provider');
    const s = await startOAuth(services.config, provider);
    return {
      provider: provider.name,
      authorization_url: s.authorizationUrl,
      state: s.state,
      expires_at: s.expiresAt.toISOString(),
    };
  },
});
