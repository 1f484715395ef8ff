// A whole professional-network campaign over Unipile (issue 44, "Done when"), end to end: the API in
// this process and a worker process of its own, both configured with CONNECTOR_PROVIDER=unipile and
// pointed at the stand-in (test/helpers/unipile), which speaks Unipile's documented v1 format.
//
//   connect via the hosted link → invitation (the member resolved first) → `new_relation` webhook
//   (the acceptance) → the condition holds → message → `message_received` webhook (the reply) →
//   `message.received`, the conversation matched to the lead
//
// Webhooks are held at the stand-in and delivered shuffled and twice (the seed is printed). Then a
// rate-limited invitation (429 with Retry-After) waits and throttles the account, a member that does
// not exist fails the action with a code at once, and a restricted account (403 account_restricted)
// is disconnected with the reason, `account.disconnected` is emitted, and its send is held.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../api/services.js';
import { providerLookups } from '../../domain/provider-lookups.js';
import { temporalJobs } from '../../jobs/temporal.js';
import type { Config } from '../../lib/config.js';
import { createConnector } from '../../lib/connectors/index.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, closeApi, listen } from '../helpers/api.js';
import { createOwner } from '../helpers/billing.js';
import { campaignOwner, seedCampaign } from '../helpers/campaigns.js';
import { addPerson, profileUrlOf, registerAccounts, type Person } from '../helpers/unipile/accounts.js';
import { startStandIn } from '../helpers/unipile/stand-in.js';

const SECRET = 'whsec-unipile-journey';

test.after.always(closeApi);

