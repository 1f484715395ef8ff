import { z } from 'zod';
import {
  CAMPAIGN_STATUSES,
  MESSAGE_MODES,
  ROTATIONS,
  WINDOW_TIME_ZONES,
  type SendingWindows,
} from '../../db/entities/Campaign.js';
import { STEP_TYPES, type ICampaignStep } from '../../db/entities/CampaignStep.js';
import type { AffectedCounts, StepList } from '../../domain/campaigns/steps.js';
import { CreateStepInput, MAX_STEP_ATTACHMENT_BYTES, MAX_STEPS, StepInput } from '../../domain/campaigns/steps.js';
import {
  toProblemView,
  type CampaignWithCount,
  type LinkedSignal,
  type PreflightInput,
  type PreflightResult,
} from '../../domain/campaigns/campaigns.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { WINNER_METRICS, type StepVariantsView as DomainStepVariantsView } from '../../domain/campaigns/variants.js';

const Count = z.number().int().min(0);
import { BINARY } from '../schemas.js';
import { Timestamp, iso, text, ClockTime, ClockEnd } from '../schemas.js';

export const AppIdParams = z.object({ appId: z.uuid() });
export const CampaignIdParams = z.object({ campaignId: z.uuid() });
export const StepParams = z.object({ campaignId: z.uuid(), stepId: z.uuid() });

const Window = z
  .object({ start: ClockTime, end: ClockEnd })
  .strict()
  .refine((w) => w.end > w.start, { message: 'end must be after start', path: ['end'] });
const DayWindows = z.array(Window).max(4).optional();
export const SendingWindowsSchema = z
  .object({
    '1': DayWindows,
    '2': DayWindows,
    '3': DayWindows,
    '4': DayWindows,
    '5': DayWindows,
    '6': DayWindows,
    '7': DayWindows,
  })
  .strict()
  .meta({
    description:
      'Windows per ISO weekday ("1" = Monday … "7" = Sunday), each {start, end} as HH:MM in the campaign’s time zone (end after start, 24:00 for the end of the day, at most 4 a day); a day absent or empty never sends. Default: Monday–Friday 09:00–17:00',
  }) as z.ZodType<SendingWindows>;

const CountryRuleSchema = z
  .object({
    mode: z
      .enum(['allow', 'block'])
      .meta({ description: 'allow: only leads in these countries; block: never leads in these countries' }),
    countries: z
      .array(z.string().regex(/^[A-Za-z]{2}$/, 'ISO 3166-1 alpha-2 code'))
      .min(1)
      .max(250),
  })
  .strict();

const Name = text({ min: 1, max: 200, trim: true });
const TimeZone = z
  .string()
  .min(1)
  .max(64)
  .meta({ description: 'IANA time zone name (e.g. Europe/Berlin); an unknown one is 400 invalid_time_zone' });

const settings = {
  description: text({ max: 5000 }).nullable().optional(),
  sending_windows: SendingWindowsSchema.optional(),
  account_ids: z
    .array(z.uuid())
    .max(50)
    .optional()
    .meta({ description: 'Sender accounts of the workspace (400 invalid_account otherwise)' }),
  rotation: z.enum(ROTATIONS).optional().meta({
    description:
      'How sends spread over the accounts: round_robin (default), least_used, sticky (a lead keeps its account)',
  }),
  daily_new_lead_cap: z
    .number()
    .int()
    .min(1)
    .max(10000)
    .nullable()
    .optional()
    .meta({ description: 'New leads started per local day; null: no cap' }),
  stop_on_reply: z.boolean().optional().meta({ description: 'Default true' }),
  country_rule: CountryRuleSchema.nullable().optional(),
  review_required: z.boolean().optional().meta({ description: 'Every message waits for approval (default false)' }),
  message_mode: z.enum(MESSAGE_MODES).optional().meta({ description: 'template (default), ai, ai_review' }),
  exclusive_leads: z
    .boolean()
    .optional()
    .meta({ description: 'A lead active in another campaign is not enrolled (default true)' }),
  window_time_zone: z.enum(WINDOW_TIME_ZONES).optional().meta({
    description:
      'Beyond the spec. Whose clock the sending windows follow: campaign (default: `time_zone`) or recipient (each contact’s time zone, stored or derived from its country, else `time_zone`)',
  }),
  track_opens: z.boolean().optional().meta({
    description:
      'Beyond the spec. Emails sent through a mail connector carry an open pixel (default false; docs/tracking.md)',
  }),
  track_clicks: z.boolean().optional().meta({
    description:
      'Beyond the spec. Links in emails sent through a mail connector go through a signed redirect (default false; docs/tracking.md)',
  }),
};

