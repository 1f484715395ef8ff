// Sender (platform) accounts (docs/accounts.md).
import {
  connectAccount,
  createAccount,
  deleteAccount,
  enrichAccount,
  listAccounts,
  setInviteWithdrawal,
  setSignature,
  setupStatus,
  skipWarmup,
  setLimits,
  accountUsage,
} from '../../domain/accounts/accounts.js';
import { MAIL_CONNECTOR } from '../../lib/connectors/mailbox/account.js';
import type { MailConnectReason } from '../../lib/connectors/mailbox/settings.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  AccountPage,
  AccountView,
  ConnectBody,
  ConnectView,
  CreateAccountBody,
  DeleteAccountBody,
  InviteWithdrawalBody,
  LimitsBody,
  UsageView,
  toUsageView,
  ListAccountsQuery,
  SetupStatusView,
  SignatureBody,
  toAccountView,
  toConnectView,
  toSetupStatusView,
} from './schemas.js';

const tag = 'platform-accounts';
const auth = { 401: ['unauthorized'] };
const write = { 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] };
/** Why a mailbox did not connect (lib/connectors/mailbox/settings.ts). */
const MAIL_CONNECT_CODES: MailConnectReason[] = [
  'invalid_credentials',
  'auth_failed',
  'host_unreachable',
  'tls_failed',
  'blocked_destination',
];

export const listAccountsOp = defineOperation({
  method: 'GET',
  path: '/api/platform-accounts',
  summary: 'The workspace’s sender accounts, oldest first, optionally by channel and status',
  tag,
  auth: 'user',
  query: ListAccountsQuery,
  responses: { 200: AccountPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) =>
    page(
      await listAccounts(em, actor, { channel: query.channel, status: query.status }, toPageRequest(query)),
      query.limit,
      toAccountView,
    ),
});

export const createAccountOp = defineOperation({
  method: 'POST',
  path: '/api/platform-accounts',
  summary: 'Create a sender account (email mailbox or professional-network profile); connect it next',
  description: 'The time zone is required and must be an IANA name: working hours and daily caps follow it.',
  tag,
  auth: 'user',
  body: CreateAccountBody,
  responses: { 201: AccountView },
  errors: {
    400: ['invalid_body', 'invalid_time_zone', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'plan_limit_reached', 'demo_read_only'],
  },
  handler: async ({ em, actor, body, services }) => {
    const account = await createAccount(em, actor, services.connector.name, {
      channel: body.channel,
      displayName: body.display_name,
      timeZone: body.time_zone,
      workingHours: body.working_hours,
    });
    return reply(201, toAccountView(account));
  },
});

export const deleteAccountOp = defineOperation({
  method: 'DELETE',
  path: '/api/platform-accounts/{id}',
  ids: { path: { id: 'account' }, body: { reassign_to: { kind: 'account', missing: [400, 'invalid_reassign_to'] } } },
  summary: 'Delete a sender account: it is disconnected at the connector first',
  description:
    'Active campaigns sending from the account must be handled: `on_campaigns: "reassign"` (with `reassign_to`) or `"pause"`; without it the deletion is refused with 409 `account_in_use` while any depends on it. A connector failure keeps the account (502).',
  tag,
  auth: 'user',
  params: IdParams,
  body: DeleteAccountBody,
  responses: { 204: null },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_reassign_to', 'invalid_user'],
    ...auth,
    ...write,
    409: ['account_in_use'],
    502: ['connector_unavailable'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    await deleteAccount(em, actor, services.connector, params.id, {
      onCampaigns: body.on_campaigns,
      reassignTo: body.reassign_to,
    });
    return reply(204, undefined);
  },
});

