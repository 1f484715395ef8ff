// The public unsubscribe link (docs/email.md "Unsubscribe"), through real HTTP, PostgreSQL and the
// enrollment workflows: `{{unsubscribe_url}}` renders the recipient's signed link; GET shows a
// confirmation page and changes nothing; POST (one-click or the page's button) unsubscribes at once
// and idempotently — the contact marked, its address suppressed, every running enrollment of it in the
// workspace stopped (and its workflow woken and finished), the owner notified once; a tampered token,
// or one of another workspace, unsubscribes nobody (404 page).
import test from 'ava';
import { readUnsubscribeToken, unsubscribeToken, unsubscribeUrl } from '../../domain/suppressions/unsubscribe.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import type { EnrollmentState } from '../../workflows/enrollments.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, fastAccount, seedCampaign } from '../helpers/campaigns.js';
import { addMemberViaInvite } from '../helpers/team.js';
test.after.always(closeApi);

const as = (u: TestUser, body?: unknown, actingAs?: string) => ({
  token: u.accessToken,
  headers: (actingAs ? { 'x-acting-as': actingAs } : {}) as Record<string, string>,
  ...(body === undefined ? {} : { body }),
});
const key = async () => (await api()).services.config.encryptionKey;
const ONE_CLICK = {
  rawBody: 'List-Unsubscribe=One-Click',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
};

/** Sending windows on one weekday two days from now only (Europe/Paris), so that planned sends wait. */
function laterWindows(): Record<string, { start: string; end: string }[]> {
  const day = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Paris', weekday: 'short' }).format(new Date());
  const iso = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(day) + 1;
  return { [String(((iso + 1) % 7) + 1)]: [{ start: '10:00', end: '11:00' }] };
}

/** An owner with two campaigns (both with a planned email waiting for its window) of one contact, and a bystander lead in the first. */
async function setup() {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const account = await fastAccount(u, 'email');
  const steps = [
    {
      type: 'email',
      config: {
        subject: 'Hi {{first_name|there}}',
        body: 'Hello {{first_name|there}}.\n\nNo more of these: {{unsubscribe_url}}',
      },
    },
  ];
  const c1 = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps,
    windows: laterWindows(),
  });
  const c2 = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [account.id],
    steps,
    windows: laterWindows(),
  });
  const [lead, bystander] = await o.leads(2);
  for (const [campaign, leads] of [
    [c1, [lead, bystander]],
    [c2, [lead]],
  ] as const) {
    const r = await call(
      'POST',
      `/api/campaigns/${campaign.id}/leads`,
      as(u, { lead_ids: leads.map((l) => l.leadId) }),
    );
    if (r.status !== 200 || r.body.enrolled !== leads.length) throw new Error(`enroll: ${r.status} ${r.text}`);
  }
  // Each enrollment has planned its email (waiting for the window).
  await waitFor('the three sends to be planned', async () => {
    const [r] = await (
      await em()
    ).execute<{ n: number }[]>(
      `select count(*)::int as n from scheduled_actions where workspace_id = ? and state = 'planned'`,
      [o.workspaceId],
    );
    return r.n === 3;
  });
  return { u, o, c1, c2, lead, bystander };
}

const enrollments = async (workspaceId: string) =>
  (await em()).execute<
    { campaign_id: string; lead_id: string; status: string; stop_reason: string | null; action: string }[]
  >(
    `select e.campaign_id, e.lead_id, e.status, e.stop_reason, a.state as action from enrollments e join scheduled_actions a on a.enrollment_id = e.id where e.workspace_id = ? order by e.campaign_id, e.lead_id`,
    [workspaceId],
  );
const contact = async (id: string) =>
  (
    await (
      await em()
    ).execute<{ unsubscribed_at: Date | null; unsubscribe_source: string | null }[]>(
      `select unsubscribed_at, unsubscribe_source from contacts where id = ?`,
      [id],
    )
  )[0];
const suppressions = async (workspaceId: string) =>
  (await em()).execute<{ kind: string; value: string; reason: string; source: string }[]>(
    `select kind, value, reason, source from suppressions where workspace_id = ?`,
    [workspaceId],
  );
const notes = async (u: TestUser, actingAs?: string) =>
  (await call('GET', '/api/me/notifications', as(u, undefined, actingAs))).body.items.filter(
    (n: { kind: string }) => n.kind === 'contact.unsubscribed',
  );
const workflowState = async (campaignId: string, leadId: string) =>
  (await api()).services.temporal.workflow
    .getHandle(enrollmentWorkflowIds.enrollment(campaignId, leadId))
    .query<EnrollmentState>('state');

