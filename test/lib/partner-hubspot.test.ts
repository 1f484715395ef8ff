// The HubSpot partner adapter (lib/partner/hubspot.ts) against the stand-in that speaks HubSpot's
// documented format (test/helpers/hubspot/stand-in.ts): configuration; OAuth (install URL, code and
// refresh exchanges with the client secret, token metadata, HubSpot's refusals); the mapping of our
// leads to contacts by email, companies by domain and their associations, of replies and meetings to
// notes; per-record errors (207 multi-status, a batch refused whole and bisected); 401 → one refresh,
// 403, 429 with its policy's reset, 5xx; the pace per install; and a sync page of the domain driven
// through it (batches of ≤100 in order, a push_rejected event, a revoked install shown).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { confirmPartnerEvent, partnerIdStore, syncPartnerPage } from '../../domain/integrations/partner-sync.js';
import { resolveActor } from '../../domain/workspaces.js';
import { HUBSPOT_DEFAULT_SCOPE, partnerSettings, refuseRemovedVariables } from '../../lib/config.js';
import { encrypt } from '../../lib/crypto.js';
import { uuidv7 } from '../../lib/ids.js';
import { ProviderPace } from '../../lib/provider-pace.js';
import {
  createPartner,
  HubSpotPartner,
  PartnerError,
  type PartnerIdStore,
  type PartnerRecord,
  type PartnerSession,
  type PartnerTokens,
} from '../../lib/partner/index.js';
import { HS_COMPANY, HS_CONTACT, contactProperties, normaliseDomain } from '../../lib/partner/hubspot.js';
import { api, call, closeApi, createTestApp } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { seedContacts } from '../helpers/contacts.js';
import { startHubSpotStandIn, type HubSpotStandIn } from '../helpers/hubspot/stand-in.js';
test.after.always(closeApi);

const REDIRECT = 'https://outreach.example.com/oauth/partner/callback';

async function standIn(t: { teardown(fn: () => Promise<void> | void): void }, opts = {}) {
  const s = await startHubSpotStandIn({ redirectUri: REDIRECT, ...opts });
  t.teardown(() => s.close());
  return s;
}

function adapter(s: HubSpotStandIn, extra: Partial<ConstructorParameters<typeof HubSpotPartner>[0]> = {}) {
  return new HubSpotPartner({
    apiBaseUrl: s.url,
    authorizeUrl: s.authorizeUrl,
    clientId: s.app.clientId,
    clientSecret: s.app.clientSecret,
    scope: HUBSPOT_DEFAULT_SCOPE,
    timeoutMs: 5000,
    ...extra,
  });
}

/** The install as a browser makes it: our authorize URL → the stand-in consents → the code exchanged. */
async function install(s: HubSpotStandIn, p: HubSpotPartner): Promise<PartnerTokens> {
  const consent = await fetch(p.authorizationUrl({ state: 'st-1', redirectUri: REDIRECT, codeChallenge: 'x' }), {
    redirect: 'manual',
  });
  const back = new URL(consent.headers.get('location')!);
  return p.exchangeCode({ code: back.searchParams.get('code')!, redirectUri: REDIRECT, codeVerifier: 'v' });
}

function memoryStore(): PartnerIdStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    async get(kind, keys) {
      return new Map(keys.filter((k) => data.has(`${kind}:${k}`)).map((k) => [k, data.get(`${kind}:${k}`)!]));
    },
    async put(kind, ids) {
      for (const [k, v] of ids) data.set(`${kind}:${k}`, v);
    },
    async forget(kind, keys) {
      for (const k of keys) data.delete(`${kind}:${k}`);
    },
  };
}

function sessionOf(
  p: HubSpotPartner,
  tokens: PartnerTokens,
  ids: PartnerIdStore = memoryStore(),
): PartnerSession & { refreshes: number } {
  const s = {
    accountId: `acct-${randomUUID()}`,
    accessToken: tokens.accessToken,
    refreshes: 0,
    ids,
    async refresh() {
      s.refreshes++;
      return (await p.refresh(tokens.refreshToken!)).accessToken;
    },
  };
  return s;
}

