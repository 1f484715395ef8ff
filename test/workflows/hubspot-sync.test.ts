// The partner CRM sync over HubSpot, end to end through the public API: the API in this process and
// a worker process of its own, both configured as a deployment would be (PARTNER_PROVIDER=hubspot,
// PARTNER_CLIENT_ID/SECRET, HUBSPOT_API_BASE_URL and HUBSPOT_AUTHORIZE_URL pointed at the stand-in
// that speaks HubSpot's documented format, test/helpers/hubspot/stand-in.ts).
//
//   install: POST /api/integrations/partner/install → the stand-in's authorize page consents → our
//   callback exchanges the code (client secret) → the integration, named after the hub → its first
//   sync on the worker: leads → contacts by email (and one without email, by name), companies by
//   domain (an existing one found, the others created once; HubSpot's search lagging behind writes),
//   contact↔company associations, a note per reply and meeting; a contact HubSpot held with another
//   job title → a field_conflict event, confirmed keep_ours through the API → pushed
//   → a change and a second sync update the same objects (by the ids kept), nothing doubled
//   → the app uninstalled in HubSpot: the next sync's 401, a refused refresh (BAD_REFRESH_TOKEN), and
//   the integration shows invalid_credentials with HubSpot's reason.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Services } from '../../api/services.js';
import { resolveActor } from '../../domain/workspaces.js';
import { findTool } from '../../domain/tools/index.js';
import { temporalJobs } from '../../jobs/temporal.js';
import { partnerSettings, type Config } from '../../lib/config.js';
import { uuidv7 } from '../../lib/ids.js';
import { createPartner } from '../../lib/partner/index.js';
import { partnerWorkflowIds } from '../../lib/workflow-ids.js';
import type { PartnerSyncResult } from '../../workflows/integrations.js';
import { spawnTsx, stopChild } from '../../scripts/children.js';
import { api, call, closeApi, createTestApp, listen } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { fastAccount } from '../helpers/campaigns.js';
import { startHubSpotStandIn } from '../helpers/hubspot/stand-in.js';
import { startOwnWorker } from '../helpers/own-worker.js';

test.after.always(closeApi);

