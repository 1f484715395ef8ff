// Sender (platform) accounts of a workspace (docs/accounts.md): mailboxes on the email network and
// profiles on the professional network, attached through the connector. Everyone in the workspace
// reads them; owners and admins create, connect, change and delete them. Secrets given at connect
// time are sealed (lib/crypto.ts) and never returned.
import { canonicalZone } from '../contacts/time-zone.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Campaign, type ICampaign } from '../../db/entities/Campaign.js';
import { PlatformAccount, type IPlatformAccount, type WorkingHours } from '../../db/entities/PlatformAccount.js';
import { Workspace } from '../../db/entities/Workspace.js';
import type { AccountConnector, Channel, ConnectStart } from '../../lib/connectors/types.js';
import { ConnectorError } from '../../lib/connectors/types.js';
import { isMailCredentials, MailConnectError } from '../../lib/connectors/mailbox/settings.js';
import { encrypt } from '../../lib/crypto.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import type { DnsResolver } from '../../lib/dns.js';
import { observedAt } from '../event-order.js';
import { applyAccountStatus, recordConnectionProblem } from './status.js';
import { deliverabilityWarnings, mailboxSetup, type MailboxSetup, type SetupWarning } from './deliverability.js';
import { checkSendingDomain, mailboxDomain, type DomainCheck } from './sending-domain.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { usage, validateCaps, type ActionUsage, type LimitsInput } from '../governor/governor.js';
import { entitlementsFor, requireWithinLimit } from '../billing/plans.js';
import { requireManager } from '../access.js';

/** Pending invitations older than this are withdrawn when the setting is on without a number. */
export const DEFAULT_WITHDRAWAL_DAYS = 21;
export const WITHDRAWAL_DAYS = { min: 7, max: 180 };

export const DEFAULT_WORKING_HOURS: WorkingHours = { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' };

const onlyManagers = (actor: Actor) => requireManager(actor, 'sender accounts');

/** A valid IANA time zone name (the runtime's tz database), in its canonical spelling; 400 otherwise. */
export function canonicalTimeZone(name: string): string {
  const zone = canonicalZone(name);
  if (zone === null)
    throw badRequest(
      'invalid_time_zone',
      `"${name}" is not an IANA time zone name (e.g. Europe/Berlin, America/New_York)`,
      [{ path: 'time_zone', message: 'unknown time zone' }],
    );
  return zone;
}

/** Loads an account of the actor's workspace; 404 for anything else (another workspace's id included). */
export async function requireAccount(em: EntityManager, actor: Actor, id: string): Promise<IPlatformAccount> {
  const account = await em.findOne(PlatformAccount, { id, workspace: actor.workspaceId });
  if (!account) throw notFound('platform account');
  return account;
}

export async function listAccounts(
  em: EntityManager,
  actor: Actor,
  filter: { channel?: Channel; status?: string },
  pageReq: PageRequest,
): Promise<IPlatformAccount[]> {
  const k = keyset(pageReq);
  return em.find(
    PlatformAccount,
    {
      workspace: actor.workspaceId,
      ...(filter.channel ? { channel: filter.channel } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...k.where,
    },
    k.options,
  );
}

export interface CreateAccountInput {
  channel: Channel;
  displayName: string;
  timeZone: string;
  workingHours?: WorkingHours;
}

export async function createAccount(
  em: EntityManager,
  actor: Actor,
  connectorName: string,
  input: CreateAccountInput,
): Promise<IPlatformAccount> {
  assertWritable(actor);
  onlyManagers(actor);
  const timeZone = canonicalTimeZone(input.timeZone);
  return em.transactional(async (tx) => {
    // One creation at a time per workspace, so two racing creates cannot both pass the plan limit.
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`platform-accounts:${actor.workspaceId}`]);
    await requireWithinLimit(
      tx,
      actor,
      'platformAccounts',
      await tx.count(PlatformAccount, { workspace: actor.workspaceId }),
    );
    const account = tx.create(PlatformAccount, {
      workspace: tx.getReference(Workspace, actor.workspaceId),
      channel: input.channel,
      displayName: input.displayName,
      timeZone,
      workingHours: input.workingHours ?? DEFAULT_WORKING_HOURS,
      connector: connectorName,
    });
    await tx.flush();
    return account;
  });
}

