// Enrichment on the real dev server with the local provider (the corpus): the `enrich:<kind>:<id>`
// workflow fills fields by provenance, debits one credit per found attempt (idempotently), refuses
// with 402 before any provider call, joins a running attempt, promotes a discovered lead once with a
// signed `lead.discovered` delivery of exactly the spec's fields; network-profile resolution through
// the sandbox connector; every code; cross-workspace 404s; the Operator tools; replay tests.
import test from 'ava';
import { Contact } from '../../db/entities/Contact.js';
import { CreditLedgerEntry } from '../../db/entities/CreditLedgerEntry.js';
import { Enrichment } from '../../db/entities/Enrichment.js';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import { creditBalance, debitCredits } from '../../domain/billing/credits.js';
import { planFields } from '../../domain/enrichment/enrichment.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { addContactToList } from '../../domain/lists/lists.js';
import { loadConfig } from '../../lib/config.js';
import { CorpusPeople } from '../../lib/enrichment/local.js';
import { uuidv7 } from '../../lib/ids.js';
import { UnipileConnector } from '../../lib/connectors/index.js';
import { enrichmentWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, createTestApp, createUser, closeApi, listen, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { startReceiver, verifySignature } from '../helpers/receiver.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { startServer } from '../helpers/source-servers.js';
import { eventDelivery } from '../helpers/webhook-delivery.js';
test.after.always(closeApi);

const people = new CorpusPeople(loadConfig().sources.corpus);
const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });

interface Setup {
  u: TestUser;
  appId: string;
  agentId: string;
  listId: string;
  workspaceId: string;
}

async function setup(owner?: TestUser): Promise<Setup> {
  const u = owner ?? (await createOwner());
  const app = await createTestApp(u);
  const listId = (await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body: { name: 'Inbox' } })).body.id;
  const agent = await call('POST', `/api/apps/${app.id}/agents`, {
    ...auth(u),
    body: { name: 'Scout', list_id: listId },
  });
  if (agent.status !== 201) throw new Error(agent.text);
  return { u, appId: app.id, agentId: agent.body.id, listId, workspaceId: await workspaceIdOf(u.id) };
}

// Corpus people handed out one per test, so no two tests share a person (their dedupe keys stay apart).
let nextPerson = 100;
function person() {
  for (;;) {
    const i = nextPerson++;
    const p = people.corpus.people[i];
    const c = people.corpus.companies[p.company];
    if (p.current && people.email(i) && !p.email)
      return { i, p, company: c, email: people.email(i)!, phone: people.phone(i) };
  }
}

/** A discovered lead as discovery stores it: a profile URL and a name; no email, no last name, no company. */
async function insertLead(s: Setup, over: Record<string, unknown> = {}): Promise<string> {
  const id = uuidv7();
  const row = {
    profile_url: null,
    email: null,
    full_name: 'Nobody Known',
    first_name: null,
    last_name: null,
    company: null,
    title: null,
    status: 'new',
    ...over,
  };
  await (
    await em()
  ).execute(
    `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, profile_url, email,
       full_name, first_name, last_name, title, company, evidence, score, reasons, status, promoted, created_at, updated_at)
     values (?, ?, ?, ?, 'hiring-signal', ?, 'pronet', ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', 80, '[]', ?, false, now(), now())`,
    [
      id,
      s.workspaceId,
      s.appId,
      s.agentId,
      id.slice(0, 32),
      id,
      `k:${id}`,
      row.profile_url,
      row.email,
      row.full_name,
      row.first_name,
      row.last_name,
      row.title,
      row.company,
      row.status,
    ],
  );
  return id;
}

async function insertContact(s: Setup, over: Record<string, unknown> = {}): Promise<string> {
  const e = await em();
  const c = e.create(Contact, { workspace: s.workspaceId, ...over } as never);
  await e.flush();
  return (c as { id: string }).id;
}

/** Adds a contact to the list as a member (a lead) and returns the lead's id. */
async function addMember(s: Setup, input: Record<string, string | null>): Promise<string> {
  const e = await em();
  const actor = await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined);
  return (await addContactToList(e as never, actor, s.listId, input)).lead.id;
}

