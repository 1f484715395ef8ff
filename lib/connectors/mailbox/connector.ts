// The mail connector: an email account connected with its own SMTP/IMAP credentials (docs/email.md).
// Connect verifies both sides and the routing connector (lib/connectors/routing.ts) sends every later
// call for a `mail:<accountId>` id here. Sends are composed once (compose.ts), go out through the
// account's SMTP pool (pools.ts) and are filed in its Sent folder (sent-folder.ts), where a retry
// after an unknown outcome looks first: the lead receives a message once. Receiving is the mailbox
// sync's (workflows/mailbox.ts, which opens the INBOX through `openInbox`), so the inbox methods
// answer empty pages.
import type { ImapFlow } from 'imapflow';
import type { Resolver } from '../../outbound-http.js';
import { logger } from '../../logger.js';
import {
  ConnectorError,
  type AccountConnector,
  type AccountProfile,
  type AttachmentStream,
  type Chat,
  type ChatMessage,
  type ConnectInput,
  type ConnectorAccountStatus,
  type ConnectStart,
  type InboundEvent,
  type InvitationResult,
  type Page,
  type PendingInvitation,
  type SendEmailInput,
  type SendResult,
} from '../types.js';
import {
  accountIdOf,
  loadMailAccount,
  MAIL_CONNECTOR,
  mailConnectorAccountId,
  type MailAccount,
  type MailAccountLookup,
} from './account.js';
import { imapClient, mailFailure, smtpTransport } from './clients.js';
import { composeMessage, messageIdFor, referencesOf } from './compose.js';
import { resolveMailHost, type MailHostPolicy } from './guard.js';
import { SmtpPools } from './pools.js';
import { ImapSessions } from './imap-sessions.js';
import { InboxReader, type MailboxProvider, type ReaderOptions } from './reader.js';
import { appendToSent, findByMessageId, sentFolder } from './sent-folder.js';
import type { MailTokenSource } from './oauth.js';
import {
  finalReason,
  MailConnectError,
  parseMailCredentials,
  type MailEndpoint,
  type MailSettings,
} from './settings.js';

export interface MailConnectorOptions {
  /** The stored accounts: the domain's lookup (domain/mailbox/accounts.ts). */
  accounts: MailAccountLookup;
  /** Unseals the credentials connect stored on the account (config.encryptionKey). */
  encryptionKey: Buffer;
  /** OUTBOUND_ALLOW_HOSTS: local or internal mail servers allowed despite the private-network rule. */
  allowHosts: readonly string[];
  resolver?: Resolver;
  /** The bound on a status check's IMAP login (default 15 s). */
  statusTimeoutMs?: number;
  /** OAuth mailboxes' access tokens (domain/mailbox/oauth-tokens.ts): without it an OAuth mailbox cannot be used. */
  tokens?: MailTokenSource;
}

const STATUS_CONCURRENCY = 4;
/** An error's own message, without the `mail: <code>: ` prefix ProviderError adds. */
const bare = (err: Error) => err.message.replace(/^mail: \w+: /, '');
const empty = <T>(): Page<T> => ({ items: [], cursor: null });
const notMail = (what: string) =>
  new ConnectorError(MAIL_CONNECTOR, 'invalid_request', `${what} is not available on an email mailbox`);

export class MailConnector implements AccountConnector, MailboxProvider {
  readonly name = MAIL_CONNECTOR;
  readonly pools = new SmtpPools();
  readonly sessions = new ImapSessions();
  private readonly policy: MailHostPolicy;

  constructor(private readonly opts: MailConnectorOptions) {
    this.policy = { allowHosts: opts.allowHosts, resolver: opts.resolver };
  }

  /** Checks the credentials on both sides at once (SMTP EHLO + AUTH, IMAP LOGIN + SELECT INBOX); MailConnectError naming the side that failed. */
  async connect(input: ConnectInput): Promise<ConnectStart> {
    if (input.channel !== 'email')
      throw new ConnectorError(MAIL_CONNECTOR, 'invalid_request', 'only an email account connects a mailbox');
    const settings = parseMailCredentials(input.credentials ?? {});
    const [smtp, imap] = await Promise.allSettled([this.verifySmtp(settings), this.verifyImap(settings)]);
    // Both sides are tried; SMTP's failure is reported first, so the answer does not depend on timing.
    for (const r of [smtp, imap]) if (r.status === 'rejected') throw r.reason;
    // New credentials: a pool or a session on the old ones must not be used again.
    this.pools.drop(input.accountId);
    this.sessions.drop(input.accountId);
    return {
      connectorAccountId: mailConnectorAccountId(input.accountId),
      kind: 'connected',
      url: null,
      expiresAt: null,
      connector: MAIL_CONNECTOR,
      address: settings.address,
    };
  }

