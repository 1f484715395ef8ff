// Bounces of campaign emails (docs/inbox.md "Auto-replies and bounces", docs/email.md "Bounce
// classes"), applied in the inbound batch's transaction. A hard bounce stops the sequence to that
// address; a soft one (a full mailbox, a server that gave up with "later") lets it go on, its later
// steps being the retries, until the third soft bounce of the address in a row counts as hard. A
// delivery-delay warning (the server still tries) is no bounce at all: recorded on the send as a delay.
import type { EntityManager } from '@mikro-orm/postgresql';
import { normaliseEmail } from '../../lib/normalise.js';
import { addSuppressions, suppressionEntry, type SuppressionEntry } from '../suppressions/suppressions.js';
import type { AccountRow, ConversationRow, EnrollmentWake, FreshRow } from './ingest.js';

/** Soft bounces of an address in a row that count as a hard bounce. */
export const SOFT_BOUNCES_AS_HARD = 3;

interface SendRow {
  id: string;
  enrollment_id: string;
  prior: string | null;
  contact_id: string;
  recipient: string | null;
  email: string | null;
  at: string;
  cls: 'hard' | 'soft' | null;
  dsn: boolean;
  failed: string | null;
}

/**
 * Bounces (non-delivery reports) in a thread where this account sent a campaign email to the matched
 * lead. The send is the one the report names (a delivery status notification's original Message-ID),
 * else the account's latest email to the lead in the thread. Reports without a class (another
 * network's, or a mail system's prose) are hard, as before classes existed.
 *
 * - **Hard**: that send and its enrollment record `bounced_at` (the first bounce; stats count the send
 *   once) and `bounce_class = hard`; the contact's email is marked bounced when it is still the
 *   address the send went to; a report read by the mail connector also suppresses the address
 *   (`hard_bounce`, source `dsn`). The enrollment is woken after commit (`bounce`) and ends `stopped`
 *   / `bounced` at once; the gate before any send reads the marks too (docs/executor.md).
 * - **Soft**: the send records `bounced_at` and `bounce_class = soft`, the enrollment goes on, and the
 *   contact's `email_soft_bounces` counts one per send (two failed reports of one send are one). At
 *   SOFT_BOUNCES_AS_HARD in a row (a reply resets the count) the latest is hard.
 * - **Delayed** (a DSN's `Action: delayed`, "a warning only"): not a bounce. The send records
 *   `delayed_at` (the first warning) and nothing else: no `bounced_at` (so not in the stats' `bounced`),
 *   no soft count, no suppression; the enrollment goes on. A later failed report of the send is a
 *   bounce as above.
 *
 * A bounce elsewhere (no send in its thread) changes nothing.
 */
export async function applyBounces(
  em: EntityManager,
  wakes: EnrollmentWake[] | undefined,
  account: AccountRow,
  bounces: FreshRow[],
  convs: ConversationRow[],
): Promise<void> {
  const conv = new Map(convs.map((c) => [c.id, c]));
  const delays = bounces.filter((r) => r.mail?.bounce?.class === 'delayed');
  if (delays.length) await applyDelays(em, account, delays, conv);
  const failures = bounces.filter((r) => r.mail?.bounce?.class !== 'delayed');
  if (!failures.length) return;
  const probe = failures.map((r) => ({
    thread_id: conv.get(r.conversation_id)!.connector_thread_id,
    lead_id: r.lead_id,
    at: r.sent_at,
    original: r.mail?.bounce?.originalMessageId ?? null,
    cls: r.mail?.bounce?.class ?? null,
    dsn: !!r.mail,
    failed: r.mail?.bounce?.recipient ?? null,
  }));
  // Several reports of one send in a batch: the hardest, then the first.
  const sends = await em.execute<SendRow[]>(
    `select distinct on (s.id) s.id, s.enrollment_id, s.bounce_class as prior, l.contact_id, s.content->>'recipient' as recipient, k.email, v.at, v.cls, v.dsn, v.failed
       from json_to_recordset(?::json) as v(thread_id text, lead_id uuid, at timestamptz, original text, cls text, dsn boolean, failed text)
       cross join lateral (select a.id, a.enrollment_id, a.content, a.bounce_class from scheduled_actions a
                            where a.account_id = ? and a.connector_thread_id = v.thread_id and a.lead_id = v.lead_id and a.type = 'email' and a.state = 'executed'
                            order by coalesce(a.connector_message_id = v.original, false) desc, a.executed_at desc limit 1) s
       join leads l on l.id = v.lead_id join contacts k on k.id = l.contact_id
      order by s.id, coalesce(v.cls, 'hard') = 'hard' desc, v.at`,
    [JSON.stringify(probe), account.id],
  );
  if (!sends.length) return;
  // An address edited since the send is not the one that bounced.
  const contactOf = (s: SendRow) =>
    normaliseEmail(s.recipient) !== null && normaliseEmail(s.recipient) === normaliseEmail(s.email)
      ? s.contact_id
      : null;
  const isSoft = (s: SendRow) => s.cls === 'soft' && s.prior !== 'hard';
  const hard = sends.filter((s) => !isSoft(s));
  const soft = sends.filter(isSoft);
  if (soft.length) hard.push(...(await applySoft(em, soft, contactOf)));
  if (!hard.length) return;

  const marks = hard.map((s) => ({
    action_id: s.id,
    enrollment_id: s.enrollment_id,
    contact_id: contactOf(s),
    at: s.at,
  }));
  const open = await em.execute<{ campaign_id: string; lead_id: string }[]>(
    `with v as (select * from json_to_recordset(?::json) as v(action_id uuid, enrollment_id uuid, contact_id uuid, at timestamptz)),
          a as (update scheduled_actions a set bounced_at = coalesce(a.bounced_at, v.at), bounce_class = 'hard', updated_at = now() from v where a.id = v.action_id returning a.id),
          k as (update contacts k set email_bounced_at = coalesce(k.email_bounced_at, v.at), updated_at = now() from v where k.id = v.contact_id returning k.id),
          e as (update enrollments e set bounced_at = coalesce(e.bounced_at, v.at), updated_at = now() from v where e.id = v.enrollment_id
                returning e.campaign_id, e.lead_id, e.finished_at)
     select distinct campaign_id, lead_id from e where finished_at is null`,
    [JSON.stringify(marks)],
  );
  // Woken by the caller once this commits (wakeEnrollments), like replies.
  wakes?.push(...open.map((o) => ({ campaignId: o.campaign_id, leadId: o.lead_id, signal: 'bounce' as const })));

  // The address no email goes to again, in any campaign (the send-time rule reads the list).
  const entries = new Map<string, SuppressionEntry>();
  for (const s of hard.filter((x) => x.dsn)) {
    const e = suppressionEntry(s.recipient ?? s.failed ?? '');
    if (e?.kind === 'address') entries.set(e.value, e);
  }
  if (entries.size) await addSuppressions(em, account.workspace_id, [...entries.values()], 'hard_bounce', 'dsn');
}