const lead = (fields: Record<string, string | null>, id = uuidv7()): PartnerRecord => ({
  kind: 'lead',
  externalId: id,
  fields: { contact_id: uuidv7(), list_id: uuidv7(), profile_url: null, full_name: null, ...fields },
});

test('configuration: PARTNER_PROVIDER=hubspot needs its OAuth client; local by default; the removed variables name HubSpot’s', (t) => {
  const local = partnerSettings(1000, {});
  t.like(local, { provider: 'local', apiBaseUrl: null });
  const orm = { em: null as never };
  t.true(createPartner(local, 'http://127.0.0.1:3000', orm).local);
  t.throws(() => partnerSettings(1000, { PARTNER_PROVIDER: 'hubspot' }), {
    message: /PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET/,
  });
  t.throws(() => partnerSettings(1000, { PARTNER_PROVIDER: 'salesforce' }), { message: /PARTNER_PROVIDER must be/ });
  const env = { PARTNER_PROVIDER: 'HubSpot', PARTNER_CLIENT_ID: 'cid', PARTNER_CLIENT_SECRET: 'sec' };
  const hs = partnerSettings(1000, env);
  t.deepEqual(hs, {
    provider: 'hubspot',
    apiBaseUrl: 'https://api.hubapi.com',
    authorizeUrl: 'https://app.hubspot.com/oauth/authorize',
    tokenUrl: 'https://api.hubapi.com/oauth/v1/token',
    clientId: 'cid',
    clientSecret: 'sec',
    scope: HUBSPOT_DEFAULT_SCOPE,
    timeoutMs: 1000,
  });
  t.throws(() => partnerSettings(1000, { ...env, HUBSPOT_API_BASE_URL: 'ftp://x' }), {
    message: /HUBSPOT_API_BASE_URL must be an absolute http\(s\) URL/,
  });
  const partner = createPartner(hs, 'http://x', orm);
  t.false(partner.local);
  t.is(partner.label, 'HubSpot');
  const url = new URL(partner.authorizationUrl({ state: 's t', redirectUri: REDIRECT, codeChallenge: 'c' }));
  t.is(url.origin + url.pathname, 'https://app.hubspot.com/oauth/authorize');
  t.true(
    url.search.includes(`scope=${encodeURIComponent(HUBSPOT_DEFAULT_SCOPE)}`),
    'spaces as %20, as HubSpot builds it',
  );
  t.deepEqual(Object.fromEntries(url.searchParams), {
    client_id: 'cid',
    redirect_uri: REDIRECT,
    scope: HUBSPOT_DEFAULT_SCOPE,
    state: 's t',
  });
  for (const k of ['PARTNER_BASE_URL', 'PARTNER_AUTHORIZE_URL', 'PARTNER_TOKEN_URL'])
    t.throws(() => refuseRemovedVariables({ [k]: 'https://crm.example.com' }), {
      message: new RegExp(`${k} is no longer supported .*HUB`),
    });
  t.notThrows(() => refuseRemovedVariables({ PARTNER_PROVIDER: 'hubspot', HUBSPOT_API_BASE_URL: 'http://x' }));
});

