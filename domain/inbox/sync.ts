// Inbox sync (docs/inbox.md "Sync"): `inbox-sync:<accountId>` pages through the account's chats at
// the connector and stores their messages like inbound events (idempotent by connector message id).
// Each page commits its messages with the cursor and counts, so a retried or restarted run resumes at
// the last committed page. History older than the account's connection is stored without effects.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AccountConnector, ChatMessage } from '../../lib/connectors/types.js';
import { runtimeSettings } from '../../lib/config.js';
import { notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { accountRow, wakeEnrollments, storeMessages, type EnrollmentWake } from './ingest.js';

/** Message pages read per chat in one sync page (a longer chat continues on the next sync). */
const MESSAGE_PAGES_PER_CHAT = 20;

export interface SyncRow {
  account_id: string;
  workspace_id: string;
  state: string;
  run: number;
  cursor: string | null;
  pages: number;
  chats_seen: number;
  messages_stored: number;
  error_message: string | null;
  started_at: Date;
  finished_at: Date | null;
}

/**
 * For each connected account of the workspace (or the one named): starts a sync when none is running
 * and the last finished more than INBOX_SYNC_FRESH_MS ago (or `force`), and reports each account's sync.
 */
export async function startOrReportSyncs(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  opts: { accountId?: string; force?: boolean },
): Promise<(SyncRow & { started: boolean })[]> {
  const accounts = await em.execute<{ id: string }[]>(
    `select id from platform_accounts where workspace_id = ? and status = 'connected' and connector_account_id is not null ${opts.accountId ? 'and id = ?' : ''} order by created_at`,
    opts.accountId ? [actor.workspaceId, opts.accountId] : [actor.workspaceId],
  );
  if (opts.accountId && !accounts.length) {
    const [exists] = await em.execute(`select 1 from platform_accounts where id = ? and workspace_id = ?`, [
      opts.accountId,
      actor.workspaceId,
    ]);
    if (!exists) throw notFound('platform account');
  }
  const out: (SyncRow & { started: boolean })[] = [];
  for (const a of accounts) {
    // Claims the next run under the row's lock: two concurrent calls start it once.
    const [claimed] = await em.execute<SyncRow[]>(
      `insert into inbox_syncs (account_id, workspace_id, state, run, cursor, pages, chats_seen, messages_stored, started_at, updated_at)
       values (?, ?, 'running', 1, null, 0, 0, 0, now(), now())
       on conflict (account_id) do update set state = 'running', run = inbox_syncs.run + 1, cursor = null, pages = 0, chats_seen = 0, messages_stored = 0,
              error_message = null, started_at = now(), finished_at = null, updated_at = now()
        where inbox_syncs.state <> 'running' and (? or inbox_syncs.finished_at is null or inbox_syncs.finished_at < now() - make_interval(secs => ?))
       returning *`,
      [a.id, actor.workspaceId, !!opts.force, runtimeSettings.inboxSyncFreshMs() / 1000],
    );
    if (claimed) {
      try {
        await jobs.start('inbox-sync', { accountId: a.id, workspaceId: actor.workspaceId, run: claimed.run });
      } catch (err) {
        // Not started: the claimed run must not stay `running` with nothing behind it.
        await finishSync(em, a.id, claimed.run, `could not start the sync: ${(err as Error).message}`);
        throw err;
      }
      out.push({ ...claimed, started: true });
    } else {
      const [row] = await em.execute<SyncRow[]>(`select * from inbox_syncs where account_id = ?`, [a.id]);
      out.push({ ...row, started: false });
    }
  }
  return out;
}

/** One page of chats: their messages stored, then the cursor and counts committed. `done` at the end. */
export async function syncPage(
  em: EntityManager,
  connector: AccountConnector,
  jobs: Jobs,
  accountId: string,
  run: number,
): Promise<{ done: boolean; stored: number }> {
  const [s] = await em.execute<SyncRow[]>(`select * from inbox_syncs where account_id = ?`, [accountId]);
  if (!s || s.run !== run || s.state !== 'running') return { done: true, stored: 0 };
  const account = await accountRow(em, accountId);
  const connectorAccountId = account?.connector_account_id;
  if (!account || !connectorAccountId) return { done: true, stored: 0 };
  const chats = await connector.chats(connectorAccountId, s.cursor);
  let stored = 0;
  const wakes: EnrollmentWake[] = [];
  await em.transactional(async (tx) => {
    for (const chat of chats.items) {
      const messages: ChatMessage[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const p = await connector.messages(connectorAccountId, chat.threadId, cursor);
        messages.push(...p.items);
        cursor = p.cursor;
      } while (cursor && ++pages < MESSAGE_PAGES_PER_CHAT);
      const r = await storeMessages(
        tx as EntityManager,
        wakes,
        account,
        messages.map((message) => ({ message, counterpart: chat.counterpart })),
        { historicalBefore: account.connected_at },
      );
      stored += r.stored;
    }
    await tx.execute(
      `update inbox_syncs set cursor = ?, pages = pages + 1, chats_seen = chats_seen + ?, messages_stored = messages_stored + ?, updated_at = now() where account_id = ? and run = ?`,
      [chats.cursor, chats.items.length, stored, accountId, run],
    );
  });
  await wakeEnrollments(jobs, wakes);
  return { done: chats.cursor === null, stored };
}

export async function finishSync(
  em: EntityManager,
  accountId: string,
  run: number,
  error: string | null,
): Promise<void> {
  await em.execute(
    `update inbox_syncs set state = ?, error_message = ?, finished_at = now(), updated_at = now() where account_id = ? and run = ? and state = 'running'`,
    [error ? 'failed' : 'completed', error?.slice(0, 500) ?? null, accountId, run],
  );
}
