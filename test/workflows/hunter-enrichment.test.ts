// Enrichment over Hunter's API v2, end to end through the public API: the API in this process and a
// worker process of its own (enrichment runs in the worker's `fetchEnrichment` activity), both
// configured as a deployment would be (ENRICHMENT_PROVIDER=hunter, HUNTER_BASE_URL, HUNTER_API_KEY)
// and pointed at the stand-in (test/helpers/hunter), which speaks Hunter's documented format.
//
//   people added to a list over JSON (LinkedIn URL, name, company, company domain; no email)
//   → POST /api/enrichment/contacts/{id} → the worker asks GET /v2/email-finder?domain&first_name&last_name
//     with the key → the contact's email and title come from Hunter's answer; 1 credit charged, once
//   → a claimed address (451) → completed, nothing found, nothing charged, nothing written
//   → Hunter's usage limit (429) → the attempt fails `provider_quota_exhausted`, not retried, nothing charged
//   → the key revoked on Hunter's side (401) → fails `provider_auth` naming HUNTER_API_KEY, nothing charged
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { CreditLedgerEntry } from '../../db/entities/CreditLedgerEntry.js';
import { Enrichment } from '../../db/entities/Enrichment.js';
import type { Services } from '../../api/services.js';
import { temporalJobs } from '../../jobs/temporal.js';
import { enrichmentSettings, type Config } from '../../lib/config.js';
import { spawnTsx, stopChild } from '../../scripts/children.js';
import { api, call, closeApi, createTestApp, listen } from '../helpers/api.js';
import { createOwner, em, grant, workspaceIdOf } from '../helpers/billing.js';
import { ALEXIS, startHunterStandIn } from '../helpers/hunter/stand-in.js';
import { startOwnWorker } from '../helpers/own-worker.js';

test.after.always(closeApi);