test('HubSpot: installed through OAuth, a sync puts exactly our leads in HubSpot (contacts, companies, associations, notes), a second updates them, a revoked install shows on the integration', async (t) => {
  t.timeout(360_000);
  const started = Date.now();
  const { services } = await api();
  // HubSpot's search lags behind its writes: companies we create are not found again by search.
  const hs = await startHubSpotStandIn({ searchLagMs: 600_000 });
  t.teardown(() => hs.close());

  // The configuration both sides read, from the variables a deployment sets (lib/config.ts).
  const taskQueue = `hubspot-sync-${randomUUID()}`;
  const env = {
    PARTNER_PROVIDER: 'hubspot',
    PARTNER_CLIENT_ID: hs.app.clientId,
    PARTNER_CLIENT_SECRET: hs.app.clientSecret,
    HUBSPOT_API_BASE_URL: hs.url,
    HUBSPOT_AUTHORIZE_URL: hs.authorizeUrl,
  };
  const config: Config = { ...services.config, partner: partnerSettings(5_000, env) };
  const partner = createPartner(config.partner, config.publicBaseUrl, services.orm);
  t.teardown(() => partner.close?.());
  t.false(partner.local);
  const svc: Services = { ...services, config, partner, jobs: temporalJobs(services.temporal, taskQueue) };
  const { base } = await listen(svc);
  config.publicBaseUrl = base;
  // The app's redirect URL, as registered in HubSpot's developer account.
  hs.app.redirectUri = `${base}/oauth/partner/callback`;

  const worker = startOwnWorker(t, services.temporal, taskQueue, { ...env, PUBLIC_BASE_URL: base });

  // A workspace with leads, a reply and a meeting.
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  const as = (body?: unknown) => ({ base, token: u.accessToken, ...(body === undefined ? {} : { body }) });
  const app = await createTestApp(u, 'HubSpot sync');
  const list = await call('POST', `/api/apps/${app.id}/lists`, as({ name: `Leads ${randomUUID()}` }));
  t.is(list.status, 201, list.text);
  const tag = randomUUID().slice(0, 8);
  const people = [
    {
      email: `ada.${tag}@engines.example`,
      first_name: 'Ada',
      last_name: 'Lovelace',
      title: 'CEO',
      company: 'Analytical Engines',
      company_domain: 'engines.example',
      phone: '+44 20 7946 0001',
      country: 'GB',
    },
    {
      email: `charles.${tag}@engines.example`,
      first_name: 'Charles',
      last_name: 'Babbage',
      title: 'CTO',
      company: 'Analytical Engines',
      company_domain: 'www.engines.example',
    },
    {
      email: `Grace.${tag}@Navy.example`,
      full_name: 'Grace Hopper',
      title: 'Rear Admiral',
      company: 'US Navy',
      company_domain: 'navy.example',
      country: 'US',
    },
    { email: `cy.${tag}@pre.example`, first_name: 'Cy', title: 'CTO', company: 'Pre', company_domain: 'pre.example' },
    {
      profile_url: `https://pronet.example/in/linus-${tag}`,
      first_name: 'Linus',
      last_name: 'Torvalds',
      title: 'Fellow',
      company: 'Kernel',
      company_domain: 'kernel.example',
    },
  ];
  const added = await call('POST', `/api/lists/${list.body.id}/leads`, as({ people }));
  t.is(added.status, 200, added.text);
  t.is(added.body.totals.leads_added, people.length);
  const [ada, , grace, cy] = (added.body.items as { lead_id: string; contact_id: string }[]).map((i) => ({
    leadId: i.lead_id,
    contactId: i.contact_id,
  }));
  const meeting = await call(
    'POST',
    `/api/leads/${ada.leadId}/meetings`,
    as({
      title: 'Intro',
      starts_at: '2026-12-01T10:00:00.000Z',
      ends_at: '2026-12-01T10:30:00.000Z',
      location: 'Zoom',
    }),
  );
  t.is(meeting.status, 201, meeting.text);
  // A reply from Grace in the inbox (as the inbound pipeline stores it).
  const account = await fastAccount(u, 'email');
  const e = await em();
  const conversationId = uuidv7();
  await e.execute(
    `insert into conversations (id, workspace_id, platform_account_id, channel, connector_thread_id, counterpart, contact_id, lead_id, last_message_at, last_message_preview, last_direction, unread_count, created_at, updated_at)
     values (?, ?, ?, 'email', ?, ?, ?, ?, now(), 'Sounds good', 'in', 1, now(), now())`,
    [conversationId, ws, account.id, `thr-${tag}`, people[2].email, grace.contactId, grace.leadId],
  );
  await e.execute(
    `insert into inbox_messages (id, workspace_id, conversation_id, platform_account_id, connector_message_id, direction, kind, sender, subject, body, sent_at, attachments, lead_id, historical, created_at)
     values (?, ?, ?, ?, ?, 'in', 'reply', ?, ?, ?, '2026-11-20T09:15:00.000Z', '[]', ?, false, now())`,
    [
      uuidv7(),
      ws,
      conversationId,
      account.id,
      `msg-${tag}`,
      people[2].email,
      'Re: compilers',
      'Sounds good — Tuesday?',
      grace.leadId,
    ],
  );

  // What HubSpot holds already: the Engines company, and Cy — whose job title a person edited there.
  const engines = hs.addCompany({ name: 'Analytical Engines Ltd', domain: 'engines.example' });
  const theirCy = hs.addContact({ email: people[3].email!, firstname: 'Cy', jobtitle: 'Edited in HubSpot' });

  // ---------------------------------------------------------------------------------------------
  // Install: our authorize URL → HubSpot's consent → our callback.
  const start = await call('POST', '/api/integrations/partner/install', as());
  t.is(start.status, 200, start.text);
  const authorize = new URL(start.body.authorization_url);
  t.is(`${authorize.origin}${authorize.pathname}`, hs.authorizeUrl);
  t.deepEqual(Object.fromEntries(authorize.searchParams), {
    client_id: hs.app.clientId,
    redirect_uri: `${base}/oauth/partner/callback`,
    scope: hs.app.scopes.join(' '),
    state: start.body.state,
  });
  const consent = await fetch(authorize, { redirect: 'manual' });
  t.is(consent.status, 302);
  const back = new URL(consent.headers.get('location')!);
  t.is(`${back.origin}${back.pathname}`, `${base}/oauth/partner/callback`);
  const done = await call('GET', back.pathname + back.search, { base });
  t.is(done.status, 200, done.text);
  const integrationId = done.body.integration.id as string;
  t.like(done.body, {
    status: 'installed',
    created: true,
    integration: {
      kind: 'partner',
      name: 'HubSpot',
      status: 'active',
      account: { id: String(hs.hub.id), name: hs.hub.domain },
    },
    sync_workflow_id: partnerWorkflowIds.sync(integrationId),
  });
  t.false(JSON.stringify(done.body).includes(hs.app.clientSecret));

  // The first sync, on the worker (its first wait includes the worker's start).
  const first = (await services.temporal.workflow
    .getHandle(partnerWorkflowIds.sync(integrationId))
    .result()) as PartnerSyncResult;
  t.log(`first sync done after ${Math.round((Date.now() - started) / 1000)} s`);
  t.like(first, { status: 'completed', read: 7, pushed: 6, held: 1 });

  // HubSpot holds exactly our people: by email (Linus, who has none, by name), with their properties.
  const contactOf = (email: string) => hs.contactByEmail(email)!;
  const view = [...hs.contacts.values()]
    .map((c) => c.properties)
    .sort((a, b) => (a.firstname ?? '').localeCompare(b.firstname ?? ''));
  t.deepEqual(view, [
    {
      email: people[0].email,
      firstname: 'Ada',
      lastname: 'Lovelace',
      jobtitle: 'CEO',
      company: 'Analytical Engines',
      phone: '+44 20 7946 0001',
      country: 'GB',
    },
    {
      email: people[1].email,
      firstname: 'Charles',
      lastname: 'Babbage',
      jobtitle: 'CTO',
      company: 'Analytical Engines',
    },
    { email: `cy.${tag}@pre.example`, firstname: 'Cy', jobtitle: 'Edited in HubSpot' },
    {
      email: `grace.${tag}@navy.example`,
      firstname: 'Grace',
      lastname: 'Hopper',
      jobtitle: 'Rear Admiral',
      company: 'US Navy',
      country: 'US',
    },
    { firstname: 'Linus', lastname: 'Torvalds', jobtitle: 'Fellow', company: 'Kernel' },
  ]);
  const linusInHs = [...hs.contacts.values()].find((c) => c.properties.firstname === 'Linus')!;
  // Companies by domain: the existing one found, the others created once.
  const companies = () =>
    [...hs.companies.values()]
      .map((c) => [c.properties.domain, c.properties.name])
      .sort((a, b) => a[0].localeCompare(b[0]));
  t.deepEqual(companies(), [
    ['engines.example', 'Analytical Engines Ltd'],
    ['kernel.example', 'Kernel'],
    ['navy.example', 'US Navy'],
  ]);
  const companyOf = (domain: string) => hs.companiesByDomain(domain)[0].id;
  t.is(companyOf('engines.example'), engines.id);
  t.deepEqual(
    [...hs.contactCompany].sort(),
    [
      `${contactOf(people[0].email!).id}:${engines.id}`,
      `${contactOf(people[1].email!).id}:${engines.id}`,
      `${contactOf(people[2].email!).id}:${companyOf('navy.example')}`,
      `${linusInHs.id}:${companyOf('kernel.example')}`,
    ].sort(),
  );
  // A note per reply and meeting, on the lead's contact.
  const notes = () =>
    [...hs.notes.values()]
      .map((n) => ({
        on: [...hs.noteContacts.get(n.id)!],
        at: n.properties.hs_timestamp,
        body: n.properties.hs_note_body,
      }))
      .sort((a, b) => a.at.localeCompare(b.at));
  t.deepEqual(notes(), [
    {
      on: [contactOf(people[2].email!).id],
      at: '2026-11-20T09:15:00.000Z',
      body: '<p><strong>Reply received (email)</strong> — Re: compilers</p><p>Sounds good — Tuesday?</p>',
    },
    {
      on: [contactOf(people[0].email!).id],
      at: '2026-12-01T10:00:00.000Z',
      body: '<p><strong>Meeting: Intro</strong></p><p>scheduled<br>2026-12-01T10:00:00.000Z – 2026-12-01T10:30:00.000Z<br>Zoom</p>',
    },
  ]);
  t.deepEqual(
    hs.crmRequests().filter((r) => r.status === 429),
    [],
    'within the rate limit',
  );
  t.true(hs.crmRequests().every((r) => /^Bearer C/.test(String(r.headers.authorization))));

  // Cy waits for a person: HubSpot's job title is not overwritten.
  const events = await call('GET', '/api/integrations/partner/events?state=pending', as());
  t.is(events.status, 200, events.text);
  t.is(events.body.items.length, 1);
  t.like(events.body.items[0], {
    integration_id: integrationId,
    kind: 'field_conflict',
    record_kind: 'lead',
    record_id: cy.leadId,
    details: { partner_id: theirCy.id, fields: [{ field: 'title', ours: 'CTO', theirs: 'Edited in HubSpot' }] },
  });
  const kept = await call(
    'POST',
    `/api/integrations/partner/events/${events.body.items[0].id}/confirm`,
    as({ resolution: 'keep_ours' }),
  );
  t.is(kept.status, 200, kept.text);
  t.like(kept.body, { pushed: true, partner_id: theirCy.id, event: { state: 'confirmed', resolution: 'keep_ours' } });
  t.like(theirCy.properties, { jobtitle: 'CTO', company: 'Pre' });
  t.true(hs.contactCompany.has(`${theirCy.id}:${companyOf('pre.example')}`));

  // ---------------------------------------------------------------------------------------------
  // A second sync after changes: the same objects updated by their ids, nothing doubled.
  const patched = await call('PATCH', `/api/leads/${ada.leadId}`, as({ title: 'Chair' }));
  t.is(patched.status, 200, patched.text);
  const moved = await call('PATCH', `/api/meetings/${meeting.body.id}`, as({ location: 'Room 2' }));
  t.is(moved.status, 200, moved.text);
  const syncNow = async (): Promise<PartnerSyncResult> => {
    const ctxEm = svc.orm.em.fork();
    const actor = await resolveActor(ctxEm as never, { userId: u.id, kind: 'session' }, undefined);
    const run = (await findTool('sync_partner_now')!.run(
      { em: ctxEm as never, actor, jobs: svc.jobs, config: svc.config, providers: svc },
      { integration_id: integrationId },
    )) as { workflow_id: string; run_id: string };
    return (await services.temporal.workflow.getHandle(run.workflow_id, run.run_id).result()) as PartnerSyncResult;
  };
  const mark = hs.requests.length;
  t.like(await syncNow(), { status: 'completed', read: 2, pushed: 2, held: 0 });
  t.is(hs.contacts.size, 5);
  t.is(hs.companies.size, 4);
  t.is(hs.notes.size, 2);
  t.is(contactOf(people[0].email!).properties.jobtitle, 'Chair');
  t.true(notes()[1].body.includes('Room 2'));
  t.deepEqual(
    hs.crmRequests(mark).map((r) => `${r.path} ${r.json.inputs.length}`),
    [
      '/crm/v3/objects/contacts/batch/update 1',
      '/crm/v4/associations/contacts/companies/batch/associate/default 1',
      '/crm/v3/objects/notes/batch/update 1',
    ],
  );
  t.like((await call('GET', `/api/integrations/${integrationId}`, as())).body, {
    status: 'active',
    sync: { workflow_id: partnerWorkflowIds.sync(integrationId) },
  });

  // ---------------------------------------------------------------------------------------------
  // Uninstalled in HubSpot: the sync's call is refused, the refresh too, and the integration shows it.
  hs.uninstall();
  t.is((await call('PATCH', `/api/leads/${grace.leadId}`, as({ title: 'Commodore' }))).status, 200);
  await t.throwsAsync(syncNow());
  const refused = await call('GET', `/api/integrations/${integrationId}`, as());
  t.like(refused.body, { status: 'invalid_credentials' });
  t.regex(refused.body.status_reason, /missing or invalid refresh token \(BAD_REFRESH_TOKEN/);
  const tokenCalls = hs.requests.filter((r) => r.path === '/oauth/v1/token').map((r) => r.form!.get('grant_type'));
  t.deepEqual(tokenCalls, ['authorization_code', 'refresh_token']);
  t.is(contactOf(people[2].email!).properties.jobtitle, 'Rear Admiral');
  // A refused integration is not synced until it is installed again.
  t.like(await t.throwsAsync(syncNow()), { code: 'integration_not_active' });
  t.log(`done after ${Math.round((Date.now() - started) / 1000)} s`);
});
