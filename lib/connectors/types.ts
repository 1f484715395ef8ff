// The messaging-network connector contract (DESIGN.md "External providers"): finding a person's
// professional-network profile, and the sender accounts (platform accounts) attached through it:
// connecting, status, sends, invitations, chats and inbound events. Two implementations: the local
// sandbox network (the default) and Unipile (./unipile; CONNECTOR_PROVIDER=unipile); email accounts
// connected with their own mailbox credentials are the mail connector's (./mailbox).
import { ProviderError, type ProviderErrorCode, type ProviderErrorDetails } from '../provider-http.js';

/** Who to find on the professional network. */
export interface ProfileQuery {
  fullName: string | null;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  companyDomain: string | null;
  email: string | null;
  /** A profile URL already known (then the lookup confirms it and returns its data). */
  profileUrl: string | null;
}

export interface NetworkProfile {
  /** Normalisable professional-network profile URL. */
  profileUrl: string;
  /** The connector's id of the person (its "provider id"). */
  providerId: string;
  fullName: string;
  firstName: string | null;
  lastName: string | null;
  headline: string | null;
  title: string | null;
  company: string | null;
  country: string | null;
}

/** The two messaging networks a platform account sends on. */
export const CHANNELS = ['email', 'network'] as const;
export type Channel = (typeof CHANNELS)[number];

/** How a connection is finished: the user opens a hosted link, or credentials were accepted at once. */
export interface ConnectStart {
  /** The connector's id of the account (`connector_account_id`), known from the start. */
  connectorAccountId: string;
  /** `hosted_link`: the user finishes at `url` (until `expiresAt`); `connected`: nothing more to do. */
  kind: 'hosted_link' | 'connected';
  url: string | null;
  expiresAt: Date | null;
  /** The connector that holds the account when it is not the process's default (`mail` for an SMTP/IMAP mailbox). */
  connector?: string;
  /** The mailbox address or profile URL when the connect already knows it. */
  address?: string | null;
}

export interface ConnectInput {
  channel: Channel;
  /** Our account id, echoed by the connector in its inbound events. */
  accountId: string;
  displayName: string;
  /** Credentials given directly (e.g. an IMAP/SMTP mailbox); absent for hosted authentication. */
  credentials?: Record<string, string>;
  /** Where the hosted flow sends the user back to. */
  returnUrl?: string;
  /**
   * The connector id the account already holds (a reconnect after a disconnection): a connector that
   * can reconnect in place (Unipile's `reconnect` link) keeps it; null or absent for a first connection.
   */
  connectorAccountId?: string | null;
}

export const CONNECTOR_ACCOUNT_STATES = ['pending', 'connected', 'disconnected'] as const;
export type ConnectorAccountState = (typeof CONNECTOR_ACCOUNT_STATES)[number];

/** An account as the connector sees it now. */
export interface ConnectorAccountStatus {
  connectorAccountId: string;
  state: ConnectorAccountState;
  /** Why it is disconnected (e.g. `credentials_expired`, `checkpoint`, `revoked`); null otherwise. */
  reason: string | null;
  /** The mailbox address or profile URL once known. */
  address: string | null;
  /**
   * The check failed for a reason that is retried, not final (a host unreachable or refused by the
   * outbound policy, a TLS failure: docs/email.md "What each failure means"). `state` is then
   * `pending`, which says nothing about a connection held: nothing changes but the problem, which is
   * kept on the account for its setup status.
   */
  problem?: { reason: string; message: string };
}

/** The account's own profile (what `enrich` stores). */
export interface AccountProfile {
  name: string | null;
  headline: string | null;
  profileUrl: string | null;
  email: string | null;
  pictureUrl: string | null;
}