export const CreateCampaignBody = z.object({ name: Name, time_zone: TimeZone, ...settings }).strict();
export const UpdateCampaignBody = z
  .object({ name: Name.optional(), time_zone: TimeZone.optional(), ...settings })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'give at least one setting' })
  .meta({ minProperties: 1 });

export const ListCampaignsQuery = z.object({ ...pageQuery, status: z.enum(CAMPAIGN_STATUSES).optional() });

export const CampaignView = z.object({
  id: z.uuid(),
  app_id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(CAMPAIGN_STATUSES),
  time_zone: z.string(),
  sending_windows: z.record(z.string(), z.array(z.object({ start: z.string(), end: z.string() }))),
  account_ids: z.array(z.uuid()),
  rotation: z.enum(ROTATIONS),
  daily_new_lead_cap: z.number().int().nullable(),
  stop_on_reply: z.boolean(),
  country_rule: z.object({ mode: z.enum(['allow', 'block']), countries: z.array(z.string()) }).nullable(),
  review_required: z.boolean(),
  message_mode: z.enum(MESSAGE_MODES),
  exclusive_leads: z.boolean(),
  window_time_zone: z.enum(WINDOW_TIME_ZONES),
  track_opens: z.boolean(),
  track_clicks: z.boolean(),
  step_version: z.number().int(),
  step_count: z.number().int().nonnegative(),
  activated_at: Timestamp.nullable(),
  paused_at: Timestamp.nullable(),
  completed_at: Timestamp.nullable(),
  archived_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toCampaignView = ({ campaign: c, stepCount }: CampaignWithCount): z.infer<typeof CampaignView> => ({
  id: c.id,
  app_id: c.app.id,
  name: c.name,
  description: c.description ?? null,
  status: c.status as z.infer<typeof CampaignView>['status'],
  time_zone: c.timeZone,
  sending_windows: c.sendingWindows as Record<string, { start: string; end: string }[]>,
  account_ids: c.accountIds,
  rotation: c.rotation as z.infer<typeof CampaignView>['rotation'],
  daily_new_lead_cap: c.dailyNewLeadCap ?? null,
  stop_on_reply: c.stopOnReply,
  country_rule: c.countryRule ?? null,
  review_required: c.reviewRequired,
  message_mode: c.messageMode as z.infer<typeof CampaignView>['message_mode'],
  exclusive_leads: c.exclusiveLeads,
  window_time_zone: c.windowTimeZone as z.infer<typeof CampaignView>['window_time_zone'],
  track_opens: c.trackOpens,
  track_clicks: c.trackClicks,
  step_version: c.stepVersion,
  step_count: stepCount,
  activated_at: iso(c.activatedAt),
  paused_at: iso(c.pausedAt),
  completed_at: iso(c.completedAt),
  archived_at: iso(c.archivedAt),
  created_at: c.createdAt.toISOString(),
  updated_at: c.updatedAt.toISOString(),
});

export const CampaignPage = pageSchema(CampaignView);

export const DuplicateBody = z
  .object({ name: Name.optional().meta({ description: 'Default: "<name> (copy)"' }) })
  .strict();

export const StatusBody = z.object({ status: z.enum(CAMPAIGN_STATUSES) }).strict();

// ---- preflight ----

export const PreflightBody = z
  .object({
    campaign_id: z.uuid().optional().meta({
      description:
        'A campaign of this product: its stored settings and steps, with any draft field below taking the place of the stored one',
    }),
    time_zone: TimeZone.optional(),
    window_time_zone: z.enum(WINDOW_TIME_ZONES).optional().meta({
      description:
        'Beyond the spec. Draft window_time_zone; recipient warns (leads_without_time_zone) when running leads have no time zone of their own',
    }),
    sending_windows: SendingWindowsSchema.optional(),
    account_ids: settings.account_ids,
    steps: z
      .array(StepInput)
      .max(MAX_STEPS)
      .optional()
      .meta({ description: 'Draft steps in order (replace the stored ones)' }),
  })
  .strict();

export const preflightInputOf = (b: z.infer<typeof PreflightBody>): PreflightInput & { campaignId?: string } => ({
  campaignId: b.campaign_id,
  timeZone: b.time_zone,
  windowTimeZone: b.window_time_zone,
  sendingWindows: b.sending_windows,
  accountIds: b.account_ids,
  steps: b.steps?.map((s) => ({ id: null, type: s.type, config: s.config as Record<string, unknown> })),
});

export const ProblemView = z.object({
  code: z.string().meta({
    description:
      'blockers: no_time_zone, no_steps, no_send_steps, condition_without_send, invalid_template, window_never_opens, no_accounts, no_connected_account; warnings: template_variables, account_missing, account_not_connected, account_near_cap, leads_without_time_zone',
  }),
  severity: z.enum(['blocker', 'warning']),
  message: z.string(),
  step_id: z.uuid().nullable(),
  account_id: z.uuid().nullable(),
  details: z.record(z.string(), z.unknown()).nullable(),
});

export const PreflightView = z.object({
  ready: z.boolean().meta({ description: 'No blockers: activation would be accepted' }),
  blockers: z.number().int().nonnegative(),
  warnings: z.number().int().nonnegative(),
  problems: z.array(ProblemView),
  leads_without_time_zone: z.number().int().nonnegative().meta({
    description:
      'Beyond the spec. The campaign’s running leads (enrollments active or paused) whose contact has no valid stored time zone and no country with a single one: recipient-local windows use the campaign’s time zone for them (0 without campaign_id)',
  }),
});

export const toPreflightView = (r: PreflightResult): z.infer<typeof PreflightView> => ({
  ready: r.ready,
  blockers: r.blockers,
  warnings: r.warnings,
  problems: r.problems.map(toProblemView),
  leads_without_time_zone: r.leadsWithoutTimeZone,
});

// ---- signals ----

export const SignalsBody = z
  .object({
    signal_ids: z
      .array(z.uuid())
      .max(200)
      .meta({ description: 'The whole set (replaces the linked signals); [] unlinks all' }),
  })
  .strict();
export const SignalView = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  agent_name: z.string(),
  key: z.string(),
  kind: z.string(),
  name: z.string(),
  linked_at: Timestamp,
});
export const SignalsView = z.object({ campaign_id: z.uuid(), signals: z.array(SignalView) });
export const toSignalsView = (campaignId: string, rows: LinkedSignal[]): z.infer<typeof SignalsView> => ({
  campaign_id: campaignId,
  signals: rows.map((s) => ({
    id: s.id,
    agent_id: s.agentId,
    agent_name: s.agentName,
    key: s.key,
    kind: s.kind,
    name: s.name,
    linked_at: s.linkedAt.toISOString(),
  })),
});

