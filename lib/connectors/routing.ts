// The connector a process hands out: the configured one (sandbox network or Unipile) for profiles and
// most accounts, and the mail connector for email accounts connected with their own SMTP/IMAP
// credentials. Chosen per call: a connect with mail credentials, or any call for a `mail:` id, goes
// to the mail connector; everything else to the configured one.
//
// Every call made as a sender account passes here, so this is where a refusal's meaning for the
// account is applied (`onRefusal`: domain/accounts/refusals.ts disconnects a lost account and
// throttles a rate-limited one) before the caller sees the error.
import { isMailConnectorAccountId, MAIL_CONNECTOR } from './mailbox/account.js';
import type { MailConnector } from './mailbox/connector.js';
import { isMailCredentials } from './mailbox/settings.js';
import type {
  AccountConnector,
  ConnectInput,
  ConnectorAccountStatus,
  InboundEvent,
  NetworkConnector,
  NetworkProfile,
  ProfileQuery,
  SendEmailInput,
  SendNetworkInput,
} from './types.js';

type Base = NetworkConnector & AccountConnector;

/** Told of every refused account call before the caller sees the error (its own failure is logged by it, never thrown). */
export type RefusalSink = (connectorAccountId: string, err: unknown) => Promise<void>;

export class RoutingConnector implements NetworkConnector, AccountConnector {
  /** The configured connector's name: what new accounts record until a mailbox is connected. */
  readonly name: string;
  readonly serves: readonly string[];

  constructor(
    readonly base: Base,
    readonly mail: MailConnector,
    private readonly onRefusal?: RefusalSink,
  ) {
    this.name = base.name;
    this.serves = [base.name, MAIL_CONNECTOR];
  }

  private to(connectorAccountId: string): AccountConnector {
    return isMailConnectorAccountId(connectorAccountId) ? this.mail : this.base;
  }

  /** The call made as account `id`; a refusal goes to `onRefusal` first, then to the caller. */
  private async as<T>(id: string, call: (c: AccountConnector) => Promise<T>): Promise<T> {
    try {
      return await call(this.to(id));
    } catch (err) {
      // The refusal is the caller's answer whatever the sink does: its own failure is not thrown.
      if (this.onRefusal) await this.onRefusal(id, err).catch(() => undefined);
      throw err;
    }
  }

  findProfile(query: ProfileQuery, signal?: AbortSignal): Promise<NetworkProfile | null> {
    return this.base.findProfile(query, signal);
  }
  connect(input: ConnectInput, signal?: AbortSignal) {
    return (isMailCredentials(input.credentials) ? this.mail : this.base).connect(input, signal);
  }
  status(id: string, signal?: AbortSignal) {
    return this.to(id).status(id, signal);
  }
  /** Mail ids to the mail connector, the others to the configured one, both at once; answers in one list. */
  async statuses(ids: string[], signal?: AbortSignal): Promise<ConnectorAccountStatus[]> {
    const mail = ids.filter((id) => isMailConnectorAccountId(id));
    const rest = ids.filter((id) => !isMailConnectorAccountId(id));
    const [a, b] = await Promise.all([
      mail.length ? this.mail.statuses(mail) : [],
      rest.length ? this.base.statuses(rest, signal) : [],
    ]);
    return [...a, ...b];
  }
  disconnect(id: string, signal?: AbortSignal) {
    return this.to(id).disconnect(id, signal);
  }
  profile(id: string, signal?: AbortSignal) {
    return this.as(id, (c) => c.profile(id, signal));
  }
  sendEmail(id: string, input: SendEmailInput, signal?: AbortSignal) {
    return this.as(id, (c) => c.sendEmail(id, input, signal));
  }
  sendInvitation(id: string, input: SendNetworkInput, signal?: AbortSignal) {
    return this.as(id, (c) => c.sendInvitation(id, input, signal));
  }
  sendMessage(id: string, input: SendNetworkInput, signal?: AbortSignal) {
    return this.as(id, (c) => c.sendMessage(id, input, signal));
  }
  pendingInvitations(id: string, cursor: string | null, signal?: AbortSignal) {
    return this.as(id, (c) => c.pendingInvitations(id, cursor, signal));
  }
  withdrawInvitation(id: string, invitationId: string, signal?: AbortSignal) {
    return this.as(id, (c) => c.withdrawInvitation(id, invitationId, signal));
  }
  chats(id: string, cursor: string | null, signal?: AbortSignal) {
    return this.as(id, (c) => c.chats(id, cursor, signal));
  }
  messages(id: string, threadId: string, cursor: string | null, signal?: AbortSignal) {
    return this.as(id, (c) => c.messages(id, threadId, cursor, signal));
  }
  attachment(id: string, messageId: string, attachmentId: string, opts: { maxBytes: number; signal?: AbortSignal }) {
    return this.as(id, (c) => c.attachment(id, messageId, attachmentId, opts));
  }
  /** The connector's hook (`/hooks/connector`) is the configured connector's: mail has none. */
  parseInbound(rawBody: Buffer, headers: Record<string, string | undefined>): InboundEvent | null {
    return this.base.parseInbound(rawBody, headers);
  }
  async close(): Promise<void> {
    await Promise.all([this.base.close?.(), this.mail.close()]);
  }
}
