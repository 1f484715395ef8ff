// The mailbox sync's side of the inbound pipeline (docs/email.md "Receiving"): where a mailbox's sync
// stands (mailbox_cursors), and read emails turned into the pipeline's messages, each in its thread,
// stored with the cursor's advance in one transaction (a retry after a crash re-reads from the
// cursor, and the pipeline's idempotence by Message-ID drops what it already had).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { InboundMail } from '../../lib/connectors/mailbox/parse.js';
import { mapLimit } from '../../lib/concurrency.js';
import { logger } from '../../lib/logger.js';
import { normaliseEmail } from '../../lib/normalise.js';
import type { Jobs } from '../jobs.js';
import { holdsLease, type LeaseFence } from './leases.js';
import {
  storeMessages,
  wakeEnrollments,
  type AccountRow,
  type EnrollmentWake,
  type IncomingMessage,
  type StoreResult,
} from '../inbox/ingest.js';

export interface MailboxCursor {
  uidValidity: string | null;
  lastUid: number;
  mode: 'idle' | 'poll';
  syncedAt: Date | null;
}

export async function loadCursor(em: EntityManager, accountId: string): Promise<MailboxCursor | null> {
  const [c] = await em.execute<
    { uid_validity: string | null; last_uid: string; mode: string; synced_at: Date | null }[]
  >(`select uid_validity::text, last_uid::text, mode, synced_at from mailbox_cursors where account_id = ?`, [
    accountId,
  ]);
  return c
    ? {
        uidValidity: c.uid_validity,
        lastUid: Number(c.last_uid),
        mode: c.mode === 'poll' ? 'poll' : 'idle',
        syncedAt: c.synced_at,
      }
    : null;
}

/**
 * Records where the sync stands. Within one UIDVALIDITY the last UID only moves forward (a second
 * follower of the account, e.g. a run not yet told it was terminated, cannot move it back).
 */
export async function saveCursor(
  em: EntityManager,
  accountId: string,
  c: { uidValidity: string; lastUid: number; mode: 'idle' | 'poll' },
  lease?: LeaseFence,
): Promise<void> {
  if (lease)
    return em.transactional(async (tx) => {
      await holdsLease(tx as EntityManager, accountId, lease);
      await saveCursor(tx as EntityManager, accountId, c);
    });
  await em.execute(
    `insert into mailbox_cursors (account_id, uid_validity, last_uid, mode, synced_at, error_message, updated_at) values (?, ?::bigint, ?, ?, now(), null, now())
     on conflict (account_id) do update set
       last_uid = case when mailbox_cursors.uid_validity is distinct from excluded.uid_validity then excluded.last_uid else greatest(mailbox_cursors.last_uid, excluded.last_uid) end,
       uid_validity = excluded.uid_validity, mode = excluded.mode, synced_at = now(), error_message = null, updated_at = now()`,
    [accountId, c.uidValidity, c.lastUid, c.mode],
  );
}

/** Why the last attempt failed (shown until the next successful pass). */
export async function recordCursorError(em: EntityManager, accountId: string, message: string): Promise<void> {
  await em.execute(`update mailbox_cursors set error_message = ?, updated_at = now() where account_id = ?`, [
    message.slice(0, 500),
    accountId,
  ]);
}

/**
 * The thread of each mail: a Message-ID it names (a bounce's original message, In-Reply-To, then
 * References from the newest) that this account sent or stored → that message's thread; else the
 * account's latest executed email to the sender (a bounce: to the failed recipient) → its thread;
 * else the mail's own first reference, or its Message-ID. A mail whose Message-ID this account sent,
 * or from the account's own address, is ours (`out`): never a reply.
 */