test('a contact enriched over Hunter through the API: filled from its answer and charged once; claimed, quota and key refusals charge nothing', async (t) => {
  t.timeout(300_000);
  const started = Date.now();
  const { services } = await api();
  const standIn = await startHunterStandIn();
  t.teardown(() => standIn.close());
  standIn.addPerson({
    first_name: 'Claire',
    last_name: 'Voyant',
    email: 'claire@reddit.com',
    domain: 'reddit.com',
    company: 'Reddit',
    claimed: true,
  });

  // What a deployment sets (lib/config.ts reads the same variables in the worker).
  const taskQueue = `hunter-enrichment-${randomUUID()}`;
  const hunterEnv = {
    ENRICHMENT_PROVIDER: 'hunter',
    HUNTER_BASE_URL: standIn.baseUrl,
    HUNTER_API_KEY: standIn.apiKey,
  };
  const config: Config = { ...services.config, enrichment: enrichmentSettings(hunterEnv) };
  t.like(config.enrichment, { provider: 'hunter', hunter: { baseUrl: standIn.baseUrl } });
  const svc: Services = { ...services, config, jobs: temporalJobs(services.temporal, taskQueue) };
  const { base } = await listen(svc);

  const worker = startOwnWorker(t, services.temporal, taskQueue, { WORKER_METRICS_PORT: '0', ...hunterEnv });

  const u = await createOwner();
  await grant(u.id, 10);
  const workspaceId = await workspaceIdOf(u.id);
  const as = (body?: unknown) => ({ base, token: u.accessToken, ...(body === undefined ? {} : { body }) });
  const app = await createTestApp(u, 'Hunter enrichment');
  const list = await call('POST', `/api/apps/${app.id}/lists`, as({ name: 'Founders' }));
  t.is(list.status, 201, list.text);
  const person = (first: string, last: string) => ({
    profile_url: `https://www.linkedin.com/in/${first}-${last}`.toLowerCase(),
    first_name: first,
    last_name: last,
    company: 'Reddit',
    company_domain: 'reddit.com',
  });
  const added = await call(
    'POST',
    `/api/lists/${list.body.id}/leads`,
    as({
      people: [
        person('Alexis', 'Ohanian'),
        person('Claire', 'Voyant'),
        person('Quinn', 'Quota'),
        person('Kim', 'Keyless'),
      ],
    }),
  );
  t.is(added.status, 200, added.text);
  const [alexis, claire, quinn, kim] = (added.body.items as { contact_id: string }[]).map((i) => i.contact_id);

  const balance = async () => {
    const r = await call('GET', '/api/me/entitlement', as());
    t.is(r.status, 200, r.text);
    return r.body.credits.balance as number;
  };
  const enrich = async (contactId: string) => {
    const r = await call('POST', `/api/enrichment/contacts/${contactId}`, as({}));
    t.is(r.status, 202, r.text);
    t.like(r.body, { target_id: contactId, status: 'queued', result: 'started' });
    // The first includes the worker's start (it bundles its workflows).
    return services.temporal.workflow.getHandle(r.body.workflow_id as string).result();
  };
  const attempt = async (contactId: string) => (await em()).findOneOrFail(Enrichment, { targetId: contactId });
  const charges = async (contactId: string) =>
    (await em()).count(CreditLedgerEntry, {
      workspace: workspaceId,
      idempotencyKey: { $like: `enrich:contact:${contactId}:%` },
    });
  const before = await balance();

  // ---------------------------------------------------------------------------------------------
  // 1. Found: the contact's email and title from Hunter's answer; the documented request; 1 credit.

  t.like(await enrich(alexis), { status: 'completed', found: true });
  t.log(`first enrichment done after ${Math.round((Date.now() - started) / 1000)} s`);
  const contact = await call('GET', `/api/contacts/${alexis}`, as());
  t.is(contact.status, 200, contact.text);
  t.like(contact.body, {
    email: ALEXIS.email,
    title: ALEXIS.position,
    first_name: 'Alexis',
    last_name: 'Ohanian',
    company: 'Reddit',
    profile_url: 'https://www.linkedin.com/in/alexis-ohanian',
  });
  t.deepEqual([...contact.body.enriched_fields].sort(), ['email', 'full_name', 'title']);
  const again = await call('POST', `/api/enrichment/contacts/${alexis}`, as({}));
  t.is(again.status, 200, again.text);
  t.like(again.body, {
    result: 'already_enriched',
    status: 'completed',
    provider: 'hunter',
    found: true,
    credits_charged: 1,
    error: null,
  });
  t.deepEqual(
    standIn.searches().map((r) => [r.method, r.path, [...r.query.entries()], r.keyVia, r.key, r.status]),
    [
      [
        'GET',
        '/email-finder',
        [
          ['domain', 'reddit.com'],
          ['first_name', 'Alexis'],
          ['last_name', 'Ohanian'],
        ],
        'x-api-key',
        standIn.apiKey,
        200,
      ],
    ],
    'one documented Email Finder request, the key in X-API-KEY',
  );
  t.is(standIn.usage.searches.used, 1, "one search on Hunter's side");
  t.is(await balance(), before - 1, 'one credit of ours');
  t.is(await charges(alexis), 1);

  // ---------------------------------------------------------------------------------------------
  // 2. A claimed address (451): no match; nothing charged, nothing written.

  t.like(await enrich(claire), { status: 'completed', found: false, fieldsFilled: [] });
  t.is(standIn.searches().at(-1)!.status, 451);
  t.like(await attempt(claire), { provider: 'hunter', found: false, creditsCharged: 0, errorCode: null });
  t.is((await call('GET', `/api/contacts/${claire}`, as())).body.email, null);
  t.is(await balance(), before - 1);
  t.is(await charges(claire), 0);

  // ---------------------------------------------------------------------------------------------
  // 3. Hunter's usage limit (429): our quota_exhausted code; asked once (not retried); nothing charged.

  standIn.exhaustQuota();
  let mark = standIn.requests.length;
  t.deepEqual(await enrich(quinn), { status: 'failed', code: 'provider_quota_exhausted' });
  t.deepEqual(
    standIn.requests.slice(mark).map((r) => [r.path, r.status]),
    [
      ['/email-finder', 429],
      ['/account', 200],
    ],
  );
  const quota = await attempt(quinn);
  t.like(quota, { status: 'failed', errorCode: 'provider_quota_exhausted', creditsCharged: 0 });
  t.regex(quota.errorMessage ?? '', /usage limit.*25 of 25 searches used, reset on 2026-12-01/);
  t.is(await balance(), before - 1);
  t.is(await charges(quinn), 0);

  // ---------------------------------------------------------------------------------------------
  // 4. The key revoked on Hunter's side (401): provider_auth, naming the variable; nothing charged.

  standIn.revokeKey();
  mark = standIn.requests.length;
  t.deepEqual(await enrich(kim), { status: 'failed', code: 'provider_auth' });
  t.deepEqual(
    standIn.requests.slice(mark).map((r) => [r.path, r.status]),
    [['/email-finder', 401]],
  );
  t.regex((await attempt(kim)).errorMessage ?? '', /HUNTER_API_KEY/);
  t.is(await balance(), before - 1);
  t.is(await charges(kim), 0);
  t.log(`done after ${Math.round((Date.now() - started) / 1000)} s`);
});
