import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { App } from './App.js';
import { Workspace } from './Workspace.js';

export const CAMPAIGN_STATUSES = ['draft', 'active', 'paused', 'completed', 'archived'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export const ROTATIONS = ['round_robin', 'least_used', 'sticky'] as const;
export type Rotation = (typeof ROTATIONS)[number];
export const MESSAGE_MODES = ['template', 'ai', 'ai_review'] as const;
export type MessageMode = (typeof MESSAGE_MODES)[number];
export const WINDOW_TIME_ZONES = ['campaign', 'recipient'] as const;
export type WindowTimeZone = (typeof WINDOW_TIME_ZONES)[number];

/** Windows per ISO weekday ("1" = Monday … "7" = Sunday), each "HH:MM"–"HH:MM" in the campaign's time zone. */
export type SendingWindows = Partial<Record<'1' | '2' | '3' | '4' | '5' | '6' | '7', { start: string; end: string }[]>>;

/** Allowed or blocked countries (ISO 3166-1 alpha-2, upper case) of the lead. */
export interface CountryRule {
  mode: 'allow' | 'block';
  countries: string[];
}

// A multi-step outreach campaign of a product (docs/campaigns.md). `stepVersion` grows with every
// edit of the steps; `campaign_step_versions` keeps each version's steps, and an enrollment runs the
// version it pinned until a step boundary (DESIGN.md "Campaign execution").
export const Campaign = defineEntity({
  name: 'Campaign',
  tableName: 'campaigns',
  indexes: [{ properties: ['workspace', 'app', 'createdAt'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    name: p.string().length(200),
    description: p.text().nullable(),
    status: p.string().length(20).default('draft'),
    /** IANA time zone of the sending windows (required: no UTC default). */
    timeZone: p.string().length(64),
    sendingWindows: p.json<SendingWindows>(),
    /** Sender accounts (platform_accounts ids) and how a lead's sends are spread over them. */
    accountIds: p.json<string[]>().default('[]'),
    rotation: p.string().length(20).default('round_robin'),
    /** New leads started per local day (null: no cap). */
    dailyNewLeadCap: p.integer().nullable(),
    stopOnReply: p.boolean().default(true),
    countryRule: p.json<CountryRule>().nullable(),
    /** Every message waits for a person's approval before it is sent. */
    reviewRequired: p.boolean().default(false),
    messageMode: p.string().length(20).default('template'),
    /** How AI-written drafts are reviewed (docs/message-review.md, `ReviewPolicy`); null is the default policy. */
    reviewPolicy: p.json<Record<string, unknown>>().nullable(),
    /** A lead active in another campaign of the workspace is not enrolled. */
    exclusiveLeads: p.boolean().default(true),
    /** Whose clock the sending windows follow: the campaign's time zone, or each recipient's (docs/campaigns.md "Recipient-local windows"). */
    windowTimeZone: p.string().length(20).default('campaign'),
    /** Open pixel and click redirects in emails sent through a mail connector (docs/tracking.md); off by default. */
    trackOpens: p.boolean().default(false),
    trackClicks: p.boolean().default(false),
    stepVersion: p.integer().default(1),
    createdBy: p.uuid().nullable(),
    activatedAt: p.datetime().nullable(),
    pausedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
    archivedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ICampaign = InferEntity<typeof Campaign>;
