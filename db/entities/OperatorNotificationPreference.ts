import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';

export const NOTIFICATION_CHANNELS = ['in_app', 'email', 'none'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

// How one user hears about each topic of notifications (docs/notifications.md): the Operator's work
// (a finished task, a confirmation waiting for them) and the workspace's events (a disconnected
// account, a reply, a finished import, a review past its deadline). One row per user (whatever
// workspace they act in); absent = defaults.
export const OperatorNotificationPreference = defineEntity({
  name: 'OperatorNotificationPreference',
  tableName: 'operator_notification_preferences',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    user: p.manyToOne(User).ref().deleteRule('cascade').unique(),
    taskFinished: p.string().length(10).default('in_app'),
    confirmationPending: p.string().length(10).default('in_app'),
    accountDisconnected: p.string().length(10).default('in_app'),
    replyReceived: p.string().length(10).default('in_app'),
    importFinished: p.string().length(10).default('in_app'),
    reviewOverdue: p.string().length(10).default('in_app'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IOperatorNotificationPreference = InferEntity<typeof OperatorNotificationPreference>;
