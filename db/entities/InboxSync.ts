import { defineEntity, type InferEntity } from '@mikro-orm/core';

// The latest sync of one account's conversations (workflow `inbox-sync:<accountId>`): its state and
// the connector cursor it resumes from.
export const InboxSync = defineEntity({
  name: 'InboxSync',
  tableName: 'inbox_syncs',
  properties: (p) => ({
    accountId: p.uuid().primary(),
    workspaceId: p.uuid(),
    state: p.string().length(20),
    run: p.integer().default(1),
    cursor: p.string().length(2000).nullable(),
    pages: p.integer().default(0),
    chatsSeen: p.integer().default(0),
    messagesStored: p.integer().default(0),
    errorMessage: p.string().length(500).nullable(),
    startedAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IInboxSync = InferEntity<typeof InboxSync>;