const lead = async (id: string) =>
  (await em()).execute(`select * from discovered_leads where id = ?`, [id]).then((r) => r[0]);
const finished = async (workflowId: string) => (await api()).services.temporal.workflow.getHandle(workflowId).result();
const enrichPath = (kind: 'contacts' | 'discovered-leads', id: string) => `/api/enrichment/${kind}/${id}`;

test('planFields: edited fields are kept, identities only filled when empty, blanks and equal values ignored', (t) => {
  const plan = planFields(
    { email: 'a@x.example', title: 'Mine', company: 'Old Co', phone: null, headline: null },
    ['title'],
    { email: 'b@x.example', title: 'Theirs', company: 'New Co', phone: '+331', headline: '  ', country: 'FR' },
  );
  t.deepEqual(plan.set, { company: 'New Co', phone: '+331', country: 'FR' });
  t.deepEqual(plan.kept, ['title']);
});

test('a discovered lead is enriched by its workflow, charged once, promoted once with a signed lead.discovered of exactly the spec fields', async (t) => {
  const s = await setup();
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sub = await call('POST', '/api/webhooks/outbound', {
    ...auth(s.u),
    body: { url: receiver.url, events: ['lead.discovered'], active: true },
  });
  t.is(sub.status, 201, sub.text);
  const { p, company, email } = person();
  const id = await insertLead(s, { profile_url: p.profileUrl, full_name: p.fullName, first_name: p.firstName });
  const before = await creditBalance(await em(), s.workspaceId);

  const r = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} });
  t.is(r.status, 202, r.text);
  t.like(r.body, {
    target_kind: 'discovered-lead',
    target_id: id,
    attempt: 1,
    status: 'queued',
    result: 'started',
    workflow_id: `enrich:discovered-lead:${id}`,
  });
  const out = await finished(r.body.workflow_id);
  t.like(out, { status: 'completed', found: true, promoted: true });

  const row = await lead(id);
  t.is(row.email, email);
  t.is(row.last_name, p.lastName);
  t.is(row.company, company.name);
  t.truthy(row.headline);
  t.truthy(row.enrichment_promoted_at);
  t.true(row.enriched_fields.includes('email') && row.enriched_fields.includes('company'));
  t.is(await creditBalance(await em(), s.workspaceId), before - 1);
  t.is(
    await (
      await em()
    ).count(CreditLedgerEntry, { workspace: s.workspaceId, idempotencyKey: `enrich:discovered-lead:${id}:1` }),
    1,
  );

  // The read shows the provenance and the promotion.
  const got = await call('GET', `/api/discovered-leads/${id}`, auth(s.u));
  t.like(got.body, { email, company: company.name });
  t.truthy(got.body.enrichment_promoted_at);

  // Asking again answers the completed attempt (200, nothing new, nothing charged).
  const again = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} });
  t.is(again.status, 200, again.text);
  t.like(again.body, {
    attempt: 1,
    status: 'completed',
    result: 'already_enriched',
    found: true,
    credits_charged: 1,
    promoted: true,
  });

  // refresh re-runs it: attempt 2, charged again, but never promoted (or announced) a second time.
  const refreshed = await call('POST', `/api/discovered-leads/${id}/refresh`, auth(s.u));
  t.is(refreshed.status, 202, refreshed.text);
  t.like(refreshed.body, { attempt: 2, result: 'started' });
  t.like(await finished(refreshed.body.workflow_id), { status: 'completed', promoted: false });
  t.is(await creditBalance(await em(), s.workspaceId), before - 2);

  // Exactly one signed delivery, with exactly the spec's data fields. The event is written in the
  // promotion's transaction, and both attempts have finished: exactly one event, and once its delivery
  // has completed, exactly one request.
  const events = await (
    await em()
  ).execute<{ id: string }[]>(
    `select id from webhook_events where workspace_id = ? and name = 'lead.discovered' and body like ?`,
    [s.workspaceId, `%${id}%`],
  );
  t.is(events.length, 1, 'one lead.discovered event');
  t.like(await eventDelivery((await api()).services.temporal, events[0].id), { targets: 1, succeeded: 1 });
  t.is(receiver.requests.length, 1);
  const req = receiver.requests[0];
  t.true(verifySignature(sub.body.secret, req.raw, req.headers['x-service-signature']));
  const body = JSON.parse(req.raw.toString());
  t.is(body.event, 'lead.discovered');
  t.deepEqual(Object.keys(body.data).sort(), [
    'agent_id',
    'agent_name',
    'company',
    'first_name',
    'headline',
    'last_name',
    'lead_id',
    'profile_url',
    'signal_key',
  ]);
  t.like(body.data, {
    lead_id: id,
    agent_id: s.agentId,
    agent_name: 'Scout',
    first_name: p.firstName,
    last_name: p.lastName,
    company: company.name,
    profile_url: p.profileUrl,
    signal_key: 'hiring-signal',
  });

  await replayLive((await api()).services.temporal, r.body.workflow_id);
  await replayFixture((await api()).services.temporal, 'enrichTarget', r.body.workflow_id);
});