test('the token: signed per workspace and contact, read back only untouched; the URL is under the public base URL', async (t) => {
  const k = await key();
  const w = '0190f843-0000-7000-8000-000000000001';
  const c = '0190f843-0000-7000-8000-000000000002';
  const token = unsubscribeToken(k, w, c);
  t.regex(token, /^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{22}$/);
  t.deepEqual(readUnsubscribeToken(k, token), { workspaceId: w, contactId: c });
  t.is(readUnsubscribeToken(Buffer.alloc(32, 7), token), null, 'another key');
  t.is(readUnsubscribeToken(k, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`), null, 'a MAC changed');
  t.is(
    readUnsubscribeToken(k, `${unsubscribeToken(k, c, w).split('.')[0]}.${token.split('.')[1]}`),
    null,
    'other ids under this MAC',
  );
  t.is(readUnsubscribeToken(k, 'x.y'), null);
  t.is(
    unsubscribeUrl({ encryptionKey: k, publicBaseUrl: 'https://mail.example/' }, w, c),
    `https://mail.example/unsubscribe/${token}`,
  );
});

test('{{unsubscribe_url}} is a template variable: a step may use it (an unknown one is refused), and preflight does not warn about it', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const campaign = await call(
    'POST',
    `/api/apps/${o.app.id}/campaigns`,
    as(u, { name: 'With a link', time_zone: 'Europe/Paris' }),
  );
  t.is(campaign.status, 201, campaign.text);
  const ok = await call(
    'POST',
    `/api/campaigns/${campaign.body.id}/steps`,
    as(u, { type: 'email', config: { subject: 'Hi', body: 'Hello.\n\nUnsubscribe: {{unsubscribe_url}}' } }),
  );
  t.is(ok.status, 201, ok.text);
  const bad = await call(
    'POST',
    `/api/campaigns/${campaign.body.id}/steps`,
    as(u, { type: 'email', config: { subject: 'Hi', body: 'Unsubscribe: {{unsubscribe_link}}' } }),
  );
  t.like(bad, { status: 400, body: { error: { code: 'invalid_template' } } });
  const pre = await call(
    'POST',
    `/api/apps/${o.app.id}/campaigns/preflight`,
    as(u, {
      time_zone: 'Europe/Paris',
      steps: [{ type: 'email', config: { subject: 'Hi', body: 'Hi {{first_name}}. Bye: {{unsubscribe_url}}' } }],
    }),
  );
  t.is(pre.status, 200, pre.text);
  const warnings = pre.body.problems.filter((p: { code: string }) => p.code === 'template_variables');
  t.is(warnings.length, 1, pre.text);
  t.like(warnings[0], { details: { variables: ['first_name'] } }, 'first_name is reported, unsubscribe_url is not');
});

