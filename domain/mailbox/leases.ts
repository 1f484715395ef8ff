// Who follows which mailbox (docs/email.md "Receiving", docs/deploy.md "Mailbox sessions"): every
// worker's mailbox-session service is a follower; a mailbox is followed by the one follower holding
// its lease. A lease lasts LEASE_TTL and is renewed by its holder every few seconds; one not renewed
// (its process was killed) expires and another follower claims it. Each claim takes a new fence from
// one sequence, and the transaction that stores a mailbox's mail checks the fence under the lease's
// row lock (`holdsLease`): a follower that lost a mailbox can no longer store for it, so a mailbox is
// followed by one process at a time even across a pause, a partition or a takeover.
//
// Sharing: each follower aims at its fair share, ceil(mailboxes to follow / live followers). It
// claims free mailboxes up to it, and lets go of the ones above it (a follower that joined takes them),
// so a fleet rebalances when a worker joins or leaves without any coordinator.
//
// A fleet is the followers of one Temporal task queue (in production, every worker). A mailbox is its
// fleet's: the task queue its `mailbox-sync` lifecycle runs on, stamped on the account by that
// workflow's standing check (`platform_accounts.mailbox_fleet`); until then, any fleet may follow it.
import type { EntityManager } from '@mikro-orm/postgresql';

/** A lease not renewed for this long is free to claim: a killed worker's mailboxes are taken over within it plus a tick. */
export const LEASE_TTL_S = 30;

export interface Lease {
  accountId: string;
  workspaceId: string;
  fence: string;
}

/** A follower: its name in the leases, its fleet (its task queue), and whether it also takes mailboxes of no fleet yet (default). */
export interface Follower {
  holder: string;
  fleet: string;
  unassigned?: boolean;
}

/** SQL: the mail accounts fleet `?` follows: connected on the mail connector, and of that fleet (or of none yet). */
const followable = (alias: string, f: Pick<Follower, 'unassigned'>) =>
  `${alias}.connector = 'mail' and ${alias}.status = 'connected' and (${
    f.unassigned === false ? 'false' : `${alias}.mailbox_fleet is null`
  } or ${alias}.mailbox_fleet = ?)`;

/**
 * Records the follower alive and renews its leases; returns the leases it still holds (one that
 * expired and was claimed by another is gone) and the fair share of each live follower of its fleet.
 */
export async function renewLeases(em: EntityManager, f: Follower): Promise<{ held: Lease[]; share: number }> {
  await em.execute(
    `insert into mailbox_followers (holder, fleet) values (?, ?) on conflict (holder) do update set seen_at = now()`,
    [f.holder, f.fleet],
  );
  const held = await em.execute<{ account_id: string; workspace_id: string; fence: string }[]>(
    `update mailbox_leases l set expires_at = now() + make_interval(secs => ?)
       from platform_accounts a where a.id = l.account_id and l.holder = ?
     returning l.account_id, a.workspace_id, l.fence::text`,
    [LEASE_TTL_S, f.holder],
  );
  const [{ mailboxes, followers }] = await em.execute<{ mailboxes: number; followers: number }[]>(
    `select (select count(*) from platform_accounts a where ${followable('a', f)})::int as mailboxes,
            (select count(*) from mailbox_followers where fleet = ? and seen_at > now() - make_interval(secs => ?))::int as followers`,
    [f.fleet, f.fleet, LEASE_TTL_S],
  );
  return {
    held: held.map((r) => ({ accountId: r.account_id, workspaceId: r.workspace_id, fence: r.fence })),
    share: Math.ceil(mailboxes / Math.max(1, followers)),
  };
}

/**
 * Claims up to `max` mailboxes of the fleet that no live lease holds (never leased, or expired), each
 * under a new fence. Two followers claiming at once cannot both win a mailbox: the upsert takes an
 * expired lease only while it is still expired.
 */
