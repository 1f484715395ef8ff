// A contact's time zone (docs/contacts.md "Time zone"): set, kept and cleared through
// PATCH /api/leads/{id}, shown by the contact routes and the Operator's list_contacts, refused with
// 400 invalid_time_zone when unknown; read from a CSV import's "Time zone" column; counted by the
// campaign preflight (leads_without_time_zone, warned about when windows follow the recipient).
import test from 'ava';
import { uuidv7 } from '../../lib/ids.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { api, call, closeApi, createTestApp, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { seedContacts } from '../helpers/contacts.js';
import { commit, preview, waitImport } from '../helpers/imports.js';
import { createOwnerWithProducts } from '../helpers/scope.js';
test.after.always(closeApi);

const auth = (u: TestUser) => ({ token: u.accessToken });

async function oneLead(country: string | null = 'US') {
  const u = await createOwner();
  const appId = (await createTestApp(u)).id;
  const listId = (await call('POST', `/api/apps/${appId}/lists`, { ...auth(u), body: { name: 'Targets' } })).body
    .id as string;
  const [c] = await seedContacts(await workspaceIdOf(u.id), [
    { email: `tz-${uuidv7()}@acme.example`, first_name: 'Ada', country, lists: [listId] },
  ]);
  return { u, appId, listId, contactId: c.id, leadId: c.leads[listId] };
}

const storedZone = async (contactId: string): Promise<string | null> =>
  (await (await em()).execute('select time_zone from contacts where id = ?', [contactId]))[0].time_zone;

test('PATCH /api/leads/{id} time_zone: set in its canonical spelling, kept when absent, cleared by null; the views show it; not an edited field', async (t) => {
  const w = await oneLead();
  const before = await call('GET', `/api/contacts/${w.contactId}`, auth(w.u));
  t.is(before.body.time_zone, null);

  const set = await call('PATCH', `/api/leads/${w.leadId}`, { ...auth(w.u), body: { time_zone: 'america/chicago' } });
  t.is(set.status, 200, set.text);
  t.is(set.body.contact.time_zone, 'America/Chicago');
  t.deepEqual(set.body.contact.edited_fields, [], 'enrichment never writes it: no edited field');
  t.is(await storedZone(w.contactId), 'America/Chicago');
  t.is((await call('GET', `/api/contacts/${w.contactId}`, auth(w.u))).body.time_zone, 'America/Chicago');
  const listed = await call('GET', `/api/contacts?list_id=${w.listId}`, auth(w.u));
  t.is(listed.body.items[0].time_zone, 'America/Chicago');

  // Another field alone leaves it; time_zone alone is enough of a body.
  const other = await call('PATCH', `/api/leads/${w.leadId}`, { ...auth(w.u), body: { title: 'CTO' } });
  t.like(other.body.contact, { title: 'CTO', time_zone: 'America/Chicago' });
  const moved = await call('PATCH', `/api/leads/${w.leadId}`, { ...auth(w.u), body: { time_zone: 'Europe/Berlin' } });
  t.like(moved.body.contact, { title: 'CTO', time_zone: 'Europe/Berlin' });

  const cleared = await call('PATCH', `/api/leads/${w.leadId}`, { ...auth(w.u), body: { time_zone: null } });
  t.is(cleared.status, 200, cleared.text);
  t.is(cleared.body.contact.time_zone, null);
  t.is(await storedZone(w.contactId), null);

  // The Operator's contact list carries it too.
  await call('PATCH', `/api/leads/${w.leadId}`, { ...auth(w.u), body: { time_zone: 'Asia/Tokyo' } });
  const { services } = await api();
  const e = services.orm.em.fork();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: w.u.id, kind: 'session' }, undefined),
  };
  const tool = (await runTool(findTool('list_contacts')!, ctx, { list_id: w.listId })) as {
    contacts: { id: string; time_zone: string | null }[];
  };
  t.like(tool.contacts[0], { id: w.contactId, time_zone: 'Asia/Tokyo' });
});

test('PATCH /api/leads/{id} time_zone: an unknown or malformed zone is 400 invalid_time_zone naming the field, and changes nothing', async (t) => {
  const w = await oneLead();
  await call('PATCH', `/api/leads/${w.leadId}`, { ...auth(w.u), body: { time_zone: 'Europe/Paris' } });
  for (const body of [
    { time_zone: 'Mars/Olympus' },
    { time_zone: 'GMT+1' },
    { time_zone: '' },
    { time_zone: 42 },
    { time_zone: 'x'.repeat(65) },
    { time_zone: 'Mars/Olympus', title: 'Changed' },
  ]) {
    const r = await call('PATCH', `/api/leads/${w.leadId}`, { ...auth(w.u), body });
    t.is(r.status, 400, `${JSON.stringify(body)} ${r.text}`);
    t.is(r.body.error.code, 'invalid_time_zone', JSON.stringify(body));
    t.is(r.body.error.details?.[0]?.path, 'time_zone', JSON.stringify(body));
  }
  const after = await call('GET', `/api/contacts/${w.contactId}`, auth(w.u));
  t.like(after.body, { time_zone: 'Europe/Paris', title: null });
});

