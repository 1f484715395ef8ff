// The sandbox network: the connector's local default, offline and deterministic. Profiles come from
// the generated corpus (SandboxConnector, sandbox.ts); the account half keeps its state in PostgreSQL
// (`sandbox_*` tables) so the API and worker processes see one network. It records
// sends (idempotent by key), simulates acceptances and replies by a hash of the recipient
// (sandbox-rules.ts) as inbound events due later, and `deliverDue` hands due events to the inbound
// pipeline. The support hooks at the bottom (inject, accept, disconnect, reconnect) queue events the
// same way. Rules: docs/providers.md "Connector (accounts)".
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from '../ids.js';
import type { CorpusOptions } from '../sources/local-corpus.js';
import { toInboundEvent, toWireEvent, verifyInbound } from './inbound.js';
import { SandboxConnector } from './sandbox.js';
import { SANDBOX_REPLY_BODY, sandboxFate } from './sandbox-rules.js';
import {
  ConnectorError,
  type AccountConnector,
  type AccountProfile,
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
  type SendNetworkInput,
  type SendResult,
  type AttachmentStream,
} from './types.js';

/** A file attached to a sandbox message (stored as JSON on the row). */
export interface SandboxAttachment {
  id: string;
  name: string;
  contentType: string;
  /** base64 */
  data: string;
}

const NAME = 'sandbox';
export const SANDBOX_PAGE_SIZE = 50;
/** How long a hosted link stays valid (it completes on the next status read anyway). */
const LINK_TTL_MS = 3_600_000;

const newId = (prefix: string) => `sbx_${prefix}_${uuidv7().replace(/-/g, '')}`;
const fail = (message: string) => new ConnectorError(NAME, 'invalid_request', message);

interface AccountRow {
  id: string;
  channel: string;
  account_id: string;
  display_name: string;
  state: 'pending' | 'connected' | 'disconnected';
  reason: string | null;
  address: string | null;
}

interface MessageRow {
  id: string;
  thread_id: string;
  direction: 'in' | 'out';
  from_address: string;
  counterpart: string;
  body: string;
  sent_at: Date;
  attachments: SandboxAttachment[];
}

/** What `deliverDue` applies before handing an event over. */
type Apply =
  { kind: 'insert_message'; row: NewMessage } | { kind: 'accept_invitation'; invitationId: string } | { kind: 'none' };

interface NewMessage {
  id: string;
  connectorAccountId: string;
  threadId: string;
  direction: 'in' | 'out';
  kind: 'email' | 'message';
  counterpart: string;
  from: string;
  subject: string | null;
  body: string;
  idempotencyKey: string | null;
  sentAt: string;
  attachments: SandboxAttachment[];
}

/** The inbound pipeline's entry: stores the event idempotently and starts its workflow. */
export type InboundSink = (event: InboundEvent, wire: Record<string, unknown>) => Promise<void>;

export class SandboxNetwork extends SandboxConnector implements AccountConnector {
  /** `orm`: the process's ORM (each call works on its own fork). `webhookSecret` verifies POST /hooks/connector. */
  constructor(
    corpus: CorpusOptions,
    private readonly orm: Pick<MikroORM, 'em'>,
    private readonly webhookSecret: string | null = null,
  ) {
    super(corpus);
  }

  private em(): EntityManager {
    return this.orm.em.fork() as EntityManager;
  }

  async connect(input: ConnectInput, signal?: AbortSignal): Promise<ConnectStart> {
    signal?.throwIfAborted();
    const id = newId('acc');
    const direct = input.credentials !== undefined && Object.keys(input.credentials).length > 0;
    const short = id.slice(-12);
    const address = direct
      ? (input.credentials!.email ?? input.credentials!.username ?? null)
      : input.channel === 'email'
        ? `sandbox-${short}@mail.sandbox.example`
        : `https://pronet.example/in/sandbox-${short}`;
    await this.em().execute(
      `insert into sandbox_accounts (id, channel, account_id, display_name, state, reason, address, created_at, updated_at) values (?, ?, ?, ?, ?, null, ?, now(), now())`,
      [id, input.channel, input.accountId, input.displayName, direct ? 'connected' : 'pending', address],
    );
    if (direct) return { connectorAccountId: id, kind: 'connected', url: null, expiresAt: null };
    return {
      connectorAccountId: id,
      kind: 'hosted_link',
      url: `http://sandbox.invalid/connect/${id}`,
      expiresAt: new Date(Date.now() + LINK_TTL_MS),
    };
  }