test('OAuth: the code is exchanged with the client secret; the token names its hub; a refresh keeps the refresh token; HubSpot’s refusals are auth with its reason', async (t) => {
  const s = await standIn(t);
  const p = adapter(s);
  t.teardown(() => p.close());
  const tokens = await install(s, p);
  const exchange = s.requests.find((r) => r.path === '/oauth/v1/token')!;
  t.deepEqual(Object.fromEntries(exchange.form!), {
    grant_type: 'authorization_code',
    redirect_uri: REDIRECT,
    code: exchange.form!.get('code')!,
    client_id: s.app.clientId,
    client_secret: s.app.clientSecret,
  });
  t.is(exchange.headers.authorization, undefined, 'the secret travels in the form, nothing else');
  t.truthy(tokens.refreshToken);
  const ttl = tokens.expiresAt!.getTime() - Date.now();
  t.true(ttl > 1_790_000 && ttl <= 1_800_000, 'access tokens live 30 minutes');
  t.deepEqual(await p.account(tokens.accessToken), { accountId: String(s.hub.id), name: s.hub.domain });

  const refreshed = await p.refresh(tokens.refreshToken!);
  t.not(refreshed.accessToken, tokens.accessToken);
  t.is(refreshed.refreshToken, tokens.refreshToken);

  const refused = async (run: () => Promise<unknown>, reason: string) => {
    const err = await t.throwsAsync(run, { instanceOf: PartnerError });
    t.like(err, { code: 'auth', details: { reason } });
  };
  await refused(() => p.exchangeCode({ code: 'nope', redirectUri: REDIRECT, codeVerifier: 'v' }), 'BAD_AUTH_CODE');
  const wrongSecret = adapter(s, { clientSecret: 'wrong' });
  t.teardown(() => wrongSecret.close());
  await refused(() => wrongSecret.refresh(tokens.refreshToken!), 'BAD_CLIENT_SECRET');
  const wantsMore = adapter(s, { scope: `${HUBSPOT_DEFAULT_SCOPE} crm.objects.deals.write` });
  t.teardown(() => wantsMore.close());
  await refused(() => wantsMore.account(refreshed.accessToken), 'MISSING_SCOPES');
  s.uninstall();
  await refused(() => p.refresh(tokens.refreshToken!), 'BAD_REFRESH_TOKEN');
  await refused(() => p.account(refreshed.accessToken), 'HTTP_404');
});

