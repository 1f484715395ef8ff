// The stand-in's accounts, users, invitations, messaging and webhooks routes (Unipile REST API v1,
// written from the docs' examples: /work/unipile-notes.md §2–6, §8), with their state in memory, and
// the drivers tests use to play LinkedIn's and the user's side: finishing the hosted wizard (POSTs
// the documented notify_url callback), an account's status changing (the AccountStatus webhook), an
// invitation accepted (`new_relation`), a message coming in (`message_received`), and faults.
//
// Webhooks registered with `POST /webhooks` are delivered for real (HTTP POST to their request_url,
// with their `headers` and nothing else: Unipile adds no content type to API-created webhooks).
// The people directory is shared (module state), so another area's routes (search) read the same
// members: tests give their people distinct ids.
import { randomBytes } from 'node:crypto';
import { unipileError, type StandIn, type StandInReply, type StandInRequest } from './stand-in.js';

// ---------------------------------------------------------------------------------------------
// People

export interface Person {
  provider_id: string;
  public_identifier: string | null;
  first_name: string;
  last_name: string | null;
  headline: string;
  location: string | null;
  profile_picture_url: string | null;
  email: string | null;
  work_experience: { position: string; company: string; current?: boolean }[];
}

/** LinkedIn's members, by provider id. */
export const people = new Map<string, Person>();

/** A random id shaped like Unipile's (base64url). */
export const unipileId = (length = 22) =>
  randomBytes(length)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, 'x')
    .slice(0, length);

/** Adds a member (a provider id `ACoAA…` is made up when not given). */
export function addPerson(p: Partial<Person> & { first_name: string }): Person {
  const person: Person = {
    provider_id: `ACoAA${unipileId(34)}`,
    public_identifier: null,
    last_name: null,
    headline: '',
    location: null,
    profile_picture_url: null,
    email: null,
    work_experience: [],
    ...p,
  };
  people.set(person.provider_id, person);
  return person;
}

/** A member by provider id or public identifier (case-insensitive, as LinkedIn's slugs are). */
export function findPerson(identifier: string): Person | undefined {
  const byId = people.get(identifier);
  if (byId) return byId;
  const slug = identifier.toLowerCase();
  for (const p of people.values()) if (p.public_identifier?.toLowerCase() === slug) return p;
  return undefined;
}

export const profileUrlOf = (p: Person) =>
  p.public_identifier
    ? `https://www.linkedin.com/in/${p.public_identifier}/`
    : `https://www.linkedin.com/in/${p.provider_id}/`;

// ---------------------------------------------------------------------------------------------
// State

export type SourceStatus = 'OK' | 'CREDENTIALS' | 'ERROR' | 'STOPPED' | 'PERMISSIONS' | 'CONNECTING';

export interface StandInAccount {
  id: string;
  /** The hosted link's `name` (our account id). */
  name: string;
  created_at: string;
  status: SourceStatus;
  owner: Person;
  /** Provider ids of the account's relations (1st degree). */
  relations: Set<string>;
  /** Every account-scoped call answers 403 account_restricted. */
  restricted: boolean;
  /** Invitations it may still send before `limit_exceeded` (null: no limit). */
  invitesLeft: number | null;
}

export interface HostedLinkRecord {
  id: string;
  url: string;
  body: Record<string, unknown>;
  finished: boolean;
}

export interface InvitationRecord {
  id: string;
  account_id: string;
  provider_id: string;
  message: string | null;
  date: string;
  state: 'pending' | 'accepted' | 'canceled';
}

export interface AttachmentRecord {
  id: string;
  file_name: string;
  mimetype: string;
  data: Buffer;
}

export interface MessageRecord {
  id: string;
  chat_id: string;
  account_id: string;
  sender_id: string;
  text: string | null;
  timestamp: string;
  is_sender: 0 | 1;
  attachments: AttachmentRecord[];
}

export interface ChatRecord {
  id: string;
  account_id: string;
  attendee_provider_id: string;
  timestamp: string;
  messages: MessageRecord[];
}

export interface WebhookRecord {
  id: string;
  source: string;
  request_url: string;
  name: string | null;
  format: string;
  headers: { key: string; value: string }[];
  account_ids: string[];
  events: string[];
  enabled: boolean;
}

export interface Delivery {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** The receiver's answer (0 when it could not be reached). */
  status: number;
}

