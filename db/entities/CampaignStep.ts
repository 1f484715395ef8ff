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
 * - condition `{check: 'accepted' | 'opened' | 'clicked' | 'replied', expect: boolean}` on the previous send step:
 *   when it does not hold, the enrollment ends (`condition_not_met`).
 */
export type StepConfig = Record<string, unknown>;

/** One A/B variant of a send step (docs/campaigns.md "A/B variants"): its own content and share of the sends. */
export interface StepVariant {
  id: string;
  name: string;
  /** Relative share of new sends (1–100) until a winner is chosen. */
  weight: number;
  /** The variant's templates: `{subject, body}` for email, `{body}` for a network message. */
  config: Record<string, unknown>;
}

/** When a winner is chosen by itself: every variant has `min_sends`, and the leader's `metric` beats each other's at `confidence`. */
export interface WinnerRule {
  metric: 'reply_rate' | 'open_rate' | 'click_rate';
  min_sends: number;
  confidence: number;
}

// The current steps of a campaign, in order. Ids are stable across edits; each edit also writes the
// whole ordered list as a new `campaign_step_versions` row.
export const CampaignStep = defineEntity({
  name: 'CampaignStep',
  tableName: 'campaign_steps',
  indexes: [{ properties: ['campaign', 'position'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    campaign: p.manyToOne(Campaign).ref().deleteRule('cascade'),
    position: p.integer(),
    type: p.string().length(20),
    config: p.json<StepConfig>().default('{}'),
    /** null: the campaign's message mode. */
    messageMode: p.string().length(20).nullable(),
    /** A/B variants (2–5) of an email or message step; null: the step sends its config. */
    variants: p.json<StepVariant[]>().nullable(),
    /** The automatic winner rule of a step with variants; null: a winner is chosen by hand only. */
    winnerRule: p.json<WinnerRule>().nullable(),
    /** The step's attachment (bytes in campaign_step_attachments), if any. */
    attachmentName: p.string().length(255).nullable(),
    attachmentType: p.string().length(100).nullable(),
    attachmentSize: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ICampaignStep = InferEntity<typeof CampaignStep>;
