import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { PlatformAccount } from './PlatformAccount.js';

// "An inbox processor is draining this account's events until `until`" (docs/inbox.md, "Inbound
// processing"): while it is, a newly stored event needs no signal to its processor, which will find
// it within a poll interval. The processor clears the row before it stops and then looks once more,
// so an event stored while the row said "draining" is never left without a processor.
export const InboxDrain = defineEntity({
  name: 'InboxDrain',
  tableName: 'inbox_drains',
  properties: (p) => ({
    account: p.oneToOne(PlatformAccount).owner().primary().ref().deleteRule('cascade'),
    until: p.datetime(),
  }),
});
export type IInboxDrain = InferEntity<typeof InboxDrain>;
