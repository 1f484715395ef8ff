import test from 'ava';
import type { ServerResponse } from 'node:http';
import {
  ConnectorError,
  createConnector,
  HttpConnector,
  MailConnector,
  RoutingConnector,
  SandboxConnector,
  SandboxNetwork,
  sandboxNetworkOf,
  type NetworkProfile,
  type ProfileQuery,
} from '../../lib/connectors/index.js';
import { LocalEnrichment } from '../../lib/enrichment/local.js';
import { ProviderError } from '../../lib/provider-http.js';
import { getCorpus } from '../../lib/sources/local-corpus.js';
import { sendJson, startServer, type WireServer } from '../helpers/source-servers.js';

const corpusOpts = { seed: 42, people: 12_000, anchor: new Date('2025-06-01T00:00:00Z') };
const corpus = getCorpus(corpusOpts);
const sandbox = new SandboxConnector(corpusOpts);
const KEY = 'k-conn-1';
const EMPTY: ProfileQuery = {
  fullName: null,
  firstName: null,
  lastName: null,
  company: null,
  companyDomain: null,
  email: null,
  profileUrl: null,
};
const q = (fields: Partial<ProfileQuery>): ProfileQuery => ({ ...EMPTY, ...fields });

const current = corpus.people.findIndex((p) => p.current && p.email !== null && /[^\x20-\x7e]/.test(p.fullName));
const former = corpus.people.findIndex((p) => !p.current);

async function serve(
  t: { teardown(fn: () => Promise<void>): void },
  handler: Parameters<typeof startServer>[0],
): Promise<WireServer> {
  const server = await startServer(handler);
  t.teardown(server.close);
  return server;
}

async function failure(p: Promise<unknown>): Promise<ConnectorError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ConnectorError) return err;
    throw err;
  }
  throw new Error('expected a ConnectorError');
}

test('sandbox: finds a profile by URL, email, or name with company; unknown people are null', async (t) => {
  const p = corpus.people[current];
  const co = corpus.companies[p.company];
  const expected: NetworkProfile = {
    profileUrl: p.profileUrl,
    providerId: p.id,
    fullName: p.fullName,
    firstName: p.firstName,
    lastName: p.lastName,
    headline: p.headline,
    title: p.title,
    company: co.name,
    country: p.country,
  };
  t.deepEqual(
    await sandbox.findProfile(q({ profileUrl: `${p.profileUrl.replace('https://', 'https://m.')}/` })),
    expected,
  );
  t.deepEqual(await sandbox.findProfile(q({ profileUrl: p.forumUrl })), expected);
  t.deepEqual(await sandbox.findProfile(q({ email: p.email!.toUpperCase() })), expected);
  t.deepEqual(
    await sandbox.findProfile(q({ fullName: p.fullName.normalize('NFD').toLowerCase(), company: co.name })),
    expected,
  );
  t.deepEqual(
    await sandbox.findProfile(q({ firstName: p.firstName, lastName: p.lastName, companyDomain: co.domain })),
    expected,
  );
  // A URL of nobody is not confirmed; a name alone is not enough.
  t.is(await sandbox.findProfile(q({ profileUrl: 'https://pronet.example/in/nobody-here' })), null);
  t.is(await sandbox.findProfile(q({ fullName: p.fullName })), null);
  t.is(await sandbox.findProfile(q({ fullName: 'Nobody Atall', company: co.name })), null);
  // A former employer is not the profile's company.
  t.is((await sandbox.findProfile(q({ profileUrl: corpus.people[former].profileUrl })))?.company, null);
});

test('sandbox: deterministic, and agrees with the local enrichment on who is who', async (t) => {
  const other = new SandboxConnector({ ...corpusOpts });
  const enrichment = new LocalEnrichment(corpusOpts);
  for (let i = 0; i < corpus.people.length; i += 97) {
    const p = corpus.people[i];
    const query = q({ fullName: p.fullName, company: corpus.companies[p.company].name });
    const found = await sandbox.findProfile(query);
    t.deepEqual(await other.findProfile(query), found);
    t.is((await enrichment.enrich(query))?.person.profileUrl, found?.profileUrl);
  }
});

