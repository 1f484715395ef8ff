// Who follows which mailbox (domain/mailbox/leases.ts): claims never give a mailbox to two followers,
// the fair share counts the live followers of the fleet, an expired lease is claimed under a new fence,
// and a store under the old fence is refused (LeaseLost). The mailboxes here are of a fleet of their
// own, so the run's worker leaves them alone.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import {
  claimLeases,
  holdsLease,
  LeaseLost,
  leaveFleet,
  renewLeases,
  unfollowable,
} from '../../domain/mailbox/leases.js';
import { closeApi } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { fastAccount } from '../helpers/campaigns.js';
test.after.always(closeApi);

async function fleetOf(n: number) {
  const fleet = `leases-${randomUUID()}`;
  const u = await createOwner();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await fastAccount(u, 'email')).id);
  const e = await em();
  await e.execute(
    `update platform_accounts set connector = 'mail', status = 'connected', mailbox_fleet = ? where id = any(?::uuid[])`,
    [fleet, `{${ids.join(',')}}`],
  );
  return { fleet, ids, e };
}

test('two followers claiming at once: every mailbox to exactly one; the share counts live followers of the fleet', async (t) => {
  const { fleet, ids, e } = await fleetOf(6);
  const a = { holder: `a-${randomUUID()}`, fleet, unassigned: false };
  const b = { holder: `b-${randomUUID()}`, fleet, unassigned: false };
  t.teardown(async () => {
    await leaveFleet(e, a.holder);
    await leaveFleet(e, b.holder);
  });
  t.is((await renewLeases(e, a)).share, 6, 'alone: all of them');
  t.is((await renewLeases(e, b)).share, 3, 'two followers: half each');
  const [ca, cb] = await Promise.all([claimLeases(await em(), a, 6), claimLeases(await em(), b, 6)]);
  const claimed = [...ca, ...cb].map((l) => l.accountId).sort();
  t.deepEqual(claimed, [...ids].sort(), 'each mailbox claimed once');
  t.deepEqual(await claimLeases(e, b, 6), [], 'nothing free while the leases live');
  t.is((await renewLeases(e, a)).held.length, ca.length);
});

test('an expired lease is claimed under a new fence; a store under the old one is refused; a disconnected mailbox is unfollowable', async (t) => {
  const { fleet, ids, e } = await fleetOf(2);
  const a = { holder: `a-${randomUUID()}`, fleet, unassigned: false };
  const b = { holder: `b-${randomUUID()}`, fleet, unassigned: false };
  t.teardown(async () => {
    await leaveFleet(e, a.holder);
    await leaveFleet(e, b.holder);
  });
  await renewLeases(e, a);
  const [first] = await claimLeases(e, a, 1);
  await e.transactional((tx) => holdsLease(tx as never, first.accountId, { holder: a.holder, fence: first.fence }));
  // A stalls past its lease (killed, paused): B takes the mailbox over.
  await e.execute(`update mailbox_leases set expires_at = now() - interval '1 second' where holder = ?`, [a.holder]);
  const taken = await claimLeases(e, b, 2);
  const again = taken.find((l) => l.accountId === first.accountId)!;
  t.truthy(again, 'the expired lease is claimable');
  t.true(BigInt(again.fence) > BigInt(first.fence), 'under a newer fence');
  await t.throwsAsync(
    e.transactional((tx) => holdsLease(tx as never, first.accountId, { holder: a.holder, fence: first.fence })),
    { instanceOf: LeaseLost },
  );
  t.is((await renewLeases(e, a)).held.length, 0, 'A holds nothing any more');
  await e.execute(`update platform_accounts set status = 'disconnected' where id = ?`, [ids[0]]);
  t.deepEqual(await unfollowable(e, b, ids), [ids[0]]);
  t.deepEqual(await unfollowable(e, { ...b, fleet: 'another' }, [ids[1]]), [ids[1]], "another fleet's mailbox");
});
