import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { CampaignStep } from './CampaignStep.js';

// The bytes of a step's attachment (one row; the size limit is in docs/campaigns.md), stored where
// every worker can read them.
export const CampaignStepAttachment = defineEntity({
  name: 'CampaignStepAttachment',
  tableName: 'campaign_step_attachments',
  properties: (p) => ({
    step: p.oneToOne(CampaignStep).ref().deleteRule('cascade').primary(),
    data: p.blob(),
    sha256: p.string().length(64),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ICampaignStepAttachment = InferEntity<typeof CampaignStepAttachment>;