  /**
   * A live IMAP login (bounded): `connected`; credentials refused (or a revoked OAuth grant) →
   * `disconnected` with `finalReason`'s reason; an unknown account → `disconnected`/`not_found`. Any
   * other failure — an unreachable server, TLS, a host the outbound policy now refuses — throws
   * `unavailable` with the failure's reason in `details.reason`: retried, the stored status stands.
   */
  async status(connectorAccountId: string): Promise<ConnectorAccountStatus> {
    const down = (reason: string, address: string | null = null): ConnectorAccountStatus => ({
      connectorAccountId,
      state: 'disconnected',
      reason,
      address,
    });
    const account = await this.account(connectorAccountId).catch((err: unknown) => {
      // Stored settings that no longer parse need new credentials (a revoked OAuth grant: its reason);
      // no stored settings: no such account. A token endpoint that did not answer is retried.
      if (err instanceof MailConnectError) {
        const final = finalReason(err);
        if (final) return down(final);
        throw new ConnectorError(MAIL_CONNECTOR, 'unavailable', bare(err), { reason: err.reason });
      }
      if (err instanceof ConnectorError && err.retryable) throw err;
      if (err instanceof ConnectorError) return down('not_found');
      throw err;
    });
    if (!('settings' in account)) return account;
    const address = account.settings.address;
    try {
      await withFreshToken(account.settings.imap, 'imap', (imap) =>
        this.verifyImap({ ...account.settings, imap }, this.opts.statusTimeoutMs ?? 15_000),
      );
      return { connectorAccountId, state: 'connected', reason: null, address };
    } catch (err) {
      const f = mailFailure(err, 'imap');
      const final = finalReason(f);
      if (final) return down(final, address);
      throw new ConnectorError(MAIL_CONNECTOR, 'unavailable', bare(f), { reason: f.reason });
    }
  }