test('leads → contacts by email and companies by domain (found, or created once), associated; one contact per person; the next push updates by id', async (t) => {
  const s = await standIn(t, { searchLagMs: 60_000 });
  const p = adapter(s);
  t.teardown(() => p.close());
  const store = memoryStore();
  const session = sessionOf(p, await install(s, p), store);
  const known = s.addCompany({ name: 'Analytical Engines Ltd', domain: 'engines.example' });
  const tag = randomUUID().slice(0, 6);
  const ada = uuidv7();
  const records = [
    lead({
      email: `Ada.${tag}@Engines.Example`,
      first_name: 'Ada',
      last_name: 'Lovelace',
      title: 'CEO',
      company: 'Analytical Engines',
      company_domain: 'https://www.engines.example/about',
      phone: '+44 20 1234',
      country: 'GB',
    }),
    lead({
      email: `grace.${tag}@navy.example`,
      full_name: 'Grace Brewster Hopper',
      title: 'Rear Admiral',
      company: 'US Navy',
      company_domain: 'navy.example',
      country: null,
    }),
    // Ada again, as a lead of another list: the same contact.
    {
      ...lead({}),
      fields: {
        email: `ada.${tag}@engines.example`,
        first_name: 'Ada',
        last_name: 'Lovelace',
        title: 'CEO',
        company: 'Analytical Engines',
        company_domain: 'engines.example',
        contact_id: ada,
      },
    },
    lead({ email: null, first_name: 'Linus', last_name: null, company: 'Kernel', company_domain: 'navy.example' }),
    lead({ email: null, first_name: null, full_name: null, title: 'Nobody' }),
  ];
  records[0].fields.contact_id = ada;
  const first = await p.upsert(session, records);
  t.deepEqual(
    first.map((r) => r.status),
    ['upserted', 'upserted', 'upserted', 'upserted', 'rejected'],
  );
  t.like(first[4], { status: 'rejected', error: { reason: 'MISSING_IDENTITY' } });
  t.is(
    (first[0] as { partnerId: string }).partnerId,
    (first[2] as { partnerId: string }).partnerId,
    'one contact per person',
  );
  t.is(s.contacts.size, 3);
  t.deepEqual(s.contactByEmail(`ada.${tag}@engines.example`)!.properties, {
    email: `ada.${tag}@engines.example`,
    firstname: 'Ada',
    lastname: 'Lovelace',
    jobtitle: 'CEO',
    company: 'Analytical Engines',
    phone: '+44 20 1234',
    country: 'GB',
  });
  t.deepEqual(s.contactByEmail(`grace.${tag}@navy.example`)!.properties, {
    email: `grace.${tag}@navy.example`,
    firstname: 'Grace',
    lastname: 'Brewster Hopper',
    jobtitle: 'Rear Admiral',
    company: 'US Navy',
  });
  // engines.example existed (found by search, not created again); navy.example was made once.
  t.deepEqual(
    s.companiesByDomain('engines.example').map((c) => c.id),
    [known.id],
  );
  const navy = s.companiesByDomain('navy.example');
  t.is(navy.length, 1);
  t.deepEqual(navy[0].properties, { domain: 'navy.example', name: 'US Navy' });
  const linus = [...s.contacts.values()].find((c) => c.properties.firstname === 'Linus')!;
  const contactOf = (r: (typeof first)[number]) => (r as { partnerId: string }).partnerId;
  t.deepEqual(
    [...s.contactCompany].sort(),
    [`${contactOf(first[0])}:${known.id}`, `${contactOf(first[1])}:${navy[0].id}`, `${linus.id}:${navy[0].id}`].sort(),
  );
  t.is(store.data.get(`${HS_COMPANY}:navy.example`), navy[0].id);

  // Again, changed: contacts updated by their ids; companies from the store (search still lags: no twins).
  const mark = s.requests.length;
  records[1].fields.title = 'Commodore';
  const second = await p.upsert(session, records.slice(0, 4));
  t.deepEqual(second.map(contactOf), first.slice(0, 4).map(contactOf));
  t.is(s.contacts.size, 3);
  t.is(s.companies.size, 2);
  t.is(s.contactByEmail(`grace.${tag}@navy.example`)!.properties.jobtitle, 'Commodore');
  t.deepEqual(
    s.crmRequests(mark).map((r) => `${r.path} ${r.json.inputs?.length ?? ''}`),
    ['/crm/v3/objects/contacts/batch/update 3', '/crm/v4/associations/contacts/companies/batch/associate/default 3'],
  );
  t.deepEqual(
    s
      .crmRequests(mark)[0]
      .json.inputs.map((i: { objectWriteTraceId: string }) => i.objectWriteTraceId)
      .sort(),
    [ada, records[1].fields.contact_id, records[3].fields.contact_id].sort(),
  );

  // A contact deleted in HubSpot: its stored id is forgotten and it is upserted again by email.
  s.contacts.delete(contactOf(first[1]));
  const third = await p.upsert(session, [records[1]]);
  t.like(third[0], { status: 'upserted' });
  t.not(contactOf(third[0]), contactOf(first[1]));
  t.is(store.data.get(`${HS_CONTACT}:${records[1].fields.contact_id}`), contactOf(third[0]));
});