test('time_zone keeps the contact rules: another workspace’s lead is 404, a product the member was not given 403, nothing written', async (t) => {
  const w = await oneLead();
  const other = await createOwner();
  const foreign = await call('PATCH', `/api/leads/${w.leadId}`, { ...auth(other), body: { time_zone: 'Asia/Tokyo' } });
  t.is(foreign.status, 404, foreign.text);
  t.is(foreign.body.error.code, 'not_found');
  t.is(await storedZone(w.contactId), null);

  const s = await createOwnerWithProducts();
  // The member acts in the owner's workspace (X-Acting-As).
  const member = { ...auth(s.member), headers: { 'x-acting-as': s.owner.id } };
  const refused = await call('PATCH', `/api/leads/${s.p1.lead.leadId}`, {
    ...member,
    body: { time_zone: 'Asia/Tokyo' },
  });
  t.is(refused.status, 403, refused.text);
  t.is(refused.body.error.code, 'not_assigned');
  t.is(await storedZone(s.p1.lead.contactId), null);
  const own = await call('PATCH', `/api/leads/${s.p2.lead.leadId}`, { ...member, body: { time_zone: 'Asia/Tokyo' } });
  t.is(own.status, 200, own.text);
  t.is(own.body.contact.time_zone, 'Asia/Tokyo');
});

test('a CSV import maps a "Time zone" column: IANA names stored canonically, anything else as given', async (t) => {
  const w = await oneLead();
  const csv =
    'Email,First name,Country,Time Zone\nzoe@tz.example,Zoë,FR,europe/paris\nlin@tz.example,Lin,US,Eastern\nbob@tz.example,Bob,DE,\n';
  const p = await preview(w.u, w.appId, csv);
  t.is(p.status, 201, p.text);
  t.deepEqual(p.body.suggested_mapping, { email: 0, first_name: 1, country: 2, time_zone: 3 });
  t.like(p.body.sample, { valid: 3, invalid: 0 });
  const c = await commit(w.u, w.appId, p.body.id, { list_id: w.listId });
  t.is(c.status, 202, c.text);
  const done = await waitImport(w.u, w.appId, p.body.id);
  t.is(done.status, 'completed', JSON.stringify(done.error));
  const rows: { email: string; time_zone: string | null }[] = await (
    await em()
  ).execute(
    `select email, time_zone from contacts where workspace_id = ? and email like '%@tz.example' order by email`,
    [await workspaceIdOf(w.u.id)],
  );
  t.deepEqual(rows, [
    { email: 'bob@tz.example', time_zone: null },
    { email: 'lin@tz.example', time_zone: 'Eastern' }, // kept for a person to fix; the sending rule ignores it
    { email: 'zoe@tz.example', time_zone: 'Europe/Paris' },
  ]);
});

test('preflight counts running leads without a time zone and warns when windows follow the recipient', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    status: 'paused',
    timeZone: 'Europe/Paris',
    steps: [{ type: 'email', config: { subject: 'Hello', body: 'Hello there' } }],
  });
  const [zoned] = await o.leads(1, { country: 'US' });
  const [french] = await o.leads(1, { country: 'FR' });
  const [american] = await o.leads(1, { country: 'US' });
  const [finished] = await o.leads(1, { country: null });
  // The stored zone wins over an ambiguous country.
  t.is(
    (await call('PATCH', `/api/leads/${zoned.leadId}`, { ...auth(u), body: { time_zone: 'America/Chicago' } })).status,
    200,
  );
  const e = await em();
  for (const [lead, status] of [
    [zoned, 'active'],
    [french, 'paused'],
    [american, 'active'],
    [finished, 'completed'], // no zone either, but it sends no more: not counted
  ] as const) {
    await e.execute(
      `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, 1, 1, now(), now(), now())`,
      [uuidv7(), o.workspaceId, campaign.id, lead.leadId, lead.contactId, status],
    );
  }
  const url = `/api/apps/${o.app.id}/campaigns/preflight`;
  const warning = (body: { problems: { code: string; message: string }[] }) =>
    body.problems.find((p) => p.code === 'leads_without_time_zone');

  await e.execute(`update campaigns set window_time_zone = 'recipient' where id = ?`, [campaign.id]);
  const recipient = await call('POST', url, { ...auth(u), body: { campaign_id: campaign.id } });
  t.is(recipient.status, 200, recipient.text);
  t.is(recipient.body.leads_without_time_zone, 1);
  t.like(warning(recipient.body), { severity: 'warning', step_id: null, account_id: null, details: { count: 1 } });
  t.regex(warning(recipient.body)!.message, /1 lead has no time zone.*campaign's time zone \(Europe\/Paris\)/);
  t.true(recipient.body.ready, 'a warning does not block activation');

  await e.execute(`update campaigns set window_time_zone = 'campaign' where id = ?`, [campaign.id]);
  const own = await call('POST', url, { ...auth(u), body: { campaign_id: campaign.id } });
  t.is(own.body.leads_without_time_zone, 1, 'counted whatever the mode');
  t.is(warning(own.body), undefined, 'no warning when the windows follow the campaign');
  // A draft value takes the place of the stored one.
  const draft = await call('POST', url, {
    ...auth(u),
    body: { campaign_id: campaign.id, window_time_zone: 'recipient' },
  });
  t.like(warning(draft.body), { details: { count: 1 } });

  // Once the American lead has a zone, nobody lacks one.
  await call('PATCH', `/api/leads/${american.leadId}`, { ...auth(u), body: { time_zone: 'America/New_York' } });
  const none = await call('POST', url, {
    ...auth(u),
    body: { campaign_id: campaign.id, window_time_zone: 'recipient' },
  });
  t.is(none.body.leads_without_time_zone, 0);
  t.is(warning(none.body), undefined);

  // Draft settings alone have no leads.
  const settingsOnly = await call('POST', url, {
    ...auth(u),
    body: { time_zone: 'Europe/Paris', window_time_zone: 'recipient' },
  });
  t.is(settingsOnly.status, 200, settingsOnly.text);
  t.is(settingsOnly.body.leads_without_time_zone, 0);
  t.is(warning(settingsOnly.body), undefined);
  t.is((await call('POST', url, { ...auth(u), body: { window_time_zone: 'local' } })).body.error.code, 'invalid_body');
});