export interface SendEmailInput {
  /** Our idempotency key (the scheduled action's id): a repeat returns the first send's ids. */
  idempotencyKey: string;
  to: string;
  subject: string;
  body: string;
  /** The conversation to reply in, when there is one. */
  threadId?: string | null;
  /**
   * Earlier messages of the thread, oldest first (their connector message ids): a follow-up replies to
   * the last (`In-Reply-To`) and lists them all (`References`), under "Re: " + `threadSubject`.
   */
  references?: string[];
  threadSubject?: string | null;
  /** The recipient's one-click unsubscribe URL (RFC 8058): `List-Unsubscribe` and `List-Unsubscribe-Post`. */
  unsubscribeUrl?: string | null;
  /** Appended to the body: the workspace's postal address (docs/email.md). */
  footer?: string | null;
  /**
   * Open and click tracking of the HTML part (docs/tracking.md), for connectors that compose the
   * message themselves (the mail connector): `openUrl` a 1×1 image appended to the body; `clickUrl(i)`
   * the href of the body's link i (0-based, in `linksOf` order; the footer's links are never rewritten).
   * The text part is sent as written either way.
   */
  tracking?: { openUrl: string | null; clickUrl: ((index: number) => string) | null };
  /** The send was claimed before (a retry after an unknown outcome): a connector that can look for the first send does so first. */
  retry?: boolean;
}

export interface SendNetworkInput {
  idempotencyKey: string;
  /** The counterpart's profile URL or the connector's provider id. */
  recipient: string;
  body: string;
  threadId?: string | null;
  /**
   * Whether the send was claimed before (a retry after an unknown outcome). A connector without
   * idempotency keys looks for the first send only then (Unipile: messaging.ts); absent: it looks.
   */
  retry?: boolean;
}

export interface SendResult {
  messageId: string;
  threadId: string;
  sentAt: Date;
  /**
   * The mail connector: the message went out but its copy could not be filed in the mailbox's Sent
   * folder (tried on the kept IMAP session, then once on a fresh one) — why. Absent otherwise.
   */
  sentCopyError?: string;
  /** The recipient's own id at the connector, when the connector resolved it (see InvitationResult). */
  recipientId?: string;
}

export interface InvitationResult {
  invitationId: string;
  sentAt: Date;
  /**
   * The recipient's own id at the connector (a member id), when the connector resolved it: an
   * acceptance event may name the member rather than the invitation (Unipile's `new_relation`), and
   * replies come from it. Kept on the action and the contact.
   */
  recipientId?: string;
}

export interface PendingInvitation {
  invitationId: string;
  recipient: string;
  sentAt: Date;
}

export interface Chat {
  threadId: string;
  counterpart: string;
  lastMessageAt: Date;
}

export interface ChatMessage {
  messageId: string;
  threadId: string;
  /** `out`: sent from the account; `in`: received. */
  direction: 'in' | 'out';
  from: string;
  body: string;
  sentAt: Date;
  attachments: { id: string; name: string; size: number }[];
  /** What the mail connector read in the headers (docs/email.md "Receiving"); absent on other networks. */
  mail?: InboundMailFacts;
}

/** How an inbound email was classified from its headers and structure (lib/connectors/mailbox/classify.ts). */
export interface InboundMailFacts {
  /** `unsubscribe`: a message to the List-Unsubscribe mailto address. */
  kind: 'reply' | 'auto_reply' | 'bounce' | 'unsubscribe';
  subject: string | null;
  inReplyTo: string | null;
  references: string[];
  /** A delivery status notification (RFC 3464): its class, status code, failed recipient and the message it reports on. */
  bounce?: {
    /** `delayed`: a delivery-delay warning (`Action: delayed`), recorded as a delay, never a bounce. */
    class: 'hard' | 'soft' | 'delayed';
    status: string | null;
    recipient: string | null;
    originalMessageId: string | null;
  };
  /** An out-of-office reply's return date (YYYY-MM-DD), when it names one. */
  returnDate?: string | null;
}

/** An attachment being read from the connector: never held whole in memory. */
export interface AttachmentStream {
  name: string;
  contentType: string;
  /** The declared length, when the connector gives one. */
  size: number | null;
  body: AsyncIterable<Buffer>;
}

export interface Page<T> {
  items: T[];
  /** Pass back to get the next page; null at the end. */
  cursor: string | null;
}

interface InboundEventBase {
  eventId: string;
  connectorAccountId: string;
  /**
   * When it happened, as the sender says (`created_at`); null or absent when it did not say, and then
   * the time we received it stands for it. Orders the events about one row (domain/event-order.ts).
   */
  occurredAt?: Date | null;
}