test('concurrent requests join one attempt; a running attempt is joined by refresh too', async (t) => {
  const s = await setup();
  const { p } = person();
  const id = await insertLead(s, { profile_url: p.profileUrl, full_name: p.fullName });
  const rs = await Promise.all(
    Array.from({ length: 5 }, () => call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} })),
  );
  t.true(
    rs.every((r) => r.status === 202 || r.status === 200),
    rs.map((r) => r.text).join('\n'),
  );
  t.is(new Set(rs.map((r) => r.body.id)).size, 1, 'one attempt');
  t.is(rs.filter((r) => r.body.result === 'started').length, 1);
  await finished(rs[0].body.workflow_id);
  t.is(await (await em()).count(Enrichment, { targetId: id }), 1);
  t.is(
    await (
      await em()
    ).count(CreditLedgerEntry, { workspace: s.workspaceId, idempotencyKey: { $like: `enrich:%:${id}:%` } }),
    1,
  );
});

test('a contact: fields a person edited survive enrichment (fields_kept), the rest are filled, dedupe keys follow', async (t) => {
  const s = await setup();
  const { p, email, company } = person();
  const id = await insertContact(s, {
    profileUrl: p.profileUrl,
    profileUrlNormalised: p.profileUrl.replace('https://', ''),
    fullName: p.fullName,
    title: 'Chief Everything (edited)',
    editedFields: ['title'],
  });
  const r = await call('POST', enrichPath('contacts', id), { ...auth(s.u), body: {} });
  t.is(r.status, 202, r.text);
  t.like(await finished(r.body.workflow_id), { status: 'completed', found: true, promoted: false });
  const c = await (await em()).findOneOrFail(Contact, id);
  t.is(c.title, 'Chief Everything (edited)', 'the edited field is untouched');
  t.is(c.email, email);
  t.is(c.emailNormalised, email.toLowerCase());
  t.is(c.company, company.name);
  t.false(c.enrichedFields.includes('title'));
  const done = await call('POST', enrichPath('contacts', id), { ...auth(s.u), body: {} });
  t.like(done.body, { status: 'completed', result: 'already_enriched', fields_kept: ['title'] });
  t.true(done.body.fields_filled.includes('email'));
});

test('no match: the attempt completes with nothing found and nothing charged, and nothing is promoted', async (t) => {
  const s = await setup();
  const id = await insertLead(s, {
    full_name: 'Zyxw Qvut',
    first_name: 'Zyxw',
    last_name: 'Qvut',
    company: 'Nonexistent Widgets',
  });
  const before = await creditBalance(await em(), s.workspaceId);
  const r = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} });
  t.is(r.status, 202, r.text);
  t.like(await finished(r.body.workflow_id), { status: 'completed', found: false, promoted: false });
  t.is(await creditBalance(await em(), s.workspaceId), before);
  t.is((await lead(id)).enrichment_promoted_at, null);
});

test('a rejected discovered lead is enriched but not promoted', async (t) => {
  const s = await setup();
  const { p } = person();
  const id = await insertLead(s, { profile_url: p.profileUrl, full_name: p.fullName, status: 'rejected' });
  const r = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} });
  t.like(await finished(r.body.workflow_id), { status: 'completed', found: true, promoted: false });
  t.is((await lead(id)).enrichment_promoted_at, null);
});

