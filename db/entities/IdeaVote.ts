import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { Idea } from './Idea.js';
import { User } from './User.js';

// One user's vote for one idea: the primary key makes a second vote impossible.
export const IdeaVote = defineEntity({
  name: 'IdeaVote',
  tableName: 'idea_votes',
  properties: (p) => ({
    idea: p.manyToOne(Idea).ref().primary().deleteRule('cascade'),
    user: p.manyToOne(User).ref().primary().deleteRule('cascade').index(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IIdeaVote = InferEntity<typeof IdeaVote>;
