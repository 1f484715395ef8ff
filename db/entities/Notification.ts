import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

export const EMAIL_STATES = ['pending', 'sent', 'failed'] as const;
export type EmailState = (typeof EMAIL_STATES)[number];

// Something one person should know about in one workspace (docs/notifications.md): a sender account
// disconnected, a lead replied, an import finished, a confirmation or a review waiting. One row per
// recipient, written in the transaction of the change (domain/notifications/notifications.ts `notify`), for the
// members the notification concerns and whose preferences ask for it; so read state is per person.
export const Notification = defineEntity({
  name: 'Notification',
  tableName: 'notifications',
  uniques: [{ name: 'notifications_user_id_dedupe_key_unique', properties: ['user', 'dedupeKey'] }],
  indexes: [
    // The list, newest first (ids are UUIDv7), per person and workspace.
    { name: 'notifications_user_workspace_id_index', properties: ['user', 'workspace', 'id'] },
    // Unread only: what unread-count counts and read-all updates, without touching read rows.
    {
      name: 'notifications_unread_index',
      expression:
        'create index "notifications_unread_index" on "notifications" ("user_id", "workspace_id", "id") where "read_at" is null',
    },
    // Read only: what the retention job deletes after READ_RETENTION_DAYS (ids are UUIDv7, so an id range).
    {
      name: 'notifications_read_index',
      expression: 'create index "notifications_read_index" on "notifications" ("id") where "read_at" is not null',
    },
    // Emails still to send (the `notification-emails` schedule).
    {
      name: 'notifications_email_pending_index',
      expression: `create index "notifications_email_pending_index" on "notifications" ("id") where "email_state" = 'pending'`,
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    /** The recipient. */
    user: p.manyToOne(User).ref().deleteRule('cascade'),
    /** e.g. `account.disconnected`, `reply.received` (docs/notifications.md lists them). */
    kind: p.string().length(60),
    title: p.string().length(200),
    body: p.text(),
    data: p.json<Record<string, unknown>>().default('{}'),
    /** Makes a repeated `notify` of the same fact for the same person a no-op (e.g. `confirmation:<id>`). */
    dedupeKey: p.string().length(200).nullable(),
    /** Set when the recipient's channel for this kind is `email`: pending → sent | failed. */
    emailState: p.string().length(10).nullable(),
    emailAttempts: p.smallint().default(0),
    emailedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    readAt: p.datetime().nullable(),
  }),
});
export type INotification = InferEntity<typeof Notification>;