export interface ConnectResult {
  account: IPlatformAccount;
  start: ConnectStart;
}

/** The connector's failure as an API error: 502, with whether a retry may help. */
export function connectorFailure(err: unknown): never {
  if (err instanceof ConnectorError) {
    throw new AppError(502, 'connector_unavailable', `the connector failed: ${err.message}`, {
      error_class: err.code,
      retryable: ['rate_limited', 'unavailable', 'timeout'].includes(err.code),
    });
  }
  throw err;
}

/**
 * Starts (or restarts, after a disconnection) the connection at the connector. With credentials the
 * connector may connect at once; otherwise the answer carries the hosted link the user opens.
 * Mailbox credentials (an SMTP and an IMAP host: docs/email.md) connect an email account to the mail
 * connector, which checks both servers first: 400 with its reason (`invalid_credentials`,
 * `auth_failed`, `host_unreachable`, `tls_failed`, `blocked_destination`) and the side that failed;
 * 400 `not_email_account` for another channel. 409 `already_connected` for a connected account.
 */
export async function connectAccount(
  em: EntityManager,
  actor: Actor,
  connector: AccountConnector,
  encryptionKey: Buffer,
  id: string,
  input: { credentials?: Record<string, string>; returnUrl?: string },
): Promise<ConnectResult> {
  assertWritable(actor);
  onlyManagers(actor);
  const account = await requireAccount(em, actor, id);
  if (account.status === 'connected')
    throw conflict(
      'already_connected',
      'the account is connected; delete it or wait for a disconnection to connect again',
    );
  if (isMailCredentials(input.credentials) && account.channel !== 'email')
    throw badRequest('not_email_account', 'only an email account connects with mailbox (SMTP/IMAP) credentials');
  const askedAt = observedAt(new Date(), 'connect');
  const start = await connector
    .connect({
      channel: account.channel as Channel,
      accountId: account.id,
      displayName: account.displayName,
      credentials: input.credentials,
      returnUrl: input.returnUrl,
      // A reconnect after a disconnection: a connector that reconnects in place keeps this id.
      connectorAccountId: account.connectorAccountId ?? null,
    })
    .catch((err: unknown) => {
      if (err instanceof MailConnectError) throw new AppError(400, err.reason, err.message, { side: err.side });
      return connectorFailure(err);
    });
  account.connectorAccountId = start.connectorAccountId;
  // The connector that holds it now (a mailbox moves to `mail`; a hosted connection back to the default).
  account.connector = start.connector ?? connector.name;
  account.status = start.kind === 'connected' ? 'connected' : 'connecting';
  // A status report from before this connection (delivered late) is older than it: it changes nothing.
  account.statusEventAt = askedAt.at;
  account.statusEventId = askedAt.id;
  if (input.credentials) account.credentialsSealed = encrypt(JSON.stringify(input.credentials), encryptionKey);
  if (start.kind === 'connected') {
    account.connectedAt = new Date();
    account.disconnectedAt = null;
    account.statusReason = null;
    account.warmupStartedAt ??= account.connectedAt;
    if (start.address) {
      // Another mailbox behind the same account: its sync starts afresh (UIDs are per mailbox).
      if (account.address && account.address !== start.address)
        await em.execute(`delete from mailbox_cursors where account_id = ?`, [account.id]);
      account.address = start.address;
    } else {
      // The connect answer names no address: ask the connector's status once, so the answer carries it
      // (best effort: a failure leaves it to the next status read, which fills it in).
      const status = await connector.status(start.connectorAccountId).catch((err: unknown) => {
        if (err instanceof ConnectorError) return null;
        throw err;
      });
      if (status?.address) account.address = status.address;
    }
  }
  await em.flush();
  return { account, start };
}

/**
 * Deletes the account and disconnects it at the connector first (a connector failure keeps the
 * account: 502, nothing lost). Active or paused campaigns that send from it must be handled:
 * `on_campaigns: "reassign"` puts `reassign_to` in its place, `"pause"` pauses them (and removes the
 * account); without either, 409 `account_in_use`.
 */