async function toIncoming(
  em: EntityManager,
  account: AccountRow & { address: string },
  mails: InboundMail[],
): Promise<IncomingMessage[]> {
  const named = (m: InboundMail) =>
    [m.facts.bounce?.originalMessageId, m.facts.inReplyTo, ...[...m.facts.references].reverse()].filter(
      (x): x is string => !!x,
    );
  const ids = [...new Set(mails.flatMap((m) => [m.messageId, ...named(m)]))];
  const known = await em.execute<{ id: string; thread: string; ours: boolean }[]>(
    `select connector_message_id as id, connector_thread_id as thread, true as ours from scheduled_actions
      where account_id = ? and connector_message_id in (?) and connector_thread_id is not null
     union all
     select m.connector_message_id, c.connector_thread_id, m.direction = 'out' from inbox_messages m join conversations c on c.id = m.conversation_id
      where m.platform_account_id = ? and m.connector_message_id in (?)`,
    [account.id, ids, account.id, ids],
  );
  const threadOf = new Map<string, string>();
  const ours = new Set<string>();
  for (const k of known) {
    if (!threadOf.has(k.id) || k.ours) threadOf.set(k.id, k.thread);
    if (k.ours) ours.add(k.id);
  }
  const own = (m: InboundMail) => m.own || ours.has(m.messageId);
  const counterpart = (m: InboundMail) =>
    own(m) ? (m.to.find((a) => a !== account.address) ?? '') : (m.facts.bounce?.recipient ?? m.from ?? '');

  const byAddress = new Map<string, string>();
  const unthreaded = [
    ...new Set(
      mails
        .filter((m) => !named(m).some((id) => threadOf.has(id)))
        .map((m) => normaliseEmail(counterpart(m)))
        .filter((e): e is string => !!e),
    ),
  ];
  if (unthreaded.length) {
    const rows = await em.execute<{ email: string; thread: string }[]>(
      `select v.email, s.connector_thread_id as thread from json_to_recordset(?::json) as v(email text)
         cross join lateral (select a.connector_thread_id from contacts c join leads l on l.contact_id = c.id join scheduled_actions a on a.lead_id = l.id
                              where c.workspace_id = ? and c.email_normalised = v.email and a.account_id = ? and a.type = 'email' and a.state = 'executed'
                                and a.connector_thread_id is not null
                              order by a.executed_at desc limit 1) s`,
      [JSON.stringify(unthreaded.map((email) => ({ email }))), account.workspace_id, account.id],
    );
    for (const r of rows) byAddress.set(r.email, r.thread);
  }

  return mails.map((m) => {
    const threadId =
      named(m)
        .map((id) => threadOf.get(id))
        .find((t) => !!t) ??
      byAddress.get(normaliseEmail(counterpart(m)) ?? '') ??
      m.facts.references[0] ??
      m.facts.inReplyTo ??
      m.messageId;
    const out = own(m);
    return {
      counterpart: counterpart(m) || null,
      message: {
        messageId: m.messageId,
        threadId,
        direction: out ? ('out' as const) : ('in' as const),
        from: m.from ?? '',
        body: m.text,
        sentAt: m.sentAt,
        attachments: m.attachments,
        // The pipeline reads an own message's subject only; its kind is `sent`.
        mail: m.facts,
      },
    };
  });
}

/**
 * Feeds one batch of read mails to the inbound pipeline and advances the cursor past it, in one
 * transaction; the enrollments the batch replied to, bounced or unsubscribed are woken after commit.
 */
export async function ingestMail(
  em: EntityManager,
  jobs: Jobs,
  account: AccountRow & { address: string },
  mails: InboundMail[],
  cursor: { uidValidity: string; lastUid: number; mode: 'idle' | 'poll' },
  lease?: LeaseFence,
): Promise<StoreResult> {
  const wakes: EnrollmentWake[] = [];
  const result = await em.transactional(async (tx) => {
    const t = tx as EntityManager;
    // A session of the mailbox-session service stores only while it holds the mailbox (first, so a takeover waits for this commit).
    if (lease) await holdsLease(t, account.id, lease);
    const stored = mails.length
      ? await storeMessages(t, wakes, account, await toIncoming(t, account, mails))
      : { stored: 0, replies: 0, events: 0 };
    await saveCursor(t, account.id, cursor);
    return stored;
  });
  await wakeEnrollments(jobs, wakes);
  return result;
}

/**
 * Starts the sync of every connected mail account that has none running (a start while one runs is
 * a no-op): run by the worker at start-up and by each accounts reconciliation, so a sync lost to an
 * outage (or an account connected while the worker was down) follows its mailbox again.
 */
export async function ensureMailboxSyncs(em: EntityManager, jobs: Jobs): Promise<number> {
  const accounts = await em.execute<{ id: string; workspace_id: string }[]>(
    `select id, workspace_id from platform_accounts where connector = 'mail' and status = 'connected' order by id`,
  );
  await mapLimit(accounts, 8, (a) =>
    jobs
      .start('mailbox-sync', { accountId: a.id, workspaceId: a.workspace_id })
      .catch((err) =>
        logger.warn(
          { err: String(err), account: a.id },
          'mailbox sync not started; the next reconciliation tries again',
        ),
      ),
  );
  return accounts.length;
}
