// The account half of the HTTP connector, wire format v1 (docs/providers.md "Connector (accounts)").
// Every request carries `Authorization: Bearer <CONNECTOR_API_KEY>`; sends carry `Idempotency-Key`.
// Every answer is validated (parseWire: a mismatch is `bad_response`); a 404 on an account's path
// is `invalid_request` (unknown account), except where the interface defines it (status: not_found;
// disconnect and withdraw: already gone).
import { z } from 'zod';
import { parseWire, type JsonHttpClient } from '../provider-http.js';
import { wireChatMessage } from './inbound.js';
import {
  CONNECTOR_ACCOUNT_STATES,
  type AccountProfile,
  type Chat,
  type ChatMessage,
  type ConnectInput,
  type ConnectorAccountStatus,
  type ConnectStart,
  type InvitationResult,
  type Page,
  type PendingInvitation,
  type SendEmailInput,
  type SendNetworkInput,
  type SendResult,
  type AttachmentStream,
} from './types.js';

const id = z.union([z.string().trim().min(1).max(200), z.number().int()]).transform(String);
const date = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const text = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v?.trim() || null);

const connectAnswer = z.object({
  id,
  kind: z.enum(['hosted_link', 'connected']),
  url: z
    .url({ protocol: /^https?$/ })
    .nullish()
    .transform((v) => v ?? null),
  expires_at: date.nullish().transform((v) => v ?? null),
});
const accountStatus = z.object({ id, state: z.enum(CONNECTOR_ACCOUNT_STATES), reason: text(100), address: text(2048) });
const profileAnswer = z.object({
  name: text(200),
  headline: text(300),
  profile_url: text(2048),
  email: text(320),
  picture_url: text(2048),
});
const sendAnswer = z.object({ message_id: id, thread_id: id, sent_at: date });
const invitationAnswer = z.object({ invitation_id: id, sent_at: date });
const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item).max(1000), next_cursor: z.string().min(1).max(2000).nullable() });
const pendingItem = z.object({ invitation_id: id, recipient: z.string().trim().min(1).max(2048), sent_at: date });
const chatItem = z.object({ thread_id: id, counterpart: z.string().max(2048), last_message_at: date });

const seg = encodeURIComponent;

export class HttpAccounts {
  constructor(private readonly http: JsonHttpClient) {}

  private unknown(accountId: string) {
    return this.http.fail('invalid_request', `unknown connector account ${accountId}`, { status: 404 });
  }

  /** GET/POST on an account's path: a 404 is an unknown account. */
  private async onAccount(
    method: 'GET' | 'POST',
    accountId: string,
    rest: string,
    opts: Parameters<JsonHttpClient['json']>[2] = {},
  ): Promise<unknown> {
    const raw = await this.http.json(method, `/v1/accounts/${seg(accountId)}${rest}`, {
      ...opts,
      notFoundIsNull: true,
    });
    if (raw === null) throw this.unknown(accountId);
    return raw;
  }

  async connect(input: ConnectInput, signal?: AbortSignal): Promise<ConnectStart> {
    const body = {
      channel: input.channel,
      account_id: input.accountId,
      display_name: input.displayName,
      credentials: input.credentials ?? null,
      return_url: input.returnUrl ?? null,
    };
    const a = parseWire(this.http, connectAnswer, await this.http.json('POST', '/v1/accounts', { body, signal }));
    if (a.kind === 'hosted_link' && !a.url) throw this.http.fail('bad_response', 'a hosted_link answer without a url');
    return {
      connectorAccountId: a.id,
      kind: a.kind,
      url: a.kind === 'hosted_link' ? a.url : null,
      expiresAt: a.expires_at,
    };
  }

  async status(accountId: string, signal?: AbortSignal): Promise<ConnectorAccountStatus> {
    const raw = await this.http.json('GET', `/v1/accounts/${seg(accountId)}`, { signal, notFoundIsNull: true });
    if (raw === null)
      return { connectorAccountId: accountId, state: 'disconnected', reason: 'not_found', address: null };
    const a = parseWire(this.http, accountStatus, raw);
    return { connectorAccountId: accountId, state: a.state, reason: a.reason, address: a.address };
  }

  async statuses(ids: string[], signal?: AbortSignal): Promise<ConnectorAccountStatus[]> {
    if (ids.length > 100) throw this.http.fail('invalid_request', 'at most 100 accounts per statuses call');
    if (ids.length === 0) return [];
    const r = parseWire(
      this.http,
      z.object({ items: z.array(accountStatus).max(100) }),
      await this.http.json('POST', '/v1/accounts/statuses', { body: { ids }, signal }),
    );
    const byId = new Map(r.items.map((a) => [a.id, a]));
    // Accounts the connector leaves out are unknown to it.
    return ids.map((i) => {
      const a = byId.get(i);
      return a
        ? { connectorAccountId: i, state: a.state, reason: a.reason, address: a.address }
        : { connectorAccountId: i, state: 'disconnected' as const, reason: 'not_found', address: null };
    });
  }