test('a contact HubSpot already holds with other values is a field conflict, not overwritten; overwrite (a person’s choice) pushes ours', async (t) => {
  const s = await standIn(t);
  const p = adapter(s);
  t.teardown(() => p.close());
  const session = sessionOf(p, await install(s, p));
  const theirs = s.addContact({ email: 'cy@corp.example', firstname: 'Cy', jobtitle: 'Edited in HubSpot', phone: '' });
  const same = s.addContact({ email: 'di@corp.example', firstname: 'Di', jobtitle: 'COO' });
  const cy = lead({ email: 'cy@corp.example', first_name: 'Cy', title: 'CTO', phone: '+1 555' });
  const di = lead({ email: 'di@corp.example', first_name: 'Di', last_name: 'Ward', title: 'COO' });
  const [conflict, fine] = await p.upsert(session, [cy, di]);
  t.deepEqual(conflict, {
    externalId: cy.externalId,
    status: 'conflict',
    partnerId: theirs.id,
    conflicts: [{ field: 'title', ours: 'CTO', theirs: 'Edited in HubSpot' }],
  });
  t.like(fine, { status: 'upserted', partnerId: same.id });
  t.is(theirs.properties.jobtitle, 'Edited in HubSpot', 'not overwritten');
  t.is(same.properties.lastname, 'Ward', 'values HubSpot lacked are filled');
  const [resolved] = await p.upsert(session, [{ ...cy, resolve: { mode: 'overwrite' } }]);
  t.like(resolved, { status: 'upserted', partnerId: theirs.id });
  t.like(theirs.properties, { jobtitle: 'CTO', phone: '+1 555' });
});

test('per-record errors: a 207 names the refused inputs and the others go through; a batch refused whole is bisected down to its bad input', async (t) => {
  const s = await standIn(t);
  const p = adapter(s);
  t.teardown(() => p.close());
  const session = sessionOf(p, await install(s, p));
  const records = Array.from({ length: 8 }, (_, i) =>
    lead({ email: i === 5 ? `bad${i}@nowhere` : `ok${i}@fine.example`, first_name: `P${i}` }),
  );
  const multi = await p.upsert(session, records);
  t.deepEqual(
    multi.map((r) => r.status),
    ['upserted', 'upserted', 'upserted', 'upserted', 'upserted', 'rejected', 'upserted', 'upserted'],
  );
  t.like(multi[5], {
    error: {
      reason: 'VALIDATION_ERROR',
      message: 'Property values were not valid: Email address bad5@nowhere is invalid',
    },
  });
  t.is(s.contacts.size, 7);

  s.multiStatus = false;
  const mark = s.requests.length;
  const again = records.map((r) =>
    lead({
      ...(r.fields as Record<string, string>),
      email: String(r.fields.email).replace('ok', 'ok2-'),
      contact_id: uuidv7(),
    }),
  );
  const whole = await p.upsert(session, again);
  t.deepEqual(
    whole.map((r) => r.status),
    ['upserted', 'upserted', 'upserted', 'upserted', 'upserted', 'rejected', 'upserted', 'upserted'],
  );
  t.like(whole[5], { status: 'rejected', error: { reason: 'VALIDATION_ERROR' } });
  t.true((whole[5] as { error: { message: string } }).error.message.includes('bad5@nowhere is invalid'));
  const upserts = s.crmRequests(mark).filter((r) => r.path.endsWith('/batch/upsert'));
  t.deepEqual(
    upserts.map((r) => [r.json.inputs.length, r.status]),
    [
      [8, 400],
      [4, 200],
      [4, 400],
      [2, 400],
      [1, 200],
      [1, 400],
      [2, 200],
    ],
  );
  t.is(s.contacts.size, 14);
});

