// The tour of the TypeScript SDK openapi-generator's `typescript-fetch` generates from the document
// (test/api/openapi-generator.test.ts, scripts/openapi-generator.ts): sign up, a product, a list, two
// leads over JSON, a campaign, and the typed 404 of a campaign that does not exist. Prints what the
// SDK parsed, as JSON. It is copied beside the generated `sdk/` and compiled with it (tsc --strict);
// the repository's own typecheck cannot resolve `./sdk/index.js` (generated per run), so the copy
// drops the next line and only there is the file checked, against the SDK's real types.
// @ts-nocheck
import {
  ApiErrorFromJSON,
  AppsApi,
  AuthApi,
  CampaignsApi,
  Configuration,
  ListsApi,
  ResponseError,
  instanceOfApiError,
  type AddLeadsBody,
  type ApiError,
  type Campaign,
} from './sdk/index.js';

// Node's process, without @types/node: the build compiles the SDK with lib DOM only, as a browser would.
declare const process: { argv: string[] };
const [base, email, password, productName, listName, campaignName, missingId] = process.argv.slice(2);

const auth = new AuthApi(new Configuration({ basePath: base }));
const session = await auth.signup({ signupBody: { email, password, name: 'Generated TypeScript SDK' } });
// typescript-fetch sends `accessToken` as the bearer credential of the document's `bearer` scheme.
const config = new Configuration({ basePath: base, accessToken: session.accessToken });
const apps = new AppsApi(config);
const lists = new ListsApi(config);
const campaigns = new CampaignsApi(config);

const app = await apps.createApp({
  createAppBody: { name: productName, description: 'made by the typescript-fetch SDK' },
});
const list = await lists.createList({ appId: app.id, createListBody: { name: listName } });
const people: AddLeadsBody['people'] = [
  { email: `ada.${session.user.id}@example.test`, firstName: 'Ada', lastName: 'Lovelace', company: 'Engines' },
  { email: `grace.${session.user.id}@example.test`, fullName: 'Grace Hopper', title: 'Rear Admiral' },
];
const added = await lists.addListLeads({ listId: list.id, addLeadsBody: { people } });
const campaign: Campaign = await campaigns.createCampaign({
  appId: app.id,
  createCampaignBody: { name: campaignName, timeZone: 'Europe/Berlin', dailyNewLeadCap: 25 },
});

// A missing campaign: the SDK throws its ResponseError, whose body the generated ApiError model parses.
let notFound: { error: string; status: number; isApiError: boolean; code: string; requestId: string | undefined };
try {
  const found = await campaigns.getCampaign({ campaignId: missingId });
  throw new Error(`getCampaign(${missingId}) answered a campaign: ${found.id}`);
} catch (err) {
  if (!(err instanceof ResponseError)) throw err;
  const json: unknown = await err.response.json();
  const body: ApiError = ApiErrorFromJSON(json);
  notFound = {
    error: err.name,
    status: err.response.status,
    isApiError: typeof json === 'object' && json !== null && instanceOfApiError(json),
    code: body.error.code,
    requestId: body.error.requestId,
  };
}

console.log(
  JSON.stringify({
    signup: { userId: session.user.id, email: session.user.email, tokenType: session.tokenType },
    app: { id: app.id, name: app.name, description: app.description, createdAt: app.createdAt instanceof Date },
    list: { id: list.id, appId: list.appId, name: list.name },
    leads: {
      statuses: added.items.map((i) => i.status),
      leadIds: added.items.map((i) => i.leadId),
      created: added.totals.created,
      leadsAdded: added.totals.leadsAdded,
    },
    campaign: {
      id: campaign.id,
      appId: campaign.appId,
      name: campaign.name,
      status: campaign.status,
      timeZone: campaign.timeZone,
      dailyNewLeadCap: campaign.dailyNewLeadCap,
    },
    notFound,
  }),
);
