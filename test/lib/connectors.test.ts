import test from 'ava';
import {
  createConnector,
  MailConnector,
  RoutingConnector,
  SandboxConnector,
  SandboxNetwork,
  sandboxNetworkOf,
  UnipileConnector,
  unipileConnectorOf,
  type NetworkProfile,
  type ProfileQuery,
} from '../../lib/connectors/index.js';
import { refuseRemovedVariables, reloadConfig } from '../../lib/config.js';
import { LocalEnrichment } from '../../lib/enrichment/local.js';
import { getCorpus } from '../../lib/sources/local-corpus.js';

const corpusOpts = { seed: 42, people: 12_000, anchor: new Date('2025-06-01T00:00:00Z') };
const corpus = getCorpus(corpusOpts);
const sandbox = new SandboxConnector(corpusOpts);
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

test('createConnector: the sandbox network by default, Unipile when CONNECTOR_PROVIDER=unipile, the mail connector beside either', (t) => {
  const conf = { webhookSecret: null };
  const orm = { em: {} } as never; // the sandbox network's database: only touched by account methods
  const mail = { accounts: async () => null, encryptionKey: Buffer.alloc(32), allowHosts: [] };
  const local = createConnector(conf, corpusOpts, orm, mail);
  t.true(local instanceof RoutingConnector);
  t.true(local.base instanceof SandboxNetwork);
  t.true(local.base instanceof SandboxConnector);
  t.is(sandboxNetworkOf(local), local.base as SandboxNetwork);
  t.is(unipileConnectorOf(local), null);
  t.true(local.mail instanceof MailConnector);
  t.is(local.name, 'sandbox');
  t.deepEqual(local.serves, ['sandbox', 'mail']);
  t.true(createConnector({ ...conf, provider: 'sandbox' }, corpusOpts, orm, mail).base instanceof SandboxNetwork);
  const unipile = {
    baseUrl: 'https://api1.unipile.example:13111',
    apiKey: 'k',
    webhookSecret: 'w'.repeat(16),
    searchAccountId: null,
    publicBaseUrl: 'https://outreach.example',
    timeoutMs: 1000,
  };
  const http = createConnector({ ...conf, provider: 'unipile', unipile }, corpusOpts, orm, mail);
  t.teardown(() => http.close());
  t.true(http.base instanceof UnipileConnector);
  t.is(unipileConnectorOf(http), http.base as UnipileConnector);
  t.is(sandboxNetworkOf(http), null);
  t.true(http.mail instanceof MailConnector);
  t.throws(() => createConnector({ ...conf, provider: 'unipile' }, corpusOpts, orm, mail), {
    message: /CONNECTOR_PROVIDER=unipile needs the UNIPILE_\* settings/,
  });
});

test('the removed HTTP connector and HTTP pronet variables fail at start-up, naming what replaces them', (t) => {
  t.notThrows(() => refuseRemovedVariables({ CONNECTOR_PROVIDER: 'unipile', CONNECTOR_BASE_URL: ' ' }));
  t.throws(() => refuseRemovedVariables({ CONNECTOR_BASE_URL: 'https://connector.example' }), {
    message: /CONNECTOR_BASE_URL is no longer supported .*CONNECTOR_PROVIDER=unipile with UNIPILE_BASE_URL/,
  });
  t.throws(() => refuseRemovedVariables({ CONNECTOR_API_KEY: 'k' }), {
    message: /CONNECTOR_API_KEY is no longer supported .*UNIPILE_API_KEY/,
  });
  const both = t.throws(() =>
    refuseRemovedVariables({ PRONET_BASE_URL: 'https://pronet.example', PRONET_API_KEY: 'k' }),
  );
  t.regex(both.message, /PRONET_BASE_URL is no longer supported .*UNIPILE_SEARCH_ACCOUNT_ID/);
  t.regex(both.message, /PRONET_API_KEY is no longer supported/);
  // loadConfig (what every process calls at start-up) refuses them; the environment is restored before
  // anything else runs (synchronous), and the next loadConfig reads it again.
  for (const [name, replacement] of [
    ['CONNECTOR_BASE_URL', /CONNECTOR_PROVIDER=unipile/],
    ['PRONET_BASE_URL', /UNIPILE_SEARCH_ACCOUNT_ID/],
  ] as const) {
    const before = process.env[name];
    process.env[name] = 'https://removed.example';
    try {
      const err = t.throws(() => reloadConfig());
      t.regex(err.message, new RegExp(`${name} is no longer supported`));
      t.regex(err.message, replacement);
    } finally {
      if (before === undefined) delete process.env[name];
      else process.env[name] = before;
    }
  }
  t.notThrows(() => reloadConfig());
});
