import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';

// Every user owns exactly one workspace; team members act in it via X-Acting-As: <owner id>.
export const Workspace = defineEntity({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    owner: p.manyToOne(User).ref().unique().deleteRule('cascade'),
    name: p.string().length(200),
    isDemo: p.boolean().default(false),
    /** Appended to every email sent by the mail connector: the sender's postal address, as anti-spam law asks (docs/email.md). */
    emailFooter: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IWorkspace = InferEntity<typeof Workspace>;
