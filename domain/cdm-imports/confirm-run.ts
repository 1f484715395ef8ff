// The confirm the `cdm-import:<jobId>` workflow drives: the approved people added to the list as leads, one credit each.
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import { debitCreditsBatch } from '../billing/credits.js';
import { upsertContacts } from '../contacts/upsert.js';
import { AppError } from '../errors.js';
import { notifyCompanyImport } from '../notifications/notifications.js';
import { CREDITS_PER_MEMBER, lockJob, setConfirmError, uuids, type JobLock } from './job.js';

/** Approved people added per confirm transaction. */
export const CONFIRM_CHUNK = 1000;

interface ApprovedRow {
  id: string;
  email: string | null;
  profile_url: string | null;
  first_name: string | null;
  last_name: string | null;
  full_name: string;
  title: string | null;
  company_name: string | null;
  company_domain: string | null;
  country: string | null;
}

/**
 * Adds up to CONFIRM_CHUNK approved people to the list in one transaction, with a fixed number of
 * statements: read them, find their contacts (normalised email first, then normalised profile URL),
 * insert the missing contacts, fill empty fields of existing ones (never overwrite), insert the
 * leads, debit one credit per lead created (ledger key `cdm:<jobId>:<memberId>`), mark them added.
 * A chunk the balance cannot cover is rolled back whole: the job goes back to ready_for_review with
 * `insufficient_credits`. When none is left the job is completed.
 */
export async function confirmCdmChunk(
  em: EntityManager,
  input: { jobId: string; run: number },
): Promise<{ done: boolean; added: number }> {
  try {
    return await em.transactional(async (tx) => {
      // The list first, then the job: the order a list's deletion takes them in (it nulls list_id), so the two cannot deadlock.
      await tx.execute(
        'select 1 from lead_lists l join cdm_imports j on j.list_id = l.id where j.id = ? for key share of l',
        [input.jobId],
      );
      const job = await lockJob(tx, input.jobId);
      if (!job || job.run !== input.run || job.state !== 'confirming') return { done: true, added: 0 };
      if (!job.list_id) {
        await setConfirmError(tx, job.id, 'list_deleted', 'the list this import adds to was deleted');
        return { done: true, added: 0 };
      }
      const rows: ApprovedRow[] = await tx.execute(
        `select id, email, profile_url, first_name, last_name, full_name, title, company_name, company_domain, country
         from cdm_import_members where job_id = ? and status = 'approved' order by id limit ?`,
        [job.id, CONFIRM_CHUNK],
      );
      if (!rows.length) {
        await tx.execute(
          `update cdm_imports set state = 'completed', completed_at = now(), updated_at = now() where id = ?`,
          [job.id],
        );
        await notifyCompanyImport(tx, job.id, 'completed');
        return { done: true, added: 0 };
      }
      const added = await addMembers(tx, job, rows);
      return { done: false, added };
    });
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'insufficient_credits')) throw err;
    await em.transactional(async (tx) => {
      const job = await lockJob(tx, input.jobId);
      if (job && job.run === input.run && job.state === 'confirming')
        await setConfirmError(tx, job.id, 'insufficient_credits', err.message);
    });
    return { done: true, added: 0 };
  }
}

async function addMembers(tx: EntityManager, job: JobLock, rows: ApprovedRow[]): Promise<number> {
  const pending = rows.map((r) => ({
    ...r,
    company: r.company_name,
    emailKey: normaliseEmail(r.email),
    urlKey: normaliseProfileUrl(r.profile_url),
  }));
  const { contactOf: resolve, created: createdContacts } = await upsertContacts(tx, job.workspace_id, pending);
  const contactIds = [...new Set(pending.map(resolve).filter((x): x is string => !!x))];
  const createdLeads: { id: string; contact_id: string }[] = contactIds.length
    ? await tx.execute(
        `insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
         select v.id, ?, ?, v.contact_id, 'import', now(), now() from json_to_recordset(?::json) as v(id uuid, contact_id uuid)
         on conflict (list_id, contact_id) do nothing returning id, contact_id`,
        [job.workspace_id, job.list_id, JSON.stringify(contactIds.map((c) => ({ id: uuidv7(), contact_id: c })))],
      )
    : [];
  const leads = new Map(createdLeads.map((l) => [l.contact_id, l.id]));
  const newLeads = new Set(leads.keys());
  const missing = contactIds.filter((c) => !leads.has(c));
  if (missing.length) {
    const old: { id: string; contact_id: string }[] = await tx.execute(
      `select id, contact_id from leads where list_id = ? and contact_id = any(${uuids})`,
      [job.list_id, JSON.stringify(missing)],
    );
    for (const l of old) leads.set(l.contact_id, l.id);
  }
  // Within a chunk, the first person of a contact is the one who created the lead (and the contact).
  const claimedLead = new Set<string>();
  const claimedContact = new Set<string>();
  const updates = pending.map((p) => {
    const contactId = resolve(p);
    if (!contactId)
      return {
        id: p.id,
        status: 'rejected',
        lead_id: null,
        contact_id: null,
        lead_created: null,
        contact_created: null,
        credits: 0,
      };
    const leadCreated = newLeads.has(contactId) && !claimedLead.has(contactId);
    const contactCreated = createdContacts.has(contactId) && !claimedContact.has(contactId);
    claimedLead.add(contactId);
    claimedContact.add(contactId);
    return {
      id: p.id,
      status: 'added',
      lead_id: leads.get(contactId)!,
      contact_id: contactId,
      lead_created: leadCreated,
      contact_created: contactCreated,
      credits: leadCreated ? CREDITS_PER_MEMBER : 0,
    };
  });
  const charged = updates.filter((u) => u.credits > 0);
  // All or nothing: 402 here rolls the whole chunk back (contacts, leads and all).
  await debitCreditsBatch(
    tx,
    job.workspace_id,
    charged.map((u) => ({ key: `cdm:${job.id}:${u.id}`, amount: u.credits })),
    `Company decision-maker import ${job.id}`,
  );
  await tx.execute(
    `update cdm_import_members m set status = v.status, lead_id = v.lead_id, contact_id = v.contact_id, lead_created = v.lead_created,
       contact_created = v.contact_created, credits_charged = v.credits, added_at = case when v.status = 'added' then now() end, updated_at = now()
     from json_to_recordset(?::json) as v(id uuid, status text, lead_id uuid, contact_id uuid, lead_created boolean, contact_created boolean, credits int)
     where m.id = v.id`,
    [JSON.stringify(updates)],
  );
  const total = charged.reduce((n, u) => n + u.credits, 0);
  if (total)
    await tx.execute('update cdm_imports set credits_charged = credits_charged + ?, updated_at = now() where id = ?', [
      total,
      job.id,
    ]);
  return updates.filter((u) => u.status === 'added').length;
}
