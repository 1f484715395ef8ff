import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

// A product announcement published by support staff (`npm run admin -- announce`, docs/notifications.md):
// shown to a user while `startsAt <= now < endsAt` (no end: until unpublished), when the plan of the
// workspace they work in is in `plans` (null: every plan), until they dismiss it.
export const Announcement = defineEntity({
  name: 'Announcement',
  tableName: 'announcements',
  indexes: [
    {
      name: 'announcements_published_index',
      expression:
        'create index "announcements_published_index" on "announcements" ("starts_at", "id") where "unpublished_at" is null',
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    title: p.string().length(200),
    body: p.text(),
    ctaLabel: p.string().length(60).nullable(),
    ctaUrl: p.string().length(2048).nullable(),
    /** Plan ids (domain/billing/plans.ts) the announcement is for; null = everyone. */
    plans: p.json<string[]>().nullable(),
    startsAt: p.datetime(),
    endsAt: p.datetime().nullable(),
    /** Who published it (the CLI's `--by`, else the OS user running it). */
    createdBy: p.string().length(200).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    unpublishedAt: p.datetime().nullable(),
  }),
});
export type IAnnouncement = InferEntity<typeof Announcement>;