export async function deleteAccount(
  em: EntityManager,
  actor: Actor,
  connector: AccountConnector,
  id: string,
  input: { onCampaigns?: 'reassign' | 'pause'; reassignTo?: string },
): Promise<void> {
  assertWritable(actor);
  onlyManagers(actor);
  const account = await requireAccount(em, actor, id);
  if (input.onCampaigns === 'reassign') {
    if (!input.reassignTo)
      throw badRequest('invalid_body', 'reassign_to is required when on_campaigns is "reassign"', [
        { path: 'reassign_to', message: 'required' },
      ]);
    const target = await em.findOne(PlatformAccount, { id: input.reassignTo, workspace: actor.workspaceId });
    if (!target || target.id === account.id)
      throw badRequest('invalid_reassign_to', 'reassign_to must name another sender account of the workspace');
    if (target.channel !== account.channel)
      throw badRequest('invalid_reassign_to', `reassign_to must be an ${account.channel} account like the one deleted`);
  }
  const dependent = await campaignsSendingFrom(em, actor.workspaceId, account.id);
  if (dependent.length && !input.onCampaigns) {
    throw new AppError(
      409,
      'account_in_use',
      `${dependent.length} active or paused campaign(s) send from this account: say on_campaigns "reassign" (with reassign_to) or "pause"`,
      {
        campaign_ids: dependent.map((c) => c.id),
      },
    );
  }
  if (account.connectorAccountId) await connector.disconnect(account.connectorAccountId).catch(connectorFailure);
  await em.transactional(async (tx) => {
    for (const c of await campaignsSendingFrom(tx, actor.workspaceId, account.id)) {
      // Without this account a campaign sends from the others; one left with none is paused either way.
      const rest = c.accountIds.filter((a) => a !== account.id);
      c.accountIds = input.onCampaigns === 'reassign' ? [...new Set([...rest, input.reassignTo!])] : rest;
      if (input.onCampaigns === 'pause' || !c.accountIds.length) {
        if (c.status === 'active') {
          c.status = 'paused';
          c.pausedAt = new Date();
        }
      }
    }
    await tx.flush();
    await tx.nativeDelete(PlatformAccount, { id: account.id, workspace: actor.workspaceId });
  });
}

/** Active or paused campaigns of the workspace whose sender accounts include `accountId`. */
async function campaignsSendingFrom(em: EntityManager, workspaceId: string, accountId: string): Promise<ICampaign[]> {
  const ids: { id: string }[] = await em.execute(
    `select id from campaigns where workspace_id = ? and status in ('active', 'paused') and account_ids @> ?::jsonb`,
    [workspaceId, JSON.stringify([accountId])],
  );
  return ids.length ? em.find(Campaign, { id: { $in: ids.map((r) => r.id) } }) : [];
}

export async function setSignature(
  em: EntityManager,
  actor: Actor,
  id: string,
  signature: string | null,
): Promise<IPlatformAccount> {
  assertWritable(actor);
  onlyManagers(actor);
  const account = await requireAccount(em, actor, id);
  if (account.channel !== 'email') throw badRequest('not_email_account', 'only email accounts have a signature');
  account.signature = signature;
  await em.flush();
  return account;
}

/** Fetches the account's own profile at the connector and stores it. 409 `not_connected` before a connection. */
export async function enrichAccount(
  em: EntityManager,
  actor: Actor,
  connector: AccountConnector,
  id: string,
): Promise<IPlatformAccount> {
  assertWritable(actor);
  onlyManagers(actor);
  const account = await requireAccount(em, actor, id);
  if (account.status !== 'connected' || !account.connectorAccountId)
    throw conflict('not_connected', 'connect the account first');
  const profile = await connector.profile(account.connectorAccountId).catch(connectorFailure);
  account.profile = {
    name: profile.name,
    headline: profile.headline,
    profile_url: profile.profileUrl,
    email: profile.email,
    picture_url: profile.pictureUrl,
  };
  account.profileFetchedAt = new Date();
  account.address ??= account.channel === 'email' ? profile.email : profile.profileUrl;
  await em.flush();
  return account;
}