/** The connector wire format (docs/providers.md) answered by the sandbox. */
function wireHandler(apiKey: string): Parameters<typeof startServer>[0] {
  return async (req, res) => {
    if (req.headers.authorization !== `Bearer ${apiKey}`) return sendJson(res, 401, {});
    if (req.method !== 'POST' || req.url.pathname !== '/v1/profiles/resolve') return sendJson(res, 404, {});
    const b = req.body as Record<string, string | null>;
    const p = await sandbox.findProfile({
      fullName: b.full_name,
      firstName: b.first_name,
      lastName: b.last_name,
      company: b.company,
      companyDomain: b.company_domain,
      email: b.email,
      profileUrl: b.profile_url,
    });
    sendJson(res, 200, {
      profile: p && {
        profile_url: p.profileUrl,
        provider_id: p.providerId,
        full_name: p.fullName,
        first_name: p.firstName,
        last_name: p.lastName,
        headline: p.headline,
        title: p.title,
        company: p.company,
        country: p.country,
      },
    });
  };
}

test('http: POSTs the query with the key and maps the profile like the sandbox', async (t) => {
  const server = await serve(t, wireHandler(KEY));
  const http = new HttpConnector({ baseUrl: server.url, apiKey: KEY });
  t.teardown(() => http.close());
  const p = corpus.people[current];
  const co = corpus.companies[p.company];
  const query = q({ fullName: p.fullName, company: co.name, companyDomain: co.domain });
  t.deepEqual(await http.findProfile(query), await sandbox.findProfile(query));
  const formerQuery = q({ profileUrl: corpus.people[former].profileUrl });
  t.deepEqual(await http.findProfile(formerQuery), await sandbox.findProfile(formerQuery));
  t.is(await http.findProfile(q({ email: 'nobody@nowhere.example' })), null);
  const r = server.requests[0];
  t.is(r.method, 'POST');
  t.is(r.headers.authorization, `Bearer ${KEY}`);
  t.is(r.headers['content-type'], 'application/json');
  t.deepEqual(r.body, {
    full_name: p.fullName,
    first_name: null,
    last_name: null,
    company: co.name,
    company_domain: co.domain,
    email: null,
    profile_url: null,
  });
});

test('http: fields are trimmed and clipped; names are split when absent; no profile is null', async (t) => {
  let answer: (res: ServerResponse) => void = () => {};
  const server = await serve(t, (_req, res) => answer(res));
  const http = new HttpConnector({ baseUrl: server.url, apiKey: KEY });
  t.teardown(() => http.close());
  answer = (res) =>
    sendJson(res, 200, {
      profile: {
        profile_url: ' https://pronet.example/in/ada ',
        provider_id: 12345,
        full_name: ' Ada Lovelace ',
        headline: 'h'.repeat(301),
        title: '  ',
        company: 'Analytical',
        extra: 1,
      },
    });
  t.deepEqual(await http.findProfile(q({ email: 'ada@example.com' })), {
    profileUrl: 'https://pronet.example/in/ada',
    providerId: '12345',
    fullName: 'Ada Lovelace',
    firstName: 'Ada',
    lastName: 'Lovelace',
    headline: 'h'.repeat(300),
    title: null,
    company: 'Analytical',
    country: null,
  });
  answer = (res) => sendJson(res, 200, { profile: null });
  t.is(await http.findProfile(q({ email: 'ada@example.com' })), null);
  answer = (res) => sendJson(res, 404, {});
  t.is(await http.findProfile(q({ email: 'ada@example.com' })), null);
});