test('402 insufficient_credits before anything starts; an attempt that cannot pay fails without calling the provider', async (t) => {
  const s = await setup(await createUser());
  const e = await em();
  const balance = await creditBalance(e, s.workspaceId);
  if (balance > 0) await debitCredits(e, s.workspaceId, balance, { reason: 'drain for test' });
  const { p } = person();
  const id = await insertLead(s, { profile_url: p.profileUrl, full_name: p.fullName });
  const r = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} });
  t.is(r.status, 402, r.text);
  t.is(r.body.error.code, 'insufficient_credits');
  t.is(await (await em()).count(Enrichment, { targetId: id }), 0, 'no attempt recorded');

  // The workflow's own check (credits spent between the request and the run): failed, provider never asked.
  const attempt = e.create(Enrichment, {
    workspace: s.workspaceId,
    targetKind: 'discovered-lead',
    targetId: id,
    attempt: 1,
    status: 'queued',
  });
  await e.flush();
  const { services } = await api();
  await services.jobs.start('enrichment', {
    enrichmentId: attempt.id,
    kind: 'discovered-lead',
    targetId: id,
    workspaceId: s.workspaceId,
    appId: s.appId,
  });
  t.like(await finished(enrichmentWorkflowIds.target('discovered-lead', id)), {
    status: 'failed',
    code: 'insufficient_credits',
  });
  const failed = await (await em()).findOneOrFail(Enrichment, attempt.id);
  t.like(failed, { status: 'failed', errorCode: 'insufficient_credits', found: false, provider: null });
  t.is((await lead(id)).email, null);
  // A failed attempt is answered as such; asking again starts a new one (here: 402 again).
  t.is((await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} })).status, 402);
  await replayFixture(services.temporal, 'enrichTarget-failed', enrichmentWorkflowIds.target('discovered-lead', id));
});

test('409 not_enrichable when the target names nobody; 400 on a bad body or id', async (t) => {
  const s = await setup();
  const id = await insertLead(s, { full_name: 'Only A Name' });
  const r = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} });
  t.is(r.status, 409, r.text);
  t.is(r.body.error.code, 'not_enrichable');
  const bad = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: { refresh: 'yes' } });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_body');
  t.is((await call('POST', enrichPath('contacts', 'nope'), { ...auth(s.u), body: {} })).body.error.code, 'invalid_id');
});

test('409 enrichment_busy while a previous run of the target stays open past 5 s; the attempt stays queued and is joined once it closes', async (t) => {
  const s = await setup();
  const { p } = person();
  const id = await insertLead(s, { profile_url: p.profileUrl, full_name: p.fullName });
  // A previous attempt's run that does not close: a run of the target's workflow id on a task queue
  // no worker polls, with another attempt's id in its memo.
  const { services } = await api();
  const workflowId = enrichmentWorkflowIds.target('discovered-lead', id);
  const previous = await services.temporal.workflow.start('enrichTarget', {
    taskQueue: `nobody-${uuidv7()}`,
    workflowId,
    args: [{ enrichmentId: uuidv7() }],
    memo: { enrichment_id: uuidv7(), target: `discovered-lead:${id}` },
  });
  t.teardown(() => previous.terminate('test over').catch(() => {}));
  const began = Date.now();
  const r = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} });
  t.is(r.status, 409, r.text);
  t.is(r.body.error.code, 'enrichment_busy');
  t.true(Date.now() - began >= 4_500, 'it waited for the previous run to close');
  const [attempt] = await (await em()).find(Enrichment, { targetId: id }, { refresh: true });
  t.like(attempt, { status: 'queued', attempt: 1 });
  t.is(
    await (
      await em()
    ).count(CreditLedgerEntry, { workspace: s.workspaceId, idempotencyKey: { $like: `enrich:%:${id}:%` } }),
    0,
    'nothing charged',
  );
  // Once it has closed, asking again joins the queued attempt and starts its run.
  await previous.terminate('closed');
  const again = await call('POST', enrichPath('discovered-leads', id), { ...auth(s.u), body: {} });
  t.is(again.status, 202, again.text);
  t.like(again.body, { id: attempt.id, result: 'joined' });
  t.like(await finished(workflowId), { status: 'completed', found: true });
});