export async function setInviteWithdrawal(
  em: EntityManager,
  actor: Actor,
  id: string,
  input: { enabled: boolean; afterDays?: number },
): Promise<IPlatformAccount> {
  assertWritable(actor);
  onlyManagers(actor);
  const account = await requireAccount(em, actor, id);
  if (account.channel !== 'network')
    throw badRequest('not_network_account', 'only professional-network accounts send invitations');
  account.inviteWithdrawalDays = input.enabled
    ? (input.afterDays ?? account.inviteWithdrawalDays ?? DEFAULT_WITHDRAWAL_DAYS)
    : null;
  await em.flush();
  return account;
}

/** Ends the warm-up ramp now: the account gets its full caps at once (idempotent). */
export async function skipWarmup(em: EntityManager, actor: Actor, id: string): Promise<IPlatformAccount> {
  assertWritable(actor);
  onlyManagers(actor);
  const account = await requireAccount(em, actor, id);
  account.warmupSkippedAt ??= new Date();
  await em.flush();
  return account;
}

/**
 * Reads the account's status at the connector now and applies it (a disconnection found here is
 * reported like one found by reconciliation). A connector failure is reported, not thrown: the
 * stored status is then the latest known.
 */
export async function refreshStatus(
  em: EntityManager,
  connector: AccountConnector,
  account: IPlatformAccount,
): Promise<{ state: string | null; reason: string | null; error: string | null }> {
  if (!account.connectorAccountId) return { state: null, reason: null, error: null };
  try {
    const askedAt = observedAt(new Date(), 'check');
    const status = await connector.status(account.connectorAccountId);
    await applyAccountStatus(em, status, 'check', askedAt);
    await em.refresh(account);
    return { state: status.state, reason: status.reason, error: null };
  } catch (err) {
    if (!(err instanceof ConnectorError)) throw err;
    // The check failed for a reason that is retried: the status stands and the problem is kept for the
    // setup status until a check succeeds (docs/email.md "What each failure means").
    await recordConnectionProblem(
      em,
      account.connectorAccountId,
      { reason: err.details.reason ?? err.code, message: err.message.replace(/^\w+: \w+: /, '') },
      'check',
    );
    await em.refresh(account);
    return { state: null, reason: null, error: `${err.code}: ${err.message}` };
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A hosted connection finished at the connector (Unipile's notify callback, already authenticated):
 * our account `accountId` takes the connector's id for it — only while it holds the provisional id
 * `connect` gave it, or that id already (a reconnect, or a repeated callback), and only when it is
 * on `connectorName` — then its status is read at the connector and applied like any check
 * (`refreshStatus`). 404 `not_found` for no such account there; 409 `already_linked` when it holds
 * another connection (or another account holds this one).
 */
export async function finishHostedConnection(
  em: EntityManager,
  connector: AccountConnector,
  input: { accountId: string; connectorAccountId: string; provisionalId: string; connectorName: string },
): Promise<{
  account: IPlatformAccount;
  connector: { state: string | null; reason: string | null; error: string | null };
}> {
  const unknown = () => notFound('account');
  if (!UUID.test(input.accountId)) throw unknown();
  const [row] = await em.execute<{ connector: string; connector_account_id: string | null }[]>(
    `select connector, connector_account_id from platform_accounts where id = ?`,
    [input.accountId],
  );
  if (!row || row.connector !== input.connectorName) throw unknown();
  const linked = await em
    .execute<{ id: string }[]>(
      `update platform_accounts set connector_account_id = ?, updated_at = now()
        where id = ? and connector = ? and connector_account_id in (?, ?) returning id`,
      [input.connectorAccountId, input.accountId, input.connectorName, input.provisionalId, input.connectorAccountId],
    )
    .catch((err: unknown) => {
      // The (connector, connector_account_id) unique index: another of our accounts holds it.
      if ((err as { code?: string }).code === '23505' || /unique/i.test(String(err))) return [];
      throw err;
    });
  if (!linked.length)
    throw conflict(
      'already_linked',
      'the account holds another connection at the connector, or another account holds this one',
    );
  const account = await em.findOneOrFail(PlatformAccount, { id: input.accountId });
  const status = await refreshStatus(em, connector, account);
  return { account, connector: status };
}

export interface SetupStatus {
  account: IPlatformAccount;
  connector: { state: string | null; reason: string | null; error: string | null };
  domain: DomainCheck | null;
  steps: string[];
  /** The mail connector's mailbox: its provider and how it is connected (null for other accounts). */
  mailbox: MailboxSetup | null;
  /** Deliverability warnings: an http unsubscribe URL, a provider that needs OAuth (domain/accounts/deliverability.ts). */
  warnings: SetupWarning[];
}

/** What setup-status needs of the process: to read the mailbox's sealed hosts, and the unsubscribe URL's base. */
export interface SetupContext {
  encryptionKey: Buffer;
  publicBaseUrl: string;
}

/** The connector's status now, and for an email account the sending domain's records, with what to do next. */
export async function setupStatus(
  em: EntityManager,
  actor: Actor,
  connector: AccountConnector,
  dns: DnsResolver,
  selectors: string[],
  id: string,
  context: SetupContext,
): Promise<SetupStatus> {
  const account = await requireAccount(em, actor, id);
  // Demo accounts are never asked at the connector (and nothing is written for them).
  const live = actor.isDemo ? { state: null, reason: null, error: null } : await refreshStatus(em, connector, account);
  const domainName = account.channel === 'email' ? mailboxDomain(account.address ?? null) : null;
  const domain = domainName ? await checkSendingDomain(dns, domainName, selectors) : null;
  const steps: string[] = [];
  if (account.status === 'pending')
    steps.push(`connect the account: POST /api/platform-accounts/${account.id}/connect`);
  if (account.status === 'connecting') steps.push('finish the connection at the hosted link the connect call returned');
  if (account.status === 'disconnected')
    steps.push(
      `reconnect the account (${account.statusReason ?? 'disconnected'}): POST /api/platform-accounts/${account.id}/connect`,
    );
  if (account.channel === 'email' && account.status === 'connected' && !domainName)
    steps.push(`fetch the mailbox address: POST /api/platform-accounts/${account.id}/enrich`);
  for (const check of domain ? [domain.spf, domain.dkim, domain.dmarc] : []) if (check.fix) steps.push(check.fix);
  const problem = account.status === 'connected' ? account.connectionProblem : null;
  if (problem)
    steps.push(
      `the last connection check failed (${problem.reason}, ${problem.at}): it is retried on its own; if it lasts, check the mail server and OUTBOUND_ALLOW_HOSTS (${problem.message})`,
    );
  const mailbox = mailboxSetup(account, context.encryptionKey);
  return {
    account,
    connector: live,
    domain,
    steps,
    mailbox,
    warnings: deliverabilityWarnings(account, mailbox, context.publicBaseUrl),
  };
}

/**
 * New caps (per action type given; others keep theirs), gap and jitter, within the plan's bounds
 * (400 `invalid_limits` with the allowed range of each offending field).
 */
export async function setLimits(
  em: EntityManager,
  actor: Actor,
  id: string,
  input: LimitsInput,
): Promise<IPlatformAccount> {
  assertWritable(actor);
  onlyManagers(actor);
  const account = await requireAccount(em, actor, id);
  validateCaps(input, (await entitlementsFor(em, actor.workspaceId)).entitlements.senderCaps);
  if (input.caps) account.caps = { ...account.caps, ...input.caps };
  if (input.minGapSeconds !== undefined) account.minGapSeconds = input.minGapSeconds;
  if (input.jitterSeconds !== undefined) account.jitterSeconds = input.jitterSeconds;
  await em.flush();
  return account;
}

/** The account's usage per action type against its caps (domain/governor/governor.ts). */
export async function accountUsage(
  em: EntityManager,
  actor: Actor,
  id: string,
  now = new Date(),
): Promise<{ account: IPlatformAccount; usage: ActionUsage[] }> {
  const account = await requireAccount(em, actor, id);
  return { account, usage: await usage(em, account, now) };
}