test('GET shows a confirmation page and changes nothing; POST unsubscribes at once: every running enrollment of the contact stopped and woken, the address suppressed, the owner notified once', async (t) => {
  t.timeout(120_000);
  const { u, o, c1, c2, lead, bystander } = await setup();
  const { user: admin } = await addMemberViaInvite(u, { role: 'admin' });

  // The planned email carries the recipient's link, signed for this workspace and contact.
  const [planned] = await (
    await em()
  ).execute<{ body: string }[]>(
    `select a.content->>'body' as body from scheduled_actions a join enrollments e on e.id = a.enrollment_id where e.campaign_id = ? and e.lead_id = ?`,
    [c1.id, lead.leadId],
  );
  const token = /\/unsubscribe\/([A-Za-z0-9_.-]+)/.exec(planned.body)?.[1] ?? '';
  t.deepEqual(readUnsubscribeToken(await key(), token), { workspaceId: o.workspaceId, contactId: lead.contactId });
  t.true(planned.body.includes(`${(await api()).services.config.publicBaseUrl}/unsubscribe/${token}`));

  const before = await enrollments(o.workspaceId);
  const page = await call('GET', `/unsubscribe/${token}`);
  t.is(page.status, 200, page.text);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  t.true(page.text.includes(`<form method="post" action="/unsubscribe/${token}?from=page">`));
  t.false(page.text.includes(lead.email), 'the address is shown masked');
  t.is((await contact(lead.contactId)).unsubscribed_at, null, 'GET changed nothing');
  t.deepEqual(await suppressions(o.workspaceId), []);
  t.deepEqual(await enrollments(o.workspaceId), before);
  t.true(before.every((e) => e.status === 'active' && e.action === 'planned'));

  const done = await call('POST', `/unsubscribe/${token}`, ONE_CLICK);
  t.is(done.status, 200, done.text);
  t.regex(done.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(done.text, /You are unsubscribed/);
  t.like(await contact(lead.contactId), { unsubscribe_source: 'one_click' });
  t.truthy((await contact(lead.contactId)).unsubscribed_at);
  t.deepEqual(await suppressions(o.workspaceId), [
    { kind: 'address', value: lead.email.toLowerCase(), reason: 'unsubscribe', source: 'one_click' },
  ]);
  const after = await enrollments(o.workspaceId);
  const of = (campaignId: string, leadId: string) =>
    after.find((e) => e.campaign_id === campaignId && e.lead_id === leadId);
  t.like(of(c1.id, lead.leadId), { status: 'stopped', stop_reason: 'unsubscribed', action: 'canceled' });
  t.like(of(c2.id, lead.leadId), { status: 'stopped', stop_reason: 'unsubscribed', action: 'canceled' });
  t.like(of(c1.id, bystander.leadId), { status: 'active', action: 'planned' }, 'another contact goes on');

  // The workflows were woken: they end now, not at their window.
  for (const c of [c1, c2]) {
    await waitFor(
      `the enrollment workflow of ${c.id} to finish`,
      async () => (await workflowState(c.id, lead.leadId)).status === 'finished',
      30_000,
    );
    t.like((await workflowState(c.id, lead.leadId)).finished, { status: 'stopped', stop_reason: 'unsubscribed' });
  }
  t.is((await workflowState(c1.id, bystander.leadId)).status, 'running');

  const told = await notes(u);
  t.is(told.length, 1);
  t.like(told[0], {
    title: 'Grace Hopper unsubscribed',
    data: { contact_id: lead.contactId, source: 'one_click', stopped_enrollments: 2 },
  });
  t.deepEqual(await notes(admin, u.id), [], 'the owner is told, not every member');

  // Again, from the page's button: the same answer, nothing new, nobody told twice.
  const again = await call('POST', `/unsubscribe/${token}?from=page`, {
    rawBody: '',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(again.status, 200);
  t.regex(again.text, /You are unsubscribed/);
  t.is((await notes(u)).length, 1);
  t.is((await suppressions(o.workspaceId)).length, 1);
  t.like(await contact(lead.contactId), { unsubscribe_source: 'one_click' });
  const revisit = await call('GET', `/unsubscribe/${token}`);
  t.is(revisit.status, 200);
  t.regex(revisit.text, /You are unsubscribed/);
  t.false(revisit.text.includes('<form'), 'no button once unsubscribed');
});

test('the page’s button records the source `link`, and a POST with no body unsubscribes too', async (t) => {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const [a, b] = await o.leads(2);
  const k = await key();
  t.is((await call('POST', `/unsubscribe/${unsubscribeToken(k, o.workspaceId, a.contactId)}?from=page`)).status, 200);
  t.like(await contact(a.contactId), { unsubscribe_source: 'link' });
  t.is((await call('POST', `/unsubscribe/${unsubscribeToken(k, o.workspaceId, b.contactId)}`)).status, 200);
  t.like(await contact(b.contactId), { unsubscribe_source: 'one_click' });
  t.is((await suppressions(o.workspaceId)).length, 2);
});

test('a tampered token, a token of another workspace, or a malformed one unsubscribes nobody: 404 page (400 invalid_id past 200 characters, invalid_query for an unknown parameter)', async (t) => {
  const a = await createOwner();
  const b = await createOwner();
  const oa = await campaignOwner(a);
  const ob = await campaignOwner(b);
  const [la] = await oa.leads(1);
  const [lb] = await ob.leads(1);
  const k = await key();
  const good = unsubscribeToken(k, oa.workspaceId, la.contactId);
  const [payloadA, macA] = good.split('.');
  const tampered = `${payloadA}.${macA.startsWith('A') ? 'B' : 'A'}${macA.slice(1)}`;
  // Workspace A's token with B's contact put in, A's signature kept.
  const swapped = `${unsubscribeToken(k, oa.workspaceId, lb.contactId).split('.')[0]}.${macA}`;
  // Validly signed, but naming B's contact inside workspace A.
  const crossed = unsubscribeToken(k, oa.workspaceId, lb.contactId);
  for (const token of [tampered, swapped, crossed, 'not-a-token', `${payloadA}.`]) {
    for (const method of ['GET', 'POST']) {
      const r = await call(method, `/unsubscribe/${token}`, method === 'POST' ? ONE_CLICK : {});
      t.is(r.status, 404, `${method} ${token}`);
      t.regex(r.headers.get('content-type') ?? '', /^text\/html/);
      t.is(r.headers.get('x-error-code'), 'not_found');
    }
  }
  t.like(await call('GET', `/unsubscribe/${'a'.repeat(201)}`), {
    status: 400,
    body: { error: { code: 'invalid_id' } },
  });
  t.like(await call('POST', `/unsubscribe/${'a'.repeat(201)}`, ONE_CLICK), {
    status: 400,
    body: { error: { code: 'invalid_id' } },
  });
  t.like(await call('GET', `/unsubscribe/${good}?from=page`), {
    status: 400,
    body: { error: { code: 'invalid_query' } },
  });
  t.like(await call('POST', `/unsubscribe/${good}?from=mail`), {
    status: 400,
    body: { error: { code: 'invalid_query' } },
  });
  t.like(await call('POST', `/unsubscribe/${good}?utm=x`), { status: 400, body: { error: { code: 'invalid_query' } } });
  for (const c of [la.contactId, lb.contactId]) t.is((await contact(c)).unsubscribed_at, null);
  t.deepEqual(await suppressions(oa.workspaceId), []);
  t.deepEqual(await suppressions(ob.workspaceId), []);

  // B's own token works for B only.
  t.is((await call('POST', `/unsubscribe/${unsubscribeToken(k, ob.workspaceId, lb.contactId)}`)).status, 200);
  t.truthy((await contact(lb.contactId)).unsubscribed_at);
  t.is((await contact(la.contactId)).unsubscribed_at, null);
});