  async status(connectorAccountId: string, signal?: AbortSignal): Promise<ConnectorAccountStatus> {
    return (await this.statuses([connectorAccountId], signal))[0];
  }

  async statuses(ids: string[], signal?: AbortSignal): Promise<ConnectorAccountStatus[]> {
    signal?.throwIfAborted();
    if (ids.length > 100) throw fail('at most 100 accounts per statuses call');
    if (ids.length === 0) return [];
    const em = this.em();
    const rows = await em.transactional(async (tx) => {
      // A hosted link is finished by the (simulated) user at once: the next read completes it.
      const done = await tx.execute<AccountRow[]>(
        `update sandbox_accounts set state = 'connected', updated_at = now() where id in (?) and state = 'pending' returning *`,
        [ids],
      );
      for (const a of done)
        await queueEvent(
          tx,
          { type: 'account.status', eventId: newId('evt'), connectorAccountId: a.id, state: 'connected', reason: null },
          new Date(),
        );
      return tx.execute<AccountRow[]>(`select * from sandbox_accounts where id in (?)`, [ids]);
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => {
      const r = byId.get(id);
      return r
        ? { connectorAccountId: id, state: r.state, reason: r.reason, address: r.address }
        : { connectorAccountId: id, state: 'disconnected' as const, reason: 'not_found', address: null };
    });
  }

  async disconnect(connectorAccountId: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    await this.em().execute(`delete from sandbox_accounts where id = ?`, [connectorAccountId]);
  }

  async profile(connectorAccountId: string, signal?: AbortSignal): Promise<AccountProfile> {
    signal?.throwIfAborted();
    const a = await account(this.em(), connectorAccountId);
    return {
      name: a.display_name,
      headline: a.channel === 'network' ? 'Sandbox network member' : null,
      profileUrl: a.channel === 'network' ? a.address : null,
      email: a.channel === 'email' ? a.address : null,
      pictureUrl: null,
    };
  }

  sendEmail(connectorAccountId: string, input: SendEmailInput, signal?: AbortSignal): Promise<SendResult> {
    return this.send(connectorAccountId, 'email', { ...input, recipient: input.to }, signal);
  }

  sendMessage(connectorAccountId: string, input: SendNetworkInput, signal?: AbortSignal): Promise<SendResult> {
    return this.send(connectorAccountId, 'message', { ...input, subject: null }, signal);
  }

  private async send(
    connectorAccountId: string,
    kind: 'email' | 'message',
    input: {
      idempotencyKey: string;
      recipient: string;
      subject: string | null;
      body: string;
      threadId?: string | null;
    },
    signal?: AbortSignal,
  ): Promise<SendResult> {
    signal?.throwIfAborted();
    return this.em().transactional(async (tx) => {
      // A repeated key answers the first send even if the account has changed since (a retried
      // activity must learn what it already sent).
      const existing = await tx.execute<MessageRow[]>(
        `select * from sandbox_messages where connector_account_id = ? and idempotency_key = ?`,
        [connectorAccountId, input.idempotencyKey],
      );
      if (existing[0]) return sendResult(existing[0]);
      const a = await sender(tx, connectorAccountId, kind === 'email' ? 'email' : 'network');
      const now = new Date();
      const row: NewMessage = {
        id: newId('msg'),
        connectorAccountId: a.id,
        threadId: input.threadId ?? threadFor(a.id, input.recipient),
        direction: 'out',
        kind,
        counterpart: input.recipient,
        from: a.address ?? a.id,
        subject: input.subject,
        body: input.body,
        idempotencyKey: input.idempotencyKey,
        sentAt: now.toISOString(),
        attachments: [],
      };
      // A concurrent repeat of the same key loses the race on the unique key and reads the winner.
      const inserted = await insertMessage(tx, row);
      if (!inserted)
        return sendResult(
          (
            await tx.execute<MessageRow[]>(
              `select * from sandbox_messages where connector_account_id = ? and idempotency_key = ?`,
              [a.id, input.idempotencyKey],
            )
          )[0],
        );
      const { repliesAfterMs } = sandboxFate(input.recipient);
      if (repliesAfterMs !== null) {
        const at = new Date(now.getTime() + repliesAfterMs);
        const reply: NewMessage = {
          ...row,
          id: newId('msg'),
          direction: 'in',
          from: input.recipient,
          subject: null,
          body: SANDBOX_REPLY_BODY,
          idempotencyKey: null,
          sentAt: at.toISOString(),
        };
        await queueEvent(tx, messageEvent(reply), at, { kind: 'insert_message', row: reply });
      }
      return { messageId: row.id, threadId: row.threadId, sentAt: now };
    });
  }

  async sendInvitation(
    connectorAccountId: string,
    input: SendNetworkInput,
    signal?: AbortSignal,
  ): Promise<InvitationResult> {
    signal?.throwIfAborted();
    return this.em().transactional(async (tx) => {
      const [first] = await tx.execute<{ id: string; sent_at: Date }[]>(
        `select id, sent_at from sandbox_invitations where connector_account_id = ? and idempotency_key = ?`,
        [connectorAccountId, input.idempotencyKey],
      );
      if (first) return { invitationId: first.id, sentAt: new Date(first.sent_at) };
      const a = await sender(tx, connectorAccountId, 'network');
      const now = new Date();
      const id = newId('inv');
      const inserted = await tx.execute<{ id: string }[]>(
        `insert into sandbox_invitations (id, connector_account_id, recipient, idempotency_key, body, state, sent_at) values (?, ?, ?, ?, ?, 'pending', ?)
         on conflict (connector_account_id, idempotency_key) do nothing returning id`,
        [id, a.id, input.recipient, input.idempotencyKey, input.body, now],
      );
      if (!inserted[0]) {
        const [first] = await tx.execute<{ id: string; sent_at: Date }[]>(
          `select id, sent_at from sandbox_invitations where connector_account_id = ? and idempotency_key = ?`,
          [a.id, input.idempotencyKey],
        );
        return { invitationId: first.id, sentAt: new Date(first.sent_at) };
      }
      const { acceptsAfterMs } = sandboxFate(input.recipient);
      if (acceptsAfterMs !== null) {
        const at = new Date(now.getTime() + acceptsAfterMs);
        await queueEvent(
          tx,
          {
            type: 'invitation.accepted',
            eventId: newId('evt'),
            connectorAccountId: a.id,
            invitationId: id,
            recipient: input.recipient,
            acceptedAt: at,
          },
          at,
          {
            kind: 'accept_invitation',
            invitationId: id,
          },
        );
      }
      return { invitationId: id, sentAt: now };
    });
  }

  async pendingInvitations(
    connectorAccountId: string,
    cursor: string | null,
    signal?: AbortSignal,
  ): Promise<Page<PendingInvitation>> {
    signal?.throwIfAborted();
    const em = this.em();
    await account(em, connectorAccountId);
    const offset = parseCursor(cursor);
    const rows = await em.execute<{ id: string; recipient: string; sent_at: Date }[]>(
      `select id, recipient, sent_at from sandbox_invitations where connector_account_id = ? and state = 'pending' order by sent_at, id limit ? offset ?`,
      [connectorAccountId, SANDBOX_PAGE_SIZE + 1, offset],
    );
    return page(
      rows.map((r) => ({ invitationId: r.id, recipient: r.recipient, sentAt: new Date(r.sent_at) })),
      offset,
    );
  }

  async withdrawInvitation(connectorAccountId: string, invitationId: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    // Idempotent: withdrawing a withdrawn, accepted or unknown invitation changes nothing.
    await this.em().execute(
      `update sandbox_invitations set state = 'withdrawn' where id = ? and connector_account_id = ? and state = 'pending'`,
      [invitationId, connectorAccountId],
    );
  }

  async chats(connectorAccountId: string, cursor: string | null, signal?: AbortSignal): Promise<Page<Chat>> {
    signal?.throwIfAborted();
    const em = this.em();
    await account(em, connectorAccountId);
    const offset = parseCursor(cursor);
    const rows = await em.execute<{ thread_id: string; counterpart: string; last: Date }[]>(
      `select thread_id, min(counterpart) as counterpart, max(sent_at) as last from sandbox_messages where connector_account_id = ?
       group by thread_id order by max(sent_at) desc, thread_id limit ? offset ?`,
      [connectorAccountId, SANDBOX_PAGE_SIZE + 1, offset],
    );
    return page(
      rows.map((r) => ({ threadId: r.thread_id, counterpart: r.counterpart, lastMessageAt: new Date(r.last) })),
      offset,
    );
  }

  async messages(
    connectorAccountId: string,
    threadId: string,
    cursor: string | null,
    signal?: AbortSignal,
  ): Promise<Page<ChatMessage>> {
    signal?.throwIfAborted();
    const em = this.em();
    await account(em, connectorAccountId);
    const offset = parseCursor(cursor);
    const rows = await em.execute<MessageRow[]>(
      `select * from sandbox_messages where connector_account_id = ? and thread_id = ? order by sent_at, id limit ? offset ?`,
      [connectorAccountId, threadId, SANDBOX_PAGE_SIZE + 1, offset],
    );
    return page(rows.map(chatMessage), offset);
  }

  async attachment(
    connectorAccountId: string,
    messageId: string,
    attachmentId: string,
    opts: { maxBytes: number; signal?: AbortSignal },
  ): Promise<AttachmentStream> {
    opts.signal?.throwIfAborted();
    const [m] = await this.em().execute<MessageRow[]>(
      `select * from sandbox_messages where id = ? and connector_account_id = ?`,
      [messageId, connectorAccountId],
    );
    const a = m?.attachments.find((x) => x.id === attachmentId);
    if (!a) throw fail('unknown attachment');
    const data = Buffer.from(a.data, 'base64');
    if (data.length > opts.maxBytes)
      throw new ConnectorError(NAME, 'bad_response', `response larger than ${opts.maxBytes} bytes`);
    // The sandbox keeps attachments in its table; handed over in 64 KiB chunks like a network read.
    async function* chunks() {
      for (let i = 0; i < data.length; i += 65_536) yield data.subarray(i, i + 65_536);
    }
    return { name: a.name, contentType: a.contentType, size: data.length, body: chunks() };
  }

  parseInbound(rawBody: Buffer, headers: Record<string, string | undefined>): InboundEvent {
    return verifyInbound(NAME, this.webhookSecret, rawBody, headers);
  }

  /**
   * Hands every event due at `now` to `sink`, oldest first, in batches. Each batch is claimed with
   * FOR UPDATE SKIP LOCKED (concurrent runs never take the same rows) and marked delivered in the
   * transaction that applied it, after `sink` succeeded; `sink` is idempotent by event id, so a
   * batch retried after a crash is still received once. Returns how many were handed over.
   * `only` limits it to those connector accounts (tests deliver their own accounts' events only).
   */
  async deliverDue(now: Date, sink: InboundSink, batch = 100, only?: string[]): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.em().transactional(async (tx) => {
        const rows = await tx.execute<{ id: string; payload: { wire: Record<string, unknown>; apply: Apply } }[]>(
          `select id, payload from sandbox_events where delivered_at is null and due_at <= ? ${only ? 'and connector_account_id in (?)' : ''}
            order by due_at, id limit ? for update skip locked`,
          only ? [now, only, batch] : [now, batch],
        );
        for (const r of rows) {
          const dropped = await apply(tx, r.payload.apply);
          if (!dropped) await sink(toInboundEvent(NAME, r.payload.wire), r.payload.wire);
          await tx.execute(`update sandbox_events set delivered_at = ?, dropped = ? where id = ?`, [
            now,
            dropped,
            r.id,
          ]);
          if (!dropped) total++;
        }
        return rows.length;
      });
      if (n < batch) return total;
    }
  }
}

