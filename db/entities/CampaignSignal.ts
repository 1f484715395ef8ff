import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { AgentSignal } from './AgentSignal.js';
import { Campaign } from './Campaign.js';

// Agent signals linked to a campaign: leads approved from them enroll in it automatically.
export const CampaignSignal = defineEntity({
  name: 'CampaignSignal',
  tableName: 'campaign_signals',
  properties: (p) => ({
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade').primary(),
    signal: p.manyToOne(AgentSignal).ref().deleteRule('cascade').primary().index(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ICampaignSignal = InferEntity<typeof CampaignSignal>;