// ---- steps ----

const VariantView = z.object({
  id: z.uuid(),
  name: z.string(),
  weight: z.number().int(),
  config: z.record(z.string(), z.unknown()),
});
const WinnerRuleView = z.object({
  metric: z.enum(WINNER_METRICS),
  min_sends: z.number().int(),
  confidence: z.number(),
});
const Rate = z.number().min(0).max(1);

export const StepVariantsParams = z.object({ campaignId: z.uuid(), stepId: z.uuid() });
export const VariantWinnerParams = z.object({ campaignId: z.uuid(), stepId: z.uuid(), variantId: z.uuid() });

export const StepVariantsView = z.object({
  campaign_id: z.uuid(),
  step_id: z.uuid(),
  winner: z
    .object({
      variant_id: z.uuid(),
      chosen_by: z
        .enum(['manual', 'auto'])
        .meta({ description: 'manual: a person (or the Operator, confirmed); auto: the step’s winner rule' }),
      chosen_at: Timestamp,
      evidence: z.record(z.string(), z.unknown()).nullable().meta({ description: 'The figures the choice rested on' }),
    })
    .nullable()
    .meta({ description: 'The chosen variant: new sends of the step use it (null: sends split by weight)' }),
  winner_rule: WinnerRuleView.nullable(),
  test: z
    .object({
      winner: z.uuid().nullable(),
      leader: z.uuid().nullable(),
      pending: z.enum(['min_sends', 'not_significant']).nullable(),
      z: z.number().nullable().meta({ description: 'The leader’s smallest z against another variant' }),
      metric: z.enum(WINNER_METRICS),
      rates: z.record(z.string(), Rate),
    })
    .nullable()
    .meta({ description: 'Where the winner rule stands now (null without a rule)' }),
  variants: z.array(
    VariantView.extend({
      is_winner: z.boolean(),
      sent: Count,
      opened: Count.meta({ description: 'Sends opened by a person (machine opens are not counted)' }),
      opened_machine: Count.meta({
        description: 'Sends with only machine opens (privacy proxies, scanners: docs/tracking.md)',
      }),
      clicked: Count,
      clicked_machine: Count,
      replied: Count,
      reply_rate: Rate,
      open_rate: Rate,
      click_rate: Rate,
    }),
  ),
});

