import { z } from 'zod';
import { ACCOUNT_STATUSES, ACTION_TYPES, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { CHANNELS, type ConnectStart } from '../../lib/connectors/types.js';
import { WITHDRAWAL_DAYS } from '../../domain/accounts/accounts.js';
import type { DomainCheck } from '../../domain/accounts/sending-domain.js';
import type { MailboxSetup, SetupWarning } from '../../domain/accounts/deliverability.js';
import type { ActionUsage } from '../../domain/governor/governor.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Timestamp, iso, text, ClockTime, ClockEnd } from '../schemas.js';

export const WorkingHoursSchema = z
  .object({
    days: z
      .array(z.number().int().min(1).max(7))
      .min(1)
      .max(7)
      .refine((d) => new Set(d).size === d.length, 'each day once')
      .meta({ description: 'ISO weekdays: 1 = Monday … 7 = Sunday' }),
    start: ClockTime,
    end: ClockEnd.meta({ description: 'Exclusive; 24:00 for the end of the day' }),
  })
  .strict()
  .refine((w) => w.end > w.start, { message: 'end must be after start', path: ['end'] })
  .meta({
    description:
      'When the account may act, in its own time zone (one window per listed day, start inclusive, end exclusive)',
  });

const CapView = z.object({ daily: z.number().int(), weekly: z.number().int() });

export const AccountView = z.object({
  id: z.uuid(),
  channel: z.enum(CHANNELS),
  display_name: z.string(),
  time_zone: z.string(),
  working_hours: z.object({ days: z.array(z.number().int()), start: z.string(), end: z.string() }),
  status: z.enum(ACCOUNT_STATUSES),
  status_reason: z.string().nullable(),
  connector: z.string(),
  connector_account_id: z.string().nullable(),
  address: z.string().nullable().meta({ description: 'The mailbox address or profile URL, once known' }),
  has_credentials: z
    .boolean()
    .meta({ description: 'Credentials were given at connect time (they are never returned)' }),
  signature: z.string().nullable(),
  profile: z.record(z.string(), z.unknown()).nullable(),
  profile_fetched_at: Timestamp.nullable(),
  limits: z.object({
    caps: z
      .partialRecord(z.enum(ACTION_TYPES), CapView)
      .meta({ description: 'Caps set on this account (action types absent use the defaults)' }),
    min_gap_seconds: z.number().int(),
    jitter_seconds: z.number().int(),
  }),
  warmup: z.object({ started_at: Timestamp.nullable(), skipped_at: Timestamp.nullable() }),
  invite_withdrawal: z.object({ enabled: z.boolean(), after_days: z.number().int().nullable() }),
  connected_at: Timestamp.nullable(),
  disconnected_at: Timestamp.nullable(),
  status_checked_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toAccountView = (a: IPlatformAccount): z.infer<typeof AccountView> => ({
  id: a.id,
  channel: a.channel as z.infer<typeof AccountView>['channel'],
  display_name: a.displayName,
  time_zone: a.timeZone,
  working_hours: a.workingHours,
  status: a.status as z.infer<typeof AccountView>['status'],
  status_reason: a.statusReason ?? null,
  connector: a.connector,
  connector_account_id: a.connectorAccountId ?? null,
  address: a.address ?? null,
  has_credentials: !!a.credentialsSealed,
  signature: a.signature ?? null,
  profile: a.profile ?? null,
  profile_fetched_at: iso(a.profileFetchedAt),
  limits: {
    caps: a.caps as z.infer<typeof AccountView>['limits']['caps'],
    min_gap_seconds: a.minGapSeconds,
    jitter_seconds: a.jitterSeconds,
  },
  warmup: { started_at: iso(a.warmupStartedAt), skipped_at: iso(a.warmupSkippedAt) },
  invite_withdrawal: { enabled: a.inviteWithdrawalDays != null, after_days: a.inviteWithdrawalDays ?? null },
  connected_at: iso(a.connectedAt),
  disconnected_at: iso(a.disconnectedAt),
  status_checked_at: iso(a.statusCheckedAt),
  created_at: a.createdAt.toISOString(),
  updated_at: a.updatedAt.toISOString(),
});

export const AccountPage = pageSchema(AccountView);

export const ListAccountsQuery = z
  .object({ ...pageQuery, channel: z.enum(CHANNELS).optional(), status: z.enum(ACCOUNT_STATUSES).optional() })
  .strict();

export const CreateAccountBody = z
  .object({
    channel: z.enum(CHANNELS),
    display_name: text({ min: 1, max: 200, trim: true }),
    time_zone: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_+\-/]+$/, 'an IANA time zone name')
      .meta({ description: 'IANA time zone name, required (no UTC default)' }),
    working_hours: WorkingHoursSchema.optional().meta({ description: 'Default Monday–Friday 09:00–17:00' }),
  })
  .strict();

export const ConnectBody = z
  .object({
    credentials: z
      .record(text({ min: 1, max: 100 }), text({ max: 4000 }))
      .refine((c) => Object.keys(c).length <= 20, 'at most 20 fields')
      .optional()
      .meta({
        description:
          'Credentials for a direct connection (e.g. IMAP/SMTP); sealed at rest, never returned. Absent: hosted authentication',
      }),
    return_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .meta({ description: 'Where the hosted flow sends the user back to' }),
  })
  .strict();

export const ConnectView = z.object({
  account: AccountView,
  next: z
    .enum(['open_hosted_link', 'none'])
    .meta({ description: '`open_hosted_link`: the user finishes at hosted_link.url; `none`: connected' }),
  hosted_link: z.object({ url: z.string(), expires_at: Timestamp.nullable() }).nullable(),
});

export const toConnectView = (account: IPlatformAccount, start: ConnectStart): z.infer<typeof ConnectView> => ({
  account: toAccountView(account),
  next: start.kind === 'hosted_link' ? 'open_hosted_link' : 'none',
  hosted_link: start.kind === 'hosted_link' && start.url ? { url: start.url, expires_at: iso(start.expiresAt) } : null,
});

export const DeleteAccountBody = z
  .object({
    on_campaigns: z
      .enum(['reassign', 'pause'])
      .optional()
      .meta({ description: 'What to do with active campaigns sending from the account' }),
    reassign_to: z
      .uuid()
      .optional()
      .meta({ description: 'With on_campaigns "reassign": another account of the same channel' }),
  })
  .strict();

export const SignatureBody = z.object({ signature: text({ max: 10_000 }).nullable() }).strict();

export const InviteWithdrawalBody = z
  .object({
    enabled: z.boolean(),
    after_days: z
      .number()
      .int()
      .min(WITHDRAWAL_DAYS.min)
      .max(WITHDRAWAL_DAYS.max)
      .optional()
      .meta({ description: 'Withdraw pending invitations older than this many days (default 21)' }),
  })
  .strict();

const RecordCheckView = z.object({
  status: z.enum(['pass', 'missing', 'invalid', 'error']),
  record: z.string().nullable(),
  fix: z.string().nullable(),
});

export const SetupStatusView = z.object({
  account_id: z.uuid(),
  status: z.enum(ACCOUNT_STATUSES),
  connector: z.object({
    state: z
      .enum(['pending', 'connected', 'disconnected'])
      .nullable()
      .meta({ description: 'What the connector says now; null when not asked (no connection yet) or unreachable' }),
    reason: z.string().nullable(),
    error: z.string().nullable().meta({ description: 'Why the connector could not be asked' }),
  }),
  sending_domain: z
    .object({
      domain: z.string(),
      spf: RecordCheckView,
      dkim: RecordCheckView.extend({ selector: z.string().nullable() }),
      dmarc: RecordCheckView,
      ready: z.boolean(),
    })
    .nullable()
    .meta({ description: 'Email accounts with a known address: the domain’s SPF, DKIM and DMARC' }),
  ready: z.boolean().meta({ description: 'Connected, and for email every domain record passes' }),
  steps: z.array(z.string()).meta({ description: 'What to do next, in order' }),
  // Beyond the spec (which shows no shape for this operation): added fields only.
  connection_problem: z
    .object({
      reason: z.string().meta({ description: 'blocked_destination, host_unreachable, tls_failed, unavailable, …' }),
      message: z.string(),
      at: z.string().meta({ description: 'When the failed check ran (ISO 8601)' }),
      detected_by: z.enum(['reconcile', 'check', 'sync', 'inbound']),
    })
    .nullable()
    .meta({
      description:
        'The last check of the connection that failed for a reason that is retried, not final (refused credentials and a revoked grant disconnect instead); cleared by the next successful check',
    }),
  mailbox: z
    .object({
      provider: z.enum(['google', 'microsoft']).nullable(),
      auth: z.enum(['password', 'oauth']),
      smtp_host: z.string().nullable(),
      imap_host: z.string().nullable(),
    })
    .nullable()
    .meta({ description: 'A mailbox connected with its own SMTP/IMAP servers: whose servers, and how it signs in' }),
  warnings: z
    .array(z.object({ code: z.enum(['unsubscribe_url_not_https', 'provider_requires_oauth']), message: z.string() }))
    .meta({
      description:
        'Deliverability: PUBLIC_BASE_URL not https (RFC 8058 one-click unsubscribe needs https), a Google or Microsoft mailbox on a password where the provider requires OAuth',
    }),
});

export const toSetupStatusView = (
  a: IPlatformAccount,
  connector: { state: string | null; reason: string | null; error: string | null },
  domain: DomainCheck | null,
  steps: string[],
  extra: { mailbox: MailboxSetup | null; warnings: SetupWarning[] } = { mailbox: null, warnings: [] },
): z.infer<typeof SetupStatusView> => ({
  account_id: a.id,
  status: a.status as z.infer<typeof SetupStatusView>['status'],
  connector: {
    state: connector.state as z.infer<typeof SetupStatusView>['connector']['state'],
    reason: connector.reason,
    error: connector.error,
  },
  sending_domain: domain,
  ready: a.status === 'connected' && (a.channel !== 'email' || !!domain?.ready),
  steps,
  connection_problem: (a.connectionProblem as z.infer<typeof SetupStatusView>['connection_problem']) ?? null,
  mailbox: extra.mailbox,
  warnings: extra.warnings,
});

const CapInput = z.object({ daily: z.number().int().min(1), weekly: z.number().int().min(1) }).strict();

export const LimitsBody = z
  .object({
    caps: z
      .object(
        Object.fromEntries(ACTION_TYPES.map((t) => [t, CapInput.optional()])) as Record<
          (typeof ACTION_TYPES)[number],
          z.ZodOptional<typeof CapInput>
        >,
      )
      .strict()
      .optional()
      .meta({
        description:
          'Daily and weekly caps per action type, each at most the plan’s (sender_caps in GET /api/me/entitlement), weekly ≥ daily',
      }),
    min_gap_seconds: z.number().int().min(30).max(3600).optional(),
    jitter_seconds: z.number().int().min(0).max(1800).optional(),
  })
  .strict();

const UsageItem = z.object({
  action: z.enum(ACTION_TYPES),
  today: z.number().int().meta({ description: 'Actions on the account’s current local day' }),
  week: z.number().int().meta({ description: 'Actions in the current ISO week (local)' }),
  caps: CapView.meta({ description: 'Caps in force now (the warm-up ramp applied)' }),
  full_caps: CapView.meta({ description: 'The configured caps the ramp leads to' }),
  remaining_today: z.number().int(),
  remaining_week: z.number().int(),
  next_slot_at: Timestamp.nullable().meta({
    description: 'When the next action of this type could be granted; null when not connected',
  }),
});

export const UsageView = z.object({
  account_id: z.uuid(),
  status: z.enum(ACCOUNT_STATUSES),
  time_zone: z.string(),
  warmup: z
    .object({ day: z.number().int(), of: z.number().int() })
    .nullable()
    .meta({ description: 'Day n of the warm-up ramp, or null when it does not apply' }),
  actions: z.array(UsageItem),
});

export const toUsageView = (a: IPlatformAccount, usage: ActionUsage[]): z.infer<typeof UsageView> => ({
  account_id: a.id,
  status: a.status as z.infer<typeof UsageView>['status'],
  time_zone: a.timeZone,
  warmup: usage.find((u) => u.warmup)?.warmup ?? null,
  actions: usage.map((u) => ({
    action: u.action,
    today: u.today,
    week: u.week,
    caps: u.caps,
    full_caps: u.fullCaps,
    remaining_today: Math.max(0, u.caps.daily - u.today),
    remaining_week: Math.max(0, u.caps.weekly - u.week),
    next_slot_at: iso(u.nextSlotAt),
  })),
});