test('http: statuses and broken answers map to ConnectorError codes', async (t) => {
  let answer: (res: ServerResponse) => void = () => {};
  const server = await serve(t, (_req, res) => answer(res));
  const http = new HttpConnector({ baseUrl: server.url, apiKey: KEY });
  t.teardown(() => http.close());
  const ask = q({ email: 'ada@example.com' });
  const ok = { profile_url: 'https://pronet.example/in/ada', provider_id: 'p1', full_name: 'Ada' };
  const cases: [string, (res: ServerResponse) => void, string, number | null][] = [
    ['401', (res) => sendJson(res, 401, {}), 'auth', null],
    ['403', (res) => sendJson(res, 403, {}), 'auth', null],
    ['429', (res) => sendJson(res, 429, {}, { 'retry-after': '5' }), 'rate_limited', 5],
    ['502', (res) => sendJson(res, 502, {}), 'unavailable', null],
    ['503 retry-after', (res) => sendJson(res, 503, {}, { 'retry-after': '20' }), 'unavailable', 20],
    ['408', (res) => sendJson(res, 408, {}), 'timeout', null],
    ['400', (res) => sendJson(res, 400, {}), 'invalid_request', null],
    ['422', (res) => sendJson(res, 422, {}), 'invalid_request', null],
    ['301', (res) => void res.writeHead(301, { location: 'http://127.0.0.1:9/' }).end(), 'bad_response', null],
    [
      'bad JSON',
      (res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('nope'),
      'bad_response',
      null,
    ],
    ['no profile key', (res) => sendJson(res, 200, {}), 'bad_response', null],
    ['no provider id', (res) => sendJson(res, 200, { profile: { ...ok, provider_id: '' } }), 'bad_response', null],
    ['blank full name', (res) => sendJson(res, 200, { profile: { ...ok, full_name: '  ' } }), 'bad_response', null],
    [
      'profile URL not http(s)',
      (res) => sendJson(res, 200, { profile: { ...ok, profile_url: 'javascript:alert(1)' } }),
      'bad_response',
      null,
    ],
  ];
  for (const [name, respond, code, retryAfter] of cases) {
    answer = respond;
    const err = await failure(http.findProfile(ask));
    t.true(err instanceof ProviderError, name);
    t.is(err.code as string, code, name);
    t.is(err.provider, 'http', name);
    t.is(err.retryAfterSeconds, retryAfter, name);
    t.is(err.retryable, ['rate_limited', 'unavailable', 'timeout'].includes(code), name);
  }
});

test('http: oversized answers are refused', async (t) => {
  const server = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    for (let i = 0; i < 10; i++) res.write(i === 0 ? `{"profile": null, "pad": "${'x'.repeat(999)}` : 'x'.repeat(1000));
    res.end('"}');
  });
  const http = new HttpConnector({ baseUrl: server.url, apiKey: KEY, maxResponseBytes: 4096 });
  t.teardown(() => http.close());
  const err = await failure(http.findProfile(q({ email: 'ada@example.com' })));
  t.is(err.code, 'bad_response');
  t.regex(err.message, /larger than 4096 bytes/);
});

test('createConnector: the sandbox network by default, HTTP when a base URL is set (which then needs a key), the mail connector beside either', (t) => {
  const conf = { baseUrl: null, apiKey: null, timeoutMs: 1000, webhookSecret: null };
  const orm = { em: {} } as never; // the sandbox network's database: only touched by account methods
  const mail = { accounts: async () => null, encryptionKey: Buffer.alloc(32), allowHosts: [] };
  const local = createConnector(conf, corpusOpts, orm, mail);
  t.true(local instanceof RoutingConnector);
  t.true(local.base instanceof SandboxNetwork);
  t.true(local.base instanceof SandboxConnector);
  t.is(sandboxNetworkOf(local), local.base as SandboxNetwork);
  t.true(local.mail instanceof MailConnector);
  t.is(local.name, 'sandbox');
  t.deepEqual(local.serves, ['sandbox', 'mail']);
  const http = createConnector(
    { ...conf, baseUrl: 'https://connector.example/api', apiKey: 'k' },
    corpusOpts,
    orm,
    mail,
  );
  t.true(http.base instanceof HttpConnector);
  t.is(sandboxNetworkOf(http), null);
  t.teardown(() => http.close());
  t.throws(() => createConnector({ ...conf, baseUrl: 'file:///etc/passwd', apiKey: 'k' }, corpusOpts, orm, mail), {
    message: /CONNECTOR_BASE_URL must be an absolute http\(s\) URL/,
  });
  t.throws(() => createConnector({ ...conf, baseUrl: 'https://connector.example' }, corpusOpts, orm, mail), {
    message: /CONNECTOR_API_KEY is required/,
  });
});
