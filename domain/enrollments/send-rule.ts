// The send-time rule (docs/executor.md, "The send-time rule"): the one place that says whether a
// scheduled action may be sent now. The campaign gate, the slot request and the send's claim all
// ask it; only the claim's answer is final, because the claim reads the facts under row locks that
// every stop (a pause, a removal, a reply, a bounce, a disconnect) must wait for or that wait for
// it. So nothing is sent whose claim commits after a stop committed.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SendingWindows } from '../../db/entities/Campaign.js';
import type { WaitingReason } from './executor.js';
import { nextWindowOpening, sendingZone } from '../campaigns/sending-windows.js';
import { SUPPRESSION_LOCK } from '../suppressions/suppressions.js';

/** What the rule reads about one action. */
export interface SendFacts {
  actionState: string;
  actionType: string;
  enrollmentStatus: string;
  enrollmentStopReason: string | null;
  campaignStatus: string;
  stopOnReply: boolean;
  /** A reply is recorded on the enrollment. */
  replied: boolean;
  /** A send of this enrollment bounced, or (for an email) the contact's address did. */
  bounced: boolean;
  /** The contact unsubscribed. */
  unsubscribed: boolean;
  /** An email whose recipient address, or its domain, is on the workspace's suppression list. */
  suppressed: boolean;
  /** The contact's out-of-office return: every send to them holds until then (null: none, or past). */
  outOfOfficeUntil: Date | null;
  /** The sender account's status; null when the action has no account. */
  accountStatus: string | null;
  /** The campaign's sending windows are open now. */
  windowOpen: boolean;
}

/** A stop ends the enrollment with this status and reason; a hold keeps it waiting, saying why. */
export type SendVerdict =
  { send: true } | { send: false; stop: { status: string; reason: string } } | { send: false; hold: WaitingReason };

const RUNNING = ['active', 'paused'];

/**
 * The rule, in order: stops first (they end the enrollment), then holds (they wait). Stops: the
 * enrollment already ended (as it says), the campaign completed or archived, the contact
 * unsubscribed, the recipient suppressed (an email to a suppressed address or domain), the address
 * bounced, a reply with stop-on-reply. Holds: the campaign or the enrollment paused, the contact out
 * of office, no connected sender account, outside the sending windows.
 */
export function sendVerdict(f: SendFacts): SendVerdict {
  if (!RUNNING.includes(f.enrollmentStatus)) {
    return {
      send: false,
      stop: {
        status: f.enrollmentStatus,
        reason: f.enrollmentStopReason ?? (f.enrollmentStatus === 'removed' ? 'unenrolled' : f.enrollmentStatus),
      },
    };
  }
  if (f.campaignStatus !== 'active' && f.campaignStatus !== 'paused')
    return { send: false, stop: { status: 'stopped', reason: `campaign_${f.campaignStatus}` } };
  if (f.unsubscribed) return { send: false, stop: { status: 'stopped', reason: 'unsubscribed' } };
  if (f.suppressed) return { send: false, stop: { status: 'stopped', reason: 'suppressed' } };
  if (f.bounced) return { send: false, stop: { status: 'stopped', reason: 'bounced' } };
  if (f.replied && f.stopOnReply) return { send: false, stop: { status: 'replied', reason: 'replied' } };
  if (f.campaignStatus === 'paused') return { send: false, hold: 'campaign_paused' };
  if (f.enrollmentStatus === 'paused') return { send: false, hold: 'paused' };
  if (f.outOfOfficeUntil) return { send: false, hold: 'out_of_office' };
  if (f.accountStatus === null) return { send: false, hold: 'no_sender_account' };
  if (f.accountStatus !== 'connected') return { send: false, hold: 'not_connected' };
  if (!f.windowOpen) return { send: false, hold: 'waiting_for_window' };
  return { send: true };
}

/** The facts row plus what callers need beside the rule. */
export interface ActionFacts extends SendFacts {
  enrollmentId: string;
  campaignId: string;
  contactId: string;
  accountId: string | null;
  connectorAccountId: string | null;
  content: Record<string, unknown> | null;
  errorCode: string | null;
  dueAt: Date;
  /** The governor's grant recorded on the action (a re-run of the slot request answers with it). */
  slotGrantedAt: Date | null;
  /** The next opening of the sending windows at or after `now` (itself when open); null: none ever. */
  windowOpensAt: Date | null;
}

/**
 * Reads the facts of one action. With `lock` (inside the claim's transaction) it first takes the row
 * locks every stop conflicts with, always in the same order as the stops take theirs (campaign,
 * enrollment, action, contact, account, then the workspace's suppression lock): shares on what a stop
 * updates, the action for update. A stop
 * in flight is waited for and then seen; a stop that comes later waits for the claim to commit.
 */
