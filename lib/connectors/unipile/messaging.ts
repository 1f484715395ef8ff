// LinkedIn messages through Unipile (/work/unipile-notes.md §6): a first message starts a chat
// (`POST /chats`, multipart: account_id, attendees_ids, text; Unipile puts it in the existing chat
// when there is one), a message in a known chat is `POST /chats/{chat_id}/messages` (multipart: text,
// account_id); chats and messages are read in cursor pages, attachments as streams.
//
// Never twice: Unipile takes no idempotency key. Before sending, unless the caller says it is a first
// attempt (`retry: false`), the chat is read for a message the account sent in the last
// `dedupeWindowMs` with the same text: found, it is the answer and nothing is sent. The limits: a
// message sent on purpose twice with the same text to the same member within the window is sent
// once; a first message whose chat is not among the account's 200 most recent chats is not found.
import { FormData } from 'undici';
import { z } from 'zod';
import { parseWire, type JsonHttpClient } from '../../provider-http.js';
import type { AttachmentStream, Chat, ChatMessage, Page, SendNetworkInput, SendResult } from '../types.js';
import type { UnipilePeople } from './people.js';
import { findInPages, flag, listOf, query, refuse, seg, text, uid, when } from './wire.js';

const chatStarted = z.object({ chat_id: uid.nullish(), message_id: uid.nullish() });
const messageSent = z.object({ message_id: uid.nullish() });

const chatItem = z.object({
  id: uid,
  account_id: text(200),
  attendee_provider_id: text(200),
  name: text(500),
  timestamp: when.nullish(),
});
const attachmentItem = z.object({
  id: uid,
  file_name: text(500),
  file_size: z.number().int().nonnegative().nullish(),
});
const messageItem = z.object({
  id: uid,
  account_id: text(200),
  chat_id: uid,
  sender_id: text(200),
  text: text(200_000),
  timestamp: when,
  is_sender: flag,
  is_event: flag,
  attachments: z
    .array(attachmentItem)
    .max(100)
    .nullish()
    .transform((v) => v ?? []),
});
type MessageItem = z.infer<typeof messageItem>;
const chatList = listOf(chatItem);
const messageList = listOf(messageItem);

/** Chat pages scanned for the chat with a member before a first message (100 each). */
const CHAT_SCAN_PAGES = 2;

/** Texts compared for the repeat check: whitespace runs as one space, ends trimmed. */
const sameText = (a: string | null, b: string) =>
  (a ?? '').replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim();

export function chatMessageOf(m: MessageItem): ChatMessage {
  return {
    messageId: m.id,
    threadId: m.chat_id,
    direction: m.is_sender ? 'out' : 'in',
    from: m.sender_id ?? '',
    body: m.text ?? '',
    sentAt: m.timestamp,
    attachments: m.attachments.map((a) => ({ id: a.id, name: a.file_name ?? a.id, size: a.file_size ?? 0 })),
  };
}

export class UnipileMessaging {
  constructor(
    private readonly http: JsonHttpClient,
    private readonly people: UnipilePeople,
    private readonly opts: { now: () => Date; dedupeWindowMs: number },
  ) {}

  async send(accountId: string, input: SendNetworkInput, signal?: AbortSignal): Promise<SendResult> {
    const body = input.body;
    if (!body.trim()) throw refuse(this.http, 'empty_message', 'a message needs a text');
    const check = input.retry !== false;
    if (input.threadId) {
      if (check) {
        const first = await this.alreadySent(accountId, input.threadId, body, signal);
        if (first) return first;
      }
      const form = new FormData();
      form.append('account_id', accountId);
      form.append('text', body);
      const r = parseWire(
        this.http,
        messageSent,
        await this.http.json('POST', `chats/${seg(input.threadId)}/messages`, { multipart: form, signal }),
      );
      return {
        messageId: r.message_id ?? (await this.idOfSent(accountId, input.threadId, body, input.idempotencyKey, signal)),
        threadId: input.threadId,
        sentAt: this.opts.now(),
      };
    }
    const providerId = await this.people.providerIdOf(accountId, input.recipient, signal);
    if (check) {
      const chatId = await this.chatWith(accountId, providerId, signal);
      const first = chatId ? await this.alreadySent(accountId, chatId, body, signal) : null;
      if (first) return { ...first, recipientId: providerId };
    }
    const form = new FormData();
    form.append('account_id', accountId);
    form.append('attendees_ids', providerId);
    form.append('text', body);
    const r = parseWire(this.http, chatStarted, await this.http.json('POST', 'chats', { multipart: form, signal }));
    // Sent (201): whatever is missing from the answer is looked up, never sent again.
    const threadId =
      r.chat_id ??
      (await this.chatWith(accountId, providerId, signal).catch(() => null)) ??
      `unnamed:${input.idempotencyKey}`;
    return {
      messageId: r.message_id ?? (await this.idOfSent(accountId, threadId, body, input.idempotencyKey, signal)),
      threadId,
      sentAt: this.opts.now(),
      recipientId: providerId,
    };
  }