// ---- support and test hooks (also `npm run admin -- sandbox-…`) ----

/** Queues a received message on the account (delivered on the next `deliverDue`). */
export async function sandboxInjectMessage(
  em: EntityManager,
  connectorAccountId: string,
  input: {
    from: string;
    body: string;
    threadId?: string;
    attachments?: { name: string; contentType: string; data: Buffer }[];
  },
  now = new Date(),
): Promise<{ eventId: string; messageId: string; threadId: string }> {
  return em.transactional(async (tx) => {
    const a = await account(tx as EntityManager, connectorAccountId);
    const row: NewMessage = {
      id: newId('msg'),
      connectorAccountId: a.id,
      threadId: input.threadId ?? threadFor(a.id, input.from),
      direction: 'in',
      kind: a.channel === 'email' ? 'email' : 'message',
      counterpart: input.from,
      from: input.from,
      subject: null,
      body: input.body,
      idempotencyKey: null,
      sentAt: now.toISOString(),
      attachments: (input.attachments ?? []).map((x) => ({
        id: newId('att'),
        name: x.name,
        contentType: x.contentType,
        data: x.data.toString('base64'),
      })),
    };
    const event = messageEvent(row);
    await queueEvent(tx as EntityManager, event, now, { kind: 'insert_message', row });
    return { eventId: event.eventId, messageId: row.id, threadId: row.threadId };
  });
}

