// Partner-CRM routes outside /api (docs/integrations.md "Installing the partner CRM"): the OAuth
// callback that finishes an install, and the local partner's authorization page (offline only).
import { z } from 'zod';
import { badRequest, notFound } from '../../domain/errors.js';
import { finishPartnerInstall, partnerCallbackUrl } from '../../domain/integrations/integrations.js';
import { localAuthorizationCode } from '../../lib/oauth-pkce.js';
import { defineOperation } from '../operation.js';
import { integrationDeps, partnerOf } from './routes.js';
import { IntegrationView, toIntegrationView } from './schemas.js';

const param = (max: number) => z.string().max(max).optional();

export const partnerCallback = defineOperation({
  method: 'GET',
  path: '/oauth/partner/callback',
  summary:
    'Where the partner CRM sends the browser back: finishes the install started by POST /api/integrations/partner/install',
  description:
    'The state must be one the install issued, unused and under 10 minutes old (400 `invalid_state`; spent either way). The code is exchanged with the client secret (and the PKCE verifier where the partner uses PKCE); a refusal, or `error` from the partner, is 400 `oauth_denied`. The integration lands in the workspace of the user who started, who must still manage it (403 `not_assigned`); its first sync starts at once.',
  tag: 'integrations',
  auth: 'public',
  query: z
    .object({
      code: param(4096),
      state: param(512),
      error: param(200),
      error_description: param(2000),
      error_uri: param(2048),
      iss: param(2048),
      scope: param(2000),
    })
    .strict(),
  responses: {
    200: z.object({
      status: z.literal('installed'),
      created: z.boolean(),
      integration: IntegrationView,
      sync_workflow_id: z.string(),
    }),
  },
  errors: {
    400: ['invalid_query', 'invalid_state', 'oauth_denied'],
    403: ['not_assigned', 'demo_read_only'],
    409: ['integration_limit_reached'],
    502: ['provider_unavailable'],
  },
  handler: async ({ em, query, services }) => {
    const r = await finishPartnerInstall(em, integrationDeps(services), services.jobs, query);
    return {
      status: 'installed' as const,
      created: r.created,
      integration: toIntegrationView(r.integration),
      sync_workflow_id: r.sync.workflowId,
    };
  },
});

export const partnerLocalAuthorize = defineOperation({
  method: 'GET',
  path: '/oauth/partner/local/authorize',
  ids: { query: { client_id: { value: 'an OAuth client id' } } },
  summary:
    'The local partner CRM’s authorization page: consents at once and redirects to our callback (offline runs only)',
  description:
    'Answers 302 to `redirect_uri` with `code` and `state`. Only while the partner is the local one (`PARTNER_PROVIDER` unset or `local`; 404 otherwise), and only to our own callback URL (400 `invalid_redirect_uri`).',
  tag: 'integrations',
  auth: 'public',
  query: z
    .object({
      response_type: z.literal('code'),
      client_id: param(200),
      redirect_uri: z.string().max(2048),
      state: z.string().min(1).max(512),
      code_challenge: z.string().min(43).max(128),
      code_challenge_method: z.literal('S256'),
      login_hint: param(320),
      scope: param(2000),
    })
    .strict(),
  produces: 'text/plain',
  responses: { 302: z.string() },
  errors: { 400: ['invalid_query', 'invalid_redirect_uri'], 404: ['not_found'] },
  handler: ({ ctx, query, services }) => {
    if (!partnerOf(services).local) throw notFound('local partner');
    if (query.redirect_uri !== partnerCallbackUrl(integrationDeps(services)))
      throw badRequest('invalid_redirect_uri', 'redirect_uri must be this service’s partner callback');
    const to = new URL(query.redirect_uri);
    to.searchParams.set(
      'code',
      localAuthorizationCode({
        provider: 'partner',
        redirectUri: query.redirect_uri,
        codeChallenge: query.code_challenge,
        loginHint: query.login_hint,
      }),
    );
    to.searchParams.set('state', query.state);
    ctx.status = 302;
    ctx.set('Location', to.toString());
    ctx.type = 'text/plain';
    ctx.body = `Redirecting to ${to.toString()}`;
  },
});
