import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Campaign } from './Campaign.js';
import type { StepVariant, WinnerRule } from './CampaignStep.js';

/** One step of a version, as the executor reads it. */
export interface VersionedStep {
  id: string;
  position: number;
  type: string;
  config: Record<string, unknown>;
  messageMode: string | null;
  hasAttachment: boolean;
  /** A/B variants (absent from versions written before them). */
  variants?: StepVariant[] | null;
  winnerRule?: WinnerRule | null;
}

// The ordered steps of each version of a campaign (written by every step edit). Enrollments pin a
// version at start and read their steps here, so an edit never changes a step under a running send.
export const CampaignStepVersion = defineEntity({
  name: 'CampaignStepVersion',
  tableName: 'campaign_step_versions',
  properties: (p) => ({
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade').primary(),
    version: p.integer().primary(),
    steps: p.json<VersionedStep[]>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ICampaignStepVersion = InferEntity<typeof CampaignStepVersion>;