export async function claimLeases(em: EntityManager, f: Follower, max: number): Promise<Lease[]> {
  if (max <= 0) return [];
  const rows = await em.execute<{ account_id: string; workspace_id: string; fence: string }[]>(
    `with free as (
       select a.id, a.workspace_id from platform_accounts a
        where ${followable('a', f)}
          and not exists (select 1 from mailbox_leases l where l.account_id = a.id and l.expires_at > now())
        order by random() limit ?),
     taken as (
       insert into mailbox_leases (account_id, holder, fence, expires_at)
       select id, ?, nextval('mailbox_lease_fence'), now() + make_interval(secs => ?) from free
       on conflict (account_id) do update set holder = excluded.holder, fence = excluded.fence,
         claimed_at = now(), expires_at = excluded.expires_at
         where mailbox_leases.expires_at <= now()
       returning account_id, fence)
     select t.account_id, f.workspace_id, t.fence::text from taken t join free f on f.id = t.account_id`,
    [f.fleet, max, f.holder, LEASE_TTL_S],
  );
  return rows.map((r) => ({ accountId: r.account_id, workspaceId: r.workspace_id, fence: r.fence }));
}

/** Lets go of mailboxes (stopped following: over its share, no longer to follow, or the service stops). */
export async function releaseLeases(em: EntityManager, holder: string, accountIds: readonly string[]): Promise<void> {
  if (!accountIds.length) return;
  await em.execute(`delete from mailbox_leases where holder = ? and account_id = any(?::uuid[])`, [
    holder,
    `{${accountIds.join(',')}}`,
  ]);
}

/** The follower leaves: its leases go at once (others claim them on their next tick) and it no longer counts. */
export async function leaveFleet(em: EntityManager, holder: string): Promise<void> {
  await em.execute(`delete from mailbox_leases where holder = ?`, [holder]);
  await em.execute(`delete from mailbox_followers where holder = ?`, [holder]);
}

/** Followers not seen for a long while (killed) are forgotten. */
export async function forgetGoneFollowers(em: EntityManager): Promise<void> {
  await em.execute(`delete from mailbox_followers where seen_at < now() - make_interval(secs => ?)`, [LEASE_TTL_S * 4]);
}

/** Of the given leases, those whose mailbox the fleet no longer follows (disconnected, deleted, not mail, another fleet's). */
export async function unfollowable(em: EntityManager, f: Follower, accountIds: readonly string[]): Promise<string[]> {
  if (!accountIds.length) return [];
  const rows = await em.execute<{ id: string }[]>(
    `select x.id::text from unnest(?::uuid[]) as x(id)
      where not exists (select 1 from platform_accounts a where a.id = x.id and ${followable('a', f)})`,
    [`{${accountIds.join(',')}}`, f.fleet],
  );
  return rows.map((r) => r.id);
}

/** The mailbox belongs to `fleet` (its lifecycle's task queue): written only when it changes (the change is announced). */
export async function stampFleet(em: EntityManager, accountId: string, fleet: string): Promise<void> {
  await em.execute(`update platform_accounts set mailbox_fleet = ? where id = ? and mailbox_fleet is distinct from ?`, [
    fleet,
    accountId,
    fleet,
  ]);
}

/** Thrown in a store whose lease is no longer this follower's: nothing of it is kept. */
export class LeaseLost extends Error {
  constructor(accountId: string) {
    super(`the lease on mailbox ${accountId} is held by another follower`);
    this.name = 'LeaseLost';
  }
}

/** The fence of one session: the transaction that stores its mail checks it first. */
export interface LeaseFence {
  holder: string;
  fence: string;
}

/**
 * Inside the transaction that stores a mailbox's mail: holds the lease row (a takeover waits for
 * this commit) and throws LeaseLost unless it is still ours under the same fence and not expired.
 */
export async function holdsLease(em: EntityManager, accountId: string, lease: LeaseFence): Promise<void> {
  const [row] = await em.execute<{ ok: boolean }[]>(
    `select (holder = ? and fence = ?::bigint and expires_at > now()) as ok from mailbox_leases where account_id = ? for share`,
    [lease.holder, lease.fence, accountId],
  );
  if (!row?.ok) throw new LeaseLost(accountId);
}
