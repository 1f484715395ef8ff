import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

export const TEAM_ROLES = ['owner', 'admin', 'member'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

// Membership of a user in a workspace. `allApps` or the listed `appIds` bound product access.
export const TeamMember = defineEntity({
  name: 'TeamMember',
  tableName: 'team_members',
  uniques: [{ properties: ['workspace', 'user'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    user: p.manyToOne(User).ref().deleteRule('cascade').index(),
    role: p.enum([...TEAM_ROLES]),
    allApps: p.boolean().default(true),
    appIds: p.json<string[]>().default('[]' as never),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ITeamMember = InferEntity<typeof TeamMember>;
