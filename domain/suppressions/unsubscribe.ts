// Unsubscribing a person (docs/email.md "Unsubscribe"): from the one-click link, the confirmation
// page, a mail to the List-Unsubscribe mailto address, or a person in the app. The contact is marked,
// its address suppressed, and every running enrollment of it in the workspace stopped at once in the
// same transaction; the workflows are woken after commit (the send-time rule would stop them anyway).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EnrollmentWake } from '../inbox/ingest.js';
import { addSuppressions, suppressionEntry } from './suppressions.js';

export interface UnsubscribeResult {
  /** False when the contact had already unsubscribed (nothing changed). */
  changed: boolean;
  email: string | null;
  /** Enrollments stopped now: wake them once this commits (wakeEnrollments with signal 'campaign_stopped'). */
  stopped: { campaignId: string; leadId: string }[];
}

/** Must run inside a transaction. `source`: `one_click`, `link`, `mailto`, `user`… */
export async function unsubscribeContact(em: EntityManager, workspaceId: string, contactId: string, source: string): Promise<UnsubscribeResult> {
  const [c] = await em.execute<{ email: string | null; was: boolean }[]>(
    `with old as (select unsubscribed_at is not null as was from contacts where id = ? and workspace_id = ? for update)
     update contacts k set unsubscribed_at = coalesce(k.unsubscribed_at, now()), unsubscribe_source = coalesce(k.unsubscribe_source, ?), updated_at = now()
       from old where k.id = ? returning k.email_normalised as email, old.was`,
    [contactId, workspaceId, source.slice(0, 20), contactId],
  );
  if (!c) return { changed: false, email: null, stopped: [] };
  const entry = c.email ? suppressionEntry(c.email) : null;
  if (entry) await addSuppressions(em, workspaceId, [entry], 'unsubscribe', source);
  const stopped = await em.execute<{ campaign_id: string; lead_id: string; id: string }[]>(
    `update enrollments set status = 'stopped', stop_reason = 'unsubscribed', finished_at = coalesce(finished_at, now()), current_position = null, current_step_id = null, updated_at = now()
      where workspace_id = ? and contact_id = ? and status in ('active', 'paused') returning id, campaign_id, lead_id`,
    [workspaceId, contactId],
  );
  if (stopped.length) {
    await em.execute(
      `update scheduled_actions set state = 'canceled', error_code = coalesce(error_code, 'unsubscribed'), waiting_reason = null, updated_at = now()
        where enrollment_id in (?) and state in ('planned', 'awaiting_approval', 'approved')`,
      [stopped.map((s) => s.id)],
    );
  }
  return { changed: !c.was, email: c.email, stopped: stopped.map((s) => ({ campaignId: s.campaign_id, leadId: s.lead_id })) };
}