test('503 connector_unavailable on both resolve-network-profile routes when the connector fails; nothing is stored', async (t) => {
  const s = await setup();
  const { services } = await api();
  // A Unipile connector against a service answering 503, and against a closed port. Unipile looks up
  // profile URLs only (as UNIPILE_SEARCH_ACCOUNT_ID): both targets have one.
  const failing = await startServer(
    (_req, res) =>
      void res
        .writeHead(503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ title: 'Service unavailable', type: 'errors/service_unavailable', status: 503 })),
  );
  const closed = await startServer(() => {});
  const closedUrl = closed.url;
  await closed.close();
  const unipile = (baseUrl: string) =>
    new UnipileConnector({
      baseUrl,
      apiKey: 'k',
      publicBaseUrl: 'http://127.0.0.1:1',
      webhookSecret: 'x',
      searchAccountId: 'search-account',
      timeoutMs: 2_000,
    });
  const down = unipile(failing.url);
  const gone = unipile(closedUrl);
  t.teardown(async () => {
    await Promise.all([down.close(), gone.close()]);
    await failing.close();
  });
  const bases = [
    (await listen({ ...services, connector: down })).base,
    (await listen({ ...services, connector: gone })).base,
  ];

  const a = person();
  const leadId = await insertLead(s, {
    full_name: a.p.fullName,
    company: a.company.name,
    profile_url: a.p.profileUrl,
  });
  const c = person();
  const member = await addMember(s, {
    email: c.email,
    firstName: c.p.firstName,
    lastName: c.p.lastName,
    company: c.company.name,
    profileUrl: c.p.profileUrl,
  });
  // The member's own contact (a corpus email may be another workspace's contact too).
  const contactOf = async () => {
    const [row] = await (
      await em()
    ).execute<{ contact_id: string }[]>(`select contact_id from leads where id = ?`, [member]);
    return (await em()).findOneOrFail(Contact, row.contact_id, { refresh: true });
  };
  const before = await contactOf();
  t.is(before.profileUrl, c.p.profileUrl);
  for (const base of bases) {
    for (const path of [
      `/api/enrichment/discovered-leads/${leadId}/resolve-network-profile`,
      `/api/enrichment/list-members/${member}/resolve-network-profile`,
    ]) {
      const r = await call('POST', path, { ...auth(s.u), base });
      t.is(r.status, 503, `${base} ${path}: ${r.text}`);
      t.is(r.body.error.code, 'connector_unavailable', path);
    }
  }
  t.is(
    failing.requests.filter(
      (r) => r.url.pathname.startsWith('/api/v1/users/') && r.url.searchParams.get('account_id') === 'search-account',
    ).length,
    2,
    'the connector was asked for each',
  );
  t.like(await lead(leadId), { profile_url: a.p.profileUrl, network_provider_id: null, headline: null });
  t.like(await contactOf(), { profileUrl: c.p.profileUrl, networkProviderId: null });
});