test('replies and meetings → a note each on the lead’s contact (type 202), updated by its id later; a lead HubSpot lacks rejects its notes', async (t) => {
  const s = await standIn(t);
  const p = adapter(s);
  t.teardown(() => p.close());
  const ids = memoryStore();
  const session = sessionOf(p, await install(s, p), ids);
  const ada = lead({ email: 'ada@notes.example', first_name: 'Ada' });
  const [pushed] = await p.upsert(session, [ada]);
  const contactId = (pushed as { partnerId: string }).partnerId;
  await ids.put('lead', new Map([[ada.externalId, contactId]])); // as the domain records the lead's push
  const reply: PartnerRecord = {
    kind: 'reply',
    externalId: uuidv7(),
    fields: {
      lead_external_id: ada.externalId,
      channel: 'email',
      subject: 'Re: <hello>',
      body: 'Sounds good\nlet us talk & more',
      sent_at: '2026-09-01T10:00:00.000Z',
    },
  };
  const meeting: PartnerRecord = {
    kind: 'meeting',
    externalId: uuidv7(),
    fields: {
      lead_external_id: ada.externalId,
      title: 'Intro',
      status: 'scheduled',
      outcome: null,
      location: 'Zoom',
      starts_at: '2026-09-02T09:00:00.000Z',
      ends_at: '2026-09-02T09:30:00.000Z',
    },
  };
  const orphan: PartnerRecord = {
    ...reply,
    externalId: uuidv7(),
    fields: { ...reply.fields, lead_external_id: uuidv7() },
  };
  const results = await p.upsert(session, [reply, meeting, orphan]);
  t.deepEqual(
    results.map((r) => r.status),
    ['upserted', 'upserted', 'rejected'],
  );
  t.like(results[2], { error: { reason: 'LEAD_NOT_SYNCED' } });
  const note = (r: (typeof results)[number]) => s.notes.get((r as { partnerId: string }).partnerId)!;
  t.deepEqual(note(results[0]).properties, {
    hs_timestamp: '2026-09-01T10:00:00.000Z',
    hs_note_body:
      '<p><strong>Reply received (email)</strong> — Re: &lt;hello&gt;</p><p>Sounds good<br>let us talk &amp; more</p>',
  });
  t.deepEqual(note(results[1]).properties, {
    hs_timestamp: '2026-09-02T09:00:00.000Z',
    hs_note_body:
      '<p><strong>Meeting: Intro</strong></p><p>scheduled<br>2026-09-02T09:00:00.000Z – 2026-09-02T09:30:00.000Z<br>Zoom</p>',
  });
  t.deepEqual([...s.noteContacts.get(note(results[1]).id)!], [contactId]);
  const create = s.crmRequests().find((r) => r.path === '/crm/v3/objects/notes/batch/create')!;
  t.deepEqual(create.json.inputs[0].associations, [
    { to: { id: contactId }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }] },
  ]);
  // The meeting happened: its note is updated, not doubled (the id was kept at creation).
  const mark = s.requests.length;
  const [updated] = await p.upsert(session, [
    { ...meeting, fields: { ...meeting.fields, status: 'completed', outcome: 'qualified' } },
  ]);
  t.is((updated as { partnerId: string }).partnerId, (results[1] as { partnerId: string }).partnerId);
  t.is(s.notes.size, 2);
  t.true(note(updated).properties.hs_note_body.includes('completed, qualified'));
  t.deepEqual(
    s.crmRequests(mark).map((r) => r.path),
    ['/crm/v3/objects/notes/batch/update'],
  );
});