export interface AccountsOptions {
  /** The stand-in's clock (default: the real one). */
  now?: () => Date;
  /** Deliver `message_received` for the accounts' own sends too (as Unipile does; default true). */
  echoSends?: boolean;
}

export interface UnipileAccountsStandIn {
  accounts: Map<string, StandInAccount>;
  links: HostedLinkRecord[];
  invitations: Map<string, InvitationRecord>;
  chats: Map<string, ChatRecord>;
  webhooks: Map<string, WebhookRecord>;
  deliveries: Delivery[];
  /** An account that finished the wizard long ago (no link, no notify). */
  addAccount(opts?: { name?: string; owner?: Person; status?: SourceStatus }): StandInAccount;
  /**
   * The user finishes the hosted wizard of a link (by url or name; default the latest unfinished):
   * the account is created (or reconnected, status OK) and the notify_url gets the documented callback.
   */
  finishHostedAuth(link?: string, opts?: { owner?: Person }): Promise<{ account: StandInAccount; notify: Delivery }>;
  /** The account's source status changes; the `account_status` webhooks are told (`AccountStatus`). */
  setAccountStatus(accountId: string, status: SourceStatus | 'CREDENTIALS'): Promise<Delivery[]>;
  /** LinkedIn restricts the account: its calls answer 403 account_restricted. */
  restrict(accountId: string, restricted?: boolean): void;
  /** The member accepts: a relation, and `new_relation` to the `users` webhooks. */
  acceptInvitation(invitationId: string): Promise<Delivery[]>;
  /** Makes two members relations without an invitation. */
  relate(accountId: string, providerId: string): void;
  /** A member writes to the account: a message (in their chat), `message_received` to the `messaging` webhooks. */
  inboundMessage(
    accountId: string,
    from: Person,
    text: string,
    opts?: { attachments?: { file_name: string; mimetype: string; data: Buffer }[]; at?: Date },
  ): Promise<{ message: MessageRecord; deliveries: Delivery[] }>;
  /** The next `times` requests matching answer `reply` instead. */
  fault(match: { method?: string; path: RegExp }, reply: StandInReply, times?: number): void;
  /** The next `times` requests matching answer 429 too_many_requests (with Retry-After when given). */
  tooManyRequests(match: { method?: string; path: RegExp }, times?: number, retryAfter?: string): void;
  /** Waits for the deliveries under way (the echoes of sends). */
  settled(): Promise<void>;
  /**
   * From now on webhooks are held, not posted (the hosted wizard's notify callback still is): what
   * a provider's queue does under load. `release` posts the held ones and stops holding.
   */
  hold(): void;
  /** The webhooks held so far. */
  held(): readonly { url: string; headers: Record<string, string>; body: unknown }[];
  /**
   * Posts the held webhooks — in the order `random` shuffles them to (a seeded generator: the caller
   * prints its seed), each `times` times (a redelivery) — one after the other, and stops holding.
   */
  release(opts?: { random?: () => number; times?: number }): Promise<Delivery[]>;
}

// ---------------------------------------------------------------------------------------------
// Routes

const ISO_MS = /^[1-2]\d{3}-[0-1]\d-[0-3]\dT\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ok = (body: unknown, status = 200): StandInReply => ({ status, body });
const cursorOf = (offset: number) => Buffer.from(`offset:${offset}`).toString('base64url');
const offsetOf = (cursor: string | null): number | null => {
  if (!cursor) return 0;
  const m = /^offset:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
};

/** A `{ object, items, cursor }` page of `all` by the request's cursor and limit (bounds as documented). */
function page<T>(
  req: StandInRequest,
  object: string,
  all: T[],
  bounds: { min: number; max: number; default: number },
  map: (t: T) => unknown,
): StandInReply {
  const rawLimit = req.query.get('limit');
  const limit = rawLimit === null ? bounds.default : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < bounds.min || limit > bounds.max)
    return unipileError(400, 'invalid_parameters', 'Invalid parameters', `limit must be ${bounds.min}–${bounds.max}`);
  const offset = offsetOf(req.query.get('cursor'));
  if (offset === null) return unipileError(400, 'invalid_parameters', 'Invalid parameters', 'cursor');
  const items = all.slice(offset, offset + limit);
  return ok({ object, items: items.map(map), cursor: offset + limit < all.length ? cursorOf(offset + limit) : null });
}

