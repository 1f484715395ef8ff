// Campaigns for the Operator: read them, create and edit them and their steps, activate, pause and
// resume (every change waits for a person's confirmation). Enrollment tools come with the executor.
import { z } from 'zod';
import { ClockEnd, ClockTime } from '../../lib/time-of-day.js';
import {
  CAMPAIGN_STATUSES,
  MESSAGE_MODES,
  ROTATIONS,
  WINDOW_TIME_ZONES,
  type CampaignStatus,
} from '../../db/entities/Campaign.js';
import type { ICampaignStep } from '../../db/entities/CampaignStep.js';
import { addStep, CreateStepInput, listSteps, StepInput, updateStep } from '../campaigns/steps.js';
import {
  createCampaign,
  getCampaign,
  listCampaigns,
  settingsOf,
  updateCampaign,
  type CampaignWithCount,
} from '../campaigns/campaigns.js';
import { changeCampaignStatus } from '../campaigns/status.js';
import { clearStepWinner, getStepVariants, setStepWinner, type StepVariantsView } from '../campaigns/variants.js';
import { defineTool, type ToolContext } from './registry.js';

const summary = ({ campaign: c, stepCount }: CampaignWithCount) => ({
  id: c.id,
  app_id: c.app.id,
  name: c.name,
  status: c.status,
  time_zone: c.timeZone,
  sending_windows: c.sendingWindows,
  account_ids: c.accountIds,
  rotation: c.rotation,
  daily_new_lead_cap: c.dailyNewLeadCap ?? null,
  stop_on_reply: c.stopOnReply,
  country_rule: c.countryRule ?? null,
  review_required: c.reviewRequired,
  message_mode: c.messageMode,
  exclusive_leads: c.exclusiveLeads,
  window_time_zone: c.windowTimeZone,
  track_opens: c.trackOpens,
  track_clicks: c.trackClicks,
  step_version: c.stepVersion,
  step_count: stepCount,
});

const stepSummary = (s: ICampaignStep) => ({
  id: s.id,
  position: s.position,
  type: s.type,
  config: s.config,
  message_mode: s.messageMode ?? null,
  attachment: s.attachmentName ?? null,
  ...(s.variants?.length ? { variants: s.variants, winner_rule: s.winnerRule ?? null } : {}),
});

/** A step's A/B test for the Operator: the variants' figures without their full content. */
const variantsSummary = (v: StepVariantsView) => ({
  ...v,
  variants: v.variants.map(({ config: _, ...rest }) => rest),
});

const windows = z
  .record(
    z.enum(['1', '2', '3', '4', '5', '6', '7']),
    z
      .array(
        z
          .object({ start: ClockTime, end: ClockEnd })
          .strict()
          .refine((w) => w.end > w.start, 'end after start'),
      )
      .max(4),
  )
  .describe('ISO weekday ("1" = Monday) → windows {start, end} HH:MM in the campaign time zone');

const settings = {
  description: z.string().max(5000).nullable().optional(),
  sending_windows: windows.optional(),
  account_ids: z.array(z.uuid()).max(50).optional(),
  rotation: z.enum(ROTATIONS).optional(),
  daily_new_lead_cap: z.number().int().min(1).max(10000).nullable().optional(),
  stop_on_reply: z.boolean().optional(),
  country_rule: z
    .object({ mode: z.enum(['allow', 'block']), countries: z.array(z.string().regex(/^[A-Za-z]{2}$/)).min(1) })
    .strict()
    .nullable()
    .optional(),
  review_required: z.boolean().optional(),
  message_mode: z.enum(MESSAGE_MODES).optional(),
  exclusive_leads: z.boolean().optional(),
  window_time_zone: z
    .enum(WINDOW_TIME_ZONES)
    .optional()
    .describe('campaign: windows in the campaign time zone; recipient: in each contact’s'),
  track_opens: z.boolean().optional(),
  track_clicks: z.boolean().optional(),
};

const statusTool = (name: string, to: CampaignStatus, description: string) =>
  defineTool({
    name,
    domain: 'campaigns',
    description,
    input: z.object({ campaign_id: z.uuid() }).strict(),
    ids: { campaign_id: 'campaign' },
    risk: 'change',
    run: async ({ em, actor, jobs }: ToolContext, input: { campaign_id: string }) => {
      return summary(await changeCampaignStatus(em, jobs, actor, input.campaign_id, to));
    },
  });

