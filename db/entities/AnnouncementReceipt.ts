import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Announcement } from './Announcement.js';
import { User } from './User.js';

// What one user did with one announcement: dismissed it, clicked its call to action (each recorded
// once: the first time stays). One row per (announcement, user), created by the first of the two.
export const AnnouncementReceipt = defineEntity({
  name: 'AnnouncementReceipt',
  tableName: 'announcement_receipts',
  properties: (p) => ({
    announcement: p.manyToOne(Announcement).ref().primary().deleteRule('cascade'),
    user: p.manyToOne(User).ref().primary().deleteRule('cascade').index(),
    dismissedAt: p.datetime().nullable(),
    ctaClickedAt: p.datetime().nullable(),
  }),
});
export type IAnnouncementReceipt = InferEntity<typeof AnnouncementReceipt>;