  async disconnect(accountId: string, signal?: AbortSignal): Promise<void> {
    await this.http.json('DELETE', `/v1/accounts/${seg(accountId)}`, { signal, notFoundIsNull: true }); // 404: already removed
  }

  async profile(accountId: string, signal?: AbortSignal): Promise<AccountProfile> {
    const p = parseWire(this.http, profileAnswer, await this.onAccount('GET', accountId, '/profile', { signal }));
    return { name: p.name, headline: p.headline, profileUrl: p.profile_url, email: p.email, pictureUrl: p.picture_url };
  }

  async sendEmail(accountId: string, input: SendEmailInput, signal?: AbortSignal): Promise<SendResult> {
    const body = { to: input.to, subject: input.subject, body: input.body, thread_id: input.threadId ?? null };
    return this.sent(
      await this.onAccount('POST', accountId, '/emails', {
        body,
        signal,
        headers: { 'idempotency-key': input.idempotencyKey },
      }),
    );
  }

  async sendMessage(accountId: string, input: SendNetworkInput, signal?: AbortSignal): Promise<SendResult> {
    const body = { recipient: input.recipient, body: input.body, thread_id: input.threadId ?? null };
    return this.sent(
      await this.onAccount('POST', accountId, '/messages', {
        body,
        signal,
        headers: { 'idempotency-key': input.idempotencyKey },
      }),
    );
  }

  async sendInvitation(accountId: string, input: SendNetworkInput, signal?: AbortSignal): Promise<InvitationResult> {
    const body = { recipient: input.recipient, body: input.body };
    const r = parseWire(
      this.http,
      invitationAnswer,
      await this.onAccount('POST', accountId, '/invitations', {
        body,
        signal,
        headers: { 'idempotency-key': input.idempotencyKey },
      }),
    );
    return { invitationId: r.invitation_id, sentAt: r.sent_at };
  }

  private sent(raw: unknown): SendResult {
    const r = parseWire(this.http, sendAnswer, raw);
    return { messageId: r.message_id, threadId: r.thread_id, sentAt: r.sent_at };
  }

  async pendingInvitations(
    accountId: string,
    cursor: string | null,
    signal?: AbortSignal,
  ): Promise<Page<PendingInvitation>> {
    const query = new URLSearchParams({ status: 'pending' });
    if (cursor) query.set('cursor', cursor);
    const r = parseWire(
      this.http,
      pageOf(pendingItem),
      await this.onAccount('GET', accountId, '/invitations', { query, signal }),
    );
    return {
      items: r.items.map((i) => ({ invitationId: i.invitation_id, recipient: i.recipient, sentAt: i.sent_at })),
      cursor: r.next_cursor,
    };
  }

  async withdrawInvitation(accountId: string, invitationId: string, signal?: AbortSignal): Promise<void> {
    await this.http.json('DELETE', `/v1/accounts/${seg(accountId)}/invitations/${seg(invitationId)}`, {
      signal,
      notFoundIsNull: true,
    }); // 404: already gone
  }

  async chats(accountId: string, cursor: string | null, signal?: AbortSignal): Promise<Page<Chat>> {
    const query = cursor ? new URLSearchParams({ cursor }) : undefined;
    const r = parseWire(
      this.http,
      pageOf(chatItem),
      await this.onAccount('GET', accountId, '/chats', { query, signal }),
    );
    return {
      items: r.items.map((c) => ({
        threadId: c.thread_id,
        counterpart: c.counterpart,
        lastMessageAt: c.last_message_at,
      })),
      cursor: r.next_cursor,
    };
  }

  async messages(
    accountId: string,
    threadId: string,
    cursor: string | null,
    signal?: AbortSignal,
  ): Promise<Page<ChatMessage>> {
    const query = cursor ? new URLSearchParams({ cursor }) : undefined;
    const r = parseWire(
      this.http,
      pageOf(wireChatMessage),
      await this.onAccount('GET', accountId, `/chats/${seg(threadId)}/messages`, { query, signal }),
    );
    return {
      items: r.items.map((m) => ({
        messageId: m.id,
        threadId: m.thread_id,
        direction: m.direction,
        from: m.from,
        body: m.body,
        sentAt: m.sent_at,
        attachments: m.attachments,
      })),
      cursor: r.next_cursor,
    };
  }

  /** The raw bytes, streamed: `Content-Type` and `Content-Disposition: attachment; filename="…"` name them. */
  async attachment(
    accountId: string,
    messageId: string,
    attachmentId: string,
    opts: { maxBytes: number; signal?: AbortSignal },
  ): Promise<AttachmentStream> {
    const r = await this.http.stream(
      `/v1/accounts/${seg(accountId)}/messages/${seg(messageId)}/attachments/${seg(attachmentId)}`,
      opts,
    );
    const name = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(r.disposition ?? '')?.[1];
    return {
      name: name ? decodeURIComponent(name).slice(0, 500) : attachmentId,
      contentType: r.contentType ?? 'application/octet-stream',
      size: r.size,
      body: r.body,
    };
  }
}