const formField = (req: StandInRequest, name: string): string | undefined => {
  const v = req.form?.[name];
  return Array.isArray(v) ? v[0] : v;
};
const formList = (req: StandInRequest, name: string): string[] => {
  const v = req.form?.[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

export function registerAccounts(standIn: StandIn, opts: AccountsOptions = {}): UnipileAccountsStandIn {
  const now = opts.now ?? (() => new Date());
  const iso = () => now().toISOString();
  const accounts = new Map<string, StandInAccount>();
  const links: HostedLinkRecord[] = [];
  const invitations = new Map<string, InvitationRecord>();
  const chats = new Map<string, ChatRecord>();
  const webhooks = new Map<string, WebhookRecord>();
  const deliveries: Delivery[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const faults: { method?: string; path: RegExp; reply: StandInReply; times: number }[] = [];
  let holding = false;
  const heldDeliveries: { url: string; headers: Record<string, string>; body: unknown }[] = [];

  const route = (method: string, pattern: RegExp, handler: (req: StandInRequest) => StandInReply) =>
    standIn.route(method, pattern, (req) => {
      const f = faults.find((x) => x.times > 0 && (!x.method || x.method === req.method) && x.path.test(req.path));
      if (f) {
        f.times--;
        return f.reply;
      }
      return handler(req);
    });

  /** The account a call is made as, or the documented refusal. */
  const asAccount = (id: string | null | undefined): StandInAccount | StandInReply => {
    if (!id) return unipileError(400, 'missing_parameters', 'Missing parameters', 'account_id');
    const a = accounts.get(id);
    if (!a) return unipileError(422, 'invalid_account', 'Invalid account', `no account ${id}`);
    if (a.restricted) return unipileError(403, 'account_restricted', 'Account restricted');
    if (a.status === 'CREDENTIALS') return unipileError(401, 'expired_credentials', 'Expired credentials');
    if (a.status !== 'OK')
      return unipileError(
        401,
        'disconnected_account',
        'Disconnected account',
        'The account appears to be disconnected from the provider service.',
      );
    return a;
  };
  const isReply = (x: StandInAccount | StandInReply): x is StandInReply => 'status' in x && 'body' in x;

  async function post(url: string, headers: Record<string, string>, body: unknown): Promise<Delivery> {
    let status = 0;
    try {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      status = 0;
    }
    const d = { url, headers, body, status };
    deliveries.push(d);
    return d;
  }

  /** Delivers a payload to the enabled webhooks of `source` that cover the account. */
  function deliver(source: string, accountId: string, payload: (w: WebhookRecord) => unknown, event?: string) {
    const targets = [...webhooks.values()].filter(
      (w) =>
        w.enabled &&
        w.source === source &&
        (w.account_ids.length === 0 || w.account_ids.includes(accountId)) &&
        (!event || w.events.length === 0 || w.events.includes(event)),
    );
    if (holding) {
      for (const w of targets)
        heldDeliveries.push({
          url: w.request_url,
          headers: Object.fromEntries(w.headers.map((h) => [h.key, h.value])),
          body: payload(w),
        });
      return Promise.resolve([] as Delivery[]);
    }
    const p = Promise.all(
      targets.map((w) => post(w.request_url, Object.fromEntries(w.headers.map((h) => [h.key, h.value])), payload(w))),
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    return p;
  }

  const attendee = (p: Person) => ({
    attendee_id: `att_${p.provider_id.slice(-12)}`,
    attendee_name: [p.first_name, p.last_name].filter(Boolean).join(' '),
    attendee_provider_id: p.provider_id,
    attendee_profile_url: `https://www.linkedin.com/in/${p.provider_id}/`,
  });

  /** The documented `message_received` payload of a message. */
  function messageReceived(w: WebhookRecord, a: StandInAccount, chat: ChatRecord, m: MessageRecord) {
    const sender = m.is_sender ? a.owner : (people.get(m.sender_id) ?? a.owner);
    const other = people.get(chat.attendee_provider_id);
    return {
      account_id: a.id,
      account_type: 'LINKEDIN',
      account_info: { type: 'LINKEDIN', feature: 'classic', user_id: a.owner.provider_id },
      event: 'message_received',
      chat_id: chat.id,
      timestamp: m.timestamp,
      webhook_name: w.name ?? '',
      message_id: m.id,
      message: m.text,
      sender: attendee(sender),
      attendees: [attendee(a.owner), ...(other ? [attendee(other)] : [])],
      attachments: m.attachments.map((x) => ({
        id: x.id,
        file_size: x.data.length,
        unavailable: false,
        mimetype: x.mimetype,
        type: 'file',
        file_name: x.file_name,
        url: `att://${x.id}`,
      })),
    };
  }

  function addMessage(a: StandInAccount, chat: ChatRecord, m: Omit<MessageRecord, 'id' | 'chat_id' | 'account_id'>) {
    const message: MessageRecord = { id: unipileId(), chat_id: chat.id, account_id: a.id, ...m };
    chat.messages.push(message);
    chat.timestamp = message.timestamp;
    if (m.is_sender && opts.echoSends !== false)
      void deliver('messaging', a.id, (w) => messageReceived(w, a, chat, message), 'message_received');
    return message;
  }

  const chatWith = (a: StandInAccount, providerId: string) =>
    [...chats.values()].find((c) => c.account_id === a.id && c.attendee_provider_id === providerId);

  const newChat = (a: StandInAccount, providerId: string): ChatRecord => {
    const c: ChatRecord = {
      id: unipileId(),
      account_id: a.id,
      attendee_provider_id: providerId,
      timestamp: iso(),
      messages: [],
    };
    chats.set(c.id, c);
    return c;
  };

  const accountObject = (a: StandInAccount) => ({
    object: 'Account',
    type: 'LINKEDIN',
    id: a.id,
    name: [a.owner.first_name, a.owner.last_name].filter(Boolean).join(' '),
    created_at: a.created_at,
    connection_params: {
      im: {
        id: a.owner.provider_id,
        username: [a.owner.first_name, a.owner.last_name].filter(Boolean).join(' '),
        premiumContractId: null,
      },
    },
    groups: [],
    sources: [{ id: `${a.id}_MESSAGING`, status: a.status }],
  });

  const chatObject = (c: ChatRecord) => ({
    object: 'Chat',
    id: c.id,
    account_id: c.account_id,
    account_type: 'LINKEDIN',
    provider_id: `2-${c.id}`,
    attendee_provider_id: c.attendee_provider_id,
    name: null,
    type: 0,
    timestamp: c.timestamp,
    unread_count: 0,
    archived: 0,
    muted_until: null,
    read_only: 0,
  });

  const messageObject = (m: MessageRecord) => ({
    object: 'Message',
    id: m.id,
    account_id: m.account_id,
    chat_id: m.chat_id,
    chat_provider_id: `2-${m.chat_id}`,
    provider_id: `urn:li:msg:${m.id}`,
    sender_id: m.sender_id,
    sender_attendee_id: `att_${m.sender_id.slice(-12)}`,
    text: m.text,
    timestamp: m.timestamp,
    is_sender: m.is_sender,
    attachments: m.attachments.map((x) => ({
      id: x.id,
      type: 'file',
      unavailable: false,
      mimetype: x.mimetype,
      file_size: x.data.length,
      file_name: x.file_name,
    })),
    reactions: [],
    seen: 0,
    seen_by: {},
    hidden: 0,
    deleted: 0,
    edited: 0,
    is_event: 0,
    delivered: 1,
    message_type: 'MESSAGE',
    original: '{}',
  });

  // --- hosted auth -----------------------------------------------------------------------------
  route('POST', /^\/hosted\/accounts\/link$/, (req) => {
    const b = (req.json ?? null) as Record<string, unknown> | null;
    if (!b) return unipileError(400, 'malformed_request', 'Malformed request', 'a JSON body is expected');
    for (const k of ['type', 'api_url', 'expiresOn'])
      if (typeof b[k] !== 'string') return unipileError(400, 'missing_parameters', 'Missing parameters', k);
    if (b.type !== 'create' && b.type !== 'reconnect')
      return unipileError(400, 'invalid_parameters', 'Invalid parameters', 'type');
    if (!ISO_MS.test(b.expiresOn as string))
      return unipileError(400, 'invalid_parameters', 'Invalid parameters', 'expiresOn');
    if (b.type === 'create' && b.providers === undefined)
      return unipileError(400, 'missing_parameters', 'Missing parameters', 'providers');
    if (b.type === 'reconnect' && !accounts.has(String(b.reconnect_account ?? '')))
      return unipileError(400, 'invalid_parameters', 'Invalid parameters', 'reconnect_account');
    const id = unipileId(16);
    const link: HostedLinkRecord = { id, url: `${standIn.url}/hosted/${id}`, body: b, finished: false };
    links.push(link);
    return ok({ object: 'HostedAuthURL', url: link.url }, 201);
  });

  // --- accounts ----------------------------------------------------------------------------------
  route('GET', /^\/accounts$/, (req) =>
    page(req, 'AccountList', [...accounts.values()], { min: 1, max: 250, default: 100 }, accountObject),
  );
  route('GET', /^\/accounts\/([^/]+)$/, (req) => {
    const a = accounts.get(decodeURIComponent(req.params[0]));
    return a ? ok(accountObject(a)) : unipileError(404, 'resource_not_found', 'Resource not found');
  });
  route('DELETE', /^\/accounts\/([^/]+)$/, (req) => {
    const id = decodeURIComponent(req.params[0]);
    if (!accounts.delete(id)) return unipileError(404, 'resource_not_found', 'Resource not found');
    return ok({ object: 'AccountDeleted' });
  });

  // --- users -------------------------------------------------------------------------------------
  route('GET', /^\/users\/me$/, (req) => {
    const a = asAccount(req.query.get('account_id'));
    if (isReply(a)) return a;
    const o = a.owner;
    return ok({
      object: 'AccountOwnerProfile',
      provider: 'LINKEDIN',
      provider_id: o.provider_id,
      entity_urn: `urn:li:fsd_profile:${o.provider_id}`,
      object_urn: 'urn:li:member:1',
      first_name: o.first_name,
      last_name: o.last_name,
      profile_picture_url: o.profile_picture_url,
      public_profile_url: profileUrlOf(o),
      public_identifier: o.public_identifier,
      headline: o.headline,
      location: o.location,
      email: o.email,
      premium: false,
      open_profile: false,
      organizations: [],
      recruiter: null,
      sales_navigator: null,
    });
  });

  route('GET', /^\/users\/invite\/sent$/, (req) => {
    const a = asAccount(req.query.get('account_id'));
    if (isReply(a)) return a;
    const mine = [...invitations.values()].filter((i) => i.account_id === a.id && i.state === 'pending').reverse();
    return page(req, 'InvitationList', mine, { min: 1, max: 100, default: 10 }, (i) => {
      const p = people.get(i.provider_id);
      return {
        object: 'InvitationSent',
        id: i.id,
        invited_user: p ? [p.first_name, p.last_name].filter(Boolean).join(' ') : null,
        invited_user_id: i.provider_id,
        invited_user_public_id: p?.public_identifier ?? null,
        invited_user_description: p?.headline ?? null,
        date: i.date,
        parsed_datetime: i.date,
        invitation_text: i.message,
      };
    });
  });

  route('DELETE', /^\/users\/invite\/sent\/([^/]+)$/, (req) => {
    const a = asAccount(req.query.get('account_id'));
    if (isReply(a)) return a;
    const i = invitations.get(decodeURIComponent(req.params[0]));
    if (!i || i.account_id !== a.id || i.state !== 'pending')
      return unipileError(404, 'resource_not_found', 'Resource not found');
    i.state = 'canceled';
    return ok({ object: 'InvitationCanceled' });
  });

  route('POST', /^\/users\/invite$/, (req) => {
    const b = (req.json ?? null) as Record<string, unknown> | null;
    if (!b) return unipileError(400, 'malformed_request', 'Malformed request', 'a JSON body is expected');
    if (typeof b.provider_id !== 'string' || typeof b.account_id !== 'string')
      return unipileError(400, 'missing_parameters', 'Missing parameters', 'provider_id, account_id');
    const a = asAccount(b.account_id);
    if (isReply(a)) return a;
    if (typeof b.message === 'string' && [...b.message].length > 300)
      return unipileError(400, 'too_many_characters', 'Too many characters');
    const p = people.get(b.provider_id); // "It has to be the provider's id"
    if (!p) return unipileError(422, 'invalid_recipient', 'Invalid recipient');
    if (a.relations.has(p.provider_id))
      return unipileError(422, 'action_already_performed', 'Action already performed');
    if (
      [...invitations.values()].some(
        (i) => i.account_id === a.id && i.provider_id === p.provider_id && i.state === 'pending',
      )
    )
      return unipileError(422, 'already_invited_recently', 'Already invited recently');
    if (a.invitesLeft !== null) {
      if (a.invitesLeft <= 0) return unipileError(422, 'limit_exceeded', 'Limit exceeded');
      a.invitesLeft--;
    }
    const inv: InvitationRecord = {
      id: unipileId(),
      account_id: a.id,
      provider_id: p.provider_id,
      message: typeof b.message === 'string' ? b.message : null,
      date: iso(),
      state: 'pending',
    };
    invitations.set(inv.id, inv);
    return ok({ object: 'UserInvitationSent', invitation_id: inv.id }, 201);
  });

  route('GET', /^\/users\/([^/]+)$/, (req) => {
    const a = asAccount(req.query.get('account_id'));
    if (isReply(a)) return a;
    const p = findPerson(decodeURIComponent(req.params[0]));
    if (!p) return unipileError(404, 'resource_not_found', 'Resource not found');
    const pending = [...invitations.values()].find(
      (i) => i.account_id === a.id && i.provider_id === p.provider_id && i.state === 'pending',
    );
    const related = a.relations.has(p.provider_id);
    const sections = req.query.getAll('linkedin_sections').flatMap((v) => v.split(','));
    return ok({
      object: 'UserProfile',
      provider: 'LINKEDIN',
      provider_id: p.provider_id,
      public_identifier: p.public_identifier,
      first_name: p.first_name,
      last_name: p.last_name,
      headline: p.headline,
      location: p.location,
      websites: [],
      profile_picture_url: p.profile_picture_url,
      public_profile_url: p.public_identifier ? profileUrlOf(p) : undefined,
      is_relationship: related,
      is_self: p.provider_id === a.owner.provider_id,
      network_distance: related ? 'FIRST_DEGREE' : 'SECOND_DEGREE',
      ...(pending ? { invitation: { type: 'SENT', status: 'PENDING' } } : {}),
      // Sections beyond the basics only when asked (`linkedin_sections`: `*`, a name, or several).
      ...(sections.includes('*') || sections.includes('experience')
        ? { work_experience: p.work_experience.map((w) => ({ ...w, start: null, end: null })) }
        : {}),
    });
  });

  // --- messaging ---------------------------------------------------------------------------------
  route('GET', /^\/chats$/, (req) => {
    const a = asAccount(req.query.get('account_id'));
    if (isReply(a)) return a;
    const mine = [...chats.values()]
      .filter((c) => c.account_id === a.id)
      .sort((x, y) => y.timestamp.localeCompare(x.timestamp));
    return page(req, 'ChatList', mine, { min: 1, max: 250, default: 100 }, chatObject);
  });

  route('POST', /^\/chats$/, (req) => {
    if (!req.form) return unipileError(400, 'malformed_request', 'Malformed request', 'multipart/form-data expected');
    const a = asAccount(formField(req, 'account_id'));
    if (isReply(a)) return a;
    const ids = formList(req, 'attendees_ids');
    if (!ids.length) return unipileError(400, 'missing_parameters', 'Missing parameters', 'attendees_ids');
    const p = people.get(ids[0]);
    if (!p) return unipileError(422, 'invalid_recipient', 'Invalid recipient');
    // "With Linkedin, unless InMail, you can start new chats only with your Relations."
    if (!a.relations.has(p.provider_id) && formField(req, 'linkedin[inmail]') !== 'true')
      return unipileError(422, 'no_connection_with_recipient', 'No connection with recipient');
    const chat = chatWith(a, p.provider_id) ?? newChat(a, p.provider_id);
    const m = addMessage(a, chat, {
      sender_id: a.owner.provider_id,
      text: formField(req, 'text') ?? null,
      timestamp: iso(),
      is_sender: 1,
      attachments: [],
    });
    return ok({ object: 'ChatStarted', chat_id: chat.id, message_id: m.id }, 201);
  });

  route('GET', /^\/chats\/([^/]+)$/, (req) => {
    const c = chats.get(decodeURIComponent(req.params[0]));
    return c ? ok(chatObject(c)) : unipileError(404, 'resource_not_found', 'Resource not found');
  });

  route('GET', /^\/chats\/([^/]+)\/messages$/, (req) => {
    const c = chats.get(decodeURIComponent(req.params[0]));
    if (!c) return unipileError(404, 'resource_not_found', 'Resource not found');
    const after = req.query.get('after');
    if (after !== null && !ISO_MS.test(after))
      return unipileError(400, 'invalid_parameters', 'Invalid parameters', 'after');
    const list = c.messages.filter((m) => !after || m.timestamp > after).reverse(); // newest first
    return page(req, 'MessageList', list, { min: 1, max: 250, default: 100 }, messageObject);
  });

  route('POST', /^\/chats\/([^/]+)\/messages$/, (req) => {
    if (!req.form) return unipileError(400, 'malformed_request', 'Malformed request', 'multipart/form-data expected');
    const c = chats.get(decodeURIComponent(req.params[0]));
    if (!c) return unipileError(404, 'resource_not_found', 'Resource not found');
    const a = asAccount(formField(req, 'account_id') ?? c.account_id);
    if (isReply(a)) return a;
    if (a.id !== c.account_id) return unipileError(403, 'account_mismatch', 'Account mismatch');
    const m = addMessage(a, c, {
      sender_id: a.owner.provider_id,
      text: formField(req, 'text') ?? null,
      timestamp: iso(),
      is_sender: 1,
      attachments: [],
    });
    return ok({ object: 'MessageSent', message_id: m.id }, 201);
  });

  route('GET', /^\/messages\/([^/]+)\/attachments\/([^/]+)$/, (req) => {
    const mid = decodeURIComponent(req.params[0]);
    const aid = decodeURIComponent(req.params[1]);
    for (const c of chats.values()) {
      const att = c.messages.find((m) => m.id === mid)?.attachments.find((x) => x.id === aid);
      if (att)
        return {
          status: 200,
          body: att.data,
          headers: { 'content-type': att.mimetype, 'content-length': String(att.data.length) },
        };
    }
    return unipileError(404, 'resource_not_found', 'Resource not found');
  });

  // --- webhooks ----------------------------------------------------------------------------------
  route('POST', /^\/webhooks$/, (req) => {
    const b = (req.json ?? null) as Record<string, unknown> | null;
    if (!b) return unipileError(400, 'malformed_request', 'Malformed request', 'a JSON body is expected');
    if (typeof b.request_url !== 'string' || typeof b.source !== 'string')
      return unipileError(400, 'missing_parameters', 'Missing parameters', 'request_url, source');
    const w: WebhookRecord = {
      id: unipileId(),
      source: b.source,
      request_url: b.request_url,
      name: typeof b.name === 'string' ? b.name : null,
      format: typeof b.format === 'string' ? b.format : 'json',
      headers: Array.isArray(b.headers) ? (b.headers as { key: string; value: string }[]) : [],
      account_ids: Array.isArray(b.account_ids) ? (b.account_ids as string[]) : [],
      events: Array.isArray(b.events) ? (b.events as string[]) : b.source === 'messaging' ? ['message_received'] : [],
      enabled: b.enabled !== false,
    };
    webhooks.set(w.id, w);
    return ok({ object: 'WebhookCreated', webhook_id: w.id }, 201);
  });
  route('GET', /^\/webhooks$/, (req) =>
    page(req, 'WebhookList', [...webhooks.values()], { min: 1, max: 250, default: 100 }, (w) => ({
      object: 'Webhook',
      id: w.id,
      type: 'AUTO',
      account_ids: w.account_ids.map((id) => ({ id, type: 'LINKEDIN' })),
      enabled: w.enabled,
      name: w.name,
      request_url: w.request_url,
      format: w.format,
      headers: w.headers,
      data: [],
      events: w.events,
    })),
  );
  route('DELETE', /^\/webhooks\/([^/]+)$/, (req) =>
    webhooks.delete(decodeURIComponent(req.params[0]))
      ? ok({ object: 'WebhookDeleted' })
      : unipileError(404, 'resource_not_found', 'Resource not found'),
  );

  // --- drivers -----------------------------------------------------------------------------------
  const addAccount: UnipileAccountsStandIn['addAccount'] = (o = {}) => {
    const a: StandInAccount = {
      id: unipileId(),
      name: o.name ?? 'account',
      created_at: iso(),
      status: o.status ?? 'OK',
      owner:
        o.owner ??
        addPerson({
          first_name: 'Owner',
          last_name: unipileId(6),
          public_identifier: `owner-${unipileId(8).toLowerCase()}`,
        }),
      relations: new Set(),
      restricted: false,
      invitesLeft: null,
    };
    accounts.set(a.id, a);
    return a;
  };

  const statusPayload = (a: StandInAccount, message: string) => ({
    AccountStatus: { account_id: a.id, account_type: 'LINKEDIN', message },
  });

  return {
    accounts,
    links,
    invitations,
    chats,
    webhooks,
    deliveries,
    addAccount,

    async finishHostedAuth(which, o = {}) {
      const link = which
        ? links.find((l) => l.url === which || l.body.name === which)
        : [...links].reverse().find((l) => !l.finished);
      if (!link) throw new Error(`stand-in: no hosted link ${which ?? '(unfinished)'}`);
      link.finished = true;
      const reconnect = link.body.type === 'reconnect';
      let account: StandInAccount;
      if (reconnect) {
        account = accounts.get(String(link.body.reconnect_account))!;
        account.status = 'OK';
        account.restricted = false;
      } else account = addAccount({ name: String(link.body.name ?? ''), owner: o.owner });
      const status = reconnect ? 'RECONNECTED' : 'CREATION_SUCCESS';
      await deliver('account_status', account.id, () => statusPayload(account, status));
      if (typeof link.body.notify_url !== 'string') throw new Error('stand-in: the link has no notify_url');
      const notify = await post(
        link.body.notify_url,
        { 'content-type': 'application/json' },
        { status, account_id: account.id, name: link.body.name },
      );
      return { account, notify };
    },

    async setAccountStatus(accountId, status) {
      const a = accounts.get(accountId);
      if (!a) throw new Error(`stand-in: no account ${accountId}`);
      a.status = status;
      return deliver('account_status', a.id, () => statusPayload(a, status));
    },

    restrict(accountId, restricted = true) {
      const a = accounts.get(accountId);
      if (!a) throw new Error(`stand-in: no account ${accountId}`);
      a.restricted = restricted;
    },

    async acceptInvitation(invitationId) {
      const i = invitations.get(invitationId);
      if (!i || i.state !== 'pending') throw new Error(`stand-in: no pending invitation ${invitationId}`);
      i.state = 'accepted';
      const a = accounts.get(i.account_id)!;
      a.relations.add(i.provider_id);
      const p = people.get(i.provider_id)!;
      return deliver('users', a.id, (w) => ({
        event: 'new_relation',
        account_id: a.id,
        account_type: 'LINKEDIN',
        webhook_name: w.name ?? '',
        user_full_name: [p.first_name, p.last_name].filter(Boolean).join(' '),
        user_provider_id: p.provider_id,
        user_public_identifier: p.public_identifier,
        user_profile_url: profileUrlOf(p),
        user_picture_url: p.profile_picture_url,
      }));
    },

    relate(accountId, providerId) {
      accounts.get(accountId)?.relations.add(providerId);
    },

    async inboundMessage(accountId, from, text, o = {}) {
      const a = accounts.get(accountId);
      if (!a) throw new Error(`stand-in: no account ${accountId}`);
      const chat = chatWith(a, from.provider_id) ?? newChat(a, from.provider_id);
      const message = addMessage(a, chat, {
        sender_id: from.provider_id,
        text,
        timestamp: (o.at ?? now()).toISOString(),
        is_sender: 0,
        attachments: (o.attachments ?? []).map((x) => ({ id: unipileId(), ...x })),
      });
      const sent = await deliver('messaging', a.id, (w) => messageReceived(w, a, chat, message), 'message_received');
      return { message, deliveries: sent };
    },

    fault(match, reply, times = 1) {
      faults.push({ ...match, reply, times });
    },

    tooManyRequests(match, times = 1, retryAfter) {
      faults.push({
        ...match,
        times,
        reply: {
          ...unipileError(
            429,
            'too_many_requests',
            'Too many requests',
            'The provider cannot accept any more requests at the moment. Please try again later.',
          ),
          ...(retryAfter ? { headers: { 'retry-after': retryAfter } } : {}),
        },
      });
    },

    async settled() {
      while (inFlight.size) await Promise.all([...inFlight]);
    },

    hold() {
      holding = true;
    },

    held() {
      return [...heldDeliveries];
    },

    async release(o = {}) {
      holding = false;
      const random = o.random ?? Math.random;
      const queue = heldDeliveries.splice(0).flatMap((d) => Array.from({ length: o.times ?? 1 }, () => d));
      // Fisher–Yates with the caller's generator.
      for (let i = queue.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [queue[i], queue[j]] = [queue[j], queue[i]];
      }
      const out: Delivery[] = [];
      for (const d of queue) out.push(await post(d.url, d.headers, d.body));
      return out;
    },
  };
}