test('errors: a 401 refreshes the token once and retries; a second is auth; 403 MISSING_SCOPES is auth; a short 429 is waited out once, a long one is rate_limited with its reset; 5xx unavailable', async (t) => {
  const s = await standIn(t);
  const p = adapter(s);
  t.teardown(() => p.close());
  const tokens = await install(s, p);
  const session = sessionOf(p, tokens);
  const one = () => p.upsert(session, [lead({ email: `x${randomUUID().slice(0, 6)}@ok.example`, first_name: 'X' })]);

  s.expireAccessTokens();
  t.like((await one())[0], { status: 'upserted' });
  t.is(session.refreshes, 1);
  t.not(session.accessToken, tokens.accessToken, 'the session carries the new token');
  const expired = s.requests.filter((r) => r.status === 401);
  t.is(expired.length, 1);

  s.failNext(2, 401, 'INVALID_AUTHENTICATION', 'Authentication credentials not found.');
  const refused = await t.throwsAsync(one(), { instanceOf: PartnerError });
  t.like(refused, { code: 'auth', details: { status: 401, reason: 'INVALID_AUTHENTICATION' } });
  t.is(session.refreshes, 2, 'refreshed once for that call, not again');

  s.failNext(1, 403, 'MISSING_SCOPES', "This app hasn't been granted all required scopes to make this call.");
  t.like(await t.throwsAsync(one()), { code: 'auth', details: { status: 403, reason: 'MISSING_SCOPES' } });

  s.rateLimitNext(1, 'TEN_SECONDLY_ROLLING', 1);
  const started = Date.now();
  t.like((await one())[0], { status: 'upserted' });
  t.true(Date.now() - started >= 900, 'waited for the Retry-After');

  s.rateLimitNext(1, 'DAILY');
  const daily = await t.throwsAsync(one(), { instanceOf: PartnerError });
  t.like(daily, {
    code: 'rate_limited',
    retryable: true,
    details: { status: 429, reason: 'DAILY', retryAfterSeconds: 3600 },
  });
  t.regex(daily.message, /You have reached your daily limit\. \(DAILY, correlationId /);
  // The install's calls now wait for the reset rather than being refused again.
  t.like(await t.throwsAsync(one()), { code: 'rate_limited', details: { reason: 'PACE' } });

  const other = sessionOf(p, tokens);
  other.accessToken = session.accessToken;
  s.failNext(1, 503, 'SERVICE_UNAVAILABLE', 'Service unavailable');
  const down = await t.throwsAsync(p.upsert(other, [lead({ email: 'y@ok.example', first_name: 'Y' })]), {
    instanceOf: PartnerError,
  });
  t.like(down, { code: 'unavailable', retryable: true, details: { status: 503 } });
});

test('the pace: an install’s calls wait for its token bucket, so a hub limited to 5 calls per 500 ms never answers 429', async (t) => {
  const s = await standIn(t, { limit: { max: 5, windowMs: 500 } });
  const p = adapter(s, { pace: new ProviderPace({ burst: 1, everyMs: 130 }) });
  t.teardown(() => p.close());
  const session = sessionOf(p, await install(s, p));
  const started = Date.now();
  for (let i = 0; i < 8; i++) await p.upsert(session, [lead({ email: `p${i}@pace.example`, first_name: 'P' })]);
  const calls = s.crmRequests();
  t.is(calls.length, 16, 'a read and an upsert per push');
  t.deepEqual(
    calls.filter((r) => r.status === 429),
    [],
  );
  t.true(Date.now() - started >= 15 * 130 - 50, 'spaced by the bucket');
});

test('helpers: domains and contact properties as HubSpot takes them', (t) => {
  t.is(normaliseDomain('https://WWW.Example.co.uk:443/path?q'), 'example.co.uk');
  t.is(normaliseDomain('example'), null);
  t.is(normaliseDomain(null), null);
  t.deepEqual(contactProperties({ email: ' A@B.Example ', full_name: 'Ada King Lovelace', title: '', phone: null }), {
    email: 'a@b.example',
    firstname: 'Ada',
    lastname: 'King Lovelace',
  });
});

test('a sync page through HubSpot: 250 leads in batches of ≤100 in order, recorded once; a rejected lead waits as a push_rejected event; a revoked install marks the integration', async (t) => {
  const s = await standIn(t);
  const p = adapter(s);
  t.teardown(() => p.close());
  const tokens = await install(s, p);
  const { services } = await api();
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  const app = await createTestApp(u);
  const list = (
    await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: `L ${randomUUID()}` } })
  ).body;
  const tag = randomUUID().slice(0, 6);
  const people = Array.from({ length: 250 }, (_, i) => ({
    email: i === 7 ? `broken${i}.${tag}@nowhere` : `p${i}.${tag}@batch.example`,
    first_name: `P${i}`,
    lists: [list.id],
  }));
  const seeded = await seedContacts(ws, people);
  const id = uuidv7();
  const e = await em();
  await e.execute(
    `insert into integrations (id, workspace_id, provider, name, status, credentials_sealed, credential_hint, account_id, created_at, updated_at)
     values (?, ?, 'partner', 'HubSpot', 'active', ?, '{}', ?, now(), now())`,
    [
      id,
      ws,
      encrypt(
        JSON.stringify({
          kind: 'partner',
          accessToken: tokens.accessToken,
          refreshToken: tokens.refreshToken,
          expiresAt: tokens.expiresAt!.toISOString(),
        }),
        services.config.encryptionKey,
      ),
      String(s.hub.id),
    ],
  );
  const deps = { partner: p, config: services.config };
  const page = await syncPartnerPage(e.fork() as never, deps, id, 'lead', 300);
  t.like(page, { done: true, read: 250, pushed: 249, held: 1 });
  const upserts = s.crmRequests().filter((r) => r.path.endsWith('/contacts/batch/upsert'));
  t.deepEqual(
    upserts.map((r) => r.json.inputs.length),
    [100, 100, 50],
  );
  // In order: the batches follow the leads' order.
  t.deepEqual(
    upserts.flatMap((r) => r.json.inputs.map((i: { id: string }) => i.id)),
    people.map((x) => x.email.toLowerCase()),
  );
  t.is(s.contacts.size, 249);
  const [event] = await e.execute(
    `select kind, record_id, state, details from partner_events where integration_id = ?`,
    [id],
  );
  t.like(event, {
    kind: 'push_rejected',
    record_id: seeded[7].leads[list.id],
    state: 'pending',
    details: { reason: 'VALIDATION_ERROR' },
  });
  const contactIds = await partnerIdStore(e.fork() as never, id).get(HS_CONTACT, [seeded[0].id, seeded[7].id]);
  t.deepEqual([...contactIds.keys()], [seeded[0].id]);

  // A person fixes the address and retries it: pushed, once.
  const [pending] = await e.execute(`select id from partner_events where integration_id = ?`, [id]);
  const actor = await resolveActor(e.fork() as never, { userId: u.id, kind: 'session' }, undefined);
  await t.throwsAsync(confirmPartnerEvent(e.fork() as never, actor, deps, pending.id, { resolution: 'keep_ours' }), {
    message: /a rejected record is resolved with retry/,
  });
  await e.execute(`update contacts set email = ?, updated_at = now() where id = ?`, [
    `fixed.${tag}@batch.example`,
    seeded[7].id,
  ]);
  const retried = await confirmPartnerEvent(e.fork() as never, actor, deps, pending.id, { resolution: 'retry' });
  t.like(retried, { pushed: true, event: { state: 'confirmed', resolution: 'retry' } });
  t.is(retried.partnerId, s.contactByEmail(`fixed.${tag}@batch.example`)!.id);
  t.is(s.contacts.size, 250);

  // A re-run from reset cursors sends nothing: every version is known, the retried one included.
  await e.execute(`delete from partner_sync_cursors where integration_id = ?`, [id]);
  const mark = s.requests.length;
  t.like(await syncPartnerPage(e.fork() as never, deps, id, 'lead', 300), { read: 250, pushed: 0, held: 0 });
  t.deepEqual(s.crmRequests(mark), []);

  // Uninstalled in HubSpot: the next call's 401, a refused refresh, and the integration shows it.
  s.uninstall();
  await e.execute(`delete from partner_sync_cursors where integration_id = ?`, [id]);
  await e.execute(`delete from partner_pushes where integration_id = ? and record_kind = 'lead'`, [id]);
  const err = await t.throwsAsync(syncPartnerPage(e.fork() as never, deps, id, 'lead', 300), {
    instanceOf: PartnerError,
  });
  t.like(err, { code: 'auth', details: { reason: 'BAD_REFRESH_TOKEN' } });
  const [row] = await e.execute(`select status, status_reason from integrations where id = ?`, [id]);
  t.is(row.status, 'invalid_credentials');
  t.regex(row.status_reason, /missing or invalid refresh token \(BAD_REFRESH_TOKEN/);
  t.like(await syncPartnerPage(e.fork() as never, deps, id, 'lead', 300), {
    done: true,
    skipped: 'invalid_credentials',
  });
});