export async function actionFacts(
  em: EntityManager,
  actionId: string,
  opts: { lock?: boolean; now?: Date } = {},
): Promise<ActionFacts | null> {
  if (opts.lock) {
    const [ids] = await em.execute<
      { campaign_id: string; enrollment_id: string; account_id: string | null; workspace_id: string; type: string }[]
    >(`select campaign_id, enrollment_id, account_id, workspace_id, type from scheduled_actions where id = ?`, [
      actionId,
    ]);
    if (!ids) return null;
    await em.execute(`select 1 from campaigns where id = ? for share`, [ids.campaign_id]);
    await em.execute(`select 1 from enrollments where id = ? for share`, [ids.enrollment_id]);
    await em.execute(`select 1 from scheduled_actions where id = ? for update`, [actionId]);
    await em.execute(
      `select 1 from contacts k join enrollments e on e.contact_id = k.id where e.id = ? for share of k`,
      [ids.enrollment_id],
    );
    if (ids.account_id) await em.execute(`select 1 from platform_accounts where id = ? for share`, [ids.account_id]);
    // Suppression adds a row rather than updating one of the rows above: its lock, shared, taken last
    // (an unsubscribe or a bounce holds a contact's row before it asks for this one).
    if (ids.type === 'email')
      await em.execute(`select pg_advisory_xact_lock_shared(${SUPPRESSION_LOCK})`, [ids.workspace_id]);
  }
  const now = opts.now ?? new Date();
  type Row = {
    state: string;
    type: string;
    enrollment_id: string;
    campaign_id: string;
    contact_id: string;
    account_id: string | null;
    content: Record<string, unknown> | null;
    error_code: string | null;
    e_status: string;
    stop_reason: string | null;
    c_status: string;
    stop_on_reply: boolean;
    time_zone: string;
    sending_windows: SendingWindows;
    window_time_zone: string;
    k_time_zone: string | null;
    k_country: string | null;
    replied: boolean;
    bounced: boolean;
    unsubscribed: boolean;
    suppressed: boolean;
    ooo_until: Date | null;
    p_status: string | null;
    connector_account_id: string | null;
    due_at: Date;
    slot_granted_at: Date | null;
  };
  const [r] = await em.execute<Row[]>(
    `select a.state, a.type, a.enrollment_id, a.campaign_id, e.contact_id, a.account_id, a.content, a.error_code, a.due_at, a.slot_granted_at,
            e.status as e_status, e.stop_reason, c.status as c_status, c.stop_on_reply, c.time_zone, c.sending_windows,
            c.window_time_zone, k.time_zone as k_time_zone, k.country as k_country,
            e.replied_at is not null as replied, (e.bounced_at is not null or (a.type = 'email' and k.email_bounced_at is not null)) as bounced,
            k.unsubscribed_at is not null as unsubscribed, p.status as p_status, p.connector_account_id,
            (a.type = 'email' and exists (select 1 from suppressions s where s.workspace_id = a.workspace_id
               and ((s.kind = 'address' and s.value = lower(a.content->>'recipient')) or (s.kind = 'domain' and s.value = lower(split_part(a.content->>'recipient', '@', 2)))))) as suppressed,
            case when k.out_of_office_until > ? then k.out_of_office_until end as ooo_until
       from scheduled_actions a join enrollments e on e.id = a.enrollment_id join campaigns c on c.id = a.campaign_id join contacts k on k.id = e.contact_id
       left join platform_accounts p on p.id = a.account_id
      where a.id = ?`,
    [now, actionId],
  );
  if (!r) return null;
  const open = nextWindowOpening(
    r.sending_windows,
    sendingZone(r.window_time_zone, r.time_zone, r.k_time_zone, r.k_country),
    now,
  );
  return {
    actionState: r.state,
    actionType: r.type,
    enrollmentStatus: r.e_status,
    enrollmentStopReason: r.stop_reason,
    campaignStatus: r.c_status,
    stopOnReply: r.stop_on_reply,
    replied: r.replied,
    bounced: r.bounced,
    unsubscribed: r.unsubscribed,
    suppressed: r.suppressed,
    outOfOfficeUntil: r.ooo_until ? new Date(r.ooo_until) : null,
    accountStatus: r.account_id ? (r.p_status ?? 'disconnected') : null,
    windowOpen: !!open && open <= now,
    enrollmentId: r.enrollment_id,
    campaignId: r.campaign_id,
    contactId: r.contact_id,
    accountId: r.account_id,
    connectorAccountId: r.connector_account_id,
    content: r.content,
    errorCode: r.error_code,
    dueAt: new Date(r.due_at),
    slotGrantedAt: r.slot_granted_at ? new Date(r.slot_granted_at) : null,
    windowOpensAt: open,
  };
}
