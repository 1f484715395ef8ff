import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Campaign } from './Campaign.js';

export const STEP_TYPES = ['email', 'invitation', 'message', 'wait', 'condition'] as const;
export type StepType = (typeof STEP_TYPES)[number];

/**
 * What a step does, by type:
 * - email `{subject, body}`; invitation `{note?}`; message `{body}` — templates with `{{variable}}` /
 *   `{{variable|fallback}}` placeholders;
 * - wait `{amount, unit: 'minutes' | 'hours' | 'business_days'}`;
 * - condition `{check: 'accepted' | 'opened' | 'replied', expect: boolean}` on the previous send step:
 *   when it does not hold, the enrollment ends (`condition_not_met`).
 */
export type StepConfig = Record<string, unknown>;

// The current steps of a campaign, in order. Ids are stable across edits; each edit also writes the
// whole ordered list as a new `campaign_step_versions` row.
export const CampaignStep = defineEntity({
  name: 'CampaignStep',
  tableName: 'campaign_steps',
  indexes: [{ properties: ['campaign', 'position'] }],
  properties: (p) => ({
    id: p.uuid().primary().onCreate(() => uuidv7()),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade'),
    position: p.integer(),
    type: p.string().length(20),
    config: p.json<StepConfig>().default('{}'),
    /** null: the campaign's message mode. */
    messageMode: p.string().length(20).nullable(),
    /** The step's attachment (bytes in campaign_step_attachments), if any. */
    attachmentName: p.string().length(255).nullable(),
    attachmentType: p.string().length(100).nullable(),
    attachmentSize: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});
export type ICampaignStep = InferEntity<typeof CampaignStep>;
