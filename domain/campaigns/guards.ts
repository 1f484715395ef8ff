// Loading a campaign and the rule that an archived one is read-only: shared by the campaign and the
// step code (kept here so that domain/campaigns/campaigns.ts and domain/campaigns/steps.ts do not import each other).
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Campaign, type ICampaign } from '../../db/entities/Campaign.js';
import { conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';

/** Loads a campaign of the actor's workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireCampaign(em: EntityManager, actor: Actor, id: string, lock = false): Promise<ICampaign> {
  const campaign = await em.findOne(
    Campaign,
    { id, workspace: actor.workspaceId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!campaign) throw notFound('campaign');
  return campaign;
}

export const assertNotArchived = (c: ICampaign) => {
  if (c.status === 'archived') throw conflict('campaign_archived', 'an archived campaign cannot be changed');
};
