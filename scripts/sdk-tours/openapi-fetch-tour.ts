// A tour of the API through openapi-fetch's typed client over openapi-typescript's types of the
// document (test/api/openapi-clients.test.ts; the same steps as scripts/openapi-python-tour.py): sign
// up, then with the session's access token create a product, a lead list, two leads over JSON and a
// campaign, and read a campaign that does not exist (404, its typed `error` an ApiError). Returns what
// the client parsed.
//
// scripts/openapi-clients.ts copies this file beside the generated types (openapi-fetch-schema.ts)
// and compiles both with `tsc --strict --exactOptionalPropertyTypes --noUncheckedIndexedAccess`, then
// runs the output. In this repository `./openapi-fetch-schema.js` resolves to a stand-in declaration
// (openapi-fetch-schema.d.ts) so the project's own typecheck passes. Browser and Node APIs only
// (fetch, Response): no @types/node in the check's directory.
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi-fetch-schema.js';

type ApiError = components['schemas']['ApiError'];
type AddedLead = components['schemas']['AddedLeads']['items'][number];

export interface TourInput {
  base_url: string;
  email: string;
  password: string;
  name: string;
  product: string;
  list: string;
  campaign: string;
  people: { email: string; first_name: string; last_name: string }[];
  missing_campaign_id: string;
}

/** What a failed step reports: its status and the typed error's code. */
function failed(step: string, r: { response: Response; error?: ApiError }): Error {
  return new Error(`${step}: ${r.response.status} ${r.error?.error.code ?? ''} ${r.error?.error.message ?? ''}`);
}

export async function tour(input: TourInput) {
  const publicClient = createClient<paths>({ baseUrl: input.base_url });
  const signup = await publicClient.POST('/api/auth/signup', {
    body: { email: input.email, password: input.password, name: input.name },
  });
  if (!signup.data) throw failed('signup', signup);
  const session = signup.data;

  const client = createClient<paths>({
    baseUrl: input.base_url,
    headers: { Authorization: `Bearer ${session.access_token}` },
  });
  const app = await client.POST('/api/apps', {
    body: { name: input.product, description: 'made by the openapi-fetch client' },
  });
  if (!app.data) throw failed('createApp', app);

  const list = await client.POST('/api/apps/{appId}/lists', {
    params: { path: { appId: app.data.id } },
    body: { name: input.list },
  });
  if (!list.data) throw failed('createList', list);

  const added = await client.POST('/api/lists/{listId}/leads', {
    params: { path: { listId: list.data.id } },
    body: { people: input.people },
  });
  if (!added.data) throw failed('addListLeads', added);

  const campaign = await client.POST('/api/apps/{appId}/campaigns', {
    params: { path: { appId: app.data.id } },
    body: { name: input.campaign, time_zone: 'Europe/London' },
  });
  if (!campaign.data) throw failed('createCampaign', campaign);

  const missing = await client.GET('/api/campaigns/{campaignId}', {
    params: { path: { campaignId: input.missing_campaign_id } },
  });
  const error: ApiError | undefined = missing.error;

  return {
    signup: {
      status: signup.response.status,
      user_id: session.user.id,
      email: session.user.email,
      name: session.user.name,
      token_type: session.token_type,
    },
    app: { status: app.response.status, id: app.data.id, name: app.data.name },
    list: { status: list.response.status, id: list.data.id, app_id: list.data.app_id, name: list.data.name },
    leads: {
      status: added.response.status,
      statuses: added.data.items.map((item: AddedLead) => item.status),
      lead_ids: added.data.items.map((item: AddedLead) => item.lead_id),
      created: added.data.totals.created,
      leads_added: added.data.totals.leads_added,
    },
    campaign: {
      status: campaign.response.status,
      id: campaign.data.id,
      app_id: campaign.data.app_id,
      name: campaign.data.name,
      state: campaign.data.status,
      time_zone: campaign.data.time_zone,
    },
    missing: {
      status: missing.response.status,
      has_data: missing.data !== undefined,
      code: error?.error.code ?? null,
      message: error?.error.message ?? null,
    },
  };
}
