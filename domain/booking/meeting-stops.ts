// A booked meeting stops the lead's sequences (docs/meetings.md "A booking stops the sequence"): the
// lead answered the outreach in the best way, so nothing more goes to them. Applied in the
// transaction that creates the booked meeting; the workflows are woken after the commit with
// `unenroll` (they keep the status written here, as for a country rule's stop).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Jobs } from '../jobs.js';

export const MEETING_BOOKED = 'meeting_booked';

/** An enrollment stopped by a booking: its workflow is `enrollment:<campaignId>:<leadId>`. */
export interface StoppedEnrollment {
  campaignId: string;
  leadId: string;
}

/**
 * The lead's running (active or paused) enrollments that began before the meeting starts end
 * `stopped` / `meeting_booked`, and their unsent actions are canceled with that code. An enrollment
 * that began after the meeting's start (a re-enrollment once it took place) is left alone. The
 * enrollment row is written before its actions, the order the send's claim locks them in
 * (domain/enrollments/send-rule.ts): a claim either committed first (that send was decided before
 * the booking) or waits for this transaction and sees the stop. Returns what to wake after the commit.
 */
export async function stopForBookedMeeting(
  tx: EntityManager,
  m: { workspaceId: string; leadId: string; startsAt: Date },
): Promise<StoppedEnrollment[]> {
  const rows = await tx.execute<{ id: string; campaign_id: string; lead_id: string }[]>(
    `update enrollments set status = 'stopped', stop_reason = ?, finished_at = coalesce(finished_at, now()), current_position = null,
            current_step_id = null, updated_at = now()
      where workspace_id = ? and lead_id = ? and status in ('active', 'paused') and enrolled_at <= ?
      returning id, campaign_id, lead_id`,
    [MEETING_BOOKED, m.workspaceId, m.leadId, m.startsAt],
  );
  if (!rows.length) return [];
  await tx.execute(
    `update scheduled_actions set state = 'canceled', error_code = ?, waiting_reason = null, updated_at = now()
      where enrollment_id = any(?::uuid[]) and state in ('planned', 'awaiting_approval', 'approved')`,
    [MEETING_BOOKED, `{${rows.map((r) => r.id).join(',')}}`],
  );
  return rows.map((r) => ({ campaignId: r.campaign_id, leadId: r.lead_id }));
}

/**
 * Wakes the stopped enrollments' workflows (`unenroll`; after the commit). Best effort: the stop is
 * committed, and a workflow that misses the signal ends at its next gate, which reads it.
 */
export async function wakeStopped(jobs: Pick<Jobs, 'signal'>, stopped: readonly StoppedEnrollment[]): Promise<void> {
  for (const s of stopped)
    await jobs.signal('enrollment', { campaignId: s.campaignId, leadId: s.leadId }, 'unenroll').catch(() => false);
}
