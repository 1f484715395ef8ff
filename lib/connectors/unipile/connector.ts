// The messaging-network connector over Unipile's REST API v1 (issue 44; /work/unipile-notes.md has
// the wire format and its sources). LinkedIn sender accounts are connected through Unipile's hosted
// wizard; sends, invitations, chats and profiles are Unipile calls made as the account
// (`account_id`); Unipile's webhooks come in through the hooks routes (events.ts, accounts.ts).
//
//   our operation           Unipile v1
//   connect                 POST /hosted/accounts/link (create, or reconnect of the id held)
//   (notify callback)       POST <publicBaseUrl>/hooks/connector/accounts ← { status, account_id, name }
//   status / statuses       GET /accounts/{id} (one per id)
//   disconnect              DELETE /accounts/{id}
//   profile                 GET /users/me?account_id=
//   findProfile             GET /users/{identifier}?account_id=<UNIPILE_SEARCH_ACCOUNT_ID>
//   sendInvitation          GET /users/{identifier}?account_id=, then POST /users/invite
//   pendingInvitations      GET /users/invite/sent?account_id=&limit=100&cursor=
//   withdrawInvitation      DELETE /users/invite/sent/{id}?account_id=
//   sendMessage             (new) [GET /users/{identifier}] POST /chats (multipart)
//                           (in a chat) POST /chats/{chat_id}/messages (multipart)
//   chats                   GET /chats?account_id=&limit=100&cursor=
//   messages                GET /chats/{chat_id}/messages?limit=100&cursor=
//   attachment              GET /messages/{message_id}/attachments/{attachment_id}
//   parseInbound            (webhooks to <publicBaseUrl>/hooks/connector) our secret header, then the payload (events.ts)
//   ensureWebhooks          GET /webhooks, POST /webhooks
import type { JsonHttpClient } from '../../provider-http.js';
import {
  ConnectorError,
  type AccountConnector,
  type AccountProfile,
  type AttachmentStream,
  type Chat,
  type ChatMessage,
  type ConnectorAccountStatus,
  type ConnectStart,
  type InboundEvent,
  type InvitationResult,
  type NetworkConnector,
  type NetworkProfile,
  type Page,
  type PendingInvitation,
  type ProfileQuery,
  type SendEmailInput,
  type SendNetworkInput,
  type SendResult,
} from '../types.js';
import {
  HOSTED_LINK_TTL_MS,
  isProvisional,
  parseHostedNotify,
  UnipileAccounts,
  type HostedNotify,
  type UnipileConnectInput,
} from './accounts.js';
import { apiOrigin, UNIPILE, unipileClient, type UnipileHttpOptions } from './client.js';
import { verifyUnipileInbound } from './events.js';
import { UnipileInvitations } from './invitations.js';
import { UnipileMessaging } from './messaging.js';
import { networkProfileOf, UnipilePeople } from './people.js';
import { ensureWebhooks, type EnsuredWebhooks } from './webhooks.js';
import { identifierOf } from './wire.js';

export interface UnipileConnectorOptions extends UnipileHttpOptions {
  /** Our API's public URL: the hosted wizard's notify_url and the webhooks' request_url are under it. */
  publicBaseUrl: string;
  /** UNIPILE_SEARCH_ACCOUNT_ID: the connected account `findProfile` reads profiles as (none: findProfile fails `auth`). */
  searchAccountId?: string | null;
  /** UNIPILE_WEBHOOK_SECRET: the secret header of our webhooks and the notify_url's token key. */
  webhookSecret?: string | null;
  /** How long a hosted link is asked to stay valid (default 1 h). */
  linkTtlMs?: number;
  /** How far back a send looks for the same message already sent (default 24 h; messaging.ts). */
  dedupeWindowMs?: number;
  /** The clock (tests). */
  now?: () => Date;
}

export class UnipileConnector implements NetworkConnector, AccountConnector {
  readonly name = UNIPILE;
  readonly http: JsonHttpClient;
  private readonly accounts: UnipileAccounts;
  private readonly people: UnipilePeople;
  private readonly invitations: UnipileInvitations;
  private readonly messaging: UnipileMessaging;
  private readonly searchAccountId: string | null;
  private readonly webhookSecret: string | null;
  private readonly publicBaseUrl: string;

  constructor(opts: UnipileConnectorOptions) {
    const now = opts.now ?? (() => new Date());
    this.http = unipileClient(opts);
    this.publicBaseUrl = opts.publicBaseUrl;
    this.searchAccountId = opts.searchAccountId?.trim() || null;
    this.webhookSecret = opts.webhookSecret || null;
    this.accounts = new UnipileAccounts(this.http, {
      apiUrl: apiOrigin(opts.baseUrl),
      publicBaseUrl: opts.publicBaseUrl,
      notifySecret: this.webhookSecret,
      linkTtlMs: opts.linkTtlMs ?? HOSTED_LINK_TTL_MS,
      now,
    });
    this.people = new UnipilePeople(this.http);
    this.invitations = new UnipileInvitations(this.http, this.people, now);
    this.messaging = new UnipileMessaging(this.http, this.people, {
      now,
      dedupeWindowMs: opts.dedupeWindowMs ?? 86_400_000,
    });
  }

