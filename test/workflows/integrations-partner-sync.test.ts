// The partner CRM sync (docs/integrations.md "Sync", "Partner events"): installed through the local
// partner's OAuth flow, `partner-sync:<id>` pushes leads, replies and meetings idempotently by our ids
// (a re-run, even from reset cursors, pushes nothing twice), holds back the records the partner
// flags (a field conflict, a possible duplicate) as partner events, and confirm applies a
// resolution once. Resumable across continue-as-new; replays. Real Temporal, the local partner.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { resolveActor } from '../../domain/workspaces.js';
import { findTool } from '../../domain/tools/index.js';
import { uuidv7 } from '../../lib/ids.js';
import { LOCAL_EDITED_TITLE, localDuplicateId, PartnerError } from '../../lib/partner/index.js';
import type { PartnerSyncResult } from '../../workflows/integrations.js';
import { partnerWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, closeApi, createTestApp, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { fastAccount } from '../helpers/campaigns.js';
import { seedContacts } from '../helpers/contacts.js';
import { installPartner } from '../helpers/partner.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
test.after.always(closeApi);

const as = (u: TestUser) => ({ token: u.accessToken });

/** An owner with leads (one flagged as a conflict, one as a duplicate by the local partner's rules), a meeting and a reply. */
async function scenario() {
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  const app = await createTestApp(u);
  const list = (await call('POST', `/api/apps/${app.id}/lists`, { ...as(u), body: { name: `L ${randomUUID()}` } }))
    .body;
  const tag = randomUUID().slice(0, 8);
  const contacts = await seedContacts(ws, [
    { email: `ada.${tag}@example.test`, first_name: 'Ada', title: 'CEO', lists: [list.id] },
    { email: `bob.${tag}@example.test`, first_name: 'Bob', title: 'CFO', lists: [list.id] },
    { email: `conflict.${tag}@example.test`, first_name: 'Cy', title: 'CTO', lists: [list.id] },
    { email: `dup.${tag}@example.test`, first_name: 'Di', title: 'COO', lists: [list.id] },
  ]);
  const [ada, bob, cy, di] = contacts.map((c) => ({ ...c, leadId: c.leads[list.id] }));
  const meeting = await call('POST', `/api/leads/${ada.leadId}/meetings`, {
    ...as(u),
    body: {
      title: 'Intro',
      starts_at: new Date(Date.now() + 86_400_000).toISOString(),
      ends_at: new Date(Date.now() + 90_000_000).toISOString(),
    },
  });
  if (meeting.status !== 201) throw new Error(meeting.text);
  // A reply from Bob in the inbox (as the inbound pipeline stores it).
  const account = await fastAccount(u, 'email');
  const e = await em();
  const conversationId = uuidv7();
  const replyId = uuidv7();
  await e.execute(
    `insert into conversations (id, workspace_id, platform_account_id, channel, connector_thread_id, counterpart, contact_id, lead_id, last_message_at, last_message_preview, last_direction, unread_count, created_at, updated_at)
     values (?, ?, ?, 'email', ?, ?, ?, ?, now(), 'Sounds good', 'in', 1, now(), now())`,
    [conversationId, ws, account.id, `thr-${tag}`, bob.email, bob.id, bob.leadId],
  );
  await e.execute(
    `insert into inbox_messages (id, workspace_id, conversation_id, platform_account_id, connector_message_id, direction, kind, sender, subject, body, sent_at, attachments, lead_id, historical, created_at)
     values (?, ?, ?, ?, ?, 'in', 'reply', ?, 'Re: hello', 'Sounds good, let us talk', now(), '[]', ?, false, now())`,
    [replyId, ws, conversationId, account.id, `msg-${tag}`, bob.email, bob.leadId],
  );
  return { u, ws, ada, bob, cy, di, meetingId: meeting.body.id as string, replyId };
}

const sandbox = async (accountId: string) =>
  (await (
    await em()
  ).execute(
    `select record_kind, external_id, partner_id, fields, versions from partner_sandbox_records where account_id = ? order by record_kind, external_id`,
    [accountId],
  )) as {
    record_kind: string;
    external_id: string;
    partner_id: string;
    fields: Record<string, unknown>;
    versions: number;
  }[];

async function syncNow(u: TestUser, integrationId: string): Promise<PartnerSyncResult> {
  const { services } = await api();
  const e = services.orm.em.fork();
  const actor = await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined);
  const started = (await findTool('sync_partner_now')!.run(
    { em: e as never, actor, jobs: services.jobs, config: services.config, providers: services },
    { integration_id: integrationId },
  )) as { workflow_id: string; run_id: string };
  return (await services.temporal.workflow
    .getHandle(started.workflow_id, started.run_id)
    .result()) as PartnerSyncResult;
}

