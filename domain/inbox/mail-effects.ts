// What the mail connector's facts about an inbound email add to the inbound batch (docs/email.md
// "Auto-replies and out-of-office", "Unsubscribe"), in the batch's transaction: the contact of the
// conversation is the one acted on (matched by the thread's campaign send, else by address).
import type { EntityManager } from '@mikro-orm/postgresql';
import { normaliseEmail } from '../../lib/normalise.js';
import { unsubscribeContact } from '../suppressions/unsubscribe.js';
import type { EnrollmentWake } from './ingest.js';

const DAY_MS = 86_400_000;
const known = (ids: (string | null)[]) => [...new Set(ids.filter((x): x is string => !!x))];

/** A person's reply: the soft bounces of their address are no longer "in a row". */
export async function resetSoftBounces(em: EntityManager, contactIds: (string | null)[]): Promise<void> {
  const ids = known(contactIds);
  if (ids.length)
    await em.execute(
      `update contacts set email_soft_bounces = 0, updated_at = now() where id in (?) and email_soft_bounces > 0`,
      [ids],
    );
}

/**
 * An out-of-office naming its return date holds every enrollment of the contact until the day after
 * it, 00:00 UTC (the send-time rule's `out_of_office` hold reads `out_of_office_until`); a later hold
 * already recorded is kept.
 */
export async function applyOutOfOffice(
  em: EntityManager,
  away: { contactId: string | null; returnDate: string }[],
): Promise<void> {
  const until = new Map<string, string>();
  for (const a of away) {
    if (!a.contactId) continue;
    const at = new Date(Date.parse(`${a.returnDate}T00:00:00Z`) + DAY_MS).toISOString();
    if (!until.has(a.contactId) || until.get(a.contactId)! < at) until.set(a.contactId, at);
  }
  if (!until.size) return;
  await em.execute(
    `update contacts k set out_of_office_until = greatest(k.out_of_office_until, v.until), updated_at = now()
       from json_to_recordset(?::json) as v(id uuid, until timestamptz) where k.id = v.id`,
    [JSON.stringify([...until].map(([id, at]) => ({ id, until: at })))],
  );
}

/**
 * A mail to the List-Unsubscribe mailto address from a contact unsubscribes them (source `mailto`):
 * marked, suppressed, every running enrollment stopped; those are woken after commit. Only the
 * contact's own address can: someone else writing "unsubscribe" in their thread does not.
 */
export async function applyUnsubscribes(
  em: EntityManager,
  wakes: EnrollmentWake[] | undefined,
  workspaceId: string,
  mails: { contactId: string | null; sender: string }[],
): Promise<void> {
  const probe = mails
    .filter((m) => m.contactId && normaliseEmail(m.sender))
    .map((m) => ({ id: m.contactId, email: normaliseEmail(m.sender) }));
  if (!probe.length) return;
  const own = await em.execute<{ id: string }[]>(
    `select distinct k.id from json_to_recordset(?::json) as v(id uuid, email text) join contacts k on k.id = v.id and k.email_normalised = v.email`,
    [JSON.stringify(probe)],
  );
  for (const { id } of own) {
    const r = await unsubscribeContact(em, workspaceId, id, 'mailto');
    wakes?.push(...r.stopped.map((s) => ({ ...s, signal: 'campaign_stopped' as const })));
  }
}
