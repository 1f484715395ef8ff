// Resolving a person's professional-network profile through the connector (docs/enrichment.md,
// "Network profiles"): a discovered lead's or a list member's. One bounded lookup, answered
// synchronously; what it finds is stored by the identity rule of enrichment (a profile URL is
// filled when empty, never replaced; a contact's must stay unique in the workspace).
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Lead } from '../../db/entities/Lead.js';
import type { NetworkConnector, NetworkProfile, ProfileQuery } from '../../lib/connectors/types.js';
import { normaliseProfileUrl } from '../../lib/normalise.js';
import { ProviderError } from '../../lib/provider-http.js';
import { assertWritable } from '../demo/demo.js';
import { requireDiscoveredLead } from '../discovered-leads/discovered-leads.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { requireList } from '../lists/lists.js';

export type ResolveTarget = 'discovered-lead' | 'list-member';
export type ResolveReason = 'no_match' | 'different_profile_set' | 'profile_in_use';

export interface ResolveOutcome {
  targetKind: ResolveTarget;
  targetId: string;
  contactId: string | null;
  connector: string;
  profile: NetworkProfile | null;
  /** The profile is the target's now (stored, or it already had this one). */
  stored: boolean;
  /** Why nothing was stored (null when stored). */
  reason: ResolveReason | null;
}

interface Person {
  email: string | null;
  profile_url: string | null;
  full_name: string | null;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  company_domain: string | null;
  headline: string | null;
}

const queryOf = (p: Person): ProfileQuery => ({
  fullName: p.full_name,
  firstName: p.first_name,
  lastName: p.last_name,
  company: p.company,
  companyDomain: p.company_domain,
  email: p.email,
  profileUrl: p.profile_url,
});

const resolvable = (p: Person): boolean =>
  Boolean(
    p.email?.trim() ||
    p.profile_url?.trim() ||
    (p.full_name?.trim() && (p.company?.trim() || p.company_domain?.trim())),
  );

async function lookUp(connector: NetworkConnector, person: Person): Promise<NetworkProfile | null> {
  if (!resolvable(person)) throw notResolvable();
  try {
    return await connector.findProfile(queryOf(person));
  } catch (err) {
    if (err instanceof ProviderError) {
      if (err.code === 'invalid_request') throw notResolvable();
      throw new AppError(503, 'connector_unavailable', `the network connector could not be reached: ${err.code}`);
    }
    throw err;
  }
}

const notResolvable = () =>
  new AppError(409, 'not_resolvable', 'resolving a profile needs a name with a company, an email or a profile URL');

/** Whether the target's own profile URL leaves room for the found one: empty, or the same profile. */
function fits(current: string | null, found: string): 'empty' | 'same' | 'different' {
  if (!current?.trim()) return 'empty';
  return normaliseProfileUrl(current) === normaliseProfileUrl(found) ? 'same' : 'different';
}

export async function resolveDiscoveredLeadProfile(
  em: EntityManager,
  actor: Actor,
  connector: NetworkConnector,
  id: string,
): Promise<ResolveOutcome> {
  assertWritable(actor);
  await requireDiscoveredLead(em, actor, id);
  const [row]: Person[] = await em.execute('select * from discovered_leads where id = ?', [id]);
  const profile = await lookUp(connector, row);
  const out: ResolveOutcome = {
    targetKind: 'discovered-lead',
    targetId: id,
    contactId: null,
    connector: connector.name,
    profile,
    stored: false,
    reason: 'no_match',
  };
  if (!profile) return out;
  const fit = fits(row.profile_url, profile.profileUrl);
  if (fit === 'different') return { ...out, reason: 'different_profile_set' };
  await em.execute(
    `update discovered_leads set profile_url = coalesce(nullif(trim(profile_url), ''), ?), network_provider_id = ?,
       headline = coalesce(headline, ?), updated_at = now() where id = ?`,
    [profile.profileUrl, profile.providerId.slice(0, 200), profile.headline?.slice(0, 300) ?? null, id],
  );
  return { ...out, stored: true, reason: null };
}

/** A list member is a lead (`leads.id`): its contact gets the profile. */
export async function resolveListMemberProfile(
  em: EntityManager,
  actor: Actor,
  connector: NetworkConnector,
  leadId: string,
): Promise<ResolveOutcome> {
  assertWritable(actor);
  const lead = await em.findOne(Lead, { id: leadId, workspace: actor.workspaceId });
  if (!lead) throw notFound('list member');
  await requireList(em, actor, lead.list.id); // product access
  const contactId = lead.contact.id;
  const [row]: (Person & { edited_fields: string[] | string })[] = await em.execute(
    'select * from contacts where id = ?',
    [contactId],
  );
  const profile = await lookUp(connector, row);
  const out: ResolveOutcome = {
    targetKind: 'list-member',
    targetId: leadId,
    contactId,
    connector: connector.name,
    profile,
    stored: false,
    reason: 'no_match',
  };
  if (!profile) return out;
  const fit = fits(row.profile_url, profile.profileUrl);
  if (fit === 'different') return { ...out, reason: 'different_profile_set' };
  const key = normaliseProfileUrl(profile.profileUrl);
  if (fit === 'empty') {
    const taken: unknown[] = await em.execute(
      'select 1 from contacts where workspace_id = ? and profile_url_normalised = ? and id <> ? limit 1',
      [actor.workspaceId, key, contactId],
    );
    if (taken.length) return { ...out, reason: 'profile_in_use' };
  }
  const edited = Array.isArray(row.edited_fields) ? row.edited_fields : (JSON.parse(row.edited_fields) as string[]);
  const updated: unknown[] = await em
    .execute(
      `update contacts set profile_url = coalesce(nullif(trim(profile_url), ''), ?), profile_url_normalised = coalesce(profile_url_normalised, ?),
       network_provider_id = ?, headline = case when ? then headline else coalesce(headline, ?) end, updated_at = now()
     where id = ? and not exists (select 1 from contacts c where c.workspace_id = ? and c.profile_url_normalised = ? and c.id <> ?)
     returning id`,
      [
        profile.profileUrl,
        key,
        profile.providerId.slice(0, 200),
        edited.includes('headline'),
        profile.headline?.slice(0, 300) ?? null,
        contactId,
        actor.workspaceId,
        key,
        contactId,
      ],
    )
    .catch((err: unknown) => {
      if (err instanceof UniqueConstraintViolationException) return [];
      throw err;
    });
  // A concurrent writer took the profile for another contact between the check and the update.
  if (!updated.length) return { ...out, reason: 'profile_in_use' };
  return { ...out, stored: true, reason: null };
}
