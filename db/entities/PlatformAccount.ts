import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

export const ACCOUNT_STATUSES = ['pending', 'connecting', 'connected', 'disconnected'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** Action types the rate governor counts (docs/accounts.md). */
export const ACTION_TYPES = ['email', 'invitation', 'message', 'profile_view'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** Days as ISO numbers (1 = Monday … 7 = Sunday) with one window per day, in the account's time zone. */
export interface WorkingHours {
  days: number[];
  /** "HH:MM", 24-hour clock; `end` after `start`. */
  start: string;
  end: string;
}

export type Caps = Partial<Record<ActionType, { daily: number; weekly: number }>>;

/** The last failed check of a connection that is retried, not final (docs/email.md "What each failure means"). */
export interface ConnectionProblem {
  /** The failure's reason: `blocked_destination`, `host_unreachable`, `tls_failed`, … */
  reason: string;
  message: string;
  /** ISO time of the failed check. */
  at: string;
  /** Which check found it: `reconcile`, `check` (a setup-status read) or `sync` (the mailbox sync). */
  detected_by: string;
}

// A sender: a mailbox on the email network or a profile on the professional network, attached through
// the connector (`connectorAccountId` is its id there). Secrets a connection needs are sealed with the
// service key (lib/crypto.ts) and never returned. Limits, warm-up and working hours are what the rate
// governor (domain/governor/governor.ts) applies at send time.
export const PlatformAccount = defineEntity({
  name: 'PlatformAccount',
  tableName: 'platform_accounts',
  indexes: [
    { properties: ['workspace', 'createdAt'] },
    { name: 'platform_accounts_status_id_index', properties: ['status', 'id'] },
  ],
  uniques: [{ properties: ['connector', 'connectorAccountId'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    channel: p.string().length(20),
    displayName: p.string().length(200),
    /** IANA time zone name, validated at creation (no silent UTC default). */
    timeZone: p.string().length(64),
    workingHours: p.json<WorkingHours>(),
    status: p.string().length(20).default('pending'),
    /** The connector that holds it ('sandbox' or 'http') and its id there. */
    connector: p.string().length(20),
    connectorAccountId: p.string().length(200).nullable(),
    /** The mailbox address or profile URL, once the connector knows it. */
    address: p.string().length(2048).nullable(),
    /** Why it is disconnected, as the connector said; null otherwise. */
    statusReason: p.string().length(100).nullable(),
    statusCheckedAt: p.datetime().nullable(),
    /** The last check that failed for a reason that is retried (never a disconnection); cleared by the next success. */
    connectionProblem: p.json<ConnectionProblem>().nullable(),
    /** The status report last applied (an event's time and id, or our own read): an older one changes nothing (domain/event-order.ts). */
    statusEventAt: p.datetime().nullable(),
    statusEventId: p.string().length(200).nullable(),
    connectedAt: p.datetime().nullable(),
    disconnectedAt: p.datetime().nullable(),
    /** Sealed JSON of the credentials given at connect time (lib/crypto.ts encrypt). */
    credentialsSealed: p.text().nullable(),
    signature: p.text().nullable(),
    profile: p.json<Record<string, unknown>>().nullable(),
    profileFetchedAt: p.datetime().nullable(),
    /** Caps the user set (each within the plan's bounds); absent types use the defaults. */
    caps: p.json<Caps>().default('{}'),
    /** Minimum seconds between two actions of the account, plus up to `jitterSeconds` at random. */
    minGapSeconds: p.integer().default(90),
    jitterSeconds: p.integer().default(60),
    /** The warm-up ramp starts at the first connection; `warmupSkippedAt` ends it early. */
    warmupStartedAt: p.datetime().nullable(),
    warmupSkippedAt: p.datetime().nullable(),
    /** Withdraw pending invitations older than this many days (null: never). */
    inviteWithdrawalDays: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IPlatformAccount = InferEntity<typeof PlatformAccount>;
