// The mailbox-session service in process (workers/mailbox-sessions.ts), over a mailbox provider that
// answers as a failing server would, on mailboxes of a fleet of its own (the run's worker leaves them
// alone): two services share the fleet and rebalance when one joins and when one leaves; refused logins
// disconnect a mailbox only after the refusal grace, never sooner.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { MailConnectError } from '../../lib/connectors/mailbox/settings.js';
import type { MailboxProvider } from '../../lib/connectors/mailbox/reader.js';
import { logger } from '../../lib/logger.js';
import { waitFor } from '../../scripts/children.js';
import { startMailboxSessions, type MailboxSessionsService } from '../../workers/mailbox-sessions.js';
import { api, closeApi } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { fastAccount } from '../helpers/campaigns.js';
test.after.always(closeApi);

const q = async <T>(sql: string, params: unknown[] = []) => (await em()).execute<T[]>(sql, params);

/** `n` connected mail accounts of a new fleet. */
async function fleetOf(n: number) {
  const fleet = `sessions-${randomUUID()}`;
  const u = await createOwner();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await fastAccount(u, 'email')).id);
  await q(
    `update platform_accounts set connector = 'mail', connector_account_id = 'mail:' || id::text, status = 'connected', mailbox_fleet = ? where id = any(?::uuid[])`,
    [fleet, `{${ids.join(',')}}`],
  );
  return { fleet, ids };
}

/** A server that cannot be reached: each login fails after a moment, and is retried. */
const unreachable: MailboxProvider = {
  openInbox: () =>
    new Promise((_, reject) =>
      setTimeout(() => reject(new MailConnectError('host_unreachable', 'imap', 'connection refused')), 50),
    ),
};

async function start(fleet: string, mailbox: MailboxProvider, over: { refusalGraceMs?: number } = {}) {
  const { services } = await api();
  return startMailboxSessions({
    orm: services.orm,
    databaseUrl: services.config.databaseUrl,
    fleet,
    unassigned: false,
    jobs: services.jobs,
    mailbox,
    logger,
    tickMs: 300,
    backoff: { baseMs: 50, maxMs: 200 },
    ...over,
  });
}

test('two services share a fleet: the second takes its share when it joins, all of it when the first leaves; never a mailbox held twice', async (t) => {
  const { fleet, ids } = await fleetOf(6);
  const services: MailboxSessionsService[] = [];
  t.teardown(() => Promise.all(services.map((s) => s.stop())));
  const holders = async () =>
    q<{ account_id: string; holder: string }>(
      `select account_id, holder from mailbox_leases where account_id = any(?::uuid[]) and expires_at > now()`,
      [`{${ids.join(',')}}`],
    );
  const a = await start(fleet, unreachable);
  services.push(a);
  await waitFor('the first to hold all six', async () => a.following().length === 6, 30_000);
  const b = await start(fleet, unreachable);
  services.push(b);
  await waitFor(
    'three each',
    async () => a.following().length === 3 && b.following().length === 3 && (await holders()).length === 6,
    30_000,
  );
  const split = await holders();
  t.is(new Set(split.map((h) => h.account_id)).size, 6, 'each mailbox one holder');
  t.deepEqual([...new Set(split.map((h) => h.holder))].sort(), [a.holder, b.holder].sort());
  // The first leaves (SIGTERM): its leases go at once and the second claims them.
  await a.stop();
  services.shift();
  await waitFor('the second to hold all six', async () => b.following().length === 6, 30_000);
  t.true((await holders()).every((h) => h.holder === b.holder));
  t.is(a.following().length, 0);
});

test('refused logins disconnect the mailbox (credentials_invalid) only once they have lasted the grace, after several attempts', async (t) => {
  const { fleet, ids } = await fleetOf(1);
  const [id] = ids;
  const refusals: number[] = [];
  const refusing: MailboxProvider = {
    openInbox: () => {
      refusals.push(Date.now());
      return Promise.reject(new MailConnectError('auth_failed', 'imap', 'LOGIN failed'));
    },
  };
  const s = await start(fleet, refusing, { refusalGraceMs: 1500 });
  t.teardown(() => s.stop());
  let disconnectedAt = 0;
  await waitFor(
    'the mailbox disconnected',
    async () => {
      const [row] = await q<{ status: string; reason: string | null }>(
        `select status, status_reason as reason from platform_accounts where id = ?`,
        [id],
      );
      if (row.status !== 'disconnected') return false;
      disconnectedAt = Date.now();
      t.is(row.reason, 'credentials_invalid');
      return true;
    },
    30_000,
  );
  t.true(refusals.length >= 3, `${refusals.length} attempts`);
  t.true(
    disconnectedAt - refusals[0] >= 1500,
    `disconnected ${disconnectedAt - refusals[0]} ms after the first refusal`,
  );
  // Let go: a disconnected mailbox is followed no more.
  await waitFor('the lease released', async () => !s.following().includes(id), 30_000);
});