/** A small seeded generator (mulberry32): the shuffles a failing run used are replayed from its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('a network campaign over Unipile end to end: hosted connect, invitation, acceptance, message, reply; events shuffled and twice; rate limit, unknown member, restricted account', async (t) => {
  const seed = Number(process.env.UNIPILE_JOURNEY_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.log(`seed ${seed} (UNIPILE_JOURNEY_SEED=${seed} replays the shuffles)`);
  const random = seeded(seed);
  const { services } = await api();
  const standIn = await startStandIn();
  t.teardown(() => standIn.close());
  const unipile = registerAccounts(standIn);
  t.teardown(() => unipile.settled());

  // The API: the test's services on a unipile config, starting workflows on the worker's own queue.
  const taskQueue = `unipile-journey-${randomUUID()}`;
  const config: Config = {
    ...services.config,
    connector: {
      ...services.config.connector,
      provider: 'unipile',
      unipile: {
        baseUrl: standIn.url,
        apiKey: standIn.apiKey,
        webhookSecret: SECRET,
        searchAccountId: null,
        publicBaseUrl: 'http://placeholder.invalid',
        timeoutMs: 5_000,
      },
    },
  };
  const svc: Services = { ...services, config, jobs: temporalJobs(services.temporal, taskQueue) };
  const { base } = await listen(svc);
  config.connector.unipile!.publicBaseUrl = base;
  const lookups = providerLookups(services.orm, config);
  svc.connector = createConnector(
    config.connector,
    config.sources.corpus,
    services.orm,
    { accounts: lookups.mailAccounts, encryptionKey: config.encryptionKey, allowHosts: config.outboundAllowHosts },
    lookups.refusals,
  );
  t.teardown(() => svc.connector.close?.());

  // The worker: configured as a deployment would be; it registers the webhooks at start-up.
  const worker = spawnTsx(
    'workers/worker.ts',
    {
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_SCHEDULES: 'off',
      WEBHOOK_DISPATCHER: 'off',
      MAILBOX_SESSIONS: 'off',
      CONNECTOR_PROVIDER: 'unipile',
      UNIPILE_BASE_URL: standIn.url,
      UNIPILE_API_KEY: standIn.apiKey,
      UNIPILE_WEBHOOK_SECRET: SECRET,
      PUBLIC_BASE_URL: base,
    },
    { quiet: true },
  );
  t.teardown(() => stopChild(worker));
  await waitFor('the worker to register its webhooks', async () => unipile.webhooks.size === 3, 120_000);
  t.true([...unipile.webhooks.values()].every((w) => w.request_url === `${base}/hooks/connector`));

  const em = () => services.orm.em.fork() as EntityManager;
  const u = await createOwner();
  const as = (body?: unknown) => ({ base, token: u.accessToken, ...(body === undefined ? {} : { body }) });
  const o = await campaignOwner(u);

  // 1. Connect through the hosted link: the user finishes Unipile's wizard, its notify callback links the account.
  const created = await call(
    'POST',
    '/api/platform-accounts',
    as({ channel: 'network', display_name: 'Ada', time_zone: 'Europe/Paris' }),
  );
  t.is(created.status, 201, created.text);
  const accountId = created.body.id as string;
  const connect = await call('POST', `/api/platform-accounts/${accountId}/connect`, as({}));
  t.is(connect.body.next, 'open_hosted_link', connect.text);
  const { account: standInAccount, notify } = await unipile.finishHostedAuth();
  t.is(notify.status, 200);
  const account = async () =>
    ((await call('GET', '/api/platform-accounts', as())).body.items as Record<string, any>[]).find(
      (a) => a.id === accountId,
    )!;
  t.like(await account(), { status: 'connected', connector_account_id: standInAccount.id });
  // No gap, no warm-up, all hours: the journey is not held by the governor's pacing.
  await em().execute(
    `update platform_accounts set min_gap_seconds = 0, jitter_seconds = 0, warmup_skipped_at = now(), working_hours = '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb where id = ?`,
    [accountId],
  );

  // Members of the network, and leads with their profile URLs.
  const member = (first: string): Person =>
    addPerson({
      first_name: first,
      last_name: 'Hopper',
      public_identifier: `${first.toLowerCase()}-${randomUUID().slice(0, 8)}`,
      headline: 'Rear Admiral',
    });
  const grace = member('Grace');
  const [lead] = await o.leads(1, { first_name: 'Grace', profile_url: profileUrlOf(grace) });

  // 2. The campaign: invitation, a wait, a condition on the acceptance, a message.
  const campaign = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [accountId],
    steps: [
      { type: 'invitation', config: { note: 'Hi {{first_name}}, let us connect' } },
      // Long enough for the held acceptance to be delivered and applied on a loaded machine.
      { type: 'wait', config: { amount: 40 / 3600, unit: 'hours' } },
      { type: 'condition', config: { check: 'accepted', expect: true } },
      { type: 'message', config: { body: 'Thanks for connecting, {{first_name}}' } },
    ],
  });
  unipile.hold();
  const enrolled = await call('POST', `/api/campaigns/${campaign.id}/leads`, as({ lead_ids: [lead.leadId] }));
  t.like(enrolled.body, { enrolled: 1 }, enrolled.text);

  // 3. The invitation reaches LinkedIn (the member resolved to its provider id), with the note.
  await waitFor(
    'the invitation',
    async () => [...unipile.invitations.values()].some((i) => i.provider_id === grace.provider_id),
    120_000,
  );
  const invitation = [...unipile.invitations.values()].find((i) => i.provider_id === grace.provider_id)!;
  t.is(invitation.message, 'Hi Grace, let us connect');
  const action = async (type: string, leadId = lead.leadId) =>
    (
      await em().execute<Record<string, any>[]>(
        `select id, state, waiting_reason, waiting_until, accepted_at, executed_at, error_code, attempts, connector_message_id, connector_recipient_id
           from scheduled_actions where campaign_id = ? and lead_id = ? and type = ? order by created_at desc limit 1`,
        [campaign.id, leadId, type],
      )
    )[0];
  await waitFor('the invitation recorded', async () => (await action('invitation'))?.state === 'executed');
  t.like(await action('invitation'), {
    connector_message_id: invitation.id,
    connector_recipient_id: grace.provider_id,
  });

  // 4. Grace accepts; the held webhooks (the acceptance, a status report) arrive shuffled and twice.
  await unipile.acceptInvitation(invitation.id);
  await unipile.setAccountStatus(standInAccount.id, 'OK');
  t.is(unipile.held().length, 2);
  const first = await unipile.release({ random, times: 2 });
  t.true(
    first.every((d) => d.status === 200),
    `seed ${seed}: ${JSON.stringify(first.map((d) => d.status))}`,
  );
  await waitFor('the acceptance recorded', async () => !!(await action('invitation'))?.accepted_at, 60_000);
  const relations = await em().execute<{ n: number }[]>(
    `select count(*)::int as n from connector_events where event_id = ?`,
    [`new_relation:${standInAccount.id}:${grace.provider_id}`],
  );
  t.is(relations[0].n, 1, `seed ${seed}: the acceptance is stored once`);

  // 5. The condition holds, and the message goes out in a new chat with Grace.
  unipile.hold();
  await waitFor('the message', async () => (await action('message'))?.state === 'executed', 120_000);
  const chat = [...unipile.chats.values()].find(
    (c) => c.account_id === standInAccount.id && c.attendee_provider_id === grace.provider_id,
  )!;
  t.deepEqual(
    chat.messages.map((m) => [m.is_sender, m.text]),
    [[1, 'Thanks for connecting, Grace']],
  );

  // 6. Grace replies; the reply and the echo of our own message arrive shuffled and twice.
  await unipile.inboundMessage(standInAccount.id, grace, 'Happy to talk next week');
  t.is(unipile.held().length, 2);
  const second = await unipile.release({ random, times: 2 });
  t.true(
    second.every((d) => d.status === 200),
    `seed ${seed}: ${JSON.stringify(second.map((d) => d.status))}`,
  );
  const received = async () =>
    (
      await em().execute<{ n: number }[]>(
        `select count(*)::int as n from webhook_events where workspace_id = ? and name = 'message.received'`,
        [o.workspaceId],
      )
    )[0].n;
  await waitFor('message.received', async () => (await received()) >= 1, 60_000);
  // The conversation, through the public API: matched to the lead, our message and the reply once each.
  const conversations = await call('GET', `/api/inbox/conversations?lead_id=${lead.leadId}`, as());
  t.is(conversations.status, 200, conversations.text);
  t.is(conversations.body.items.length, 1, `seed ${seed}`);
  const conversation = await call('GET', `/api/inbox/conversations/${conversations.body.items[0].id}`, as());
  t.like(conversation.body, { chat_id: chat.id, lead: { id: lead.leadId } });
  t.deepEqual(
    (conversation.body.messages as { direction: string; kind: string; origin: string | null; body: string }[]).map(
      (m) => [m.direction, m.kind, m.origin, m.body],
    ),
    [
      ['out', 'sent', 'campaign', 'Thanks for connecting, Grace'],
      ['in', 'reply', null, 'Happy to talk next week'],
    ],
    `seed ${seed}`,
  );
  t.is(await received(), 1, `seed ${seed}: message.received once`);
  // The member id the invitation resolved is the contact's identity on the network.
  const [contact] = await em().execute<{ network_provider_id: string | null }[]>(
    `select network_provider_id from contacts where id = ?`,
    [lead.contactId],
  );
  t.is(contact.network_provider_id, grace.provider_id);

  // 7. A rate limit: the invitation is refused 429 with Retry-After 3; the account is throttled until
  //    then, the action waits and goes out after it (once). A member LinkedIn does not know fails at once.
  const single = await seedCampaign(o.workspaceId, {
    appId: o.app.id,
    accountIds: [accountId],
    steps: [{ type: 'invitation', config: { note: 'Hello {{first_name}}' } }],
  });
  const alan = member('Alan');
  const [slow] = await o.leads(1, { first_name: 'Alan', profile_url: profileUrlOf(alan) });
  const [ghost] = await o.leads(1, {
    first_name: 'Nobody',
    profile_url: 'https://www.linkedin.com/in/no-such-member-x9/',
  });
  unipile.tooManyRequests({ method: 'POST', path: /^\/users\/invite$/ }, 1, '3');
  const refusedAt = Date.now();
  const r2 = await call('POST', `/api/campaigns/${single.id}/leads`, as({ lead_ids: [slow.leadId] }));
  t.like(r2.body, { enrolled: 1 }, r2.text);
  const singleAction = async (leadId: string) =>
    (
      await em().execute<Record<string, any>[]>(
        `select state, waiting_reason, error_code, attempts, executed_at from scheduled_actions where campaign_id = ? and lead_id = ?`,
        [single.id, leadId],
      )
    )[0];
  await waitFor(
    'the throttled invitation to go out',
    async () => (await singleAction(slow.leadId))?.state === 'executed',
    120_000,
  );
  const [gov] = await em().execute<{ throttled_until: Date | null }[]>(
    `select throttled_until from account_governors where account_id = ?`,
    [accountId],
  );
  t.truthy(gov.throttled_until, 'the account was throttled');
  t.true(new Date(gov.throttled_until!).getTime() >= refusedAt + 3_000);
  t.true(new Date((await singleAction(slow.leadId)).executed_at).getTime() >= new Date(gov.throttled_until!).getTime());
  const invites = standIn.requests.filter(
    (r) => r.method === 'POST' && r.path === '/users/invite' && (r.json as any)?.provider_id === alan.provider_id,
  );
  t.is(invites.length, 2, 'refused once, then sent');
  t.is([...unipile.invitations.values()].filter((i) => i.provider_id === alan.provider_id).length, 1);

  const r3 = await call('POST', `/api/campaigns/${single.id}/leads`, as({ lead_ids: [ghost.leadId] }));
  t.like(r3.body, { enrolled: 1 }, r3.text);
  const ghostEnd = await services.temporal.workflow
    .getHandle(enrollmentWorkflowIds.enrollment(single.id, ghost.leadId))
    .result();
  t.like(ghostEnd, { status: 'failed', stop_reason: 'connector_invalid_recipient' });
  t.like(await singleAction(ghost.leadId), { state: 'failed', error_code: 'connector_invalid_recipient', attempts: 1 });

  // 8. LinkedIn restricts the account: the next send is refused 403 account_restricted → the account
  //    is disconnected with the reason, account.disconnected is emitted, and the send is held.
  unipile.restrict(standInAccount.id);
  const alice = member('Alice');
  const [held] = await o.leads(1, { first_name: 'Alice', profile_url: profileUrlOf(alice) });
  const r4 = await call('POST', `/api/campaigns/${single.id}/leads`, as({ lead_ids: [held.leadId] }));
  t.like(r4.body, { enrolled: 1 }, r4.text);
  await waitFor('the account disconnected', async () => (await account()).status === 'disconnected', 120_000);
  t.like(await account(), { status: 'disconnected', status_reason: 'restricted' });
  await waitFor(
    'the send held',
    async () => (await singleAction(held.leadId))?.waiting_reason === 'not_connected',
    60_000,
  );
  t.like(await singleAction(held.leadId), { state: 'planned', waiting_reason: 'not_connected' });
  const disconnected = await em().execute<{ body: string }[]>(
    `select body from webhook_events where workspace_id = ? and name = 'account.disconnected'`,
    [o.workspaceId],
  );
  t.is(disconnected.length, 1);
  t.like(JSON.parse(disconnected[0].body), { data: { platform_account_id: accountId, reason: 'restricted' } });
  t.is([...unipile.invitations.values()].filter((i) => i.provider_id === alice.provider_id).length, 0);
  await services.temporal.workflow
    .getHandle(enrollmentWorkflowIds.enrollment(single.id, held.leadId))
    .terminate('test over')
    .catch(() => undefined);
});