/** Accepts a pending invitation now, whatever the recipient's rule; false when it is not pending. */
export async function sandboxAcceptInvitation(
  em: EntityManager,
  invitationId: string,
  now = new Date(),
): Promise<{ eventId: string } | null> {
  return em.transactional(async (tx) => {
    const [inv] = await tx.execute<{ connector_account_id: string; recipient: string }[]>(
      `select connector_account_id, recipient from sandbox_invitations where id = ? and state = 'pending'`,
      [invitationId],
    );
    if (!inv) return null;
    const eventId = newId('evt');
    const event: InboundEvent = {
      type: 'invitation.accepted',
      eventId,
      connectorAccountId: inv.connector_account_id,
      invitationId,
      recipient: inv.recipient,
      acceptedAt: now,
    };
    await queueEvent(tx as EntityManager, event, now, { kind: 'accept_invitation', invitationId });
    return { eventId };
  });
}

/** The recipient opens a sent email: queues its `message.opened` event (null when there is no such email). */
export async function sandboxOpenMessage(
  em: EntityManager,
  messageId: string,
  now = new Date(),
): Promise<{ eventId: string } | null> {
  return em.transactional(async (tx) => {
    const [m] = await tx.execute<{ connector_account_id: string }[]>(
      `select connector_account_id from sandbox_messages where id = ? and direction = 'out' and kind = 'email'`,
      [messageId],
    );
    if (!m) return null;
    const eventId = newId('evt');
    await queueEvent(
      tx as EntityManager,
      { type: 'message.opened', eventId, connectorAccountId: m.connector_account_id, messageId, openedAt: now },
      now,
    );
    return { eventId };
  });
}