export const toStepVariantsView = (v: DomainStepVariantsView): z.infer<typeof StepVariantsView> => ({
  ...v,
  winner: v.winner
    ? { ...v.winner, chosen_by: v.winner.chosen_by as 'manual' | 'auto', chosen_at: v.winner.chosen_at.toISOString() }
    : null,
});

export const StepView = z.object({
  id: z.uuid(),
  campaign_id: z.uuid(),
  position: z.number().int().nonnegative().meta({ description: '0-based' }),
  type: z.enum(STEP_TYPES),
  config: z.record(z.string(), z.unknown()),
  message_mode: z.enum(MESSAGE_MODES).nullable().meta({ description: 'The step’s own mode; null: the campaign’s' }),
  effective_message_mode: z
    .enum(MESSAGE_MODES)
    .nullable()
    .meta({ description: 'The mode that applies (null for wait and condition steps)' }),
  attachment: z.object({ filename: z.string(), content_type: z.string(), size_bytes: z.number().int() }).nullable(),
  variants: z.array(VariantView).nullable().meta({
    description:
      'Beyond the spec. The A/B variants (null: none); statistics and the winner: GET …/steps/{stepId}/variants',
  }),
  winner_rule: WinnerRuleView.nullable().meta({
    description: 'Beyond the spec. The automatic winner rule (null: by hand only)',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

type Mode = z.infer<typeof StepView>['message_mode'];
export const toStepView = (s: ICampaignStep, campaignMode: string): z.infer<typeof StepView> => ({
  id: s.id,
  campaign_id: s.campaign.id,
  position: s.position,
  type: s.type as z.infer<typeof StepView>['type'],
  config: s.config,
  message_mode: (s.messageMode ?? null) as Mode,
  effective_message_mode: (['email', 'invitation', 'message'].includes(s.type)
    ? (s.messageMode ?? campaignMode)
    : null) as Mode,
  attachment: s.attachmentName
    ? {
        filename: s.attachmentName,
        content_type: s.attachmentType ?? 'application/octet-stream',
        size_bytes: s.attachmentSize ?? 0,
      }
    : null,
  variants: s.variants?.length
    ? s.variants.map((v) => ({ id: v.id, name: v.name, weight: v.weight, config: v.config }))
    : null,
  winner_rule: s.variants?.length ? ((s.winnerRule ?? null) as z.infer<typeof WinnerRuleView> | null) : null,
  created_at: s.createdAt.toISOString(),
  updated_at: s.updatedAt.toISOString(),
});

export const StepListView = z.object({
  campaign_id: z.uuid(),
  step_version: z.number().int().meta({ description: 'The campaign’s current step version' }),
  message_mode: z.enum(MESSAGE_MODES).meta({ description: 'The campaign’s message mode' }),
  items: z.array(StepView),
});
export const toStepListView = ({ campaign, steps }: StepList): z.infer<typeof StepListView> => ({
  campaign_id: campaign.id,
  step_version: campaign.stepVersion,
  message_mode: campaign.messageMode as z.infer<typeof StepListView>['message_mode'],
  items: steps.map((s) => toStepView(s, campaign.messageMode)),
});

export const StepWithVersionView = StepView.extend({
  step_version: z.number().int().meta({ description: 'The campaign’s step version after this change' }),
});

export const CreateStepBody = CreateStepInput;
export const UpdateStepBody = StepInput;

export const ReorderBody = z
  .object({
    step_ids: z.array(z.uuid()).max(MAX_STEPS).meta({
      description: 'Every step id of the campaign exactly once, in the new order (400 invalid_order otherwise)',
    }),
  })
  .strict();

export const MessageModeBody = z
  .object({
    message_mode: z
      .enum(MESSAGE_MODES)
      .nullable()
      .meta({ description: 'null only with step_id: the step follows the campaign’s mode again' }),
    step_id: z.uuid().optional().meta({ description: 'One send step; absent: the campaign-wide mode' }),
    reset_steps: z.boolean().optional().meta({ description: 'Campaign-wide only: also clear every step’s own mode' }),
  })
  .strict()
  .refine((b) => b.step_id !== undefined || b.message_mode !== null, {
    message: 'message_mode null needs a step_id',
    path: ['message_mode'],
  })
  .refine((b) => !(b.step_id !== undefined && b.reset_steps === true), {
    message: 'reset_steps applies campaign-wide only',
    path: ['reset_steps'],
  })
  .meta({ examples: [{ message_mode: 'ai_review', reset_steps: true }] });

export const DeletedStepView = z.object({ id: z.uuid(), deleted: z.literal(true), step_version: z.number().int() });

export const AffectedCountsView = z.object({
  step_id: z.uuid(),
  position: z.number().int(),
  step_version: z.number().int(),
  total: z.number().int().meta({ description: 'Active and paused enrollments of the campaign' }),
  before: z
    .number()
    .int()
    .meta({ description: 'Not yet at the step (or not started): they run the new version when they reach it' }),
  on: z
    .number()
    .int()
    .meta({ description: 'At the step now: it finishes as planned, then they move to the new version' }),
  after: z.number().int().meta({ description: 'Past the step: untouched by the change' }),
  by_status: z.object({ active: z.number().int(), paused: z.number().int() }),
  rule: z.object({
    before: z.literal('new_version'),
    on: z.literal('finishes_as_planned'),
    after: z.literal('untouched'),
  }),
});
export const toAffectedCountsView = (a: AffectedCounts): z.infer<typeof AffectedCountsView> => ({
  step_id: a.step.id,
  position: a.step.position,
  step_version: a.campaign.stepVersion,
  total: a.before + a.on + a.after,
  before: a.before,
  on: a.on,
  after: a.after,
  by_status: { active: a.active, paused: a.paused },
  rule: { before: 'new_version', on: 'finishes_as_planned', after: 'untouched' },
});

export const AttachmentForm = z
  .object({
    file: z.unknown().meta({
      jsonSchema: {
        ...BINARY,
        description: `The attachment, 1 to ${MAX_STEP_ATTACHMENT_BYTES} bytes (5 MiB; more → 413 file_too_large); it replaces the step's current one`,
      },
    }),
  })
  .strict();