  /**
   * Each account's status, a few logins at once. An account whose check failed for a reason that is
   * retried answers `pending` with the `problem` (reconciliation records it and asks again next run).
   */
  async statuses(connectorAccountIds: string[]): Promise<ConnectorAccountStatus[]> {
    const out: ConnectorAccountStatus[] = [];
    const queue = [...connectorAccountIds];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        try {
          out.push(await this.status(id));
        } catch (err) {
          if (!(err instanceof ConnectorError)) throw err;
          out.push({
            connectorAccountId: id,
            state: 'pending',
            reason: null,
            address: null,
            problem: { reason: err.details.reason ?? err.code, message: bare(err) },
          });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(STATUS_CONCURRENCY, queue.length) }, worker));
    return out;
  }

  /** Closes the account's SMTP pool; the credentials go with the account row. */
  async disconnect(connectorAccountId: string): Promise<void> {
    this.pools.drop(accountIdOf(connectorAccountId));
    this.sessions.drop(accountIdOf(connectorAccountId));
  }

  async profile(connectorAccountId: string): Promise<AccountProfile> {
    const a = await this.account(connectorAccountId);
    return {
      name: a.settings.fromName ?? a.displayName,
      headline: null,
      profileUrl: null,
      email: a.settings.address,
      pictureUrl: null,
    };
  }

  async sendEmail(connectorAccountId: string, input: SendEmailInput): Promise<SendResult> {
    const account = await this.account(connectorAccountId);
    const { settings } = account;
    const messageId = messageIdFor(input.idempotencyKey, settings.address);
    if (input.retry) {
      // The first attempt's outcome is unknown: its copy in Sent means it went out.
      const sentAt = await this.withSession(account.accountId, settings, async (c, memo) => {
        const path = (memo.get('sent') as string | undefined) ?? (await sentFolder(c, { create: false }));
        return path ? findByMessageId(c, path, messageId) : null;
      }).catch((err: unknown) => {
        // Not knowing is no licence to send again: an unreachable server is retried, refused credentials fail.
        throw sendFailure(mailFailure(err, 'imap'));
      });
      if (sentAt) return { messageId, threadId: referencesOf(input)[0] ?? messageId, sentAt };
    }
    const sender = { address: settings.address, name: settings.fromName ?? account.displayName };
    const message = await composeMessage(sender, input);
    const transport = await this.pools
      .get(account.accountId, settings.smtp, async () =>
        smtpTransport(settings.smtp, await resolveMailHost('smtp', settings.smtp, this.policy), { pool: true }),
      )
      .catch((err: unknown) => {
        throw sendFailure(err);
      });
    try {
      await transport.sendMail({ envelope: message.envelope, raw: message.raw });
    } catch (err) {
      const failure = sendFailure(err);
      // Not the server's answer to this message: the next send starts a fresh pool (and resolves the host again).
      if (failure.code !== 'invalid_request') this.pools.drop(account.accountId);
      // An OAuth mailbox's token refused: a new one (MailConnectError `oauth_revoked` when the grant is
      // gone, the account then disconnected), and the retry logs in with it on a fresh pool.
      if (failure.code === 'auth' && settings.smtp.renew) {
        await settings.smtp.renew(settings.smtp.accessToken);
        throw new ConnectorError(MAIL_CONNECTOR, 'unavailable', `${bare(failure)} (a new access token was fetched)`);
      }
      throw failure;
    }
    // Sent: a failed copy is a missing copy, not a failed send. A tracked email's copy is composed
    // without its pixel and redirects (same Message-ID and date), so the sender reading it records
    // no open or click of the prospect's.
    const copy = input.tracking
      ? (await composeMessage(sender, { ...input, tracking: undefined }, message.sentAt)).raw
      : message.raw;
    const fileCopy = () =>
      this.withSession(account.accountId, settings, async (c, memo) => {
        const path = (memo.get('sent') as string | undefined) ?? (await sentFolder(c, { create: true }))!;
        memo.set('sent', path);
        // A copy the failed attempt filed after all is found here, not filed twice.
        return appendToSent(c, path, copy, messageId, message.sentAt);
      });
    // A failed use closes the kept session (imap-sessions.ts), so the second attempt logs in afresh.
    const sentCopyError = await fileCopy()
      .catch(() => fileCopy())
      .then(
        () => undefined,
        (err: unknown) => {
          logger.warn(
            { err: String(err), accountId: account.accountId, messageId },
            'mail: the sent message was not copied to the Sent folder (tried twice)',
          );
          return `the copy in the Sent folder failed (tried twice): ${bare(mailFailure(err, 'imap'))}`.slice(0, 500);
        },
      );
    return {
      messageId,
      threadId: message.threadId,
      sentAt: message.sentAt,
      ...(sentCopyError ? { sentCopyError } : {}),
    };
  }

  /** The account's INBOX for the mailbox sync (reader.ts), on a connection of its own (not sending's kept session). */
  async openInbox(
    connectorAccountId: string,
    opts: ReaderOptions = {},
  ): Promise<{ address: string; reader: InboxReader }> {
    const { settings } = await this.account(connectorAccountId);
    const reader = await withFreshToken(settings.imap, 'imap', (imap) => InboxReader.open(imap, this.policy, opts));
    return { address: settings.address, reader };
  }

  async sendInvitation(): Promise<InvitationResult> {
    throw notMail('an invitation');
  }
  async sendMessage(): Promise<SendResult> {
    throw notMail('a network message');
  }
  async pendingInvitations(): Promise<Page<PendingInvitation>> {
    throw notMail('an invitation');
  }
  async withdrawInvitation(): Promise<void> {
    throw notMail('an invitation');
  }
  /** The inbox gets mail through the mailbox sync, not by listing chats here. */
  async chats(): Promise<Page<Chat>> {
    return empty();
  }
  async messages(): Promise<Page<ChatMessage>> {
    return empty();
  }
  async attachment(): Promise<AttachmentStream> {
    throw notMail('reading an attachment through the connector');
  }
  parseInbound(): InboundEvent {
    throw new ConnectorError(
      MAIL_CONNECTOR,
      'invalid_request',
      'the mail connector has no inbound hook: mail arrives through the mailbox sync',
    );
  }

  async close(): Promise<void> {
    this.pools.closeAll();
    this.sessions.closeAll();
  }

  private account(connectorAccountId: string): Promise<MailAccount> {
    return loadMailAccount(this.opts.accounts, this.opts.encryptionKey, connectorAccountId, this.opts.tokens);
  }

  /**
   * Checks an OAuth mailbox before it is stored (the OAuth callback): SMTP and IMAP both log in with
   * XOAUTH2 and the access token the exchange gave; MailConnectError naming the side that failed.
   * Pools and sessions of the account's earlier credentials are dropped.
   */
  async verifyOAuth(accountId: string, settings: MailSettings): Promise<void> {
    const [smtp, imap] = await Promise.allSettled([this.verifySmtp(settings), this.verifyImap(settings)]);
    for (const r of [smtp, imap]) if (r.status === 'rejected') throw r.reason;
    this.pools.drop(accountId);
    this.sessions.drop(accountId);
  }

  /** EHLO (+ STARTTLS) + AUTH on a one-off connection. */
  private async verifySmtp(settings: MailSettings): Promise<void> {
    try {
      const transport = smtpTransport(settings.smtp, await resolveMailHost('smtp', settings.smtp, this.policy));
      try {
        await transport.verify();
      } finally {
        transport.close();
      }
    } catch (err) {
      throw mailFailure(err, 'smtp');
    }
  }

  /** LOGIN + SELECT INBOX, within `timeoutMs` when given. */
  private verifyImap(settings: MailSettings, timeoutMs?: number): Promise<void> {
    return this.withImap(settings, async (c) => void (await c.mailboxOpen('INBOX', { readOnly: true })), timeoutMs);
  }

  /** Runs `fn` in a logged-in IMAP session (closed after); failures as MailConnectError. */
  /** `fn` on the account's kept IMAP session (imap-sessions.ts): sending's Sent lookup and copy. */
  private withSession<T>(
    accountId: string,
    settings: MailSettings,
    fn: (c: ImapFlow, memo: Map<string, unknown>) => Promise<T>,
  ): Promise<T> {
    return this.sessions.run(
      accountId,
      settings.imap,
      async () => imapClient(settings.imap, await resolveMailHost('imap', settings.imap, this.policy)),
      fn,
    );
  }

  private async withImap<T>(settings: MailSettings, fn: (c: ImapFlow) => Promise<T>, timeoutMs?: number): Promise<T> {
    const target = await resolveMailHost('imap', settings.imap, this.policy);
    const client = imapClient(settings.imap, target);
    // imapflow also reports socket failures as 'error' events; the awaited calls carry them.
    client.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    const deadline = timeoutMs
      ? new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new MailConnectError(
                  'host_unreachable',
                  'imap',
                  `the IMAP server did not answer within ${timeoutMs} ms`,
                ),
              ),
            timeoutMs,
          );
        })
      : null;
    try {
      const run = (async () => {
        await client.connect();
        return fn(client);
      })();
      // Past the deadline the session is closed below, and its rejection is nobody's to handle.
      run.catch(() => undefined);
      const out = await (deadline ? Promise.race([run, deadline]) : run);
      await client.logout().catch(() => undefined);
      return out;
    } catch (err) {
      client.close();
      throw mailFailure(err, 'imap');
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * `fn` on an OAuth mailbox's endpoint; when the server refuses its access token (a token revoked or
 * expired early at the provider), once more with a new one from the token store — which throws
 * MailConnectError `oauth_revoked` when the grant itself is gone. A password endpoint: `fn` once.
 */