/** Disconnects the account at once (status reads it) and queues its `account.status` event. */
export function sandboxDisconnect(
  em: EntityManager,
  connectorAccountId: string,
  reason: string,
  now = new Date(),
): Promise<{ eventId: string }> {
  return setState(em, connectorAccountId, 'disconnected', reason, now);
}

/** Connects a disconnected (or pending) account again and queues its `account.status` event. */
export function sandboxReconnect(
  em: EntityManager,
  connectorAccountId: string,
  now = new Date(),
): Promise<{ eventId: string }> {
  return setState(em, connectorAccountId, 'connected', null, now);
}

async function setState(
  em: EntityManager,
  id: string,
  state: 'connected' | 'disconnected',
  reason: string | null,
  now: Date,
): Promise<{ eventId: string }> {
  return em.transactional(async (tx) => {
    const done = await tx.execute(
      `update sandbox_accounts set state = ?, reason = ?, updated_at = now() where id = ? returning id`,
      [state, reason, id],
    );
    if (done.length === 0) throw fail(`unknown sandbox account ${id}`);
    const eventId = newId('evt');
    await queueEvent(
      tx as EntityManager,
      { type: 'account.status', eventId, connectorAccountId: id, state, reason },
      now,
    );
    return { eventId };
  });
}

// ---- helpers ----

async function account(em: EntityManager, id: string): Promise<AccountRow> {
  const [a] = await em.execute<AccountRow[]>(`select * from sandbox_accounts where id = ?`, [id]);
  if (!a) throw fail(`unknown connector account ${id}`);
  return a;
}

