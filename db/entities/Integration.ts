import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// A connected third-party integration of a workspace. Minimal here (ownership is what webhook
// subscriptions need); the integrations issue extends it.
export const Integration = defineEntity({
  name: 'Integration',
  tableName: 'integrations',
  properties: (p) => ({
    id: p.uuid().primary().onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    provider: p.string().length(100),
    name: p.string().length(200),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});
export type IIntegration = InferEntity<typeof Integration>;