test('resolve-network-profile: a discovered lead and a list member get their profile through the connector; conflicts are reported, not stored', async (t) => {
  const s = await setup();
  const a = person();
  const id = await insertLead(s, { full_name: a.p.fullName, company: a.company.name });
  const r = await call('POST', `/api/enrichment/discovered-leads/${id}/resolve-network-profile`, auth(s.u));
  t.is(r.status, 200, r.text);
  t.like(r.body, {
    target_kind: 'discovered-lead',
    stored: true,
    reason: null,
    connector: 'sandbox',
    profile: { profile_url: a.p.profileUrl, provider_id: a.p.id },
  });
  t.is((await lead(id)).profile_url, a.p.profileUrl);
  t.is((await lead(id)).network_provider_id, a.p.id);

  // A different profile already set is not replaced.
  const b = person();
  const other = await insertLead(s, {
    full_name: b.p.fullName,
    company: b.company.name,
    profile_url: 'https://pronet.example/in/someone-else',
  });
  const diff = await call('POST', `/api/enrichment/discovered-leads/${other}/resolve-network-profile`, auth(s.u));
  t.like(diff.body, { stored: false, reason: 'different_profile_set' });

  // A list member (a lead): its contact gets the profile.
  const c = person();
  const member = await addMember(s, {
    email: c.email,
    firstName: c.p.firstName,
    lastName: c.p.lastName,
    company: c.company.name,
  });
  const m = await call('POST', `/api/enrichment/list-members/${member}/resolve-network-profile`, auth(s.u));
  t.is(m.status, 200, m.text);
  t.like(m.body, { target_kind: 'list-member', stored: true, profile: { profile_url: c.p.profileUrl } });
  const contact = await (await em()).findOneOrFail(Contact, m.body.contact_id);
  t.is(contact.profileUrl, c.p.profileUrl);

  // The same profile on a second contact: profile_in_use, nothing stored.
  const dup = await addMember(s, {
    email: `twin-${uuidv7()}@example.test`,
    firstName: c.p.firstName,
    lastName: c.p.lastName,
    company: c.company.name,
  });
  const twin = await call('POST', `/api/enrichment/list-members/${dup}/resolve-network-profile`, auth(s.u));
  t.like(twin.body, { stored: false, reason: 'profile_in_use' });

  // Nobody to find: no_match; nothing to search by: 409 not_resolvable.
  const none = await insertLead(s, { full_name: 'Zyxw Qvut', company: 'Nonexistent Widgets' });
  t.like((await call('POST', `/api/enrichment/discovered-leads/${none}/resolve-network-profile`, auth(s.u))).body, {
    stored: false,
    reason: 'no_match',
    profile: null,
  });
  const bare = await insertLead(s, { full_name: 'Only A Name' });
  const nr = await call('POST', `/api/enrichment/discovered-leads/${bare}/resolve-network-profile`, auth(s.u));
  t.is(nr.status, 409, nr.text);
  t.is(nr.body.error.code, 'not_resolvable');
});

test('another workspace’s ids are 404 on every enrichment route; the Demo workspace is read-only', async (t) => {
  const s = await setup();
  const stranger = await createOwner();
  const { p } = person();
  const id = await insertLead(s, { profile_url: p.profileUrl, full_name: p.fullName });
  const contactId = await insertContact(s, {
    email: `x-${uuidv7()}@example.test`,
    emailNormalised: `x-${uuidv7()}@example.test`,
  });
  const member = await addMember(s, { email: `m-${uuidv7()}@example.test`, company: 'Acme' });
  const paths = [
    enrichPath('discovered-leads', id),
    enrichPath('contacts', contactId),
    `/api/discovered-leads/${id}/refresh`,
    `/api/enrichment/discovered-leads/${id}/resolve-network-profile`,
    `/api/enrichment/list-members/${member}/resolve-network-profile`,
  ];
  for (const path of paths) {
    const r = await call('POST', path, {
      ...auth(stranger),
      body: path.includes('resolve') || path.endsWith('refresh') ? undefined : {},
    });
    t.is(r.status, 404, `${path}: ${r.text}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.is(await (await em()).count(Enrichment, { targetId: { $in: [id, contactId] } }), 0);

  const u = await createUser();
  t.is((await call('POST', '/api/me/workspaces/demo/join', auth(u))).status, 201);
  const inDemo = auth(u, { 'x-acting-as': DEMO_USER_ID });
  for (const path of paths) {
    const r = await call('POST', path, {
      ...inDemo,
      body: path.includes('resolve') || path.endsWith('refresh') ? undefined : {},
    });
    t.is(r.status, 403, `${path}: ${r.text}`);
    t.is(r.body.error.code, 'demo_read_only');
  }
});

test('Operator tools: enrich_discovered_lead and enrich_contact are changes that need confirmation and start the workflow', async (t) => {
  const s = await setup();
  const tool = findTool('enrich_discovered_lead')!;
  t.is(tool.risk, 'change');
  t.is(findTool('enrich_contact')!.risk, 'change');
  const { p } = person();
  const id = await insertLead(s, { profile_url: p.profileUrl, full_name: p.fullName });
  const { services } = await api();
  const e = await em();
  const actor = await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined);
  const out = (await runTool(
    tool,
    { em: e, actor, jobs: services.jobs, config: services.config, providers: services },
    { discovered_lead_id: id },
  )) as { result: string; attempt: number };
  t.like(out, { result: 'started', attempt: 1 });
  t.like(await finished(enrichmentWorkflowIds.target('discovered-lead', id)), { status: 'completed', found: true });
});