  /** The account's message in the chat with this text within the window, newest first (the first page only). */
  private async alreadySent(
    accountId: string,
    chatId: string,
    body: string,
    signal?: AbortSignal,
  ): Promise<SendResult | null> {
    const since = new Date(this.opts.now().getTime() - this.opts.dedupeWindowMs);
    const r = await this.messagePage(accountId, chatId, null, signal, { after: since.toISOString(), limit: 50 });
    const m = r.items.find((i) => i.is_sender && !i.is_event && sameText(i.text, body) && i.timestamp >= since);
    return m ? { messageId: m.id, threadId: m.chat_id, sentAt: m.timestamp } : null;
  }

  /** After a send whose answer named no message id: the sent message's id, else one of ours (`unnamed:` + key). */
  private async idOfSent(
    accountId: string,
    chatId: string,
    body: string,
    key: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const found = await this.alreadySent(accountId, chatId, body, signal).catch(() => null);
    return found?.messageId ?? `unnamed:${key}`;
  }

  /** The account's chat with the member, among its most recent chats. */
  private chatWith(accountId: string, providerId: string, signal?: AbortSignal): Promise<string | null> {
    return findInPages(
      (cursor) => this.chatPage(accountId, cursor, signal),
      (c) => (c.attendee_provider_id === providerId ? c.id : null),
      CHAT_SCAN_PAGES,
    );
  }

  private async chatPage(accountId: string, cursor: string | null, signal?: AbortSignal) {
    return parseWire(
      this.http,
      chatList,
      await this.http.json('GET', 'chats', { query: query({ account_id: accountId, limit: 100, cursor }), signal }),
    );
  }

  private async messagePage(
    accountId: string,
    chatId: string,
    cursor: string | null,
    signal?: AbortSignal,
    extra: { after?: string; limit?: number } = {},
  ) {
    const r = parseWire(
      this.http,
      messageList,
      await this.http.json('GET', `chats/${seg(chatId)}/messages`, {
        query: query({ limit: extra.limit ?? 100, after: extra.after, cursor }),
        signal,
      }),
    );
    // The route takes no account: a chat of another account is refused rather than read.
    if (r.items.some((m) => m.account_id !== null && m.account_id !== accountId))
      throw refuse(this.http, 'wrong_account', `chat ${chatId} is not the account's`);
    return r;
  }

  async chats(accountId: string, cursor: string | null, signal?: AbortSignal): Promise<Page<Chat>> {
    const r = await this.chatPage(accountId, cursor, signal);
    return {
      items: r.items.map((c) => ({
        threadId: c.id,
        counterpart: c.attendee_provider_id ?? c.name ?? '',
        // A chat without a time sorts as the oldest.
        lastMessageAt: c.timestamp ?? new Date(0),
      })),
      cursor: r.cursor,
    };
  }

  /** Newest first, as Unipile lists them; events of the chat (`is_event`) are not messages and are left out. */
  async messages(
    accountId: string,
    chatId: string,
    cursor: string | null,
    signal?: AbortSignal,
  ): Promise<Page<ChatMessage>> {
    const r = await this.messagePage(accountId, chatId, cursor, signal);
    return { items: r.items.filter((m) => !m.is_event).map(chatMessageOf), cursor: r.cursor };
  }

  /** The attachment's bytes (`GET /messages/{id}/attachments/{id}`), named by Content-Disposition when it says. */
  async attachment(
    messageId: string,
    attachmentId: string,
    opts: { maxBytes: number; signal?: AbortSignal },
  ): Promise<AttachmentStream> {
    const r = await this.http.stream(`messages/${seg(messageId)}/attachments/${seg(attachmentId)}`, opts);
    const name = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(r.disposition ?? '')?.[1];
    let decoded = attachmentId;
    if (name) {
      try {
        decoded = decodeURIComponent(name);
      } catch {
        decoded = name;
      }
    }
    return {
      name: decoded.slice(0, 500),
      contentType: r.contentType ?? 'application/octet-stream',
      size: r.size,
      body: r.body,
    };
  }
}
