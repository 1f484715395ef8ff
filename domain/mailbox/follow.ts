// A mailbox followed (a session of the mailbox-session service, workers/mailbox-sessions.ts, or a
// bounded pass in a test; docs/email.md "Receiving"): open the
// account's INBOX through the providers' `mailbox` (the mail connector), resume from the stored
// cursor, feed new INBOX messages to the inbound pipeline batch by batch, and wait for more with IDLE
// (or polling) until the pass's budget is spent.
import type { EntityManager } from '@mikro-orm/postgresql';
import { mailConnectorAccountId, MAIL_CONNECTOR } from '../../lib/connectors/mailbox/account.js';
import { readMail, type InboundMail } from '../../lib/connectors/mailbox/parse.js';
import { InboxReader, type ListedMessage, type MailboxProvider } from '../../lib/connectors/mailbox/reader.js';
import { finalReason, MailConnectError } from '../../lib/connectors/mailbox/settings.js';
import { ConnectorError } from '../../lib/connectors/types.js';
import { logger } from '../../lib/logger.js';
import { applyAccountStatus, clearConnectionProblem, recordConnectionProblem } from '../accounts/status.js';
import type { Jobs } from '../jobs.js';
import { accountRow, type AccountRow } from '../inbox/ingest.js';
import type { LeaseFence } from './leases.js';
import { ingestMail, loadCursor, saveCursor } from './mailbox.js';

const DAY_MS = 86_400_000;
/** How long one pass follows the mailbox before handing back to its workflow (a history event per pass). */
export const FOLLOW_BUDGET_MS = 5 * 60_000;
/** The longest single wait: the INBOX is listed again after it even when IDLE announced nothing. */
const MAX_WAIT_MS = 55_000;
/** On the first pass, mail received this long before the connection is still the connection's. */
const CONNECT_SKEW_MS = 2 * 60_000;

export interface FollowDeps {
  em: () => EntityManager;
  jobs: Jobs;
  /** Opens the account's INBOX (the providers' `mailbox`): its credentials are unsealed there. */
  mailbox: MailboxProvider;
  /** Progress (the activity's heartbeat). */
  heartbeat: () => void;
  /** Aborts the pass (the activity was cancelled, the worker is stopping). */
  signal?: AbortSignal;
  budgetMs?: number;
  pollMs?: number;
  forcePoll?: boolean;
  /** The longest single wait (default 55 s; a session of the mailbox-session service re-issues IDLE less often). */
  maxWaitMs?: number;
  /** Read the account's standing after every wait (default); the mailbox-session service reads it for all its mailboxes at once. */
  checkStanding?: boolean;
  /** The session's lease: every store checks it (domain/mailbox/leases.ts), so a follower that lost the mailbox stores nothing. */
  lease?: LeaseFence;
  /** Called once the INBOX is open (logged in). */
  onOpen?: (mode: 'idle' | 'poll') => void;
  /** Called after each stored batch with its messages (their arrival times: the store's lag). */
  onStored?: (batch: ListedMessage[]) => void;
  /**
   * Whether a refused login (`auth_failed`) is final now. A mail server that is restarting refuses
   * logins for a moment, in words indistinguishable from a wrong password; the session service
   * answers no until refusals have lasted a while (and the refusal is retried with backoff). Absent:
   * final at once.
   */
  refusalIsFinal?: () => boolean;
}

/** `continue: false` ends the sync: the account is gone, not connected, not a mailbox, or its credentials are refused. */
export type FollowResult = { continue: true; stored: number } | { continue: false; reason: string };

// Failures no retry fixes (the account is disconnected and the sync ends) are those of `finalReason`
// (settings.ts, shared with the connector's status checks): refused credentials (`auth_failed`,
// stored credentials that no longer read) → `credentials_invalid`, a revoked OAuth grant →
// `oauth_revoked`. Anything else (an unreachable host, TLS, a host the outbound policy now refuses) is
// recorded on the account for its setup status and thrown: the activity's retry tries again with backoff.

/** The account while the sync should follow it; else why it ends. */
export async function standing(
  em: EntityManager,
  accountId: string,
): Promise<{ account: AccountRow } | { end: string }> {
  const account = await accountRow(em, accountId);
  if (!account) return { end: 'account_gone' };
  if (account.connector !== MAIL_CONNECTOR) return { end: 'not_mail' };
  const [{ status, reason }] = await em.execute<{ status: string; reason: string | null }[]>(
    `select status, status_reason as reason from platform_accounts where id = ?`,
    [accountId],
  );
  // Disconnected: why, when the disconnect said (credentials_invalid, oauth_revoked …).
  return status === 'connected' ? { account } : { end: status === 'disconnected' && reason ? reason : 'not_connected' };
}

