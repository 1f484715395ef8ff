// The drain marker of an account's inbox processor (docs/inbox.md, "Inbound processing"). While the
// processor's activity drains the account's events it keeps a row in inbox_drains saying until when;
// the hook asks `isDraining` after storing an event (after its commit) and sends no signal while the
// answer is yes, because the draining activity looks again within INBOX_POLL_MS. Before it stops, the
// activity deletes the row and then looks once more: an event whose hook saw the row is stored before
// that last look (the hook asks after its commit), and one whose hook saw no row signalled.
import type { EntityManager } from '@mikro-orm/postgresql';

/** How long a marker holds unless renewed: a processor lost mid-drain stops covering new events after this. */
export const DRAIN_HOLD_MS = 3_000;

/** Sets or renews the marker; an account deleted meanwhile gets none (its processor drains what is left and stops). */
export async function markDraining(em: EntityManager, accountId: string): Promise<void> {
  await em.getConnection().execute(
    `insert into inbox_drains (account_id, until) select id, now() + make_interval(secs => ?) from platform_accounts where id = ?
     on conflict (account_id) do update set until = excluded.until`,
    [DRAIN_HOLD_MS / 1000, accountId],
  );
}

export async function clearDraining(em: EntityManager, accountId: string): Promise<void> {
  await em.getConnection().execute(`delete from inbox_drains where account_id = ?`, [accountId]);
}

export async function isDraining(em: EntityManager, accountId: string): Promise<boolean> {
  const [r] = await em
    .getConnection()
    .execute<{ draining: boolean }[]>(
      `select exists (select 1 from inbox_drains where account_id = ? and until > now()) as draining`,
      [accountId],
    );
  return r.draining;
}

/** Events unhandled for longer than this, with no processor draining their account, are the sweep's. */
export const STALE_INBOUND_MS = 30_000;

/**
 * Accounts with messages or reactions stored over `olderThanMs` ago and not handled, whose
 * processor is not draining: their wake-up was lost (the hook signals after it answered, so an API
 * process that died in between leaves its events to this). Reads the partial index of pending rows.
 */
export async function accountsWithStaleInbound(
  em: EntityManager,
  olderThanMs: number,
): Promise<{ accountId: string; workspaceId: string }[]> {
  const rows = await em.getConnection().execute<{ account_id: string; workspace_id: string }[]>(
    `select a.id as account_id, a.workspace_id
       from (select distinct e.platform_account_id from connector_events e
              where e.handled_at is null and e.type in ('message.received', 'reaction.received') and e.received_at < now() - make_interval(secs => ?)) p
       join platform_accounts a on a.id = p.platform_account_id
      where not exists (select 1 from inbox_drains d where d.account_id = a.id and d.until > now())`,
    [olderThanMs / 1000],
  );
  return rows.map((r) => ({ accountId: r.account_id, workspaceId: r.workspace_id }));
}

/** Whether the account has stored messages or reactions not yet handled (the processor's partial index). */
export async function hasPendingInbound(em: EntityManager, accountId: string): Promise<boolean> {
  const [r] = await em
    .getConnection()
    .execute<{ pending: boolean }[]>(
      `select exists (select 1 from connector_events where platform_account_id = ? and handled_at is null and type in ('message.received', 'reaction.received')) as pending`,
      [accountId],
    );
  return r.pending;
}