/**
 * Records delivery-delay warnings on the sends they report on (found as a bounce's send is):
 * `delayed_at`, the first warning's time. Nothing else changes.
 */
async function applyDelays(
  em: EntityManager,
  account: AccountRow,
  delays: FreshRow[],
  conv: Map<string, ConversationRow>,
): Promise<void> {
  const probe = delays.map((r) => ({
    thread_id: conv.get(r.conversation_id)!.connector_thread_id,
    lead_id: r.lead_id,
    at: r.sent_at,
    original: r.mail?.bounce?.originalMessageId ?? null,
  }));
  await em.execute(
    `update scheduled_actions a set delayed_at = least(coalesce(a.delayed_at, s.at), s.at), updated_at = now()
       from (select s.id, min(v.at) as at
               from json_to_recordset(?::json) as v(thread_id text, lead_id uuid, at timestamptz, original text)
               cross join lateral (select a.id from scheduled_actions a
                                    where a.account_id = ? and a.connector_thread_id = v.thread_id and a.lead_id = v.lead_id and a.type = 'email' and a.state = 'executed'
                                    order by coalesce(a.connector_message_id = v.original, false) desc, a.executed_at desc limit 1) s
              group by s.id) s
      where a.id = s.id`,
    [JSON.stringify(probe), account.id],
  );
}

/** Records soft bounces; returns the sends whose contact reached SOFT_BOUNCES_AS_HARD (now hard). */
async function applySoft(
  em: EntityManager,
  soft: SendRow[],
  contactOf: (s: SendRow) => string | null,
): Promise<SendRow[]> {
  await em.execute(
    `update scheduled_actions a set bounced_at = coalesce(a.bounced_at, v.at), bounce_class = coalesce(a.bounce_class, 'soft'), updated_at = now()
       from json_to_recordset(?::json) as v(id uuid, at timestamptz) where a.id = v.id`,
    [JSON.stringify(soft.map((s) => ({ id: s.id, at: s.at })))],
  );
  const latest = new Map<string, SendRow>();
  const counts = new Map<string, number>();
  for (const s of soft) {
    const contact = contactOf(s);
    if (!contact || s.prior !== null) continue; // a send already reported soft counts once
    counts.set(contact, (counts.get(contact) ?? 0) + 1);
    if (!latest.has(contact) || latest.get(contact)!.at < s.at) latest.set(contact, s);
  }
  if (!counts.size) return [];
  const after = await em.execute<{ id: string; n: number }[]>(
    `update contacts k set email_soft_bounces = least(k.email_soft_bounces + v.n, 32767), updated_at = now()
       from json_to_recordset(?::json) as v(id uuid, n int) where k.id = v.id returning k.id, k.email_soft_bounces as n`,
    [JSON.stringify([...counts].map(([id, n]) => ({ id, n })))],
  );
  return after.filter((c) => c.n >= SOFT_BOUNCES_AS_HARD).map((c) => latest.get(c.id)!);
}
