import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';

// A feature request on the board every workspace shares (docs/ideas-views-onboarding.md). Belongs to
// the person who posted it, not to a workspace; `voteCount` is kept equal to its idea_votes rows by
// the same statement that inserts or deletes a vote.
export const Idea = defineEntity({
  name: 'Idea',
  tableName: 'ideas',
  indexes: [
    // Most voted first (scanned backwards), ties newest first.
    { name: 'ideas_vote_count_id_index', properties: ['voteCount', 'id'] },
    { name: 'ideas_author_id_created_at_index', properties: ['author', 'createdAt'] },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    /** Null once the author's account is deleted (the idea and its votes stay). */
    author: p.manyToOne(User).ref().nullable().deleteRule('set null'),
    title: p.string().length(200),
    body: p.text(),
    voteCount: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IIdea = InferEntity<typeof Idea>;
