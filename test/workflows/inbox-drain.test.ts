// The inbox processor's drain marker (docs/inbox.md "Inbound processing", domain/inbox/drain.ts):
// while the processor drains an account, hooks send no signal, and no event is ever left without a
// processor, whatever the moment it arrives (during the drain, the linger, the stop, or after).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { SandboxNetwork, signInbound } from '../../lib/connectors/index.js';
import { inboxWorkflowIds } from '../../lib/workflow-ids.js';
import {
  accountsWithStaleInbound,
  clearDraining,
  isDraining,
  markDraining,
  STALE_INBOUND_MS,
} from '../../domain/inbox/drain.js';
import { scheduleDefinitions } from '../../workers/schedules.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, listen } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { replayFixture } from '../helpers/replay.js';
import { campaignOwner, fastAccount } from '../helpers/campaigns.js';
test.after.always(closeApi);

const SECRET = 'whsec-test-inbox-drain';

/** A small seeded generator (mulberry32), so a failing schedule can be replayed from its seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

test('the marker: set until a time, cleared, and stale once its time passed', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  await campaignOwner(u);
  const account = await fastAccount(u, 'network');
  const e = await em();
  t.false(await isDraining(e, account.id));
  await markDraining(e, account.id);
  t.true(await isDraining(e, account.id));
  await e.execute(`update inbox_drains set until = now() - interval '1 millisecond' where account_id = ?`, [
    account.id,
  ]);
  t.false(await isDraining(e, account.id), 'a processor lost mid-drain stops covering new events');
  await markDraining(e, account.id);
  await clearDraining(e, account.id);
  t.false(await isDraining(e, account.id));
  // An account deleted while its processor drains: no marker, and no error that would fail the processor.
  const gone = randomUUID();
  await t.notThrowsAsync(markDraining(e, gone));
  t.false(await isDraining(e, gone));
  void services;
});

for (const seed of [Number(process.env.INBOX_DRAIN_SEED ?? 1), 2]) {
  test.serial(
    `events at random moments around a drain are all handled, with fewer signals than events (seed ${seed})`,
    async (t) => {
      const { services } = await api();
      const { base } = await listen({
        ...services,
        connector: new SandboxNetwork(services.config.sources.corpus, services.orm, SECRET),
      });
      const u = await createOwner();
      await campaignOwner(u);
      const account = await fastAccount(u, 'network');
      const random = rng(seed);
      // 30 events over 3 s: some while the processor drains, some in its 1 s linger, some as it stops
      // (the window the marker protocol covers), some after it stopped.
      const offsets = Array.from({ length: 30 }, () => Math.floor(random() * 3_000)).sort((a, b) => a - b);
      t.log(`seed ${seed} (replay: INBOX_DRAIN_SEED=${seed}): offsets ${offsets.join(', ')} ms`);
      const started = Date.now();
      const posted = await Promise.all(
        offsets.map(async (at) => {
          await new Promise((r) => setTimeout(r, at));
          const event = {
            id: `evt_${randomUUID()}`,
            type: 'message.received',
            account_id: account.connector_account_id,
            created_at: new Date().toISOString(),
            data: {
              message: {
                id: `msg_${randomUUID()}`,
                thread_id: `thr_${randomUUID()}`,
                direction: 'in',
                from: `https://pronet.example/in/p-${randomUUID()}`,
                body: `at ${at}`,
                sent_at: new Date().toISOString(),
                attachments: [],
              },
            },
          };
          const raw = JSON.stringify(event);
          const r = await call('POST', '/hooks/connector', {
            base,
            rawBody: raw,
            headers: { 'X-Connector-Signature': signInbound(SECRET, raw) },
          });
          return r.status;
        }),
      );
      t.true(posted.every((s) => s === 200));
      const handled = async () =>
        Number(
          (
            await (
              await em()
            ).execute(
              `select count(*) from connector_events where connector_account_id = ? and handled_at is not null`,
              [account.connector_account_id],
            )
          )[0].count,
        );
      await waitFor('every event handled', async () => (await handled()) === offsets.length, 60_000);
      t.log(`all ${offsets.length} handled ${Date.now() - started} ms after the first post`);
      const history = await services.temporal.workflow.getHandle(inboxWorkflowIds.inbound(account.id)).fetchHistory();
      const signals = (history.events ?? []).filter((ev) => ev.workflowExecutionSignaledEventAttributes).length;
      t.log(`${signals} signals for ${offsets.length} events`);
      t.true(signals >= 1 && signals < offsets.length, `${signals} signals`);
    },
  );
}

test.serial(
  'the sweep wakes the processor of an account whose event waits unhandled with no processor draining (a wake-up lost with its API process); replays',
  async (t) => {
    const { services } = await api();
    const u = await createOwner();
    await campaignOwner(u);
    const account = await fastAccount(u, 'network');
    const e = await em();
    // Stored as the hook stores it, but its wake-up never went out; received 31 s ago.
    const eventId = `evt_${randomUUID()}`;
    const event = {
      id: eventId,
      type: 'message.received',
      account_id: account.connector_account_id,
      created_at: new Date().toISOString(),
      data: {
        message: {
          id: `msg_${randomUUID()}`,
          thread_id: `thr_${randomUUID()}`,
          direction: 'in',
          from: `https://pronet.example/in/p-${randomUUID()}`,
          body: 'lost wake-up',
          sent_at: new Date().toISOString(),
          attachments: [],
        },
      },
    };
    await e.execute(
      `insert into connector_events (id, event_id, connector, type, connector_account_id, platform_account_id, payload, received_at)
     values (gen_random_uuid(), ?, 'sandbox', 'message.received', ?, ?, ?::jsonb, now() - interval '31 seconds')`,
      [eventId, account.connector_account_id, account.id, JSON.stringify(event)],
    );
    const stale = await accountsWithStaleInbound(e, STALE_INBOUND_MS);
    t.true(stale.some((a) => a.accountId === account.id));
    // A processor draining the account covers it: not the sweep's.
    await markDraining(e, account.id);
    t.false((await accountsWithStaleInbound(e, STALE_INBOUND_MS)).some((a) => a.accountId === account.id));
    await clearDraining(e, account.id);
    // The sweep's workflow, as its Schedule starts it.
    const workflowId = `inbox-sweep-test-${randomUUID()}`;
    const r = await services.temporal.workflow.execute('inboxSweep', {
      taskQueue: services.config.temporal.taskQueue,
      workflowId,
      args: [],
    });
    t.true((r as { woken: number }).woken >= 1);
    await replayFixture(services.temporal, 'inboxSweep', workflowId);
    await waitFor(
      'the event handled',
      async () =>
        (
          await (
            await em()
          ).execute(`select 1 from connector_events where event_id = ? and handled_at is not null`, [eventId])
        ).length > 0,
      60_000,
    );
    t.false((await accountsWithStaleInbound(await em(), STALE_INBOUND_MS)).some((a) => a.accountId === account.id));
  },
);

test('the sweep runs on a Temporal Schedule every minute', (t) => {
  const def = scheduleDefinitions('q').find((d) => d.scheduleId === 'schedule:inbox-sweep');
  t.truthy(def);
  t.like(def!.action, { workflowType: 'inboxSweep', workflowId: 'inbox-sweep' });
  t.deepEqual(def!.spec, { intervals: [{ every: '1 minute' }] });
});