export const connectAccountOp = defineOperation({
  method: 'POST',
  path: '/api/platform-accounts/{id}/connect',
  ids: { path: { id: 'account' } },
  summary: 'Connect the account at the connector: a hosted link to open, or connected at once with credentials',
  description:
    'An email account may connect its own mailbox with SMTP and IMAP credentials (docs/email.md "Connecting a mailbox"): both servers are checked before the answer, and a failure is 400 with the reason as its code and `details.side` (`smtp`, `imap`, or null for a field error): `invalid_credentials` (a field missing or malformed), `auth_failed`, `host_unreachable`, `tls_failed`, `blocked_destination` (a private-network host). `not_email_account`: mailbox credentials on a network account.',
  tag,
  auth: 'user',
  params: IdParams,
  body: ConnectBody,
  responses: { 200: ConnectView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user', 'not_email_account', ...MAIL_CONNECT_CODES],
    ...auth,
    ...write,
    409: ['already_connected'],
    502: ['connector_unavailable'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const { account, start } = await connectAccount(
      em,
      actor,
      services.connector,
      services.config.encryptionKey,
      params.id,
      {
        credentials: body.credentials,
        returnUrl: body.return_url,
      },
    );
    if (account.connector === MAIL_CONNECTOR && account.status === 'connected') {
      // The mailbox's INBOX follower (replies, bounces, unsubscribes). A start that fails is logged
      // rather than failing a connect that succeeded (a retry would meet 409 already_connected):
      // reconciliation starts every connected mailbox's sync that is not running.
      await services.jobs
        .start('mailbox-sync', { accountId: account.id, workspaceId: actor.workspaceId })
        .catch((err: unknown) =>
          services.logger.warn({ err: String(err), accountId: account.id }, 'mailbox sync not started'),
        );
    }
    return toConnectView(account, start);
  },
});

export const setSignatureOp = defineOperation({
  method: 'PATCH',
  path: '/api/platform-accounts/{id}/email-signature',
  ids: { path: { id: 'account' } },
  summary: 'Set (or clear with null) the signature appended to emails sent from an email account',
  tag,
  auth: 'user',
  params: IdParams,
  body: SignatureBody,
  responses: { 200: AccountView },
  errors: { 400: ['invalid_id', 'invalid_body', 'not_email_account', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, body }) =>
    toAccountView(await setSignature(em, actor, params.id, body.signature)),
});

export const enrichAccountOp = defineOperation({
  method: 'POST',
  path: '/api/platform-accounts/{id}/enrich',
  ids: { path: { id: 'account' } },
  summary: 'Fetch the account’s own profile at the connector (name, headline, address) and store it',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: AccountView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...auth,
    ...write,
    409: ['not_connected'],
    502: ['connector_unavailable'],
  },
  handler: async ({ em, actor, params, services }) =>
    toAccountView(await enrichAccount(em, actor, services.connector, params.id)),
});

export const inviteWithdrawalOp = defineOperation({
  method: 'PATCH',
  path: '/api/platform-accounts/{id}/invite-withdrawal',
  ids: { path: { id: 'account' } },
  summary: 'Withdraw pending invitations older than N days automatically (a daily scheduled workflow does it)',
  tag,
  auth: 'user',
  params: IdParams,
  body: InviteWithdrawalBody,
  responses: { 200: AccountView },
  errors: { 400: ['invalid_id', 'invalid_body', 'not_network_account', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, body }) =>
    toAccountView(
      await setInviteWithdrawal(em, actor, params.id, { enabled: body.enabled, afterDays: body.after_days }),
    ),
});

export const setupStatusOp = defineOperation({
  method: 'GET',
  path: '/api/platform-accounts/{id}/setup-status',
  ids: { path: { id: 'account' } },
  summary:
    'The connection at the connector now and, for email, the sending domain’s SPF, DKIM and DMARC with what to fix',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: SetupStatusView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 404: ['not_found'] },
  handler: async ({ em, actor, params, services }) => {
    const s = await setupStatus(
      em,
      actor,
      services.connector,
      services.dns,
      services.config.dns.dkimSelectors,
      params.id,
      { encryptionKey: services.config.encryptionKey, publicBaseUrl: services.config.publicBaseUrl },
    );
    return toSetupStatusView(s.account, s.connector, s.domain, s.steps, s);
  },
});

export const skipWarmupOp = defineOperation({
  method: 'PATCH',
  path: '/api/platform-accounts/{id}/warmup-skip',
  ids: { path: { id: 'account' } },
  summary: 'End the warm-up ramp now: the account gets its full caps (idempotent)',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: AccountView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params }) => toAccountView(await skipWarmup(em, actor, params.id)),
});

export const setLimitsOp = defineOperation({
  method: 'PATCH',
  path: '/api/platform-accounts/{id}/limits',
  ids: { path: { id: 'account' } },
  summary: 'Set daily and weekly caps per action type, the minimum gap and its jitter, within the plan’s bounds',
  description:
    'Caps given replace that action type’s; types not given keep theirs. The governor applies them at send time (docs/governor.md).',
  tag,
  auth: 'user',
  params: IdParams,
  body: LimitsBody,
  responses: { 200: AccountView },
  errors: { 400: ['invalid_id', 'invalid_body', 'invalid_limits', 'invalid_user'], ...auth, ...write },
  handler: async ({ em, actor, params, body }) =>
    toAccountView(
      await setLimits(em, actor, params.id, {
        caps: body.caps,
        minGapSeconds: body.min_gap_seconds,
        jitterSeconds: body.jitter_seconds,
      }),
    ),
});

export const usageOp = defineOperation({
  method: 'GET',
  path: '/api/platform-accounts/{id}/usage',
  ids: { path: { id: 'account' } },
  summary:
    'Today’s and this week’s actions per type against the caps in force, the warm-up day, and when the next slot opens',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: UsageView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    const { account, usage } = await accountUsage(em, actor, params.id);
    return toUsageView(account, usage);
  },
});
