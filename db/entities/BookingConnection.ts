import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { BOOKING_PROVIDERS } from '../../lib/booking/types.js';
import { Workspace } from './Workspace.js';

export const BOOKING_CONNECTION_STATUSES = ['connected', 'invalid_credentials'] as const;
export type BookingConnectionStatus = (typeof BOOKING_CONNECTION_STATUSES)[number];

// A workspace's connection to a booking provider (the API's "booking provider", docs/meetings.md):
// the provider account it reaches, its credentials sealed with lib/crypto.ts (an API key, or OAuth
// tokens), and our webhook at the provider with its own signing secret (sealed too). One row per
// provider account: connecting the same account again replaces its credentials.
export const BookingConnection = defineEntity({
  name: 'BookingConnection',
  tableName: 'booking_providers',
  uniques: [{ properties: ['workspace', 'provider', 'accountId'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    provider: p.enum([...BOOKING_PROVIDERS]),
    authKind: p.enum(['api_key', 'oauth']),
    status: p.enum([...BOOKING_CONNECTION_STATUSES]).default('connected'),
    /** Why the provider refused the credentials at the last check (e.g. `HTTP 401`). */
    statusReason: p.string().length(300).nullable(),
    /** The provider's id of the account the credentials belong to, with its name and email. */
    accountId: p.string().length(200),
    accountName: p.string().length(200).nullable(),
    accountEmail: p.string().length(320).nullable(),
    /** JSON of lib/booking BookingCredentials, AES-256-GCM sealed. */
    credentialsSealed: p.text(),
    /** What the API shows of the credential: e.g. `sch_…9f2c` (the last 4 characters of an API key). */
    credentialHint: p.string().length(40),
    connectedByUserId: p.uuid(),
    /** Our subscription at the provider and its signing secret (sealed); null until registered. */
    webhookId: p.string().length(200).nullable(),
    webhookSecretSealed: p.text().nullable(),
    webhookSecretHint: p.string().length(40).nullable(),
    webhookRegisteredAt: p.datetime().nullable(),
    lastVerifiedAt: p.datetime().nullable(),
    /** Sync-token providers (Google Calendar, docs/calendar.md): where the next read of changes starts; null: list the window again. */
    syncToken: p.string().length(1000).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IBookingConnection = InferEntity<typeof BookingConnection>;
