import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Campaign } from './Campaign.js';

// The round-robin turn of a campaign's sender accounts per channel (domain/enrollments/executor.ts pickAccount):
// one counter row, so concurrent plans take consecutive accounts without counting past actions.
export const CampaignRotation = defineEntity({
  name: 'CampaignRotation',
  tableName: 'campaign_rotations',
  properties: (p) => ({
    campaign: p.manyToOne(Campaign).primary().ref().deleteRule('cascade'),
    channel: p.string().length(20).primary(),
    turn: p.bigint('number').default(0),
  }),
});
export type ICampaignRotation = InferEntity<typeof CampaignRotation>;
