// Unsubscribing a person (docs/email.md "Unsubscribe"): from the one-click link, the confirmation
// page, a mail to the List-Unsubscribe mailto address, or a person in the app. The contact is marked,
// its address suppressed, and every running enrollment of it in the workspace stopped at once in the
// same transaction; the workflows are woken after commit (the send-time rule would stop them anyway).
//
// The one-click link carries a signed token per recipient (workspace and contact ids, and an HMAC of
// them under a key derived from the service's encryption key): nothing to store, nothing to look up
// before the signature holds, and a token names one contact of one workspace only.
import type { EntityManager } from '@mikro-orm/postgresql';
import { readSignedIds, signIds } from '../../lib/signed-ids.js';
import type { EnrollmentWake } from '../inbox/ingest.js';
import { notify } from '../notifications/notifications.js';
import { addSuppressions, suppressionEntry } from './suppressions.js';

// ---- The signed token -----------------------------------------------------------------------

/** What signs unsubscribe links: the service's encryption key and public base URL (a Config is one). */
export interface UnsubscribeSigning {
  encryptionKey: Buffer;
  publicBaseUrl: string;
}

const LABEL = 'unsubscribe-v1';

/** `base64url(workspace id bytes ‖ contact id bytes).base64url(HMAC-SHA256 truncated to 128 bits)`, under the key of label `unsubscribe-v1` (lib/signed-ids.ts). */
export const unsubscribeToken = (secret: Buffer, workspaceId: string, contactId: string): string =>
  signIds(secret, LABEL, [workspaceId, contactId]);

/** The ids a token names, or null when it is malformed or its signature does not hold (compared in constant time). */
export function readUnsubscribeToken(secret: Buffer, token: string): { workspaceId: string; contactId: string } | null {
  const ids = readSignedIds(secret, LABEL, token, 2);
  return ids ? { workspaceId: ids[0], contactId: ids[1] } : null;
}

/** The recipient's one-click unsubscribe URL (List-Unsubscribe, `{{unsubscribe_url}}`): `<public base URL>/unsubscribe/<token>`. */
export function unsubscribeUrl(signing: UnsubscribeSigning, workspaceId: string, contactId: string): string {
  return `${signing.publicBaseUrl.replace(/\/+$/, '')}/unsubscribe/${unsubscribeToken(signing.encryptionKey, workspaceId, contactId)}`;
}

// ---- Unsubscribing --------------------------------------------------------------------------

export interface UnsubscribeResult {
  /** False when the contact had already unsubscribed (nothing changed). */
  changed: boolean;
  email: string | null;
  /** Enrollments stopped now: wake them once this commits (wakeEnrollments with signal 'campaign_stopped'). */
  stopped: { campaignId: string; leadId: string }[];
}

/** Must run inside a transaction. `source`: `one_click`, `link`, `mailto`, `user`… */
export async function unsubscribeContact(
  em: EntityManager,
  workspaceId: string,
  contactId: string,
  source: string,
): Promise<UnsubscribeResult> {
  // Locks in the send claim's order (docs/executor.md "The send-time rule"): the enrollments, then the
  // contact, then (in addSuppressions) the suppression lock; another order could deadlock with a claim.
  await em.execute(
    `select 1 from enrollments where workspace_id = ? and contact_id = ? and status in ('active', 'paused') order by id for update`,
    [workspaceId, contactId],
  );
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
  if (!c.was) await notifyOwner(em, workspaceId, contactId, c.email, source, stopped.length);
  return {
    changed: !c.was,
    email: c.email,
    stopped: stopped.map((s) => ({ campaignId: s.campaign_id, leadId: s.lead_id })),
  };
}

/**
 * Tells the workspace's owner, in the same transaction, that a person unsubscribed (only when they
 * newly did: a second click tells nobody again). Notification kind `contact.unsubscribed`.
 */
async function notifyOwner(
  em: EntityManager,
  workspaceId: string,
  contactId: string,
  email: string | null,
  source: string,
  stopped: number,
): Promise<void> {
  const [r] = await em.execute<{ owner_id: string; name: string | null }[]>(
    `select w.owner_id, (select coalesce(nullif(k.full_name, ''), nullif(concat_ws(' ', k.first_name, k.last_name), '')) from contacts k where k.id = ?) as name
       from workspaces w where w.id = ?`,
    [contactId, workspaceId],
  );
  if (!r) return;
  const who = r.name ?? email ?? 'A contact';
  const sequences = stopped === 1 ? '1 running sequence was stopped' : `${stopped} running sequences were stopped`;
  await notify(em, workspaceId, {
    kind: 'contact.unsubscribed',
    title: `${who} unsubscribed`,
    body: `${email ?? 'The contact'} asked to receive no more email (${source}); ${sequences} and the address is on the suppression list.`,
    data: { contact_id: contactId, email, source, stopped_enrollments: stopped },
    userIds: [r.owner_id],
  });
}