/** Events the connector pushes to `/hooks/connector` (verified, stored, then handled). */
export type InboundEvent = InboundEventBase &
  (
    | { type: 'message.received'; message: ChatMessage }
    | { type: 'invitation.accepted'; invitationId: string; recipient: string; acceptedAt: Date }
    /** The recipient opened a sent email (the connector's open tracking): condition steps on `opened` read it. */
    | { type: 'message.opened'; messageId: string; openedAt: Date }
    | { type: 'account.status'; state: ConnectorAccountState; reason: string | null }
    /** The counterpart reacted (an emoji) to a message of the thread: the internal `reaction.received`, never a reply. */
    | {
        type: 'reaction.received';
        messageId: string;
        threadId: string;
        from: string;
        reaction: string;
        reactedAt: Date;
      }
  );

export interface NetworkConnector {
  /** 'sandbox' (the local default), 'unipile' or 'mail'. */
  readonly name: string;
  /** The best matching profile, or null when there is none. Throws ConnectorError (a ProviderError) on failure. */
  findProfile(query: ProfileQuery, signal?: AbortSignal): Promise<NetworkProfile | null>;
  close?(): Promise<void>;
}

/**
 * The account half of the connector. Every method throws ConnectorError on failure; a repeated send
 * with the same idempotency key never sends twice.
 */
export interface AccountConnector {
  readonly name: string;
  /** The `connector` values of the accounts it answers for (a routing connector answers for several); `[name]` when absent. */
  readonly serves?: readonly string[];
  connect(input: ConnectInput, signal?: AbortSignal): Promise<ConnectStart>;
  /** The account's status now; state `disconnected` with reason `not_found` for an unknown id. */
  status(connectorAccountId: string, signal?: AbortSignal): Promise<ConnectorAccountStatus>;
  /** Statuses of many accounts (reconciliation reads in pages of at most 100). */
  statuses(connectorAccountIds: string[], signal?: AbortSignal): Promise<ConnectorAccountStatus[]>;
  /** Removes the account at the connector (idempotent). */
  disconnect(connectorAccountId: string, signal?: AbortSignal): Promise<void>;
  profile(connectorAccountId: string, signal?: AbortSignal): Promise<AccountProfile>;
  sendEmail(connectorAccountId: string, input: SendEmailInput, signal?: AbortSignal): Promise<SendResult>;
  sendInvitation(connectorAccountId: string, input: SendNetworkInput, signal?: AbortSignal): Promise<InvitationResult>;
  sendMessage(connectorAccountId: string, input: SendNetworkInput, signal?: AbortSignal): Promise<SendResult>;
  pendingInvitations(
    connectorAccountId: string,
    cursor: string | null,
    signal?: AbortSignal,
  ): Promise<Page<PendingInvitation>>;
  withdrawInvitation(connectorAccountId: string, invitationId: string, signal?: AbortSignal): Promise<void>;
  chats(connectorAccountId: string, cursor: string | null, signal?: AbortSignal): Promise<Page<Chat>>;
  messages(
    connectorAccountId: string,
    threadId: string,
    cursor: string | null,
    signal?: AbortSignal,
  ): Promise<Page<ChatMessage>>;
  /** An attachment's bytes as a stream (at most `maxBytes`; more fails the stream with bad_response). */
  attachment(
    connectorAccountId: string,
    messageId: string,
    attachmentId: string,
    opts: { maxBytes: number; signal?: AbortSignal },
  ): Promise<AttachmentStream>;
  /**
   * Verifies an inbound request's signature (constant time, with a freshness window) and parses it;
   * throws ConnectorError `auth` (bad or stale signature) or `invalid_request` (not an event). Null: an
   * authentic request the connector acknowledges and does not act on (nothing is stored; the hook
   * answers 200 so the sender does not retry it).
   */
  parseInbound(rawBody: Buffer, headers: Record<string, string | undefined>): InboundEvent | null;
  close?(): Promise<void>;
}

/** Every failure of a connector, whatever its transport. */
export class ConnectorError extends ProviderError {
  constructor(provider: string, code: ProviderErrorCode, message: string, details: ProviderErrorDetails = {}) {
    super(provider, code, message, details);
    this.name = 'ConnectorError';
  }
}