async function withFreshToken<T>(
  e: MailEndpoint,
  side: 'smtp' | 'imap',
  fn: (e: MailEndpoint) => Promise<T>,
): Promise<T> {
  try {
    return await fn(e);
  } catch (err) {
    if (!e.renew || !e.accessToken || mailFailure(err, side).reason !== 'auth_failed') throw err;
    const t = await e.renew(e.accessToken);
    return fn({ ...e, accessToken: t.accessToken, accessTokenExpiresAt: t.expiresAt });
  }
}

/**
 * An SMTP send's failure as the executor reads it: refused for good (5xx: this message or recipient)
 * → `invalid_request`, the action fails; credentials refused → `auth`; anything else (4xx, network,
 * timeout) → `unavailable`, retried.
 */
export function sendFailure(err: unknown): ConnectorError {
  if (err instanceof MailConnectError) {
    if (err.reason === 'auth_failed') return new ConnectorError(MAIL_CONNECTOR, 'auth', bare(err));
    // Only refused credentials and a revoked grant are final (finalReason, as for reconciliation and
    // the sync): a host the outbound policy now refuses, or TLS that fails, is retried like an
    // unreachable server (within the send's retry budget), not failed at the first attempt.
    if (finalReason(err)) return err;
    return new ConnectorError(MAIL_CONNECTOR, 'unavailable', bare(err), { reason: err.reason });
  }
  if (err instanceof ConnectorError) return err;
  const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
  const detail = (e.response ?? e.message ?? 'send failed').slice(0, 300);
  if (e.code === 'EAUTH' || e.responseCode === 535 || e.responseCode === 534)
    return new ConnectorError(MAIL_CONNECTOR, 'auth', `the SMTP server refused the credentials: ${detail}`);
  if (typeof e.responseCode === 'number' && e.responseCode >= 500)
    return new ConnectorError(MAIL_CONNECTOR, 'invalid_request', `the SMTP server refused the message: ${detail}`, {
      status: e.responseCode,
    });
  const why =
    typeof e.responseCode === 'number'
      ? `the SMTP server deferred the message: ${detail}`
      : `the SMTP server could not be reached: ${detail}`;
  return new ConnectorError(
    MAIL_CONNECTOR,
    'unavailable',
    why,
    typeof e.responseCode === 'number' ? { status: e.responseCode } : {},
  );
}