export async function followMailbox(deps: FollowDeps, accountId: string): Promise<FollowResult> {
  const em = deps.em();
  const s = await standing(em, accountId);
  if ('end' in s) return { continue: false, reason: s.end };
  const connectorAccountId = s.account.connector_account_id ?? mailConnectorAccountId(accountId);
  const disconnect = async (reason: string): Promise<FollowResult> => {
    await applyAccountStatus(em, { connectorAccountId, state: 'disconnected', reason, address: null }, 'check');
    return { continue: false, reason };
  };

  let reader: InboxReader;
  let address: string;
  try {
    ({ address, reader } = await deps.mailbox.openInbox(connectorAccountId, {
      forcePoll: deps.forcePoll,
      pollMs: deps.pollMs,
      maxWaitMs: deps.maxWaitMs ?? MAX_WAIT_MS,
    }));
  } catch (err) {
    if (err instanceof MailConnectError) {
      const final = finalReason(err);
      if (final && (err.reason !== 'auth_failed' || (deps.refusalIsFinal?.() ?? true))) return disconnect(final);
      await recordConnectionProblem(
        em,
        connectorAccountId,
        { reason: err.reason, message: err.message.replace(/^mail: \w+: /, '') },
        'sync',
      );
      throw err;
    }
    // Stored settings that no longer read (none, or not ours) cannot be fixed by retrying either.
    if (
      err instanceof ConnectorError &&
      !(err instanceof MailConnectError) &&
      (err.code === 'auth' || err.code === 'invalid_request')
    )
      return disconnect('credentials_invalid');
    throw err;
  }

  deps.onOpen?.(reader.mode);
  // Logged in: a problem an earlier check recorded is over.
  await clearConnectionProblem(em, [connectorAccountId]);
  const account = { ...s.account, address: s.account.address ?? address };
  const deadline = Date.now() + (deps.budgetMs ?? FOLLOW_BUDGET_MS);
  let stored = 0;
  try {
    const cursor = await loadCursor(em, accountId);
    const at = {
      uidValidity: reader.uidValidity,
      lastUid: cursor?.uidValidity === reader.uidValidity ? cursor.lastUid : 0,
      mode: reader.mode,
    };

    const feed = async (list: ListedMessage[]) => {
      for (const batch of InboxReader.batches(list)) {
        const mails: InboundMail[] = [];
        for (const f of await reader.fetch(batch, deps.heartbeat)) {
          try {
            mails.push(await readMail(f.source, { accountAddress: account.address, receivedAt: f.receivedAt }));
            deps.heartbeat();
          } catch (err) {
            // One unreadable message must not stop the mailbox: it is skipped (the cursor passes it).
            logger.warn(
              { err: String(err), account: accountId, uid: f.uid },
              'mailbox sync: message not readable, skipped',
            );
          }
        }
        at.lastUid = Math.max(at.lastUid, batch[batch.length - 1].uid);
        stored += (await ingestMail(em, deps.jobs, account, mails, { ...at, mode: reader.mode }, deps.lease)).stored;
        deps.onStored?.(batch);
        deps.heartbeat();
      }
    };

    if (!cursor?.uidValidity || cursor.uidValidity !== reader.uidValidity) {
      // First pass: mail since the connection (older mail is not imported). A new UIDVALIDITY (the
      // server renumbered the folder): everything since the last pass, a day back for safety, and
      // never from before the connection. Raw rows hold timestamps as text.
      const connected = s.account.connected_at ? new Date(s.account.connected_at).getTime() - CONNECT_SKEW_MS : null;
      const lastPass = cursor?.uidValidity ? new Date(cursor.syncedAt ?? Date.now()).getTime() - DAY_MS : null;
      const since = lastPass !== null ? Math.max(lastPass, connected ?? lastPass) : connected;
      if (since !== null) await feed(await reader.listSince(new Date(since)));
      at.lastUid = Math.max(at.lastUid, reader.uidNext - 1);
      await saveCursor(em, accountId, { ...at, mode: reader.mode }, deps.lease);
    }

    while (!deps.signal?.aborted && Date.now() < deadline) {
      const list = await reader.listNew(at.lastUid);
      if (list.length) await feed(list);
      else await saveCursor(em, accountId, { ...at, mode: reader.mode }, deps.lease); // synced_at: the re-read after a UIDVALIDITY change starts here
      const left = deadline - Date.now();
      if (left <= 0) break;
      await reader.waitForMail(Math.min(left, deps.maxWaitMs ?? MAX_WAIT_MS), {
        signal: deps.signal,
        tick: deps.heartbeat,
      });
      deps.heartbeat();
      if (deps.checkStanding === false) continue;
      const again = await standing(em, accountId);
      if ('end' in again) return { continue: false, reason: again.end };
    }
    return { continue: true, stored };
  } finally {
    await reader.close();
  }
}