  /** A call on an account whose hosted connection is not finished (it holds a provisional id) is refused. */
  private connected(connectorAccountId: string): string {
    if (isProvisional(connectorAccountId))
      throw this.http.fail('invalid_request', 'the account has not finished connecting at Unipile', {
        reason: 'not_connected',
      });
    return connectorAccountId;
  }

  connect(input: UnipileConnectInput, signal?: AbortSignal): Promise<ConnectStart> {
    return this.accounts.connect(input, signal);
  }
  status(id: string, signal?: AbortSignal): Promise<ConnectorAccountStatus> {
    return this.accounts.status(id, signal);
  }
  statuses(ids: string[], signal?: AbortSignal): Promise<ConnectorAccountStatus[]> {
    return this.accounts.statuses(ids, signal);
  }
  disconnect(id: string, signal?: AbortSignal): Promise<void> {
    return this.accounts.disconnect(id, signal);
  }
  async profile(id: string, signal?: AbortSignal): Promise<AccountProfile> {
    return this.people.own(this.connected(id), signal);
  }
  /** Unipile's LinkedIn accounts send no email: mailboxes are the mail connector's. */
  sendEmail(_id: string, _input: SendEmailInput): Promise<SendResult> {
    return Promise.reject(
      this.http.fail('invalid_request', 'a Unipile LinkedIn account sends no email', { reason: 'unsupported_channel' }),
    );
  }
  /** Also names the member's provider id (`recipientId`): what `new_relation` reports as `invitationId`. */
  async sendInvitation(id: string, input: SendNetworkInput, signal?: AbortSignal): Promise<InvitationResult> {
    return this.invitations.send(this.connected(id), input, signal);
  }
  /** `input.retry` false (a first attempt) skips the check for an earlier send (messaging.ts). */
  async sendMessage(id: string, input: SendNetworkInput, signal?: AbortSignal): Promise<SendResult> {
    return this.messaging.send(this.connected(id), input, signal);
  }
  async pendingInvitations(id: string, cursor: string | null, signal?: AbortSignal): Promise<Page<PendingInvitation>> {
    return this.invitations.pending(this.connected(id), cursor, signal);
  }
  async withdrawInvitation(id: string, invitationId: string, signal?: AbortSignal): Promise<void> {
    return this.invitations.withdraw(this.connected(id), invitationId, signal);
  }
  async chats(id: string, cursor: string | null, signal?: AbortSignal): Promise<Page<Chat>> {
    return this.messaging.chats(this.connected(id), cursor, signal);
  }
  async messages(
    id: string,
    threadId: string,
    cursor: string | null,
    signal?: AbortSignal,
  ): Promise<Page<ChatMessage>> {
    return this.messaging.messages(this.connected(id), threadId, cursor, signal);
  }
  async attachment(
    id: string,
    messageId: string,
    attachmentId: string,
    opts: { maxBytes: number; signal?: AbortSignal },
  ): Promise<AttachmentStream> {
    this.connected(id);
    return this.messaging.attachment(messageId, attachmentId, opts);
  }
  /** Our secret header (constant time), then the payload (`parseUnipileWebhook`); null: acknowledged, not acted on. */
  parseInbound(rawBody: Buffer, headers: Record<string, string | undefined>): InboundEvent | null {
    return verifyUnipileInbound(this.webhookSecret, rawBody, headers);
  }

  /**
   * The hosted wizard's notify callback (`{ status, account_id, name }`), authenticated by the `token`
   * query parameter `connect` put in its notify_url (constant time). Without a webhook secret nothing
   * is accepted (ConnectorError `auth`); a body that is not a callback is `invalid_request`.
   */
  hostedNotify(body: unknown, token: string | null | undefined): HostedNotify {
    if (!this.webhookSecret)
      throw new ConnectorError(UNIPILE, 'auth', 'no webhook secret is configured (UNIPILE_WEBHOOK_SECRET)');
    return parseHostedNotify(body, { secret: this.webhookSecret, token });
  }

  /**
   * The profile behind a LinkedIn profile URL (or public identifier / provider id given as the URL),
   * read as UNIPILE_SEARCH_ACCOUNT_ID. A query without a profile URL is not answered here (null):
   * finding people by name, company or email is a LinkedIn search.
   */
  async findProfile(q: ProfileQuery, signal?: AbortSignal): Promise<NetworkProfile | null> {
    if (!q.profileUrl?.trim()) return null;
    const identifier = identifierOf(q.profileUrl);
    if (!identifier) return null;
    if (!this.searchAccountId)
      throw new ConnectorError(UNIPILE, 'auth', 'no account to read profiles as (UNIPILE_SEARCH_ACCOUNT_ID)', {
        reason: 'no_search_account',
      });
    const p = await this.people.profile(this.searchAccountId, identifier, signal, { experience: true });
    return p ? networkProfileOf(p, /^https?:\/\//i.test(q.profileUrl) ? q.profileUrl : null) : null;
  }

  /** Registers our webhooks at Unipile when missing (needs UNIPILE_WEBHOOK_SECRET). */
  ensureWebhooks(signal?: AbortSignal): Promise<EnsuredWebhooks> {
    if (!this.webhookSecret)
      return Promise.reject(new Error('UNIPILE_WEBHOOK_SECRET is required to register the webhooks'));
    return ensureWebhooks(this.http, { publicBaseUrl: this.publicBaseUrl, secret: this.webhookSecret }, signal);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
