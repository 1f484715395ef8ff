// Sender accounts for the Operator: list them, read usage and setup, change limits (a change: a person
// confirms). Connecting and deleting stay with people in the app (they involve the provider's login).
import { z } from 'zod';
import { ACTION_TYPES, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { accountUsage, listAccounts, requireAccount, setLimits } from '../accounts/accounts.js';
import { checkSendingDomain, mailboxDomain } from '../accounts/sending-domain.js';
import { defineTool } from './registry.js';

const summary = (a: IPlatformAccount) => ({
  id: a.id,
  channel: a.channel,
  display_name: a.displayName,
  status: a.status,
  status_reason: a.statusReason ?? null,
  address: a.address ?? null,
  time_zone: a.timeZone,
  working_hours: a.workingHours,
  warmup_skipped: !!a.warmupSkippedAt,
});

const cap = z.object({ daily: z.number().int().min(1), weekly: z.number().int().min(1) }).strict();

export const accountTools = [
  defineTool({
    name: 'list_platform_accounts',
    domain: 'accounts',
    description:
      'List the workspace’s sender accounts (email mailboxes and professional-network profiles) with status, address, time zone and working hours; optionally by channel.',
    input: z
      .object({ channel: z.enum(['email', 'network']).optional(), limit: z.number().int().min(1).max(50).optional() })
      .strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      const rows = await listAccounts(em, actor, { channel: input.channel }, { limit: input.limit ?? 20 });
      return { accounts: rows.slice(0, input.limit ?? 20).map(summary) };
    },
  }),
  defineTool({
    name: 'get_platform_account_usage',
    ids: { account_id: 'account' },
    domain: 'accounts',
    description:
      'Read a sender account’s actions today and this week per type (email, invitation, message, profile_view) against its caps, its warm-up day, and when the next action could go out.',
    input: z.object({ account_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => {
      const { account, usage } = await accountUsage(em, actor, input.account_id);
      return {
        account: summary(account),
        actions: usage.map((u) => ({
          action: u.action,
          today: u.today,
          week: u.week,
          caps: u.caps,
          warmup: u.warmup,
          next_slot_at: u.nextSlotAt?.toISOString() ?? null,
        })),
      };
    },
  }),
  defineTool({
    name: 'get_platform_account_setup',
    ids: { account_id: 'account' },
    domain: 'accounts',
    description:
      'Read a sender account’s setup: its stored connection status and, for email, the sending domain’s SPF, DKIM and DMARC records with what to fix.',
    input: z.object({ account_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor, config, providers }, input) => {
      const account = await requireAccount(em, actor, input.account_id);
      const domain = account.channel === 'email' ? mailboxDomain(account.address ?? null) : null;
      return {
        account: summary(account),
        sending_domain: domain ? await checkSendingDomain(providers.dns, domain, config.dns.dkimSelectors) : null,
      };
    },
  }),
  defineTool({
    name: 'set_platform_account_limits',
    ids: { account_id: 'account' },
    domain: 'accounts',
    description: `Change a sender account’s daily and weekly caps per action type (${ACTION_TYPES.join(', ')}), its minimum gap between actions (30–3600 s) or jitter (0–1800 s), within the plan’s bounds.`,
    input: z
      .object({
        account_id: z.uuid(),
        caps: z
          .object(
            Object.fromEntries(ACTION_TYPES.map((t) => [t, cap.optional()])) as Record<
              (typeof ACTION_TYPES)[number],
              z.ZodOptional<typeof cap>
            >,
          )
          .strict()
          .optional(),
        min_gap_seconds: z.number().int().optional(),
        jitter_seconds: z.number().int().optional(),
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor }, input) =>
      summaryWithLimits(
        await setLimits(em, actor, input.account_id, {
          caps: input.caps,
          minGapSeconds: input.min_gap_seconds,
          jitterSeconds: input.jitter_seconds,
        }),
      ),
  }),
];

const summaryWithLimits = (a: IPlatformAccount) => ({
  ...summary(a),
  caps: a.caps,
  min_gap_seconds: a.minGapSeconds,
  jitter_seconds: a.jitterSeconds,
});
