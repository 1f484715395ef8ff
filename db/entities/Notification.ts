import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// Something the workspace's people should know about (a sender account disconnected, …). Stored here
// and listed to the workspace; delivery by email or chat follows the Operator's notification
// preferences once the integrations issue sends them.
export const Notification = defineEntity({
  name: 'Notification',
  tableName: 'notifications',
  indexes: [{ properties: ['workspace', 'createdAt'] }],
  properties: (p) => ({
    id: p.uuid().primary().onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    /** e.g. `account.disconnected`. */
    kind: p.string().length(60),
    title: p.string().length(200),
    body: p.text(),
    data: p.json<Record<string, unknown>>().default('{}'),
    createdAt: p.datetime().onCreate(() => new Date()),
    readAt: p.datetime().nullable(),
  }),
});
export type INotification = InferEntity<typeof Notification>;