/** The account, if it is connected and on the channel the send needs (emails: email; messages and invitations: network). */
async function sender(em: EntityManager, id: string, channel: 'email' | 'network'): Promise<AccountRow> {
  const a = await account(em, id);
  if (a.state !== 'connected') throw fail(`account ${id} is ${a.state}${a.reason ? ` (${a.reason})` : ''}`);
  if (a.channel !== channel) throw fail(`account ${id} is on the ${a.channel} network, not ${channel}`);
  return a;
}

/** One thread per account and counterpart, like a messaging network's conversation. */
const threadFor = (accountId: string, counterpart: string) =>
  `sbx_thr_${Buffer.from(`${accountId}|${counterpart.trim().toLowerCase()}`).toString('base64url').slice(-40)}`;

async function insertMessage(em: EntityManager, m: NewMessage): Promise<boolean> {
  const r = await em.execute(
    `insert into sandbox_messages (id, connector_account_id, thread_id, direction, kind, counterpart, from_address, subject, body, idempotency_key, sent_at, attachments)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb) on conflict do nothing returning id`,
    [
      m.id,
      m.connectorAccountId,
      m.threadId,
      m.direction,
      m.kind,
      m.counterpart,
      m.from,
      m.subject,
      m.body,
      m.idempotencyKey,
      new Date(m.sentAt),
      JSON.stringify(m.attachments),
    ],
  );
  return r.length > 0;
}

function messageEvent(m: NewMessage): InboundEvent {
  return {
    type: 'message.received',
    eventId: newId('evt'),
    connectorAccountId: m.connectorAccountId,
    message: {
      messageId: m.id,
      threadId: m.threadId,
      direction: 'in',
      from: m.from,
      body: m.body,
      sentAt: new Date(m.sentAt),
      attachments: m.attachments.map((a) => ({ id: a.id, name: a.name, size: Buffer.byteLength(a.data, 'base64') })),
    },
  };
}

async function queueEvent(
  em: EntityManager,
  event: InboundEvent,
  dueAt: Date,
  applyStep: Apply = { kind: 'none' },
): Promise<void> {
  const payload = { wire: toWireEvent(event, dueAt), apply: applyStep };
  await em.execute(
    `insert into sandbox_events (id, connector_account_id, type, payload, due_at) values (?, ?, ?, ?::jsonb, ?)`,
    [event.eventId, event.connectorAccountId, event.type, JSON.stringify(payload), dueAt],
  );
}

/** Applies a due event to the network; returns why it is dropped instead, or null. */
async function apply(em: EntityManager, step: Apply): Promise<string | null> {
  switch (step.kind) {
    case 'insert_message':
      await insertMessage(em, step.row);
      return null;
    case 'accept_invitation': {
      // A withdrawn invitation is never accepted.
      const r = await em.execute(
        `update sandbox_invitations set state = 'accepted', accepted_at = now() where id = ? and state = 'pending' returning id`,
        [step.invitationId],
      );
      return r.length > 0 ? null : 'invitation_not_pending';
    }
    case 'none':
      return null;
  }
}

function sendResult(m: MessageRow): SendResult {
  return { messageId: m.id, threadId: m.thread_id, sentAt: new Date(m.sent_at) };
}

function chatMessage(m: MessageRow): ChatMessage {
  return {
    messageId: m.id,
    threadId: m.thread_id,
    direction: m.direction,
    from: m.from_address,
    body: m.body,
    sentAt: new Date(m.sent_at),
    attachments: m.attachments.map((a) => ({ id: a.id, name: a.name, size: Buffer.byteLength(a.data, 'base64') })),
  };
}

/** The sandbox's cursors are offsets (an opaque string to callers). */
function parseCursor(cursor: string | null): number {
  if (cursor === null) return 0;
  if (!/^\d{1,9}$/.test(cursor)) throw fail('invalid cursor');
  return Number(cursor);
}

function page<T>(rows: T[], offset: number): Page<T> {
  const more = rows.length > SANDBOX_PAGE_SIZE;
  return { items: rows.slice(0, SANDBOX_PAGE_SIZE), cursor: more ? String(offset + SANDBOX_PAGE_SIZE) : null };
}