test.serial(
  'install syncs leads, replies and meetings once by our ids; conflicts and duplicates wait as partner events; confirm applies one once; replays',
  async (t) => {
    const { services } = await api();
    const s = await scenario();
    const installed = await installPartner(s.u, { loginHint: `hint-${randomUUID()}` });
    const integrationId = installed.integration.id;
    const handle = services.temporal.workflow.getHandle(partnerWorkflowIds.sync(integrationId));
    const first = (await handle.result()) as PartnerSyncResult;
    t.like(first, { status: 'completed', read: 6, pushed: 4, unchanged: 0, held: 2 });
    t.deepEqual((await handle.describe()).searchAttributes.JobKind, ['partner-sync']);
    const accountId = (await call('GET', `/api/integrations/${integrationId}`, as(s.u))).body.account.id;
    const pushed = await sandbox(accountId);
    t.deepEqual(
      pushed.map((r) => [r.record_kind, r.external_id, r.versions]),
      [
        ['lead', s.ada.leadId, 1],
        ['lead', s.bob.leadId, 1],
        ['meeting', s.meetingId, 1],
        ['reply', s.replyId, 1],
      ].sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`)),
    );
    t.like(pushed.find((r) => r.record_kind === 'reply')!.fields, {
      lead_external_id: s.bob.leadId,
      body: 'Sounds good, let us talk',
      channel: 'email',
    });
    t.like(pushed.find((r) => r.record_kind === 'meeting')!.fields, {
      lead_external_id: s.ada.leadId,
      title: 'Intro',
      status: 'scheduled',
    });
    t.like((await call('GET', `/api/integrations/${integrationId}`, as(s.u))).body, {
      sync: { workflow_id: `partner-sync:${integrationId}` },
    });
    t.truthy((await call('GET', `/api/integrations/${integrationId}`, as(s.u))).body.sync.last_sync_at);

    // The held-back records, with what a person needs to decide.
    const events = await call('GET', '/api/integrations/partner/events?state=pending', as(s.u));
    t.is(events.status, 200, events.text);
    t.is(events.body.items.length, 2);
    const conflict = events.body.items.find((e: { kind: string }) => e.kind === 'field_conflict');
    const dup = events.body.items.find((e: { kind: string }) => e.kind === 'possible_duplicate');
    t.like(conflict, {
      integration_id: integrationId,
      record_kind: 'lead',
      record_id: s.cy.leadId,
      state: 'pending',
      resolution: null,
      details: { fields: [{ field: 'title', ours: 'CTO', theirs: LOCAL_EDITED_TITLE }] },
    });
    t.like(dup, {
      record_kind: 'lead',
      record_id: s.di.leadId,
      details: { partner_id: localDuplicateId(s.di.email!), match: 'email' },
    });
    const firstPage = await call('GET', '/api/integrations/partner/events?limit=1', as(s.u));
    t.is(firstPage.body.items.length, 1);
    const secondPage = await call(
      'GET',
      `/api/integrations/partner/events?limit=1&cursor=${firstPage.body.next_cursor}`,
      as(s.u),
    );
    t.is(secondPage.body.items.length, 1);
    t.not(secondPage.body.items[0].id, firstPage.body.items[0].id);
    t.is(secondPage.body.next_cursor, null);
    t.deepEqual(
      (await call('GET', '/api/integrations/partner/events?kind=possible_duplicate', as(s.u))).body.items.map(
        (e: { id: string }) => e.id,
      ),
      [dup.id],
    );
    t.is((await call('GET', '/api/integrations/partner/events?state=open', as(s.u))).body.error.code, 'invalid_query');

    // A re-run pushes nothing: the cursors are past every record; even from reset cursors every
    // version is known (and the held records still wait).
    t.like(await syncNow(s.u, integrationId), { status: 'completed', read: 0, pushed: 0, held: 0 });
    await (await em()).execute(`delete from partner_sync_cursors where integration_id = ?`, [integrationId]);
    t.like(await syncNow(s.u, integrationId), { status: 'completed', read: 6, pushed: 0, unchanged: 0, held: 0 });
    t.deepEqual(
      (await sandbox(accountId)).map((r) => r.versions),
      [1, 1, 1, 1],
    );

    // A change is pushed once, as a new version of the same record.
    const patched = await call('PATCH', `/api/leads/${s.ada.leadId}`, { ...as(s.u), body: { title: 'Chair' } });
    t.is(patched.status, 200, patched.text);
    t.like(await syncNow(s.u, integrationId), { read: 1, pushed: 1 });
    t.like(
      (await sandbox(accountId)).find((r) => r.external_id === s.ada.leadId),
      { versions: 2, fields: { title: 'Chair' } },
    );

    // Confirm: the wrong kind of resolution, bad merge values, then keep theirs — once.
    const confirm = (id: string, body: Record<string, unknown>, u = s.u) =>
      call('POST', `/api/integrations/partner/events/${id}/confirm`, { ...as(u), body });
    t.is((await confirm(dup.id, { resolution: 'keep_theirs' })).body.error.code, 'invalid_resolution');
    t.is((await confirm(conflict.id, { resolution: 'link_existing' })).body.error.code, 'invalid_resolution');
    t.is(
      (await confirm(conflict.id, { resolution: 'merge', values: { company: 'x' } })).body.error.code,
      'invalid_resolution',
    );
    t.is((await confirm(conflict.id, { resolution: 'ignore' })).body.error.code, 'invalid_body');
    const other = await createOwner();
    const stolen = await confirm(conflict.id, { resolution: 'keep_ours' }, other);
    t.is(stolen.status, 404);
    t.is(stolen.body.error.code, 'not_found');
    t.deepEqual((await call('GET', '/api/integrations/partner/events', as(other))).body.items, []);

    const kept = await confirm(conflict.id, { resolution: 'keep_theirs' });
    t.is(kept.status, 200, kept.text);
    t.like(kept.body, {
      pushed: true,
      event: { id: conflict.id, state: 'confirmed', resolution: 'keep_theirs', confirmed_by: s.u.id },
    });
    const [contact] = await (await em()).execute(`select title, edited_fields from contacts where id = ?`, [s.cy.id]);
    t.is(contact.title, LOCAL_EDITED_TITLE);
    t.true(contact.edited_fields.includes('title'), 'a person chose it: never overwritten by enrichment');
    t.like(
      (await sandbox(accountId)).find((r) => r.external_id === s.cy.leadId),
      { versions: 1, fields: { title: LOCAL_EDITED_TITLE } },
    );
    const again = await confirm(conflict.id, { resolution: 'keep_ours' });
    t.is(again.status, 409);
    t.is(again.body.error.code, 'already_confirmed');

    const linked = await confirm(dup.id, { resolution: 'link_existing' });
    t.like(linked.body, {
      pushed: true,
      partner_id: localDuplicateId(s.di.email!),
      event: { state: 'confirmed', resolution: 'link_existing' },
    });
    t.like(
      (await sandbox(accountId)).find((r) => r.external_id === s.di.leadId),
      { partner_id: localDuplicateId(s.di.email!) },
    );
    t.is((await call('GET', '/api/integrations/partner/events?state=confirmed', as(s.u))).body.items.length, 2);
    t.deepEqual((await call('GET', '/api/integrations/partner/events?state=pending', as(s.u))).body.items, []);

    // What the confirmations pushed is known: the next run sends nothing.
    t.like(await syncNow(s.u, integrationId), { pushed: 0, held: 0 });

    t.true((await replayLive(services.temporal, partnerWorkflowIds.sync(integrationId))) > 0);
    await replayFixture(services.temporal, 'partnerSync', partnerWorkflowIds.sync(integrationId));
  },
);

test.serial(
  'confirm: 502 provider_unavailable when the partner fails (nothing changes), 409 integration_not_active while disabled; a disabled integration’s sync is skipped',
  async (t) => {
    const { services } = await api();
    const s = await scenario();
    const installed = await installPartner(s.u);
    const id = installed.integration.id;
    await services.temporal.workflow.getHandle(partnerWorkflowIds.sync(id)).result();
    const [conflict] = (await call('GET', '/api/integrations/partner/events?kind=field_conflict', as(s.u))).body.items;
    const partner = services.partner!;
    const upsert = partner.upsert.bind(partner);
    partner.upsert = async () => {
      throw new PartnerError('unavailable', 'HTTP 503: the partner is down');
    };
    try {
      const down = await call('POST', `/api/integrations/partner/events/${conflict.id}/confirm`, {
        ...as(s.u),
        body: { resolution: 'keep_ours' },
      });
      t.is(down.status, 502);
      t.is(down.body.error.code, 'provider_unavailable');
    } finally {
      partner.upsert = upsert;
    }
    t.like(
      (await call('GET', `/api/integrations/partner/events?state=pending`, as(s.u))).body.items.find(
        (e: { id: string }) => e.id === conflict.id,
      ),
      { state: 'pending' },
    );
    t.is((await call('PUT', `/api/integrations/${id}`, { ...as(s.u), body: { enabled: false } })).status, 200);
    const inactive = await call('POST', `/api/integrations/partner/events/${conflict.id}/confirm`, {
      ...as(s.u),
      body: { resolution: 'keep_ours' },
    });
    t.is(inactive.status, 409);
    t.is(inactive.body.error.code, 'integration_not_active');
    const skipped = (await services.temporal.workflow.execute('partnerSync', {
      taskQueue: services.config.temporal.taskQueue,
      workflowId: `partner-sync-test:${randomUUID()}`,
      args: [{ integrationId: id }],
    })) as PartnerSyncResult;
    t.like(skipped, { status: 'skipped', skipped: 'disabled', pushed: 0 });
    t.is((await call('PUT', `/api/integrations/${id}`, { ...as(s.u), body: { enabled: true } })).status, 200);
    const merged = await call('POST', `/api/integrations/partner/events/${conflict.id}/confirm`, {
      ...as(s.u),
      body: { resolution: 'merge', values: { title: 'CTO & co-founder' } },
    });
    t.is(merged.status, 200, merged.text);
    const [contact] = await (await em()).execute(`select title from contacts where id = ?`, [s.cy.id]);
    t.is(contact.title, 'CTO & co-founder');
  },
);

test('a sync resumes from its cursors across continue-as-new (one record per page, two pages per run); the sweep starts every active partner sync; replays', async (t) => {
  const { services } = await api();
  const s = await scenario();
  const installed = await installPartner(s.u);
  const id = installed.integration.id;
  await services.temporal.workflow.getHandle(partnerWorkflowIds.sync(id)).result();
  // Start over from nothing, one record at a time.
  await (await em()).execute(`delete from partner_sync_cursors where integration_id = ?`, [id]);
  await (await em()).execute(`delete from partner_pushes where integration_id = ?`, [id]);
  const workflowId = `partner-sync-test:${randomUUID()}`;
  const r = (await services.temporal.workflow.execute('partnerSync', {
    taskQueue: services.config.temporal.taskQueue,
    workflowId,
    args: [{ integrationId: id, pageSize: 1, pagesPerRun: 2 }],
  })) as PartnerSyncResult;
  // Every record read once across the runs; the partner had them all already (unchanged), none pushed twice.
  t.like(r, { status: 'completed', read: 6, pushed: 0, unchanged: 4, held: 0 });
  const accountId = (await call('GET', `/api/integrations/${id}`, as(s.u))).body.account.id;
  t.deepEqual(
    (await sandbox(accountId)).map((x) => x.versions),
    [1, 1, 1, 1],
  );
  const cursors = (await (
    await em()
  ).execute(`select record_kind, pushed from partner_sync_cursors where integration_id = ? order by record_kind`, [
    id,
  ])) as { record_kind: string }[];
  t.deepEqual(
    cursors.map((c) => c.record_kind),
    ['lead', 'meeting', 'reply'],
  );

  const sweepId = `partner-sync-sweep-test:${randomUUID()}`;
  const swept = (await services.temporal.workflow.execute('partnerSyncSweep', {
    taskQueue: services.config.temporal.taskQueue,
    workflowId: sweepId,
    args: [],
  })) as { started: number };
  t.true(swept.started >= 1);
  await replayFixture(services.temporal, 'partnerSyncSweep', sweepId);
});