export const campaignTools = [
  defineTool({
    name: 'list_campaigns',
    ids: { app_id: 'app' },
    domain: 'campaigns',
    description: `List a product's campaigns (oldest first) with status, settings and step count; optionally one status (${CAMPAIGN_STATUSES.join(', ')}).`,
    input: z
      .object({
        app_id: z.uuid(),
        status: z.enum(CAMPAIGN_STATUSES).optional(),
        limit: z.number().int().min(1).max(50).optional(),
      })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      const limit = input.limit ?? 20;
      const rows = await listCampaigns(em, actor, input.app_id, { limit }, input.status);
      return { campaigns: rows.slice(0, limit).map(summary) };
    },
  }),
  defineTool({
    name: 'get_campaign',
    ids: { campaign_id: 'campaign' },
    domain: 'campaigns',
    description:
      'Read one campaign: its settings, status and its steps in order (type, config with templates, message mode, attachment).',
    input: z.object({ campaign_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      const c = await getCampaign(em, actor, input.campaign_id);
      const { steps } = await listSteps(em, actor, input.campaign_id);
      return { ...summary(c), steps: steps.map(stepSummary) };
    },
  }),
  defineTool({
    name: 'create_campaign',
    ids: { app_id: 'app', account_ids: 'account' },
    domain: 'campaigns',
    description:
      'Create a draft campaign in a product: name and IANA time zone required; optional sending windows (default Mon–Fri 09:00–17:00), sender account ids, rotation, daily new-lead cap, stop on reply, country rule, review, message mode. It sends nothing until activated.',
    input: z
      .object({ app_id: z.uuid(), name: z.string().min(1).max(200), time_zone: z.string().min(1).max(64), ...settings })
      .strict(),
    risk: 'change',
    run: async ({ em, actor }, input) =>
      summary(
        await createCampaign(em, actor, input.app_id, {
          ...settingsOf(input),
          name: input.name,
          timeZone: input.time_zone,
        }),
      ),
  }),
  defineTool({
    name: 'update_campaign',
    ids: { campaign_id: 'campaign', account_ids: 'account' },
    domain: 'campaigns',
    description:
      'Change settings of a campaign (only the fields given): name, time zone, sending windows, sender accounts, rotation, caps, stop on reply, country rule, review, message mode.',
    input: z
      .object({
        campaign_id: z.uuid(),
        name: z.string().min(1).max(200).optional(),
        time_zone: z.string().min(1).max(64).optional(),
        ...settings,
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor }, input) => summary(await updateCampaign(em, actor, input.campaign_id, settingsOf(input))),
  }),
  defineTool({
    name: 'add_campaign_step',
    ids: {
      campaign_id: 'campaign',
      'step.variants[].id': { value: 'a variant’s own id: given back on an edit, it keeps that variant' },
    },
    domain: 'campaigns',
    description:
      'Add a step to a campaign (appended, or at a 0-based position): email {subject, body}, invitation {note?}, message {body}, wait {amount, unit: minutes|hours|business_days}, condition {check: accepted|opened|clicked|replied, expect}. Templates may use {{first_name}}, {{company}} … with fallbacks {{first_name|there}}. An email or message step may carry A/B `variants` (2–5, each {name?, weight?, config?}: a variant without config sends the step’s) and a `winner_rule` {metric: reply_rate|open_rate|click_rate, min_sends, confidence: 0.8|0.9|0.95|0.99}.',
    input: z.object({ campaign_id: z.uuid(), step: CreateStepInput }).strict(),
    risk: 'change',
    run: async ({ em, actor }, input) => {
      const r = await addStep(em, actor, input.campaign_id, input.step);
      return { step: stepSummary(r.step), step_version: r.campaign.stepVersion };
    },
  }),
  defineTool({
    name: 'update_campaign_step',
    ids: {
      campaign_id: 'campaign',
      step_id: { within: 'campaign_id', child: 'step' },
      'step.variants[].id': { value: 'a variant’s own id: given back on an edit, it keeps that variant' },
    },
    domain: 'campaigns',
    description:
      "Replace a campaign step's type and config (same shapes as add_campaign_step); running enrollments move to the new version at their next step boundary.",
    input: z.object({ campaign_id: z.uuid(), step_id: z.uuid(), step: StepInput }).strict(),
    risk: 'change',
    run: async ({ em, actor }, input) => {
      const r = await updateStep(em, actor, input.campaign_id, input.step_id, input.step);
      return { step: stepSummary(r.step), step_version: r.campaign.stepVersion };
    },
  }),
  defineTool({
    name: 'get_step_variants',
    ids: { campaign_id: 'campaign', step_id: { within: 'campaign_id', child: 'step' } },
    domain: 'campaigns',
    description:
      "Read a step's A/B test: per variant the sends, human opens, clicks and replies with their rates (machine opens and clicks from privacy proxies and link scanners counted apart), the winner if chosen, and where the automatic winner rule stands.",
    input: z.object({ campaign_id: z.uuid(), step_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) =>
      variantsSummary(await getStepVariants(em, actor, input.campaign_id, input.step_id)),
  }),
  defineTool({
    name: 'choose_variant_winner',
    ids: {
      campaign_id: 'campaign',
      step_id: { within: 'campaign_id', child: 'step' },
      variant_id: {
        value: 'a variant of the step, checked in domain/campaigns/variants.ts (another step’s is not found)',
      },
    },
    domain: 'campaigns',
    description:
      "Choose a step's winning A/B variant by hand (replacing an earlier choice): new sends of the step use it; sends already planned keep theirs.",
    input: z.object({ campaign_id: z.uuid(), step_id: z.uuid(), variant_id: z.uuid() }).strict(),
    risk: 'change',
    run: async ({ em, actor }, input) =>
      variantsSummary(await setStepWinner(em, actor, input.campaign_id, input.step_id, input.variant_id)),
  }),
  defineTool({
    name: 'clear_variant_winner',
    ids: { campaign_id: 'campaign', step_id: { within: 'campaign_id', child: 'step' } },
    domain: 'campaigns',
    description:
      "Clear a step's A/B winner: new sends split by weight again (the automatic rule, if any, may choose again).",
    input: z.object({ campaign_id: z.uuid(), step_id: z.uuid() }).strict(),
    risk: 'change',
    run: async ({ em, actor }, input) =>
      variantsSummary(await clearStepWinner(em, actor, input.campaign_id, input.step_id)),
  }),
  statusTool(
    'activate_campaign',
    'active',
    'Activate a draft campaign so it starts sending (runs the preflight first and refuses while it finds blockers).',
  ),
  statusTool('pause_campaign', 'paused', 'Pause an active campaign: its enrollments stop sending until it is resumed.'),
  statusTool(
    'resume_campaign',
    'active',
    'Resume a paused campaign (runs the preflight first and refuses while it finds blockers).',
  ),
];
